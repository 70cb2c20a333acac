// SPDX-License-Identifier: MIT
// The DPU float path's LUT for element-wise functions on the fp16 path (issue 14): Sigmoid, Tanh,
// SiLU, HardSwish, ... sampled into both tables (LO: 257 fp16 entries on the central quarter of
// the range, LE: 65 on the whole range; linear interpolation, linear extrapolation outside). Table fields and lookup as npu_models/rknpu dpu_engine.cpp
// (lut_lookup_f, UNVERIFIED encoding after NVDLA SDP's float LUT: start/end fp32 register bits,
// entries fp16, index step 2^INDEX_SELECT with a signed 8-bit exponent, slopes scale x 2^-shift).
// ASSUMPTION (the vendor's LUT programming is not public): RKNN samples the function the same way;
// the error is interpolation (h^2/8 max|f''|) plus fp16 rounding of the entries, stated per
// function in COMPILER.md and checked per layer against kFp16LayerRtol.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "dpu_only.h"
#include "compiler/rknpu/lower.h"
#include "hw/rknpu_regs.h"
#include "numerics/half.h"

namespace drv::rknpu {

namespace {

constexpr size_t kLoEntries = 257;  // DPU LO table (npu_models kLutLoEntries)
constexpr size_t kLeEntries = 65;   // DPU LE table (npu_models kLutLeEntries)

/// slope ~ scale x 2^-shift with the int16 scale as large as it fits (shift 0..31).
void encode_slope(double slope, int16_t& scale, uint8_t& shift) {
    scale = 0, shift = 0;
    if (!std::isfinite(slope)) throw std::invalid_argument("LUT extrapolation slope is not finite");
    if (std::fabs(slope) > 32767.0) throw std::invalid_argument(fmt::format("LUT extrapolation slope {} beyond int16", slope));
    for (int s = 31; s >= 0; --s) {
        const double v = std::nearbyint(std::ldexp(slope, s));
        if (std::fabs(v) <= 32767.0) {
            scale = static_cast<int16_t>(v);
            shift = static_cast<uint8_t>(s);
            return;
        }
    }
}

uint32_t f32_bits(float v) {
    uint32_t u = 0;
    std::memcpy(&u, &v, 4);
    return u;
}

}  // namespace

float Fp16Lut::end() const { return start + std::ldexp(static_cast<float>(kLeEntries - 1), index_select); }

float Fp16Lut::lo_end() const { return lo_start + std::ldexp(static_cast<float>(kLoEntries - 1), lo_index_select); }

Fp16Lut make_fp16_lut(float range, const std::function<std::vector<float>(const std::vector<float>&)>& f) {
    int e = 0;
    if (!(range > 0) || std::frexp(range, &e) != 0.5f || e - 1 < -4 || e - 1 > 12)
        throw std::invalid_argument(fmt::format("LUT range {} is not a power of two in 2^-4..2^12", range));
    Fp16Lut t;
    t.start = -range;
    t.index_select = (e - 1) + 1 - 6;  // LE: 64 steps over 2 range
    t.lo_start = -range / 4;
    t.lo_index_select = (e - 1) - 1 - 8;  // LO: 256 steps over range / 2
    std::vector<float> xs;
    for (size_t k = 0; k < kLoEntries; ++k) xs.push_back(t.lo_start + std::ldexp(static_cast<float>(k), t.lo_index_select));
    for (size_t k = 0; k < kLeEntries; ++k) xs.push_back(t.start + std::ldexp(static_cast<float>(k), t.index_select));
    xs.push_back(-2 * range), xs.push_back(2 * range);
    const std::vector<float> ys = f(xs);
    if (ys.size() != xs.size()) throw std::invalid_argument("LUT function returned a different number of values");
    for (float y : ys)
        if (!std::isfinite(y) || std::fabs(y) > 65504.f)
            throw std::invalid_argument(fmt::format("LUT value {} on [-{}, {}] outside the fp16 range", y, 2 * range, 2 * range));
    for (size_t k = 0; k < kLoEntries; ++k) t.lo.push_back(num::fp32_to_fp16(ys[k]));
    for (size_t k = 0; k < kLeEntries; ++k) t.le.push_back(num::fp32_to_fp16(ys[kLoEntries + k]));
    // Extrapolation from the LE end entries along the far secants.
    const size_t le0 = kLoEntries, far = kLoEntries + kLeEntries;
    encode_slope((static_cast<double>(ys[le0]) - ys[far]) / range, t.uflow_scale, t.uflow_shift);
    encode_slope((static_cast<double>(ys[far + 1]) - ys[far - 1]) / range, t.oflow_scale, t.oflow_shift);
    return t;
}

void dpu_only::emit_lut_f16(BodyBuilder& bb, const Fp16Lut& t) {
    bb.write_fields("DPU_LUT_ACCESS_CFG", {{"LUT_ACCESS_TYPE", 1}, {"LUT_TABLE_ID", 0}, {"LUT_ADDR", 0}});
    for (uint16_t e : t.le) bb.write_fields("DPU_LUT_ACCESS_DATA", {{"LUT_ACCESS_DATA", e}});
    bb.write_fields("DPU_LUT_ACCESS_CFG", {{"LUT_ACCESS_TYPE", 1}, {"LUT_TABLE_ID", 1}, {"LUT_ADDR", 0}});
    for (uint16_t e : t.lo) bb.write_fields("DPU_LUT_ACCESS_DATA", {{"LUT_ACCESS_DATA", e}});
    // LO where it covers x (hybrid), LE beyond it, LE's extrapolation outside both (under/overflow).
    bb.write_fields("DPU_LUT_CFG", {{"LUT_EXPAND_EN", 0},
                                    {"LUT_HYBRID_PRIORITY", 1},
                                    {"LUT_UFLOW_PRIORITY", 0},
                                    {"LUT_OFLOW_PRIORITY", 0}});
    bb.write_fields("DPU_LUT_INFO", {{"LUT_LE_INDEX_SELECT", static_cast<uint8_t>(static_cast<int8_t>(t.index_select))},
                                     {"LUT_LO_INDEX_SELECT", static_cast<uint8_t>(static_cast<int8_t>(t.lo_index_select))}});
    bb.write("DPU_LUT_LO_START", f32_bits(t.lo_start));
    bb.write("DPU_LUT_LO_END", f32_bits(t.lo_end()));
    bb.write("DPU_LUT_LE_START", f32_bits(t.start));
    bb.write("DPU_LUT_LE_END", f32_bits(t.end()));
    bb.write_fields("DPU_LUT_LE_SLOPE_SCALE", {{"LUT_LE_SLOPE_UFLOW_SCALE", static_cast<uint16_t>(t.uflow_scale)},
                                               {"LUT_LE_SLOPE_OFLOW_SCALE", static_cast<uint16_t>(t.oflow_scale)}});
    bb.write_fields("DPU_LUT_LE_SLOPE_SHIFT",
                    {{"LUT_LE_SLOPE_UFLOW_SHIFT", t.uflow_shift}, {"LUT_LE_SLOPE_OFLOW_SHIFT", t.oflow_shift}});
    bb.write_fields("DPU_LUT_LO_SLOPE_SCALE", {{"LUT_LO_SLOPE_UFLOW_SCALE", 0}, {"LUT_LO_SLOPE_OFLOW_SCALE", 0}});
    bb.write_fields("DPU_LUT_LO_SLOPE_SHIFT", {{"LUT_LO_SLOPE_UFLOW_SHIFT", 0}, {"LUT_LO_SLOPE_OFLOW_SHIFT", 0}});
}

float fp16_lut_eval(const Fp16Lut& t, float x) {
    if (std::isnan(x)) return x;
    // One table on its grid (linear interpolation), x inside [first, last].
    const auto lookup = [x](const std::vector<uint16_t>& e, float start, int sel) {
        const float pos = std::ldexp(x - start, -sel);
        const float idx = std::floor(pos);
        if (!(idx < static_cast<float>(e.size() - 1))) return num::fp16_to_fp32(e.back());
        const auto i = static_cast<size_t>(idx);
        const float a = num::fp16_to_fp32(e.at(i)), b = num::fp16_to_fp32(e.at(i + 1));
        return a + (b - a) * (pos - idx);
    };
    if (x >= t.lo_start && x <= t.lo_end()) return lookup(t.lo, t.lo_start, t.lo_index_select);
    if (x < t.start) return num::fp16_to_fp32(t.le.at(0)) + (x - t.start) * std::ldexp(static_cast<float>(t.uflow_scale), -t.uflow_shift);
    if (x > t.end())
        return num::fp16_to_fp32(t.le.back()) + (x - t.end()) * std::ldexp(static_cast<float>(t.oflow_scale), -t.oflow_shift);
    return lookup(t.le, t.start, t.index_select);
}

}  // namespace drv::rknpu
