// SPDX-License-Identifier: MIT
// QDQ handling: QuantizeLinear/DequantizeLinear pairs folded into quantized tensors, and QDQ-wrapped
// operators rewritten into the fused integer operators onnxruntime executes on CPU (QLinearConv,
// QLinearMatMul, QGemm, QLinearAdd, ...), so that the reference executor reproduces onnxruntime's
// int8 results bit for bit and the NPU lowering sees one integer op per layer.
#pragma once
#include "compiler/ir/graph.h"

namespace drv::ir {

/// Reads the constant scale / zero-point inputs of a Q/DQ node into QuantParams (axis resolved
/// against `rank`). Returns false when they are not constant.
bool quant_params_of(const Graph& g, const Node& qdq, size_t rank, num::QuantParams& out);

/// Records quant params on every int8/uint8/int32 tensor read by a DequantizeLinear or written by a
/// QuantizeLinear with constant parameters, or read/written by a QOperator-format op (QLinearConv,
/// QLinearAdd, ... with their scale/zero-point inputs), and carries them through data movement. With
/// `rewrite`, first applies onnxruntime's graph rewrites (unique DQ per consumer, QDQ propagation,
/// float bias/weight quantization; on `x86_64` also int8 -> uint8 Q/DQ pairs), then (1) removes Relu/Clip
/// feeding a QuantizeLinear whose range already clamps the same way (onnxruntime's ReluQuantFusion
/// and ClipQuantFusion), (2) replaces DQ -> op -> Q units by the fused integer op, (3) runs
/// data-movement ops (MaxPool, Reshape, Transpose, ...) directly on the quantized tensor when input
/// and output quantization agree, then drops unused Q/DQ nodes. Throws GraphError on inconsistent
/// quantization parameters. `ort_rewrites` false skips onnxruntime's graph rewrites (a toolchain
/// that is not onnxruntime folds the QDQ graph as written: tnpuv2's converter).
void fold_qdq(Graph& g, bool rewrite, bool x86_64 = false, bool ort_rewrites = true);

/// A float bias as onnxruntime quantizes it (WeightBiasQuantization): bias_scale = x_scale *
/// w_scale in float32 (per tensor or per output channel), int32(Round(bias / bias_scale)) with
/// round half to even, saturated to int32. Returns the int32 tensor; `bias_scale` receives the scale.
num::Tensor quantize_bias(const num::Tensor& x_scale, const num::Tensor& w_scale, const num::Tensor& bias,
                          num::Tensor* bias_scale = nullptr);

/// Step (1) of the rewrite alone: Relu/Clip feeding a QuantizeLinear whose grid already clamps
/// the same way are bypassed (then dead nodes dropped). Toolchain views that check a QDQ graph
/// the way its converter sees it (tnpuv2) apply it without fusing.
void remove_clamps_before_q(Graph& g);

}  // namespace drv::ir
