// SPDX-License-Identifier: MIT
// The one comparator (numerics/compare.h) against hand-computed figures: step
// classes, the numpy.allclose tolerance, the float metrics, accumulation, and
// refusing mismatched tensors.
#include "numerics/compare.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

num::Tensor f32(std::vector<float> v) {
    num::Tensor t(num::DType::F32, {1, static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = v[i];
    return t;
}

num::Tensor s8(std::vector<int8_t> v) {
    num::Tensor t(num::DType::I8, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.data<int8_t>()[i] = v[i];
    return t;
}

TEST(Compare, Int8StepClassesAndMetrics) {
    // diffs 0, 1, -1, 3: 1 equal, 2 off by one, 1 worse, max 3 steps.
    num::Comparison c;
    EXPECT_EQ(num::compare(s8({10, 11, -6, 4}), s8({10, 10, -5, 1}), {}, c), "");
    EXPECT_EQ(c.values, 4u);
    EXPECT_EQ(c.equal, 1u);
    EXPECT_EQ(c.off_by_one, 2u);
    EXPECT_EQ(c.worse, 1u);
    EXPECT_EQ(c.max_abs_diff, 3);
    EXPECT_DOUBLE_EQ(c.max_abs, 3.0);
    EXPECT_DOUBLE_EQ(c.mean_abs(), (0 + 1 + 1 + 3) / 4.0);
    // cosine of got (10,11,-6,4) and want (10,10,-5,1): (100+110+30+4) / sqrt(273 * 226)
    EXPECT_NEAR(c.cosine(), 244.0 / std::sqrt(273.0 * 226.0), 1e-12);
    EXPECT_EQ(c.within, 1u);  // default tolerance 0: only the equal value
}

TEST(Compare, FloatAllcloseAndLsb) {
    // want 1, -2, 100; got off by 0.01, 0, 0.5: atol 0.02 + rtol 0.004 x |want|
    // allows 0.024, 0.028, 0.42.
    num::Tolerance tol;
    tol.atol = 0.02;
    tol.rtol = 0.004;
    tol.lsb = 0.01;
    num::Comparison c;
    EXPECT_EQ(num::compare(f32({1.01f, -2.f, 100.5f}), f32({1.f, -2.f, 100.f}), tol, c), "");
    EXPECT_EQ(c.within, 2u);
    EXPECT_FALSE(c.all_within());
    EXPECT_NEAR(c.worst_ratio, 0.5 / 0.42, 1e-4);
    EXPECT_EQ(c.equal, 1u);       // -2 exact
    EXPECT_EQ(c.off_by_one, 1u);  // 0.01 = 1 LSB
    EXPECT_EQ(c.worse, 1u);       // 0.5 = 50 LSB
    EXPECT_EQ(c.max_abs_diff, 50);
    EXPECT_NEAR(c.max_abs, 0.5, 1e-5);
}

TEST(Compare, FloatWithoutLsbCountsAnyDifferenceAsWorse) {
    num::Comparison c;
    EXPECT_EQ(num::compare(f32({1.f, 2.f}), f32({1.f, 2.0001f}), {}, c), "");
    EXPECT_EQ(c.equal, 1u);
    EXPECT_EQ(c.worse, 1u);
}

TEST(Compare, MergeEqualsOneComparisonOverBoth) {
    num::Comparison a, b, all;
    num::compare(s8({1, 2}), s8({1, 4}), {}, a);
    num::compare(s8({7}), s8({6}), {}, b);
    num::compare(s8({1, 2, 7}), s8({1, 4, 6}), {}, all);
    a.merge(b);
    EXPECT_EQ(a.values, all.values);
    EXPECT_EQ(a.equal, all.equal);
    EXPECT_EQ(a.off_by_one, all.off_by_one);
    EXPECT_EQ(a.worse, all.worse);
    EXPECT_DOUBLE_EQ(a.cosine(), all.cosine());
    EXPECT_DOUBLE_EQ(a.mean_abs(), all.mean_abs());
}

TEST(Compare, MismatchedShapeOrDtypeIsAnErrorAndCountsNothing) {
    num::Comparison c;
    EXPECT_NE(num::compare(s8({1, 2}), s8({1, 2, 3}), {}, c), "");
    EXPECT_NE(num::compare(f32({1.f}), s8({1}), {}, c), "");
    EXPECT_EQ(c.values, 0u);
}

TEST(Compare, CosineOfZeroTensors) {
    num::Comparison c;
    num::compare(f32({0.f, 0.f}), f32({0.f, 0.f}), {}, c);
    EXPECT_EQ(c.cosine(), 1.0);
    num::Comparison d;
    num::compare(f32({0.f, 1.f}), f32({0.f, 0.f}), {}, d);
    EXPECT_EQ(d.cosine(), 0.0);
}

}  // namespace
