// SPDX-License-Identifier: MIT
// From the bytes the CNA reads to the cubes the engines compute on: feature pixels as silicon
// producers lay them out (NC1HWC2 atoms, image rows, the vendor matmul's wide rows) through the
// input convert, and the silicon weight blocks (hw/rknpu_layout.h) into kernel-major [kh][kw][C].
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "npu/rknpu/conv_config.h"
#include "numerics/requant.h"

namespace npu::rknpu {

namespace {

/// One int8 input element through CVT_CON* (set i = ch % 4).
int64_t convert_input(const ConvConfig::Cvt& v, uint8_t byte, uint32_t ch) {
    const int i = static_cast<int>(ch % 4);
    const int64_t x = v.is_signed ? static_cast<int8_t>(byte) : static_cast<int64_t>(byte);
    int64_t r = 0;
    if (v.add_first)
        r = num::mul_shift(x + v.offset[i], v.scale[i], static_cast<int>(v.truncate[i]), num::Rounding::HalfUp);
    else
        r = num::mul_shift(x, v.scale[i], static_cast<int>(v.truncate[i]), num::Rounding::HalfUp) + v.offset[i];
    return num::saturate(r, INT8_MIN, INT8_MAX);
}

}  // namespace

std::vector<uint8_t> canonical_feature(const ConvConfig& c, std::vector<uint8_t> raw, uint32_t channels) {
    const uint32_t eb = elem_bytes(c.precision), c2 = c.c2();
    const bool identity = !c.image && c.cvt.bypass && c.pixel_bytes == c.atom && channels == c.in_c;
    const uint64_t row = static_cast<uint64_t>(c.in_w) * c.pixel_bytes, mem_surf = row * c.in_h;
    if (raw.size() < mem_surf * c.mem_surfaces)
        throw std::logic_error(fmt::format("feature: {} bytes read, the cube needs {}", raw.size(), mem_surf * c.mem_surfaces));
    if (identity) return raw;
    if (c.precision == Precision::Int4) throw std::logic_error("feature: int4 input is read in NC1HWC2 atoms only");
    const uint64_t surf = surface_bytes(c.in_w, c.in_h, c.atom);
    std::vector<uint8_t> out((channels + c2 - 1) / c2 * surf, 0);
    const uint32_t present = c.image ? c.in_c_real : c.in_c;
    for (uint32_t ch = 0; ch < std::min(present, channels); ++ch) {
        const uint64_t ms = ch / c.mem_channels, mc = ch % c.mem_channels;
        for (uint32_t y = 0; y < c.in_h; ++y)
            for (uint32_t x = 0; x < c.in_w; ++x) {
                const uint8_t* src = raw.data() + ms * mem_surf + y * row + static_cast<uint64_t>(x) * c.pixel_bytes + mc * eb;
                uint8_t* dst = out.data() + (ch / c2) * surf + (static_cast<uint64_t>(y) * c.in_w + x) * c.atom + (ch % c2) * eb;
                if (!c.cvt.bypass)
                    dst[0] = static_cast<uint8_t>(static_cast<int8_t>(convert_input(c.cvt, src[0], ch)));
                else
                    std::memcpy(dst, src, eb);
            }
    }
    return out;
}

std::vector<uint8_t> canonical_weights(const ConvConfig& c, const std::vector<uint8_t>& raw, uint32_t kernels,
                                       uint32_t channels) {
    const bool i4 = c.precision == Precision::Int4;
    const uint32_t eb = elem_bytes(c.precision);
    const uint32_t taps = c.kernel_w * c.kernel_h;
    auto get = [&](uint64_t e, uint8_t* dst, uint64_t de) {
        if (i4) {
            const uint8_t n = static_cast<uint8_t>((raw.at(e / 2) >> ((e & 1) * 4)) & 0xf);
            dst[de / 2] = static_cast<uint8_t>(dst[de / 2] | (n << ((de & 1) * 4)));
        } else {
            std::memcpy(dst + de * eb, raw.data() + e * eb, eb);
        }
    };
    const uint64_t elems = c.depthwise ? static_cast<uint64_t>(taps) * channels
                                       : static_cast<uint64_t>(kernels) * taps * channels;
    std::vector<uint8_t> out(i4 ? (elems + 1) / 2 : elems * eb, 0);
    const uint64_t need = i4 ? (static_cast<uint64_t>(c.weight_bytes) * 2) : c.weight_bytes / eb;
    if (raw.size() < c.weight_bytes) throw std::logic_error("weights: fewer bytes read than WEIGHT_BYTES");
    if (c.depthwise) {
        const uint32_t cin = std::min(c.in_c, channels);
        if (!i4 && c.wblocks.channel_group > 0) {  // runs of a channel group, as below
            const uint32_t CG = c.wblocks.channel_group;
            for (uint32_t t = 0; t < taps; ++t)
                for (uint32_t ch = 0; ch < cin; ch += CG) {
                    const uint32_t n = std::min(CG, cin - ch);
                    const uint64_t e = hw::rknpu::weight_element(c.wblocks, 1, taps, c.in_c, 0, t, ch);
                    if (e + n > need) throw std::logic_error("weights: block index beyond WEIGHT_BYTES");
                    std::memcpy(out.data() + (static_cast<uint64_t>(t) * channels + ch) * eb, raw.data() + e * eb,
                                static_cast<size_t>(n) * eb);
                }
            return out;
        }
        for (uint32_t t = 0; t < taps; ++t)
            for (uint32_t ch = 0; ch < cin; ++ch) {
                const uint64_t e = hw::rknpu::weight_element(c.wblocks, 1, taps, c.in_c, 0, t, ch);
                if (e >= need) throw std::logic_error("weights: block index beyond WEIGHT_BYTES");
                get(e, out.data(), static_cast<uint64_t>(t) * channels + ch);
            }
        return out;
    }
    const uint32_t present = std::min(c.kernels, kernels), cin = std::min(c.in_c, channels);
    if (!i4 && c.wblocks.channel_group > 0) {
        // Whole runs: inside one channel group the channels of a (kernel, tap) are consecutive
        // elements (hw::rknpu::weight_element), so each run is one copy; the same bytes as the
        // element loop below.
        // weight_element's index with the kernel group's terms hoisted out of the run loop.
        const uint64_t CG = c.wblocks.channel_group, KG = std::max<uint32_t>(c.wblocks.kernel_group, 1);
        for (uint32_t k = 0; k < present; ++k) {
            const uint64_t kg = k / KG, kin = k % KG, nk = std::min<uint64_t>(KG, c.kernels - kg * KG);
            const uint64_t kbase = kg * KG * taps * c.in_c;
            for (uint32_t t = 0; t < taps; ++t)
                for (uint32_t ch = 0; ch < cin; ch += static_cast<uint32_t>(CG)) {
                    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(CG, cin - ch));
                    const uint64_t nc = std::min<uint64_t>(CG, c.in_c - ch);  // ch = cg x CG
                    const uint64_t e = kbase + nk * taps * ch + static_cast<uint64_t>(t) * nk * nc + kin * nc;
                    if (e + n > need) throw std::logic_error("weights: block index beyond WEIGHT_BYTES");
                    uint8_t* dst = out.data() + ((static_cast<uint64_t>(k) * taps + t) * channels + ch) * eb;
                    const uint8_t* src = raw.data() + e * eb;
                    const size_t bytes = static_cast<size_t>(n) * eb;
                    if (bytes == 32) std::memcpy(dst, src, 32);  // a whole int8 block row: an inlined fixed-size copy
                    else std::memcpy(dst, src, bytes);
                }
        }
        return out;
    }
    for (uint32_t k = 0; k < present; ++k)
        for (uint32_t t = 0; t < taps; ++t)
            for (uint32_t ch = 0; ch < cin; ++ch) {
                const uint64_t e = hw::rknpu::weight_element(c.wblocks, c.kernels, taps, c.in_c, k, t, ch);
                if (e >= need) throw std::logic_error("weights: block index beyond WEIGHT_BYTES");
                get(e, out.data(), (static_cast<uint64_t>(k) * taps + t) * channels + ch);
            }
    return out;
}

