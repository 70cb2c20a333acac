// SPDX-License-Identifier: MIT
// Decode and validation of the convolution path (CNA -> CORE -> DPU) from the register file.
#include "npu/rknpu/conv_config.h"

#include <fmt/format.h>

#include "hw/rknpu_regs.h"

namespace npu::rknpu {

using namespace hw::rknpu;

namespace {
int32_t sign_extend(uint32_t v, int bits) {
    const uint32_t m = 1u << (bits - 1);
    return static_cast<int32_t>((v ^ m) - m);
}
}  // namespace

uint64_t ConvConfig::input_bytes() const { return cube_bytes(in_w, in_h, in_c, precision, atom); }
uint64_t ConvConfig::output_bytes() const { return cube_bytes(out_w, out_h, out_c, dpu.out, atom); }
uint64_t ConvConfig::bias_bytes() const { return dpu.bs.operand_bytes(out_c); }

ConvConfig decode_conv(const RegFile& rf, uint32_t block_enable_mask, const hw::SocProfile& soc) {
    ConvConfig c = decode_conv(rf, block_enable_mask, atom_bytes(soc), soc_generation(soc));
    const uint32_t bits = c.precision == Precision::Int4 ? 4 : elem_bytes(c.precision) * 8;
    c.wblocks = hw::rknpu::weight_blocks(soc, bits, c.depthwise);
    return c;
}

ConvConfig decode_conv(const RegFile& rf, uint32_t block_enable_mask, uint32_t atom, Generation gen) {
    ConvConfig c;
    c.block_enable_mask = block_enable_mask;
    c.atom = atom;
    auto f = [&](uint16_t off, hw::Field fld) { return rf.field(off, fld); };
    c.precision = static_cast<Precision>(f(CNA_CONV_CON1::kOffset, CNA_CONV_CON1::PROC_PRECISION));
    c.core_precision = static_cast<Precision>(f(CORE_MISC_CFG::kOffset, CORE_MISC_CFG::PROC_PRECISION));
    c.depthwise = f(CORE_MISC_CFG::kOffset, CORE_MISC_CFG::DW_EN) != 0;
    c.in_w = f(CNA_DATA_SIZE0::kOffset, CNA_DATA_SIZE0::DATAIN_WIDTH);
    c.in_h = f(CNA_DATA_SIZE0::kOffset, CNA_DATA_SIZE0::DATAIN_HEIGHT);
    c.in_c = f(CNA_DATA_SIZE1::kOffset, CNA_DATA_SIZE1::DATAIN_CHANNEL);
    c.in_c_real = f(CNA_DATA_SIZE1::kOffset, CNA_DATA_SIZE1::DATAIN_CHANNEL_REAL) + 1;
    c.kernel_w = f(CNA_WEIGHT_SIZE2::kOffset, CNA_WEIGHT_SIZE2::WEIGHT_WIDTH);
    c.kernel_h = f(CNA_WEIGHT_SIZE2::kOffset, CNA_WEIGHT_SIZE2::WEIGHT_HEIGHT);
    c.kernels = f(CNA_WEIGHT_SIZE2::kOffset, CNA_WEIGHT_SIZE2::WEIGHT_KERNELS);
    c.weight_bytes = rf.read(CNA_WEIGHT_SIZE0::kOffset);
    c.weight_bytes_per_kernel = f(CNA_WEIGHT_SIZE1::kOffset, CNA_WEIGHT_SIZE1::WEIGHT_BYTES_PER_KERNEL);
    c.stride_x = f(CNA_CONV_CON3::kOffset, CNA_CONV_CON3::CONV_X_STRIDE);
    c.stride_y = f(CNA_CONV_CON3::kOffset, CNA_CONV_CON3::CONV_Y_STRIDE);
    // ATROUS fields hold the dilation rate; 0 is read as 1 (no dilation) as drivers leave it 0.
    c.dilation_x = std::max(1u, f(CNA_CONV_CON3::kOffset, CNA_CONV_CON3::ATROUS_X_DILATION));
    c.dilation_y = std::max(1u, f(CNA_CONV_CON3::kOffset, CNA_CONV_CON3::ATROUS_Y_DILATION));
    c.pad_top = f(CNA_PAD_CON0::kOffset, CNA_PAD_CON0::PAD_TOP);
    c.pad_left = f(CNA_PAD_CON0::kOffset, CNA_PAD_CON0::PAD_LEFT);
    c.pad_value = static_cast<int32_t>(rf.read(CNA_PAD_CON1::kOffset));
    c.feature_addr = rf.read(CNA_FEATURE_DATA_ADDR::kOffset);
    const uint32_t con1 = rf.read(CNA_CONV_CON1::kOffset);
    c.image = CNA_CONV_CON1::ARGB_IN.get(con1) != 0;
    c.group_line_off = CNA_CONV_CON1::GROUP_LINE_OFF.get(con1) != 0;
    c.argb_in = CNA_CONV_CON1::ARGB_IN.get(con1);
    const uint32_t line = f(CNA_DMA_CON1::kOffset, CNA_DMA_CON1::LINE_STRIDE);
    const uint32_t eb = elem_bytes(c.precision);
    if (c.image) {
        // A-IMAGE: pixels of DATAIN_CHANNEL_REAL + 1 channels packed in memory, rows of LINE_STRIDE
        // pixels (Mesa's 1-channel int8: rows of W bytes; the vendor's 3-channel fp16 capture: LINE_STRIDE
        // 8 for rows of 8 pixels x 6 bytes).
        c.pixel_bytes = c.in_c_real * eb;
        c.mem_channels = c.in_c_real;
        c.mem_surfaces = 1;
        c.line_stride_bytes = static_cast<uint64_t>(line) * c.pixel_bytes;
    } else {
        c.line_stride_bytes = decode_line_stride(line, gen);
    }
    c.surf_stride_bytes = decode_surf_stride(rf.read(CNA_DMA_CON2::kOffset), c.line_stride_bytes, gen);
    if (c.image) {
        // pixel layout set above
    } else if (c.group_line_off && c.in_w && c.line_stride_bytes % c.in_w == 0 &&
               (c.line_stride_bytes / c.in_w) % eb == 0 && c.precision != Precision::Int4 && c.line_stride_bytes) {
        c.pixel_bytes = static_cast<uint32_t>(c.line_stride_bytes / c.in_w);
        c.mem_channels = c.pixel_bytes / eb;
        c.mem_surfaces = c.mem_channels ? (c.in_c + c.mem_channels - 1) / c.mem_channels : 0;
    } else {
        c.pixel_bytes = atom;
        c.mem_channels = c2_of(c.precision, atom);
        c.mem_surfaces = (c.in_c + c.mem_channels - 1) / c.mem_channels;
    }
    const uint32_t cvt0 = rf.read(CNA_CVT_CON0::kOffset);
    c.cvt.bypass = CNA_CVT_CON0::CVT_BYPASS.get(cvt0) != 0;
    c.cvt.add_first = CNA_CVT_CON0::CVT_TYPE.get(cvt0) != 0;
    c.cvt.is_signed = CNA_CVT_CON0::DATA_SIGN.get(cvt0) != 0;
    const hw::Field trunc[4] = {CNA_CVT_CON0::CVT_TRUNCATE_0, CNA_CVT_CON0::CVT_TRUNCATE_1, CNA_CVT_CON0::CVT_TRUNCATE_2,
                                CNA_CVT_CON0::CVT_TRUNCATE_3};
    const uint16_t cvt_regs[4] = {CNA_CVT_CON1::kOffset, CNA_CVT_CON2::kOffset, CNA_CVT_CON3::kOffset, CNA_CVT_CON4::kOffset};
    for (int i = 0; i < 4; ++i) {
        const uint32_t v = rf.read(cvt_regs[i]);
        c.cvt.truncate[i] = trunc[i].get(cvt0);
        c.cvt.offset[i] = static_cast<int16_t>(static_cast<uint16_t>(v & 0xffffu));
        c.cvt.scale[i] = static_cast<int16_t>(static_cast<uint16_t>(v >> 16));
    }
    c.decompress = f(CNA_DCOMP_CTRL::kOffset, CNA_DCOMP_CTRL::DECOMP_CONTROL);
    c.nn_mode = f(CNA_CONV_CON3::kOffset, CNA_CONV_CON3::NN_MODE);
    const uint32_t ow = rf.read(DPU_BS_OW_CFG::kOffset);
    if (DPU_BS_OW_CFG::OD_BYPASS.get(ow) == 0)
        c.weight_offset = static_cast<int16_t>(static_cast<uint16_t>(DPU_BS_OW_OP::OW_OP.get(rf.read(DPU_BS_OW_OP::kOffset))));
    c.weight_addr = rf.read(CNA_DCOMP_ADDR0::kOffset);
    c.data_banks = f(CNA_CBUF_CON0::kOffset, CNA_CBUF_CON0::DATA_BANK);
    c.weight_banks = f(CNA_CBUF_CON0::kOffset, CNA_CBUF_CON0::WEIGHT_BANK);
    c.weight_reuse = f(CNA_CBUF_CON0::kOffset, CNA_CBUF_CON0::WEIGHT_REUSE) != 0;
    c.data_entries = f(CNA_CBUF_CON1::kOffset, CNA_CBUF_CON1::DATA_ENTRIES);

    // CORE counts output dimensions minus one, like most NVDLA-derived size registers.
    c.out_w = f(CORE_DATAOUT_SIZE_0::kOffset, CORE_DATAOUT_SIZE_0::DATAOUT_WIDTH) + 1;
    c.out_h = f(CORE_DATAOUT_SIZE_0::kOffset, CORE_DATAOUT_SIZE_0::DATAOUT_HEIGHT) + 1;
    c.out_c = f(CORE_DATAOUT_SIZE_1::kOffset, CORE_DATAOUT_SIZE_1::DATAOUT_CHANNEL) + 1;
    c.clip_truncate = f(CORE_CLIP_TRUNCATE::kOffset, CORE_CLIP_TRUNCATE::CLIP_TRUNCATE);

    c.dst_addr = rf.read(DPU_DST_BASE_ADDR::kOffset);
    c.dst_surf_stride_bytes = static_cast<uint32_t>(DPU_DST_SURF_STRIDE::DST_SURF_STRIDE.bytes(rf.read(DPU_DST_SURF_STRIDE::kOffset)));
    const uint32_t bs = rf.read(DPU_BS_CFG::kOffset);
    c.bs_bypass = DPU_BS_CFG::BS_BYPASS.get(bs) != 0;
    c.bs_alu_bypass = DPU_BS_CFG::BS_ALU_BYPASS.get(bs) != 0;
    c.bs_relu_bypass = DPU_BS_CFG::BS_RELU_BYPASS.get(bs) != 0;
    c.bs_alu_src = DPU_BS_CFG::BS_ALU_SRC.get(bs);
    c.bs_alu_algo = static_cast<AluAlgo>(DPU_BS_CFG::BS_ALU_ALGO.get(bs));
    c.bs_alu_operand = static_cast<int32_t>(rf.read(DPU_BS_ALU_CFG::kOffset));
    c.bias_addr = rf.read(DPU_RDMA_RDMA_BS_BASE_ADDR::kOffset);
    c.out_cvt_offset = static_cast<int32_t>(rf.read(DPU_OUT_CVT_OFFSET::kOffset));
    c.out_cvt_scale = f(DPU_OUT_CVT_SCALE::kOffset, DPU_OUT_CVT_SCALE::OUT_CVT_SCALE);
    c.out_cvt_shift = f(DPU_OUT_CVT_SHIFT::kOffset, DPU_OUT_CVT_SHIFT::OUT_CVT_SHIFT);
    (void)sign_extend;
    c.dpu = decode_dpu(rf, true, atom);
    c.dpu.w = c.out_w, c.dpu.h = c.out_h, c.dpu.c = c.out_c;  // the CORE streams its output cube
    return c;
}

std::vector<Fault> validate_conv(const ConvConfig& c, const hw::SocProfile& p) {
    std::vector<Fault> out;
    auto fault = [&](const char* block, const char* reg, const char* field, uint64_t v, std::string msg) {
        out.push_back(Fault{block, reg, field, v, std::move(msg)});
    };
    const uint32_t need = (1u << 0) | (1u << 2) | (1u << 3);  // CNA, CORE, DPU
    if ((c.block_enable_mask & need) != need)
        fault("PC", "OPERATION_ENABLE", "OP_EN", c.block_enable_mask,
              "convolution task without CNA, CORE and DPU enabled (need bits 0, 2, 3)");
    const bool int4_ok = p.npu.int4_macs_per_cycle.value > 0;
    if (c.precision == Precision::Int4 && !int4_ok)
        fault("CNA", "CONV_CON1", "PROC_PRECISION", static_cast<uint32_t>(c.precision),
              fmt::format("int4 convolution (6) on {}, which has no int4 MAC path "
                          "(npu.int4_macs_per_cycle = 0)", p.name));
    else if (c.precision != Precision::Int8 && c.precision != Precision::Int16 && c.precision != Precision::Fp16 &&
             c.precision != Precision::Int4)
        fault("CNA", "CONV_CON1", "PROC_PRECISION", static_cast<uint32_t>(c.precision),
              int4_ok ? "convolution precision must be int8 (0), int16 (1), fp16 (2) or int4 (6); bf16/tf32 are not modelled"
                      : "convolution precision must be int8 (0), int16 (1) or fp16 (2); bf16/tf32 are not modelled");
    if (c.core_precision != c.precision)
        fault("CORE", "MISC_CFG", "PROC_PRECISION", static_cast<uint32_t>(c.core_precision),
              fmt::format("CORE precision {} differs from the CNA precision {}", static_cast<uint32_t>(c.core_precision),
                          static_cast<uint32_t>(c.precision)));
    // An int8 convolution may feed the float path (assumption A-I2F, docs/rknpu-register-semantics.md
    // section 17): the int32 accumulator enters it as its value; an fp16 one needs the float path.
    if (c.precision == Precision::Fp16 ? !c.dpu.float_path() : (c.dpu.float_path() && c.precision != Precision::Int8))
        fault("DPU", "DATA_FORMAT", "PROC_PRECISION", static_cast<uint32_t>(c.dpu.proc),
              "the DPU path must match the convolution (fp16 conv: float path 2; int16/int4 conv: integer path "
              "0/1; int8 conv: either)");
    if (c.in_w == 0 || c.in_h == 0 || c.in_c == 0)
        fault("CNA", "DATA_SIZE0", "DATAIN_WIDTH/HEIGHT", c.in_w * 65536ull + c.in_h, "empty input cube");
    if (c.in_c % c.c2() != 0 && !c.image)
        fault("CNA", "DATA_SIZE1", "DATAIN_CHANNEL", c.in_c, fmt::format("must be a multiple of C2 = {}", c.c2()));
    if (c.image) {
        if (c.precision != Precision::Int8 && c.precision != Precision::Fp16)
            fault("CNA", "CONV_CON1", "ARGB_IN", c.argb_in,
                  "image input (ARGB_IN) is modelled for int8 and fp16 processing (Mesa, the vendor runtime)");
        if (c.argb_in < 8 || c.argb_in > 11)
            fault("CNA", "CONV_CON1", "ARGB_IN", c.argb_in,
                  "ARGB_IN values other than 8..11 (1..4 channels, TRM) are not public");
        else if (c.argb_in - 7 != c.in_c_real)
            fault("CNA", "CONV_CON1", "ARGB_IN", c.argb_in,
                  fmt::format("ARGB_IN {} selects {} channels per pixel, DATAIN_CHANNEL_REAL + 1 = {}", c.argb_in,
                              c.argb_in - 7, c.in_c_real));
        if (c.in_c_real > 4 || c.in_c_real > c.in_c)
            fault("CNA", "DATA_SIZE1", "DATAIN_CHANNEL_REAL", c.in_c_real - 1,
                  fmt::format("image input of {} channels per pixel (1 to 4, at most DATAIN_CHANNEL {})", c.in_c_real, c.in_c));
    }
    if (c.decompress)
        fault("CNA", "DCOMP_CTRL", "DECOMP_CONTROL", c.decompress,
              "compressed weights (DECOMP_CONTROL != 0): the decompression format is not public, not modelled");
    if (c.mem_channels == 0 || c.mem_surfaces == 0)
        fault("CNA", "DMA_CON1", "LINE_STRIDE", c.line_stride_bytes, "feature rows hold no channel");
    if (!c.cvt.bypass && c.precision != Precision::Int8)
        fault("CNA", "CVT_CON0", "CVT_BYPASS", 0, "the input convert is modelled for int8 processing only");
    if (!c.cvt.bypass && c.cvt.scale[0] == 0 && c.cvt.scale[1] == 0 && c.cvt.scale[2] == 0 && c.cvt.scale[3] == 0)
        fault("CNA", "CVT_CON1", "CVT_SCALE0", 0,
              "input convert on (CVT_BYPASS = 0) with every CVT_SCALE 0: the input would be all offset (producers set "
              "CVT_BYPASS, or scale 1 / Mesa's 16384 >> 14)");
    if (c.kernel_w == 0 || c.kernel_h == 0)
        fault("CNA", "WEIGHT_SIZE2", "WEIGHT_WIDTH/HEIGHT", c.kernel_w * 256ull + c.kernel_h, "kernel size 0");
    if (c.stride_x == 0 || c.stride_y == 0)
        fault("CNA", "CONV_CON3", "CONV_X/Y_STRIDE", c.stride_x * 8ull + c.stride_y, "stride 0");
    const uint32_t banks = static_cast<uint32_t>(p.npu.cbuf_banks.value);
    if (!c.depthwise && c.kernels == 0)
        fault("CNA", "WEIGHT_SIZE2", "WEIGHT_KERNELS", 0, "no kernels");
    if (c.data_banks + c.weight_banks > banks)
        fault("CNA", "CBUF_CON0", "DATA_BANK+WEIGHT_BANK", c.data_banks + c.weight_banks,
              fmt::format("{} + {} banks exceed the {} CBUF banks of {}", c.data_banks, c.weight_banks, banks, p.name));
    const uint64_t bank_bytes = p.npu.cbuf_bank_bytes.value;
    if (c.input_bytes() > static_cast<uint64_t>(c.data_banks) * bank_bytes)
        fault("CNA", "CBUF_CON0", "DATA_BANK", c.data_banks,
              fmt::format("feature cube of {} bytes does not fit {} data bank(s) of {} bytes; tile along H",
                          c.input_bytes(), c.data_banks, bank_bytes));
    // CBUF_CON1.DATA_ENTRIES counts 64-byte entries per input row (docs §8): the rows of the cube
    // in those entries must fit the data banks (the vendor's "DatainEntries overflow"). Image mode
    // writes W x H there (Mesa), not a row count. `npusim lint` reports this fault as E-entries.
    if (!c.image) {
        const uint64_t unit = CNA_CBUF_CON1::DATA_ENTRIES.unit;
        const uint64_t hold = static_cast<uint64_t>(c.data_banks) * bank_bytes;
        if (static_cast<uint64_t>(c.data_entries) * unit * c.in_h > hold)
            fault("CNA", "CBUF_CON1", "DATA_ENTRIES", c.data_entries,
                  fmt::format("DatainEntries overflow: {} entries of {} bytes x {} rows need more than the {} data "
                              "bank(s) hold ({} bytes); tile the input along H or give it more data banks",
                              c.data_entries, unit, c.in_h, c.data_banks, hold));
    }
    // Weights larger than the weight banks are streamed through them (Mesa's "partial weights"
    // tasks, 5 weight banks): not a fault.
    // Model watchdog: no legal single task comes near this; it bounds the functional model's work.
    constexpr uint64_t kMaxTaskMacs = uint64_t{1} << 32;
    const uint64_t macs = static_cast<uint64_t>(c.out_w) * c.out_h * c.out_c * c.in_c * c.kernel_w * c.kernel_h;
    if (macs > kMaxTaskMacs)
        fault("CORE", "DATAOUT_SIZE_0", "DATAOUT_WIDTH/HEIGHT", c.out_w * 65536ull + c.out_h,
              fmt::format("{} MACs in one task exceed the model's watchdog of {}", macs, kMaxTaskMacs));
    // DATAOUT_CHANNEL may exceed WEIGHT_KERNELS (Mesa pads to 32): those channels accumulate 0.
    if (c.kernel_w && c.kernel_h && c.stride_x && c.stride_y) {
        const int64_t eff_w = (c.kernel_w - 1) * c.dilation_x + 1, eff_h = (c.kernel_h - 1) * c.dilation_y + 1;
        // There is no PAD_BOTTOM/PAD_RIGHT register: taps below/right of the input read PAD_VALUE, so the
        // bottom/right padding is implied by the output size (row bands of a tiled layer need it with
        // PAD_TOP = 0). UNVERIFIED bound: up to the kernel extent - 1 implicit rows/columns.
        const int64_t max_w = (static_cast<int64_t>(c.in_w) + c.pad_left + (eff_w - 1) - eff_w) / c.stride_x + 1;
        const int64_t max_h = (static_cast<int64_t>(c.in_h) + c.pad_top + (eff_h - 1) - eff_h) / c.stride_y + 1;
        if (c.out_w > max_w || c.out_h > max_h)
            fault("CORE", "DATAOUT_SIZE_0", "DATAOUT_WIDTH/HEIGHT", c.out_w * 65536ull + c.out_h,
                  fmt::format("output {}x{} larger than the {}x{} the input and padding allow", c.out_w, c.out_h,
                              max_w, max_h));
    }
    // int4: two weights per byte (in_c is a multiple of C2 = 32, so even).
    const uint64_t per_kernel = c.precision == Precision::Int4
                                    ? static_cast<uint64_t>(c.kernel_w) * c.kernel_h * c.in_c / 2
                                    : static_cast<uint64_t>(c.kernel_w) * c.kernel_h * c.in_c * c.elem();
    if (c.depthwise && c.weight_bytes != per_kernel)
        fault("CNA", "WEIGHT_SIZE0", "WEIGHT_BYTES", c.weight_bytes,
              fmt::format("depthwise weights are kernel_w*kernel_h*channels*element bytes = {}", per_kernel));
    if (!c.depthwise && c.weight_bytes_per_kernel != per_kernel)
        fault("CNA", "WEIGHT_SIZE1", "WEIGHT_BYTES_PER_KERNEL", c.weight_bytes_per_kernel,
              fmt::format("expected kernel_w*kernel_h*channels{} = {}",
                          c.precision == Precision::Int4 ? "/2" : (c.elem() > 1 ? "*2" : ""), per_kernel));
    if (!c.depthwise && c.weight_bytes != per_kernel * c.kernels)
        fault("CNA", "WEIGHT_SIZE0", "WEIGHT_BYTES", c.weight_bytes,
              fmt::format("expected bytes_per_kernel*kernels = {}", per_kernel * c.kernels));
    const uint64_t row = static_cast<uint64_t>(c.in_w) * c.pixel_bytes;
    if (c.line_stride_bytes < row)
        fault("CNA", "DMA_CON1", "LINE_STRIDE", c.line_stride_bytes,
              fmt::format("row stride {} bytes below width x pixel = {} bytes", c.line_stride_bytes, row));
    if (c.mem_surfaces > 1 && c.surf_stride_bytes < c.line_stride_bytes * (c.in_h - 1) + row)
        fault("CNA", "DMA_CON2", "SURF_STRIDE", c.surf_stride_bytes,
              fmt::format("surface stride {} bytes below the {} rows of a surface ({} bytes)", c.surf_stride_bytes, c.in_h,
                          c.line_stride_bytes * (c.in_h - 1) + row));
    if (c.out_cvt_shift > 63)
        fault("DPU", "OUT_CVT_SHIFT", "OUT_CVT_SHIFT", c.out_cvt_shift, "shift beyond the 64-bit accumulator path");
    for (Fault& f : validate_dpu(c.dpu, p)) out.push_back(std::move(f));
    return out;
}

}  // namespace npu::rknpu
