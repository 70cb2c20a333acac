// SPDX-License-Identifier: MIT
// Internal helpers of the TFLite operators (domain "tflite"): NHWC tensors, quantization read from
// the input tensors (Tensor::quant) and, for outputs, from the attributes the TFLite importer
// records (_output_dtype, _output_scale, _output_zero_point), fused activations, SAME/VALID padding.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../ops/op_common.h"
#include "numerics/tflite_quant.h"

namespace num::tfl {

using ops::Inputs;
using ops::Outputs;

/// Quantization of one tensor as the kernels use it (per channel: one scale per slice).
struct Q {
    std::vector<float> scale;
    std::vector<int32_t> zp;
    float s(size_t c = 0) const { return scale.size() > 1 ? scale[c] : scale.at(0); }
    int32_t z(size_t c = 0) const { return zp.size() > 1 ? zp[c] : (zp.empty() ? 0 : zp[0]); }
};

bool is_quant_type(DType d);
/// Code range of an integer activation type (int8 [-128, 127], uint8 [0, 255], int16).
void code_range(DType d, int32_t& lo, int32_t& hi);
/// The tensor's quantization; OpError when a quantized type carries none.
Q quant_of(const Tensor& t, const std::string& op, const char* what);
/// The output's dtype/quantization from the importer's attributes (default: like `like`).
DType out_dtype(const Attributes& a, DType like);
Q out_quant(const Attributes& a, const std::string& op);
/// Output tensor with the quantization recorded on the node.
Tensor make_out(const Attributes& a, DType d, std::vector<int64_t> shape);

/// Integer codes of a quantized tensor (int8/uint8/int16/int32) as int32.
std::vector<int32_t> codes(const Tensor& t);
/// Writes int32 codes (already clamped) into `t`.
void store_codes(Tensor& t, const std::vector<int32_t>& v);

/// fused_activation_function: float clamp bounds and the quantized range (TFLite
/// CalculateActivationRangeQuantized: zero point + TfLiteRound(bound / scale), within the type).
std::string fused(const Attributes& a);
void act_range_f(const std::string& act, float& lo, float& hi, const std::string& op);
void act_range_q(const std::string& act, DType d, float scale, int32_t zp, int32_t& lo, int32_t& hi,
                 const std::string& op);

/// TFLite ComputePaddingHeightWidth for one axis: output size and the leading padding.
void pad_1d(const std::string& padding, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t& out,
            int64_t& before, const std::string& op);

/// Registration hooks (registry.cpp calls them).
void register_conv(ops::OpTable& t);
void register_elementwise(ops::OpTable& t);
void register_pool(ops::OpTable& t);
void register_shape(ops::OpTable& t);
void register_more(ops::OpTable& t);
void register_resize_matmul(ops::OpTable& t);

}  // namespace num::tfl
