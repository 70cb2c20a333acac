// SPDX-License-Identifier: MIT
// Per-channel requantization planning of the int8 conv lowering (lower_conv.cpp): the folded bias
// and the BS/BN multiplier pair (M1, M2) with shifts S1..S3 per output channel. The scheme and its
// error bounds are described at the top of lower_conv.cpp.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/rknpu/lower.h"

namespace drv::rknpu::conv_detail {

/// Largest intermediate scale exponent: y * 2^23 keeps |y| up to 256 inside int32.
constexpr int kMaxFracBits = 23;

[[noreturn]] inline void fail(const ConvOp& op, const std::string& what) {
    throw std::invalid_argument(fmt::format("conv '{}': {}", op.name, what));
}

/// The OIHW weights: ConvOp::weights_ref when set, else ConvOp::weights.
inline const int8_t* weight_data(const ConvOp& op) { return op.weights_ref ? op.weights_ref : op.weights.data(); }

struct Requant {
    std::vector<int32_t> bias;  ///< folded: b_c - in_zp * sum(w_c)
    std::vector<int16_t> m1;    ///< BS MUL per channel
    std::vector<int16_t> m2;    ///< BN MUL per channel, in [2^14, 2^15) (lower only ~2^16 below the largest)
    /// BN ALU add per channel (ConvOp::float_ref with a float bias; else empty): the fraction of
    /// bias_f[c] / (in_scale w_scale[c]) that the int32 `bias` leaves out, in units of the BS output
    /// (M1_c 2^-S1 per accumulator unit).
    std::vector<int32_t> bn_add;
    int s1 = 0, s2 = 0, s3 = 0;
};

/// The DPU float-path operands of an int8 conv with a float output (ConvOp::float_out): BS adds
/// `offset` (fp32, per channel) to the accumulator and multiplies by `mul` (fp16 per channel,
/// m_c 2^exp), BN multiplies by 2^-exp (one fp16 register operand), so that the fp16 operands keep
/// their 11-bit precision (m_c = in_scale w_scale[c] is often below fp16's normal range).
struct FloatOut {
    std::vector<float> offset;   ///< bias_f[c] / m_c - in_zp * sum(w_c)
    std::vector<uint16_t> mul;   ///< fp16 bits of m_c 2^exp
    uint16_t post = 0x3c00;      ///< fp16 bits of 2^-exp
    int exp = 0;
};

/// shapes_only: the exponent from the scales and no per-channel operands (timing-only compile).
FloatOut plan_float_out(const ConvOp& op, bool shapes_only);

/// One channel's BS/BN multipliers: M1 in [1, 32767] and M2 in [2^14, 2^15) with M1 M2 nearest
/// `target` (= m 2^(S1 + S2 + S3)): the first pair within 2^-28 relative in the search order, else
/// the first of the least error.
struct RequantPair {
    int16_t m1 = 0, m2 = 0;
    bool operator==(const RequantPair& o) const { return m1 == o.m1 && m2 == o.m2; }
};
/// The search plan_requant uses: candidates scored in vector blocks (AVX-512 where the CPU has it,
/// else portable code; `portable` forces the latter, for tests), quotients by a reciprocal table
/// (conv_requant.cpp says why that rounds as the division does).
RequantPair requant_pair(double target, bool portable = false);
/// The same search one candidate at a time with a division each (what requant_pair must equal;
/// conv_requant_test compares them).
RequantPair requant_pair_reference(double target);

/// Whether plan_requant gives a BN ALU add (Requant::bn_add): the operand image layout.
inline bool has_bias_fraction(const ConvOp& op) {
    return op.float_ref && !op.fp16 && !op.float_out && !op.bias_f.empty();
}

/// shifts_only: the shifts (from the scales) and no per-channel bias/M1/M2 (timing-only compile,
/// where no operand bytes are written and the weights are absent).
Requant plan_requant(const ConvOp& op, bool shifts_only);

}  // namespace drv::rknpu::conv_detail