std::vector<std::string> conv_assumptions(const ConvConfig& c) {
    std::vector<std::string> a;
    if (c.mem_surfaces > 1)
        a.push_back("A-SURF: surface step = SURF_STRIDE x 16 + 4 x row bytes (exact for every Mesa, mtx512 and vendor value)");
    if (c.image)
        a.push_back(fmt::format("A-IMAGE: ARGB_IN {} image input, pixels of {} channels ({} bytes) in rows of "
                                "LINE_STRIDE pixels ({} bytes), other channels 0",
                                c.argb_in, c.in_c_real, c.pixel_bytes, c.line_stride_bytes));
    if (!c.image && c.group_line_off && c.pixel_bytes != c.atom)
        a.push_back(fmt::format("A-MM: GROUP_LINE_OFF rows of {} pixels of {} bytes (vendor matmul perf layout)", c.in_w,
                                c.pixel_bytes));
    if (c.weight_offset)
        a.push_back(fmt::format("A-OW: BS_OW_OP {} added to every weight (OD_BYPASS = 0)", c.weight_offset));
    if (c.nn_mode)
        a.push_back(fmt::format("A-NN-MODE: CONV_CON3.NN_MODE {} (multi-core co-work MAC shape, TRM) not modelled: the "
                                "core computes the task as programmed",
                                c.nn_mode));
    if (c.precision == Precision::Int8 && c.dpu.float_path())
        a.push_back("A-I2F: the int8 accumulator enters the DPU's float path as its value (int32 -> fp32), fp16/fp32 output");
    if (c.dpu.notch) a.push_back("A-NOTCH: output rows of width + DATA_CUBE_NOTCH_ADDR.NOTCH_ADDR_0 atoms");
    if (c.dpu.transpose) a.push_back("A-TP: TP_EN writes the output channel-last (NHWC)");
    return a;
}

}  // namespace npu::rknpu
