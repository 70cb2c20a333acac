// SPDX-License-Identifier: MIT
// Quantization arithmetic against hand computations of onnxruntime's formulas
// (quant_utils.py compute_scale_zp / quantize_nparray, base_quantizer.py quantize_bias_static_impl)
// and the calibration methods against properties of known distributions.
#include "compiler/quantize/scheme.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compiler/quantize/calibration.h"

using namespace drv::quant;

namespace {

const IntGrid kI8{8, true, false}, kU8{8, false, false}, kW8{8, true, true};

TEST(QuantScheme, GridBounds) {
    EXPECT_EQ(kI8.qmin(), -128);
    EXPECT_EQ(kI8.qmax(), 127);
    EXPECT_EQ(kU8.qmin(), 0);
    EXPECT_EQ(kU8.qmax(), 255);
    EXPECT_EQ(kW8.qmin(), -127);  // onnxruntime: symmetric int8 weights in [-127, 127]
    EXPECT_EQ(kW8.qmax(), 127);
    const IntGrid i4{4, true, true};  // a 4-bit grid for the tnpuv2 widths, in an int8 container
    EXPECT_EQ(i4.qmin(), -7);
    EXPECT_EQ(i4.qmax(), 7);
    EXPECT_EQ(i4.dtype(), num::DType::I8);
}

TEST(QuantScheme, ScaleZeroPointAsOnnxruntime) {
    // [-1, 3] on int8: scale = 4/255, zp = round(-128 - (-1)/(4/255)) = round(-64.25) = -64.
    ScaleZp p = scale_zp(-1.0, 3.0, kI8);
    EXPECT_FLOAT_EQ(p.scale, 4.0f / 255.0f);
    EXPECT_EQ(p.zero_point, -64);
    // Relu output [0, 6]: the zero point is qmin, so QuantizeLinear clamps at 0 exactly.
    EXPECT_EQ(scale_zp(0.0, 6.0, kI8).zero_point, -128);
    EXPECT_EQ(scale_zp(0.0, 6.0, kU8).zero_point, 0);
    // The range is widened to include 0: [2, 4] behaves as [0, 4].
    EXPECT_FLOAT_EQ(scale_zp(2.0, 4.0, kU8).scale, 4.0f / 255.0f);
    EXPECT_EQ(scale_zp(2.0, 4.0, kU8).zero_point, 0);
    // Ties round to even (numpy.round): uint8 [-1, 1]: 0 + 127.5 -> 128; int8: -0.5 -> 0.
    EXPECT_EQ(scale_zp(-1.0, 1.0, kU8).zero_point, 128);
    EXPECT_EQ(scale_zp(-1.0, 1.0, kI8).zero_point, 0);
    // Symmetric: max |r| / 127, zero point 0.
    p = scale_zp(-0.25, 0.5, kW8);
    EXPECT_FLOAT_EQ(p.scale, static_cast<float>(1.0 / 254.0));
    EXPECT_EQ(p.zero_point, 0);
    // Empty range: scale 1, zero point 0.
    p = scale_zp(0.0, 0.0, kI8);
    EXPECT_EQ(p.scale, 1.0f);
    EXPECT_EQ(p.zero_point, 0);
}

TEST(QuantScheme, QuantizeValueRoundsHalfToEvenAndSaturates) {
    const ScaleZp p{0.5f, 3};
    EXPECT_EQ(quantize_value(1.25f, p, kI8), 2 + 3);  // 2.5 -> 2
    EXPECT_EQ(quantize_value(1.75f, p, kI8), 4 + 3);  // 3.5 -> 4
    EXPECT_EQ(quantize_value(1000.f, p, kI8), 127);
    EXPECT_EQ(quantize_value(-1000.f, p, kI8), -128);
    EXPECT_EQ(quantize_value(-1000.f, p, kU8), 0);
}

TEST(QuantScheme, PerChannelWeights) {
    num::Tensor w(num::DType::F32, {2, 1, 1, 3});
    const float v[] = {0.5f, -0.25f, 0.125f, -2.0f, 1.0f, 0.01f};
    std::copy(v, v + 6, w.data<float>());
    std::vector<float> s;
    std::vector<int32_t> z;
    num::Tensor q = quantize_weight(w, kW8, true, 0, s, z);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_FLOAT_EQ(s[0], static_cast<float>(0.5 / 127));
    EXPECT_FLOAT_EQ(s[1], static_cast<float>(2.0 / 127));
    EXPECT_EQ(z, (std::vector<int32_t>{0, 0}));
    // Channel 0: 0.5 / (0.5/127) = 127, -0.25 -> -63.5 -> -64 (even), 0.125 -> 31.75 -> 32.
    // Channel 1: -2 -> -127, 1 -> 63.5 -> 64, 0.01 -> 0.635 -> 1.
    const int8_t want[] = {127, -64, 32, -127, 64, 1};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(q.data<int8_t>()[i], want[i]) << i;
    q = quantize_weight(w, kW8, false, 0, s, z);  // per tensor: one scale, max |w| = 2
    ASSERT_EQ(s.size(), 1u);
    EXPECT_FLOAT_EQ(s[0], static_cast<float>(2.0 / 127));
}

TEST(QuantScheme, BiasScaleIsInputTimesWeightScale) {
    num::Tensor b(num::DType::F32, {2});
    b.data<float>()[0] = 0.1f;
    b.data<float>()[1] = -0.2f;
    std::vector<float> bs;
    num::Tensor q = quantize_bias(b, 0.02f, {0.01f, 0.5f}, bs);
    ASSERT_EQ(bs.size(), 2u);
    EXPECT_EQ(bs[0], 0.02f * 0.01f);  // the float32 product, as onnxruntime stores it
    EXPECT_EQ(bs[1], 0.02f * 0.5f);
    EXPECT_EQ(q.data<int32_t>()[0], 500);  // 0.1 / 0.0002
    EXPECT_EQ(q.data<int32_t>()[1], -20);  // -0.2 / 0.01
    EXPECT_THROW(quantize_bias(b, 0.02f, {1.f, 2.f, 3.f}, bs), std::invalid_argument);
}

/// Histogram statistics of `v` as collect_stats lays them out.
TensorStats stats_of(const std::vector<float>& v) {
    TensorStats s;
    s.min = *std::min_element(v.begin(), v.end());
    s.max = *std::max_element(v.begin(), v.end());
    s.count = v.size();
    s.hist.assign(kHistogramBins, 0);
    const double t = std::max(std::fabs(s.min), std::fabs(s.max));
    s.hist_lo = s.min >= 0 ? 0 : -t;
    s.hist_hi = s.min >= 0 ? s.max : t;
    const double w = (s.hist_hi - s.hist_lo) / kHistogramBins;
    for (float x : v) s.hist[std::min<size_t>(kHistogramBins - 1, static_cast<size_t>((x - s.hist_lo) / w))]++;
    return s;
}

TEST(QuantCalibration, MinMaxIsTheObservedRange) {
    const TensorStats s = stats_of({-0.5f, 2.0f, 1.0f});
    double lo, hi;
    choose_range(s, CalibrationMethod::MinMax, kI8, lo, hi);
    EXPECT_EQ(lo, -0.5);
    EXPECT_EQ(hi, 2.0);
}

TEST(QuantCalibration, KlClipsRareOutliersButKeepsUniformData) {
    // TensorRT's motivating case: a ReLU-like distribution with a few far outliers; the entropy
    // threshold ignores the outliers' magnitude (min/max would spend the whole grid on them).
    std::mt19937 rng(5);
    std::exponential_distribution<float> ex(4.0f);  // mean 0.25, largest of 200000 about 3
    std::vector<float> heavy;
    for (int i = 0; i < 200000; ++i) heavy.push_back(ex(rng));
    for (int i = 0; i < 5; ++i) heavy.push_back(40.0f);
    double lo, hi;
    choose_range(stats_of(heavy), CalibrationMethod::Kl, kU8, lo, hi);
    EXPECT_LT(lo, 1e-3);
    EXPECT_LT(hi, 10.0);
    EXPECT_GT(hi, 0.5);  // P(x > 0.5) = e^-2: the body of the distribution stays inside
    std::uniform_real_distribution<float> un(0.0f, 1.0f);
    std::vector<float> flat;
    for (int i = 0; i < 200000; ++i) flat.push_back(un(rng));
    choose_range(stats_of(flat), CalibrationMethod::Kl, kU8, lo, hi);
    EXPECT_GT(hi, 0.95) << "uniform data has nothing to clip";
}

TEST(QuantCalibration, MmseTradesTailClippingAgainstStepSize) {
    // Exponential(4) without outliers: clipping the tail at t costs 0.125 e^(-4t), the step noise
    // (t/255)^2/12; their sum is smallest near t = 2.5, below the largest sample (about 3).
    std::mt19937 rng(5);
    std::exponential_distribution<float> ex(4.0f);
    std::vector<float> v;
    for (int i = 0; i < 200000; ++i) v.push_back(ex(rng));
    const TensorStats s = stats_of(v);
    double lo, hi;
    choose_range(s, CalibrationMethod::Mmse, kU8, lo, hi);
    EXPECT_LT(hi, 0.95 * s.max);
    EXPECT_GT(hi, 1.5);
    EXPECT_LT(histogram_mse(s, lo, hi, kU8), histogram_mse(s, s.min, s.max, kU8));
    // Far outliers that are not rare enough to ignore keep the full range: clipping 5 values at
    // 40 to t costs 5 (40 - t)^2 / 200005, far above the step noise of the full range.
    for (int i = 0; i < 5; ++i) v.push_back(40.0f);
    const TensorStats so = stats_of(v);
    choose_range(so, CalibrationMethod::Mmse, kU8, lo, hi);
    EXPECT_GT(hi, 30.0);
}

TEST(QuantCalibration, MmseIsNoWorseThanAnyShrunkRangeOnSignedData) {
    std::mt19937 rng(9);
    std::normal_distribution<float> nd(0.3f, 1.0f);
    std::vector<float> v;
    for (int i = 0; i < 100000; ++i) v.push_back(nd(rng));
    const TensorStats s = stats_of(v);
    double lo, hi;
    choose_range(s, CalibrationMethod::Mmse, kI8, lo, hi);
    EXPECT_LT(lo, 0);
    EXPECT_GT(hi, 0);
    const double best = histogram_mse(s, lo, hi, kI8);
    for (double f : {1.0, 0.9, 0.8, 0.7, 0.6, 0.5})
        EXPECT_LE(best, histogram_mse(s, s.min * f, s.max * f, kI8) * (1 + 1e-12)) << f;
}

}  // namespace
