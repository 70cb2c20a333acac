// SPDX-License-Identifier: MIT
// Test fixture: one int8 Conv2D as a single task with the plainest DPU program: the per-channel
// bias (input zero point folded in) as the BS ALU operand read by DPU_RDMA, one per-tensor OUT_CVT
// scale and shift, weights in the CNA's blocks and DATA_ENTRIES as Mesa's rocket driver writes them
// (rkt_coefs.c, rkt_task.c; docs/rknpu-register-semantics.md), no tiling. Block and TLM tests of
// the NPU model build streams from it, and some rewrite registers on top of it to reach other DPU
// paths. It is not npusim's lowering: the model compiler's conv lowering (compiler/rknpu
// lower_conv_op, behind drv::rknpu::lower_conv for a single layer) tiles, splits requantization
// over BS / BN / OUT_CVT and is tested against onnxruntime's QLinearConv.
#pragma once
#include <climits>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "compiler/rknpu/conv_lowering.h"
#include "drv/regcmd/builder.h"
#include "hw/profile.h"
#include "hw/regdb.h"
#include "hw/rknpu_layout.h"
#include "numerics/requant.h"

namespace mesa_conv {

using drv::rknpu::ConvLayer;
namespace en = hw::rknpu::enums;

inline int round_up(int v, int m) { return (v + m - 1) / m * m; }
inline int ceil_div(int64_t v, int64_t m) { return static_cast<int>((v + m - 1) / m); }

/// Device addresses of the task's buffers.
struct Addresses {
    uint32_t input = 0, weights = 0, bias = 0, output = 0;
};

/// What the task reads from DMA memory, and how to read its result.
struct Lowered {
    int c2 = 16;
    int in_c_padded = 0, out_c_padded = 0;
    uint32_t line_stride_bytes = 0, surf_stride_bytes = 0;
    uint32_t out_surf_stride_bytes = 0;
    uint64_t input_bytes = 0, output_bytes = 0;
    std::vector<uint8_t> weights;  ///< packed in the CNA's weight blocks (hw/rknpu_layout.h)
    std::vector<uint8_t> bias;     ///< int32 LE per output channel, input zero point folded in
    num::FixedScale out_scale;     ///< OUT_CVT_SCALE / OUT_CVT_SHIFT
    int data_banks = 0, weight_banks = 0;
    int data_entries = 0;  ///< CNA_CBUF_CON1.DATA_ENTRIES: 64-byte entries of one input row
    hw::rknpu::Generation gen = hw::rknpu::Generation::RK3588;  ///< register map (field units)
};

inline Lowered lower(const ConvLayer& L, const hw::SocProfile& soc) {
    L.check();
    Lowered low;
    low.c2 = soc.npu.c2_int8.value;
    if (low.c2 != 16) throw std::invalid_argument("lower_conv: only C2 = 16 int8 layouts are lowered so far");
    low.in_c_padded = round_up(L.in_c, low.c2);
    low.out_c_padded = round_up(L.out_c, low.c2);
    low.line_stride_bytes = static_cast<uint32_t>(L.in_w * low.c2);
    low.surf_stride_bytes = low.line_stride_bytes * static_cast<uint32_t>(L.in_h);
    low.out_surf_stride_bytes = static_cast<uint32_t>(L.out_w() * L.out_h() * low.c2);
    low.input_bytes = static_cast<uint64_t>(low.surf_stride_bytes) * (low.in_c_padded / low.c2);
    low.output_bytes = static_cast<uint64_t>(low.out_surf_stride_bytes) * (low.out_c_padded / low.c2);

    // Weights in the CNA's blocks (hw/rknpu_layout.h: Mesa rkt_coefs.c), C padded with zeros.
    const int taps = L.kernel_h * L.kernel_w;
    const hw::rknpu::WeightBlocks blocks = hw::rknpu::weight_blocks(soc, 8, false);
    low.weights.assign(static_cast<size_t>(L.out_c) * taps * low.in_c_padded, 0);
    std::vector<int64_t> wsum(static_cast<size_t>(L.out_c), 0);
    for (int k = 0; k < L.out_c; ++k)
        for (int c = 0; c < L.in_c; ++c)
            for (int y = 0; y < L.kernel_h; ++y)
                for (int x = 0; x < L.kernel_w; ++x) {
                    const int8_t w = L.weights[((static_cast<size_t>(k) * L.in_c + c) * L.kernel_h + y) * L.kernel_w + x];
                    low.weights[hw::rknpu::weight_element(blocks, static_cast<uint32_t>(L.out_c),
                                                          static_cast<uint32_t>(taps), static_cast<uint32_t>(low.in_c_padded),
                                                          static_cast<uint32_t>(k), static_cast<uint32_t>(y * L.kernel_w + x),
                                                          static_cast<uint32_t>(c))] = static_cast<uint8_t>(w);
                    wsum[static_cast<size_t>(k)] += w;
                }
    // Bias with the input zero point folded in: sum((x - zp) w) + b = sum(x w) + (b - zp sum(w)).
    // Padding reads PAD_VALUE = zp, so padded taps cancel too.
    low.bias.resize(4 * static_cast<size_t>(L.out_c));
    for (int k = 0; k < L.out_c; ++k) {
        const int64_t b = (L.bias.empty() ? 0 : L.bias[static_cast<size_t>(k)]) - int64_t{L.in_zp} * wsum[static_cast<size_t>(k)];
        if (b < INT32_MIN || b > INT32_MAX) throw std::invalid_argument(fmt::format("conv '{}': folded bias overflows int32", L.name));
        const int32_t b32 = static_cast<int32_t>(b);
        std::memcpy(&low.bias[4 * static_cast<size_t>(k)], &b32, 4);
    }
    // OUT_CVT_SCALE is a 16-bit field; a 15-bit multiplier keeps it valid whether the hardware reads
    // it signed or unsigned (UNVERIFIED). OUT_CVT_SHIFT is 12 bits; 63 bounds the 64-bit product.
    const double m = static_cast<double>(L.in_scale) * L.w_scale / L.out_scale;
    low.out_scale = num::quantize_scale(m, 15, 63);

    // CBUF allocation (hardware-facts.md §3.5): 128-byte entries, 256 entries per bank, and one
    // extra weight bank as the open driver allocates.
    const int entry = static_cast<int>(soc.npu.cbuf_entry_bytes.value);
    const int entries_per_bank = static_cast<int>(soc.npu.cbuf_bank_bytes.value) / entry;
    const int row_entries = ceil_div(static_cast<int64_t>(L.in_w) * low.in_c_padded, entry);
    low.data_banks = ceil_div(static_cast<int64_t>(row_entries) * L.in_h, entries_per_bank);
    // The register counts 64-byte entries of one input row (Mesa rkt_task.c, mtx512).
    low.data_entries = static_cast<int>(
        hw::rknpu::data_entries(static_cast<uint64_t>(L.in_w) * low.in_c_padded, hw::rknpu::soc_generation(soc)));
    low.gen = hw::rknpu::soc_generation(soc);
    low.weight_banks = ceil_div(static_cast<int64_t>(low.weights.size()), soc.npu.cbuf_bank_bytes.value) + 1;
    if (low.data_banks + low.weight_banks > soc.npu.cbuf_banks.value)
        throw std::invalid_argument(fmt::format(
            "conv '{}': needs {} data + {} weight CBUF banks, {} has {} (a single-task fixture: no tiling)",
            L.name, low.data_banks, low.weight_banks, soc.name, soc.npu.cbuf_banks.value));
    return low;
}

inline std::vector<uint8_t> pack_input(const ConvLayer& L, const Lowered& low, const std::vector<int8_t>& nchw) {
    if (nchw.size() != static_cast<size_t>(L.in_c) * L.in_h * L.in_w)
        throw std::invalid_argument(fmt::format("conv '{}': input has {} values, expected {}", L.name, nchw.size(),
                                                static_cast<size_t>(L.in_c) * L.in_h * L.in_w));
    // Padding channels hold the zero point so they contribute nothing after folding.
    std::vector<uint8_t> img(low.input_bytes, static_cast<uint8_t>(static_cast<int8_t>(L.in_zp)));
    for (int c = 0; c < L.in_c; ++c)
        for (int y = 0; y < L.in_h; ++y)
            for (int x = 0; x < L.in_w; ++x)
                img[(c / low.c2) * static_cast<size_t>(low.surf_stride_bytes) + y * low.line_stride_bytes + x * low.c2 +
                    c % low.c2] = static_cast<uint8_t>(nchw[(static_cast<size_t>(c) * L.in_h + y) * L.in_w + x]);
    return img;
}

inline std::vector<int8_t> unpack_output(const ConvLayer& L, const Lowered& low, const std::vector<uint8_t>& img) {
    const int oh = L.out_h(), ow = L.out_w();
    std::vector<int8_t> out(static_cast<size_t>(L.out_c) * oh * ow);
    for (int c = 0; c < L.out_c; ++c)
        for (int y = 0; y < oh; ++y)
            for (int x = 0; x < ow; ++x)
                out[(static_cast<size_t>(c) * oh + y) * ow + x] = static_cast<int8_t>(
                    img.at((c / low.c2) * static_cast<size_t>(low.out_surf_stride_bytes) + (y * ow + x) * low.c2 + c % low.c2));
    return out;
}

inline void emit(const ConvLayer& L, const Lowered& low, const Addresses& a, drv::regcmd::Builder& b) {
    const uint32_t oh = static_cast<uint32_t>(L.out_h()), ow = static_cast<uint32_t>(L.out_w());
    const uint32_t taps = static_cast<uint32_t>(L.kernel_h * L.kernel_w);
    const uint32_t per_kernel = taps * static_cast<uint32_t>(low.in_c_padded);
    // CNA: feature and weight load, geometry, padding.
    b.write_fields("CNA_CONV_CON1", {{"CONV_MODE", en::ConvMode::DIRECT},
                                     {"IN_PRECISION", en::Precision::INT8},
                                     {"PROC_PRECISION", en::Precision::INT8}});
    b.write_fields("CNA_CONV_CON2", {{"FEATURE_GRAINS", static_cast<uint64_t>(L.in_h)}});
    b.write_fields("CNA_CONV_CON3", {{"CONV_X_STRIDE", static_cast<uint64_t>(L.stride_w)},
                                     {"CONV_Y_STRIDE", static_cast<uint64_t>(L.stride_h)},
                                     {"ATROUS_X_DILATION", static_cast<uint64_t>(L.dilation_w)},
                                     {"ATROUS_Y_DILATION", static_cast<uint64_t>(L.dilation_h)}});
    b.write_fields("CNA_DATA_SIZE0", {{"DATAIN_WIDTH", static_cast<uint64_t>(L.in_w)}, {"DATAIN_HEIGHT", static_cast<uint64_t>(L.in_h)}});
    b.write_fields("CNA_DATA_SIZE1", {{"DATAIN_CHANNEL", static_cast<uint64_t>(low.in_c_padded)},
                                      {"DATAIN_CHANNEL_REAL", static_cast<uint64_t>(L.in_c - 1)}});
    b.write_fields("CNA_DATA_SIZE2", {{"DATAOUT_WIDTH", ow}});
    b.write_fields("CNA_DATA_SIZE3", {{"DATAOUT_ATOMICS", static_cast<uint64_t>(ow) * oh}});
    b.write("CNA_WEIGHT_SIZE0", static_cast<uint32_t>(low.weights.size()));
    b.write_fields("CNA_WEIGHT_SIZE1", {{"WEIGHT_BYTES_PER_KERNEL", per_kernel}});
    b.write_fields("CNA_WEIGHT_SIZE2", {{"WEIGHT_WIDTH", static_cast<uint64_t>(L.kernel_w)},
                                        {"WEIGHT_HEIGHT", static_cast<uint64_t>(L.kernel_h)},
                                        {"WEIGHT_KERNELS", static_cast<uint64_t>(L.out_c)}});
    b.write_fields("CNA_CBUF_CON0", {{"DATA_BANK", static_cast<uint64_t>(low.data_banks)},
                                     {"WEIGHT_BANK", static_cast<uint64_t>(low.weight_banks)}});
    b.write_fields("CNA_CBUF_CON1", {{"DATA_ENTRIES", static_cast<uint64_t>(low.data_entries)}});
    b.write_fields("CNA_CVT_CON0", {{"CVT_BYPASS", 1}});
    b.write_fields("CNA_PAD_CON0", {{"PAD_TOP", static_cast<uint64_t>(L.pad_top)}, {"PAD_LEFT", static_cast<uint64_t>(L.pad_left)}});
    b.write("CNA_PAD_CON1", static_cast<uint32_t>(L.in_zp));
    b.write("CNA_FEATURE_DATA_ADDR", a.input);
    b.write_fields("CNA_DMA_CON0", {{"DATA_BURST_LEN", en::BurstLen::BURST_16}, {"WEIGHT_BURST_LEN", en::BurstLen::BURST_16}});
    // Silicon units (hw/rknpu_layout.h): row bytes / 4, LINE_STRIDE x (H / 4 - 1) for the surface.
    const auto line = hw::rknpu::encode_line_stride(low.line_stride_bytes, low.gen);
    const auto surf = hw::rknpu::encode_surf_stride(low.surf_stride_bytes, low.line_stride_bytes, low.gen);
    if (!line || !surf) throw std::invalid_argument(fmt::format("conv '{}': strides not representable", L.name));
    b.write_fields("CNA_DMA_CON1", {{"LINE_STRIDE", *line}});
    b.write_fields("CNA_DMA_CON2", {{"SURF_STRIDE", *surf}});
    b.write_fields("CNA_FC_DATA_SIZE0", {{"DMA_WIDTH", static_cast<uint64_t>(L.in_w)}, {"DMA_HEIGHT", static_cast<uint64_t>(L.in_h)}});
    b.write_fields("CNA_FC_DATA_SIZE1", {{"DMA_CHANNEL", static_cast<uint64_t>(low.in_c_padded)}});
    b.write("CNA_DCOMP_ADDR0", a.weights);
    // CORE: MAC array and accumulator.
    b.write_fields("CORE_MISC_CFG", {{"PROC_PRECISION", en::Precision::INT8}, {"QD_EN", 1}});
    b.write_fields("CORE_DATAOUT_SIZE_0", {{"DATAOUT_WIDTH", ow - 1}, {"DATAOUT_HEIGHT", oh - 1}});
    b.write_fields("CORE_DATAOUT_SIZE_1", {{"DATAOUT_CHANNEL", static_cast<uint64_t>(L.out_c - 1)}});
    b.write("CORE_CLIP_TRUNCATE", 0);
    // DPU: bias add (BS ALU, operand from memory), ReLU, output convert, write-back.
    b.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", en::BurstLen::BURST_16}, {"OUTPUT_MODE", en::DpuOutputMode::TO_MEMORY}});
    b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", en::Precision::INT8},
                                       {"IN_PRECISION", en::Precision::INT8},
                                       {"OUT_PRECISION", en::Precision::INT8}});
    b.write("DPU_DST_BASE_ADDR", a.output);
    b.write_fields("DPU_DST_SURF_STRIDE",
                   {{"DST_SURF_STRIDE", low.out_surf_stride_bytes / hw::rknpu::DPU_DST_SURF_STRIDE::DST_SURF_STRIDE.unit}});
    b.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", ow - 1}});
    b.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", oh - 1}});
    b.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", static_cast<uint64_t>(L.out_c - 1)},
                                             {"ORIG_CHANNEL", static_cast<uint64_t>(L.out_c - 1)}});
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_ALGO", en::AluAlgo::ADD}, {"BS_ALU_SRC", 1}, {"BS_RELU_BYPASS", L.relu ? 0u : 1u},
                                  {"BS_MUL_BYPASS", 1}});
    b.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 1}, {"BN_ALU_BYPASS", 1}, {"BN_MUL_BYPASS", 1}, {"BN_RELU_BYPASS", 1}});
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 1}, {"EW_OP_BYPASS", 1}, {"EW_LUT_BYPASS", 1},
                                  {"EW_OP_CVT_BYPASS", 1}, {"EW_RELU_BYPASS", 1}});
    b.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(L.out_zp));
    b.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", static_cast<uint64_t>(low.out_scale.multiplier)}});
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", static_cast<uint64_t>(low.out_scale.shift)}});
    // DPU_RDMA: reads the per-channel bias for the BS stage.
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_WIDTH", {{"WIDTH", ow - 1}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_HEIGHT", {{"HEIGHT", oh - 1}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_CHANNEL", {{"CHANNEL", static_cast<uint64_t>(L.out_c - 1)}});
    b.write_fields("DPU_RDMA_RDMA_BRDMA_CFG", {{"BRDMA_DATA_USE", en::DataUse::ALU}});
    b.write("DPU_RDMA_RDMA_BS_BASE_ADDR", a.bias);
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
    b.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", en::BurstLen::BURST_16}, {"MRDMA_DISABLE", 1}});
}

}  // namespace mesa_conv
