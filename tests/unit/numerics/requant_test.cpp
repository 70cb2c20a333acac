// SPDX-License-Identifier: MIT
// Rounding, saturation and fixed-point requantization with hand-derived values.
#include <gtest/gtest.h>

#include "numerics/requant.h"

TEST(RoundHalfEven, TiesGoToEven) {
    EXPECT_EQ(num::round_half_even(0.5), 0);
    EXPECT_EQ(num::round_half_even(1.5), 2);
    EXPECT_EQ(num::round_half_even(2.5), 2);
    EXPECT_EQ(num::round_half_even(-0.5), 0);
    EXPECT_EQ(num::round_half_even(-1.5), -2);
    EXPECT_EQ(num::round_half_even(-2.5), -2);
    EXPECT_EQ(num::round_half_even(2.5000001), 3);
}

TEST(QuantizeLinearI8, RoundsThenAddsZeroPointThenSaturates) {
    // 0.75 / 0.5 = 1.5 -> 2, + zp 10 = 12.
    EXPECT_EQ(num::quantize_linear_i8(0.75f, 0.5f, 10), 12);
    // 1.25 / 0.5 = 2.5 -> 2 (even), + 10 = 12.
    EXPECT_EQ(num::quantize_linear_i8(1.25f, 0.5f, 10), 12);
    // Saturation is asymmetric: [-128, 127].
    EXPECT_EQ(num::quantize_linear_i8(1000.0f, 1.0f, 0), 127);
    EXPECT_EQ(num::quantize_linear_i8(-1000.0f, 1.0f, 0), -128);
    // -0.5 -> -0 -> 0 + zp -3 = -3.
    EXPECT_EQ(num::quantize_linear_i8(-0.25f, 0.5f, -3), -3);
}

TEST(MulShift, RoundingModesOnExactHalves) {
    // 5 * 1 >> 1 = 2.5; -5 >> 1 = -2.5.
    EXPECT_EQ(num::mul_shift(5, 1, 1, num::Rounding::HalfUp), 3);
    EXPECT_EQ(num::mul_shift(-5, 1, 1, num::Rounding::HalfUp), -2);
    EXPECT_EQ(num::mul_shift(-5, 1, 1, num::Rounding::HalfAwayFromZero), -3);
    EXPECT_EQ(num::mul_shift(5, 1, 1, num::Rounding::HalfToEven), 2);
    EXPECT_EQ(num::mul_shift(7, 1, 1, num::Rounding::HalfToEven), 4);  // 3.5 -> 4
    EXPECT_EQ(num::mul_shift(-5, 1, 1, num::Rounding::Truncate), -3);   // floor
}

TEST(QuantizeScale, RepresentsScaleWithinOneUlpOfMultiplier) {
    // 0.3 = 0.6 * 2^-1: 16-bit multiplier round(0.6 * 2^16) = 39322, shift 17.
    const num::FixedScale s = num::quantize_scale(0.3, 16, 40);
    EXPECT_EQ(s.multiplier, 39322);
    EXPECT_EQ(s.shift, 17);
    EXPECT_NEAR(s.value(), 0.3, 1.0 / (1 << 17));
}
