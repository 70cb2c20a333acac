// SPDX-License-Identifier: MIT
// The blocked GEMM kernels against naive triple loops: int8 exactly (every signedness pair, per-row
// and per-column zero points, ragged M/N/K that exercise the tile and k-group edges), fp32 within
// summation-order tolerance. Both the vector kernel the CPU selects and the portable one run.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "numerics/gemm.h"

namespace {

struct Shape {
    int64_t m, n, k;
};

std::vector<uint8_t> random_bytes(std::mt19937& rng, size_t n) {
    std::uniform_int_distribution<int> d(0, 255);
    std::vector<uint8_t> v(n);
    for (auto& x : v) x = static_cast<uint8_t>(d(rng));
    return v;
}

int32_t as_int(uint8_t raw, bool is_signed) { return is_signed ? static_cast<int8_t>(raw) : raw; }

class QGemmTest : public ::testing::TestWithParam<bool> {
   protected:
    void SetUp() override { num::gemm_force_generic(GetParam()); }
    void TearDown() override { num::gemm_force_generic(false); }
};

TEST_P(QGemmTest, MatchesNaiveForAllSignednessAndZeroPoints) {
    const unsigned seed = 1234;
    std::mt19937 rng(seed);
    for (const Shape s : {Shape{1, 1, 1}, Shape{7, 17, 5}, Shape{13, 33, 36}, Shape{6, 32, 1030}, Shape{20, 50, 75}})
        for (int combo = 0; combo < 4; ++combo) {
            const bool as = combo & 1, bs = combo & 2;
            const auto a = random_bytes(rng, static_cast<size_t>(s.m * s.k));
            const auto b = random_bytes(rng, static_cast<size_t>(s.k * s.n));
            num::Q8Operand A, B;
            A.data = a.data();
            A.is_signed = as;
            A.ld = s.k;
            A.zp.clear();
            for (int64_t i = 0; i < s.m; ++i) A.zp.push_back(as ? static_cast<int32_t>(i % 7) - 3 : 120 + static_cast<int32_t>(i % 9));
            B.data = b.data();
            B.is_signed = bs;
            B.ld = s.n;
            B.zp = {bs ? -5 : 131};
            std::vector<int32_t> c(static_cast<size_t>(s.m * s.n));
            num::qgemm(s.m, s.n, s.k, A, B, c.data(), s.n);
            for (int64_t i = 0; i < s.m; ++i)
                for (int64_t j = 0; j < s.n; ++j) {
                    int64_t want = 0;
                    for (int64_t k = 0; k < s.k; ++k)
                        want += (as_int(a[static_cast<size_t>(i * s.k + k)], as) - A.zp[static_cast<size_t>(i)]) *
                                (as_int(b[static_cast<size_t>(k * s.n + j)], bs) - B.zp[0]);
                    ASSERT_EQ(c[static_cast<size_t>(i * s.n + j)], want)
                        << "seed " << seed << " m" << s.m << " n" << s.n << " k" << s.k << " combo " << combo << " at " << i << "," << j;
                }
        }
}

TEST_P(QGemmTest, FusedRequantizationMatchesScalarFormula) {
    // Expected: saturate(RNE(float(exact_sum + bias) * scale) + zp), the QLinearConv rule, with
    // RNE by nearbyint; K = 2100 spans three 1024-deep k blocks.
    const unsigned seed = 77;
    std::mt19937 rng(seed);
    const int64_t M = 11, N = 37, K = 2100;
    const auto a = random_bytes(rng, static_cast<size_t>(M * K));
    const auto b = random_bytes(rng, static_cast<size_t>(K * N));
    num::Q8Operand A, B;
    A.data = a.data();
    A.is_signed = true;
    A.ld = K;
    A.zp = {0};
    B.data = b.data();
    B.is_signed = false;
    B.ld = N;
    B.zp = {117};
    std::vector<float> scale(static_cast<size_t>(M));
    std::vector<int32_t> bias(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m) {
        scale[static_cast<size_t>(m)] = 1.0f / static_cast<float>(2000 + 300 * m);
        bias[static_cast<size_t>(m)] = static_cast<int32_t>(m * 997) - 5000;
    }
    for (const bool out_signed : {false, true}) {
        std::vector<uint8_t> out(static_cast<size_t>(M * N));
        num::QGemmRequant rq;
        rq.scale = scale.data();
        rq.bias = bias.data();
        rq.zp = out_signed ? -3 : 129;
        rq.out_signed = out_signed;
        rq.out = out.data();
        rq.ldo = N;
        num::qgemm_requant(M, N, K, A, B, rq);
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                int64_t acc = 0;
                for (int64_t k = 0; k < K; ++k)
                    acc += as_int(a[static_cast<size_t>(i * K + k)], true) * (as_int(b[static_cast<size_t>(k * N + j)], false) - 117);
                const float v = static_cast<float>(acc + bias[static_cast<size_t>(i)]) * scale[static_cast<size_t>(i)];
                const int64_t lo = out_signed ? -128 : 0, hi = out_signed ? 127 : 255;
                const int64_t want = std::min(hi, std::max(lo, static_cast<int64_t>(std::nearbyint(v)) + rq.zp));
                const int64_t got = out_signed ? static_cast<int8_t>(out[static_cast<size_t>(i * N + j)]) : out[static_cast<size_t>(i * N + j)];
                ASSERT_EQ(got, want) << "seed " << seed << " at " << i << "," << j << " signed " << out_signed;
            }
    }
}

TEST_P(QGemmTest, FloatGemmMatchesNaive) {
    std::mt19937 rng(99);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (const Shape s : {Shape{1, 1, 1}, Shape{7, 17, 5}, Shape{13, 33, 300}, Shape{6, 48, 20}}) {
        std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n)), c(static_cast<size_t>(s.m * s.n));
        for (auto& x : a) x = d(rng);
        for (auto& x : b) x = d(rng);
        num::sgemm(s.m, s.n, s.k, a.data(), s.k, b.data(), s.n, c.data(), s.n);
        for (int64_t i = 0; i < s.m; ++i)
            for (int64_t j = 0; j < s.n; ++j) {
                double want = 0.0, mag = 0.0;
                for (int64_t k = 0; k < s.k; ++k) {
                    const double p = static_cast<double>(a[static_cast<size_t>(i * s.k + k)]) * b[static_cast<size_t>(k * s.n + j)];
                    want += p;
                    mag += std::fabs(p);
                }
                // fp32 summation error bound: K * eps * sum |terms|.
                EXPECT_NEAR(c[static_cast<size_t>(i * s.n + j)], want, 1e-7 * static_cast<double>(s.k) * mag + 1e-7);
            }
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, QGemmTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "generic" : "selected"; });

}  // namespace
