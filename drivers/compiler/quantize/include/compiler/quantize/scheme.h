// SPDX-License-Identifier: MIT
// Quantization schemes and the scale / zero-point arithmetic of onnxruntime's static quantizer
// (onnxruntime/python/tools/quantization/quant_utils.py: get_qmin_qmax_for_qType,
// compute_scale_zp, quantize_nparray; base_quantizer.py: quantize_bias_static_impl), with the bit
// width a parameter so that narrower (4-bit ...) integer grids in an 8-bit container use the
// same code. Target-neutral: no NPU or MCU knowledge here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "numerics/tensor.h"

namespace drv::quant {

/// One integer grid: `bits` wide, signed or not, stored in an 8-bit container (int8 / uint8).
/// Symmetric grids drop the most negative code (int8: [-127, 127]) as onnxruntime does for
/// symmetric int8 weights, so that zero is exactly in the middle.
struct IntGrid {
    int bits = 8;            ///< 2..8
    bool is_signed = true;   ///< int8 container (true) or uint8 (false)
    bool symmetric = false;  ///< zero point fixed at the centre (0 for signed grids)
    int64_t qmin() const;
    int64_t qmax() const;
    num::DType dtype() const { return is_signed ? num::DType::I8 : num::DType::U8; }
    std::string name() const;  ///< "asymmetric int8", "symmetric int4 (in int8)", ...
};

/// The scheme of one quantized model. The default is RKNN-Toolkit2's asymmetric_quantized-8:
/// per-tensor asymmetric int8 activations, per-channel symmetric int8 weights, int32 biases with
/// scale = input scale x weight scale (onnxruntime's QDQ convention for the same choices).
struct Scheme {
    IntGrid activations{8, true, false};
    IntGrid weights{8, true, true};
    bool per_channel_weights = true;  ///< RKNN quantized_method 'channel' (false: 'layer')
    /// Concat inputs take the concat output's parameters when that keeps every fused Relu/Clip
    /// exact (RKNN shares them; the NPU then writes the inputs in place instead of requantizing).
    bool share_concat_params = true;
    std::string name() const;  ///< "asymmetric_quantized-8 (int8 activations per tensor, ...)"
};

/// Parses the scheme names accepted by `npusim quantize --scheme`: "asymmetric_quantized-8"
/// (default), "asymmetric_quantized-u8" (uint8 activations, onnxruntime's x86 default type).
/// Returns false for an unknown name.
bool parse_scheme(const std::string& name, Scheme& out);
/// The names parse_scheme() accepts, comma-separated, for messages.
std::string scheme_names();

/// Scale and zero point of a real range on a grid (onnxruntime compute_scale_zp): the range is
/// widened to include 0; symmetric grids use [-max|r|, max|r|]; scale = (rmax - rmin) / (qmax -
/// qmin) computed in double then stored as float; zero point = round-half-even(qmin - rmin /
/// scale) (symmetric: the grid centre); a range narrower than FLT_MIN gives scale 1, zp 0.
struct ScaleZp {
    float scale = 1.0f;
    int32_t zero_point = 0;
};
ScaleZp scale_zp(double rmin, double rmax, const IntGrid& grid);

/// The real interval a grid covers with these parameters: [scale (qmin - zp), scale (qmax - zp)].
void covered_range(const ScaleZp& p, const IntGrid& grid, double& lo, double& hi);

/// QuantizeLinear of one value (onnxruntime quantize_nparray / ONNX QuantizeLinear): x / scale in
/// float, round half to even, + zp, clamped to the grid.
int32_t quantize_value(float x, const ScaleZp& p, const IntGrid& grid);

/// Per-channel (along `axis`, or one channel when per_channel is false) symmetric quantization of
/// a float constant. Returns the int8/uint8 tensor and fills scales / zero points.
num::Tensor quantize_weight(const num::Tensor& w, const IntGrid& grid, bool per_channel, int axis,
                            std::vector<float>& scales, std::vector<int32_t>& zero_points);

/// int32 bias = round-half-even(double(b) / double(input_scale * w_scale[c])) clamped to int32
/// (onnxruntime quantize_bias_static_impl); `scales` receives the per-channel bias scales (float
/// products, as onnxruntime computes them in float32). Throws std::invalid_argument when the
/// weight scale count is neither 1 nor b's length.
num::Tensor quantize_bias(const num::Tensor& b, float input_scale, const std::vector<float>& w_scales,
                          std::vector<float>& scales);

}  // namespace drv::quant
