// SPDX-License-Identifier: MIT
// The comparator (compare.h).
#include "numerics/compare.h"

#include <algorithm>
#include <limits>

namespace num {

void Comparison::add(const float* ref, const float* got, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const double a = ref[i], b = got[i], d = std::fabs(a - b);
        dot += a * b;
        ref_sq += a * a;
        got_sq += b * b;
        err_sq += d * d;
        sum_abs += d;
        max_abs = std::max(max_abs, d);
    }
    values += n;
}

void Comparison::add_value(double want, double got, int64_t steps, const Tolerance& tol) {
    const double d = std::fabs(want - got);
    dot += want * got;
    ref_sq += want * want;
    got_sq += got * got;
    err_sq += d * d;
    sum_abs += d;
    max_abs = std::max(max_abs, d);
    ++values;
    steps = steps < 0 ? -steps : steps;
    max_abs_diff = static_cast<int>(std::max<int64_t>(max_abs_diff, std::min<int64_t>(steps, int64_t{1} << 30)));
    (steps == 0 ? equal : steps == 1 ? off_by_one : worse) += 1;
    const double allowed = tol.atol + tol.rtol * std::fabs(want);
    if (d <= allowed) ++within;
    const double ratio = d == 0 ? 0.0 : allowed > 0 ? d / allowed : std::numeric_limits<double>::infinity();
    worst_ratio = std::max(worst_ratio, ratio);
}

void Comparison::merge(const Comparison& o) {
    values += o.values;
    equal += o.equal;
    off_by_one += o.off_by_one;
    worse += o.worse;
    max_abs_diff = std::max(max_abs_diff, o.max_abs_diff);
    dot += o.dot;
    ref_sq += o.ref_sq;
    got_sq += o.got_sq;
    err_sq += o.err_sq;
    sum_abs += o.sum_abs;
    max_abs = std::max(max_abs, o.max_abs);
    within += o.within;
    worst_ratio = std::max(worst_ratio, o.worst_ratio);
}

double Comparison::cosine() const {
    if (ref_sq == 0 && got_sq == 0) return 1.0;
    if (ref_sq == 0 || got_sq == 0) return 0.0;
    return dot / std::sqrt(ref_sq * got_sq);
}

namespace {

double value_at(const Tensor& t, size_t i) {
    switch (t.dtype()) {
        case DType::F32: return t.data<float>()[i];
        case DType::I8: return t.data<int8_t>()[i];
        case DType::U8: return t.data<uint8_t>()[i];
        case DType::Bool: return t.data<uint8_t>()[i];
        case DType::I16: return t.data<int16_t>()[i];
        case DType::U16: return t.data<uint16_t>()[i];
        case DType::I32: return t.data<int32_t>()[i];
        case DType::I64: return static_cast<double>(t.data<int64_t>()[i]);
        case DType::F16: return t.data<uint16_t>()[i];  // compared as bit patterns
    }
    return 0;
}

int64_t int_at(const Tensor& t, size_t i) {
    if (t.dtype() == DType::I64) return t.data<int64_t>()[i];
    return static_cast<int64_t>(value_at(t, i));
}

}  // namespace

std::string compare(const Tensor& got, const Tensor& want, const Tolerance& tol, Comparison& c) {
    if (got.dtype() != want.dtype() || got.shape() != want.shape())
        return std::string("result is ") + dtype_name(got.dtype()) + " " + got.shape_str() + ", the expectation " +
               dtype_name(want.dtype()) + " " + want.shape_str();
    const size_t n = want.numel();
    if (want.dtype() == DType::F32) {
        const float* a = got.data<float>();
        const float* b = want.data<float>();
        for (size_t i = 0; i < n; ++i) {
            const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
            const int64_t steps = tol.lsb > 0 ? static_cast<int64_t>(std::min(std::llround(d / tol.lsb), 1ll << 40))
                                  : d == 0  ? 0
                                            : 2;
            c.add_value(b[i], a[i], steps, tol);
        }
    } else if (want.dtype() == DType::F16) {
        for (size_t i = 0; i < n; ++i) {
            const uint16_t x = got.data<uint16_t>()[i], y = want.data<uint16_t>()[i];
            c.add_value(y, x, x == y ? 0 : 2, tol);
        }
    } else {
        for (size_t i = 0; i < n; ++i) {
            const int64_t x = int_at(got, i), y = int_at(want, i);
            c.add_value(static_cast<double>(y), static_cast<double>(x), x - y, tol);
        }
    }
    return {};
}

}  // namespace num
