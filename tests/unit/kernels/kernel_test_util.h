// SPDX-License-Identifier: MIT
// Helpers of the MCU kernel tests: seeded data, NHWC<->NCHW, num::Tensor construction, and the
// comparison rules of issue 8 (int8 exact or <= 1 LSB with the measured fraction; fp32 1e-5).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "numerics/ops.h"
#include "numerics/tensor.h"

namespace mkt {

using Shape = std::vector<int64_t>;

inline std::vector<int8_t> rand_i8(std::mt19937& g, size_t n, int lo = -128, int hi = 127) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int8_t> v(n);
    for (auto& x : v) x = static_cast<int8_t>(d(g));
    return v;
}
inline std::vector<float> rand_f32(std::mt19937& g, size_t n, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = d(g);
    return v;
}
inline std::vector<int32_t> rand_i32(std::mt19937& g, size_t n, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int32_t> v(n);
    for (auto& x : v) x = d(g);
    return v;
}

template <typename T>
num::Tensor tensor(num::DType dt, Shape shape, const std::vector<T>& data) {
    num::Tensor t(dt, std::move(shape));
    EXPECT_EQ(t.nbytes(), data.size() * sizeof(T));
    std::memcpy(t.raw(), data.data(), t.nbytes());
    return t;
}
inline num::Tensor f32(Shape s, const std::vector<float>& d) { return tensor(num::DType::F32, std::move(s), d); }
inline num::Tensor i8(Shape s, const std::vector<int8_t>& d) { return tensor(num::DType::I8, std::move(s), d); }
inline num::Tensor i32(Shape s, const std::vector<int32_t>& d) { return tensor(num::DType::I32, std::move(s), d); }
inline num::Tensor i64(Shape s, const std::vector<int64_t>& d) { return tensor(num::DType::I64, std::move(s), d); }
inline num::Tensor scalar_f(float v) { return f32({}, {v}); }
inline num::Tensor scalar_i8(int v) { return i8({}, {static_cast<int8_t>(v)}); }

/// NHWC <-> NCHW for any element type.
template <typename T>
std::vector<T> nhwc_to_nchw(const std::vector<T>& v, int n, int h, int w, int c) {
    std::vector<T> o(v.size());
    for (int a = 0; a < n; ++a)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                for (int k = 0; k < c; ++k) o[((a * c + k) * h + y) * w + x] = v[((a * h + y) * w + x) * c + k];
    return o;
}
template <typename T>
std::vector<T> nchw_to_nhwc(const std::vector<T>& v, int n, int c, int h, int w) {
    std::vector<T> o(v.size());
    for (int a = 0; a < n; ++a)
        for (int k = 0; k < c; ++k)
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x) o[((a * h + y) * w + x) * c + k] = v[((a * c + k) * h + y) * w + x];
    return o;
}

template <typename T>
std::vector<T> values(const num::Tensor& t) {
    std::vector<T> v(t.nbytes() / sizeof(T));
    std::memcpy(v.data(), t.raw(), t.nbytes());
    return v;
}

inline num::Tensor run1(const std::string& op, const num::Attributes& a, const std::vector<const num::Tensor*>& in,
                        const std::string& domain = "") {
    return num::run_op(op, a, in, domain).at(0);
}

/// int8 comparison: every element within `max_lsb`; returns the fraction that differ at all.
inline double expect_close_i8(const std::vector<int8_t>& got, const std::vector<int8_t>& want, int max_lsb,
                              const std::string& what) {
    EXPECT_EQ(got.size(), want.size()) << what;
    size_t off = 0, bad = 0;
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
        const int d = std::abs(int(got[i]) - int(want[i]));
        off += d != 0;
        if (d > max_lsb && bad++ < 5)
            ADD_FAILURE() << what << ": element " << i << " got " << int(got[i]) << " want " << int(want[i]);
    }
    return got.empty() ? 0.0 : double(off) / double(got.size());
}

inline void expect_close_f32(const std::vector<float>& got, const std::vector<float>& want, float tol,
                             const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    int bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const float t = tol * std::max(1.0f, std::fabs(want[i]));
        if (!(std::fabs(got[i] - want[i]) <= t) && bad++ < 5)
            ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i];
    }
}

}  // namespace mkt
