// SPDX-License-Identifier: MIT
// The one comparator of npusim: a result tensor against an expectation (the reference executor,
// a golden .npy given with --expect, the float model of the quantizer's accuracy report). It
// counts the values in quantization steps (equal / 1 LSB / worse, what the NPU's isolated check
// reports), accumulates the float metrics (max and mean |diff|, cosine, Euclidean distance, what
// RKNN-Toolkit2's accuracy analysis prints) and the numpy.allclose tolerance test
// |got - want| <= atol + rtol * |want|. Comparisons accumulate (merge, add) over layers and samples.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "numerics/tensor.h"

namespace num {

/// How two tensors are compared. lsb: the quantization step that float values are counted in
/// (0: a float difference of any size is "worse"); integer tensors count integer steps.
struct Tolerance {
    double lsb = 0;
    double atol = 0, rtol = 0;  ///< numpy.allclose: |got - want| <= atol + rtol * |want|
};

struct Comparison {
    uint64_t values = 0;
    /// Differences in quantization steps: 0, 1, more (the equal count is the "exact count").
    uint64_t equal = 0, off_by_one = 0, worse = 0;
    int max_abs_diff = 0;  ///< largest difference in steps (saturated at 2^30)
    /// Float metrics on the values as stored (integers as their integer values).
    double dot = 0, ref_sq = 0, got_sq = 0, err_sq = 0, sum_abs = 0, max_abs = 0;
    /// Values within atol + rtol * |want|, and the largest |diff| / (atol + rtol * |want|).
    uint64_t within = 0;
    double worst_ratio = 0;

    /// Float metrics only (no step classes, no tolerance): `n` values of ref and got.
    void add(const float* ref, const float* got, size_t n);
    /// One element: want, got as doubles, the difference in steps.
    void add_value(double want, double got, int64_t steps, const Tolerance& tol);
    void merge(const Comparison& o);
    /// dot / (|ref| |got|); 1 when both are all zero, 0 when exactly one is.
    double cosine() const;
    double euclidean() const { return std::sqrt(err_sq); }
    double mean_abs() const { return values ? sum_abs / static_cast<double>(values) : 0.0; }
    bool all_within() const { return within == values; }
};

/// Compares `got` with `want` element by element into `c` (accumulating). Returns an error text,
/// counting nothing, when dtype or shape differ.
std::string compare(const Tensor& got, const Tensor& want, const Tolerance& tol, Comparison& c);

}  // namespace num
