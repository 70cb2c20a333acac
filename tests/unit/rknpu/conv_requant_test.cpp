// SPDX-License-Identifier: MIT
// Requantization planning (issue 25): the blocked pair search with reciprocal quotients
// (requant_pair) picks exactly the (M1, M2) of the plain one-candidate-at-a-time search with a
// division each (requant_pair_reference) over randomised scales and over the targets where the
// two could part (quotients on a half-integer, exact products, the small-M1 / large-M1 boundary,
// channels so small that no pair exists); and plan_requant's folded biases are the sums written
// out here, its multipliers the reference search's for each channel's own scale.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "conv_requant.h"

namespace cd = drv::rknpu::conv_detail;

namespace {

/// The total shift plan_requant picks for the largest channel scale m_max (2^14 + ... as there).
int total_shift(double m_max) { return static_cast<int>(std::floor(std::log2(32767.0 * (32767 - 1024 + 1) / m_max))); }

void expect_same(double target, const char* what) {
    const cd::RequantPair ref = cd::requant_pair_reference(target);
    for (bool portable : {false, true}) {
        const cd::RequantPair fast = cd::requant_pair(target, portable);
        ASSERT_TRUE(fast == ref) << what << (portable ? " (portable)" : " (vector)") << ": target " << target << " fast ("
                                 << fast.m1 << ", " << fast.m2 << ") reference (" << ref.m1 << ", " << ref.m2 << ")";
    }
}

}  // namespace

TEST(ConvRequant, PairSearchEqualsReferenceOnRandomScales) {
    std::mt19937_64 rng(25);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int layer = 0; layer < 400; ++layer) {
        // A layer: in_scale x w_scale / out_scale per channel in float, as onnxruntime forms it.
        const float m_max = static_cast<float>(std::ldexp(0.5 + u(rng), -static_cast<int>(u(rng) * 24)));
        const int s_tot = total_shift(m_max);
        for (int c = 0; c < 256; ++c) {
            const float mf = c == 0 ? m_max : static_cast<float>(m_max * std::ldexp(u(rng), -static_cast<int>(u(rng) * 20)));
            if (!(mf > 0)) continue;
            expect_same(std::ldexp(static_cast<double>(mf), s_tot), "random scale");
        }
    }
}

TEST(ConvRequant, PairSearchEqualsReferenceWhereQuotientsTie) {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int64_t> m2s(32767 - 1023, 32767), m1s(1, 32767), m2all(16384, 32767);
    for (int i = 0; i < 3000; ++i) {
        // target / f exactly on a half-integer for one candidate f: the reciprocal quotient is
        // recomputed by the division there.
        const int64_t f = m2s(rng), k = m1s(rng);
        expect_same(static_cast<double>(f) * (static_cast<double>(k) + 0.5), "half-integer quotient (large M1)");
        const int64_t g = m1s(rng) / 8 + 1, h = m2all(rng);
        expect_same(static_cast<double>(g) * (static_cast<double>(h) + 0.5), "half-integer quotient (small M1)");
        // Exact products: an error of 0 stops both searches at the same first candidate.
        expect_same(static_cast<double>(f * k), "exact product");
        expect_same(static_cast<double>(g * h), "exact product, small M1");
    }
    // The small-M1 / large-M1 boundary, targets too small for any pair, integers and near-integers.
    for (double t = 16384.0 * 4000; t < 16384.0 * 4200; t += 997.31) expect_same(t, "search boundary");
    for (double t : {0.25, 1.0, 100.0, 16383.0, 16384.0, 16384.5, 32767.0 * 32767.0, 32767.0 * 31744.0 + 0.5})
        expect_same(t, "edge target");
    for (int i = 0; i < 2000; ++i) expect_same(std::nextafter(static_cast<double>(m1s(rng) * m2all(rng)), 0.0), "near integer");
}

TEST(ConvRequant, PlanBiasesAndMultipliersPerChannel) {
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<int> w8(-128, 127), b32(-100000, 100000);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int t = 0; t < 40; ++t) {
        drv::rknpu::ConvOp op;
        op.name = "c";
        op.depthwise = t % 3 == 0;
        op.in_c = op.depthwise ? 24 : 3 + t * 7;
        op.out_c = op.depthwise ? op.in_c : 8 + t;
        op.kernel_h = op.kernel_w = 1 + 2 * (t % 2);
        const size_t per = static_cast<size_t>(op.depthwise ? 1 : op.in_c) * static_cast<size_t>(op.kernel_h * op.kernel_w);
        op.weights.resize(per * static_cast<size_t>(op.out_c));
        for (int8_t& w : op.weights) w = static_cast<int8_t>(w8(rng));
        const bool per_tensor = t % 4 == 1;  // one weight scale: every channel the same pair
        for (int c = 0; c < op.out_c; ++c) {
            op.bias.push_back(b32(rng));
            if (c == 0 || !per_tensor)
                op.w_scales.push_back(static_cast<float>(std::ldexp(0.5 + u(rng), -8 - static_cast<int>(u(rng) * 6))));
        }
        op.in_scale = 0.02f;
        op.out_scale = static_cast<float>(0.01 + u(rng) * 0.1);
        op.in_zp = w8(rng);
        const cd::Requant r = cd::plan_requant(op, false);
        ASSERT_EQ(r.bias.size(), static_cast<size_t>(op.out_c));
        const int s_tot = r.s1 + r.s2 + r.s3;
        for (int c = 0; c < op.out_c; ++c) {
            int64_t sum = 0;
            for (size_t i = 0; i < per; ++i) sum += op.weights[static_cast<size_t>(c) * per + i];
            EXPECT_EQ(r.bias[static_cast<size_t>(c)], op.bias[static_cast<size_t>(c)] - int64_t{op.in_zp} * sum) << "channel " << c;
            const float mf = op.in_scale * op.w_scales[per_tensor ? 0 : static_cast<size_t>(c)] / op.out_scale;
            const cd::RequantPair ref = cd::requant_pair_reference(std::ldexp(static_cast<double>(mf), s_tot));
            EXPECT_EQ(r.m1[static_cast<size_t>(c)], ref.m1) << "channel " << c;
            EXPECT_EQ(r.m2[static_cast<size_t>(c)], ref.m2) << "channel " << c;
        }
    }
}
