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
/// QuantizeLinear with constant parameters. With `rewrite`, additionally (1) removes Relu/Clip
/// feeding a QuantizeLinear whose range already clamps the same way (onnxruntime's ReluQuantFusion
/// and ClipQuantFusion), (2) replaces DQ -> op -> Q units by the fused integer op, (3) runs
/// data-movement ops (MaxPool, Reshape, Transpose, ...) directly on the quantized tensor when input
/// and output quantization agree, then drops unused Q/DQ nodes. Throws GraphError on inconsistent
/// quantization parameters.
void fold_qdq(Graph& g, bool rewrite);

/// Step (1) of the rewrite alone: Relu/Clip feeding a QuantizeLinear whose grid already clamps
/// the same way are bypassed (then dead nodes dropped). Toolchain views that check a QDQ graph
/// the way its converter sees it (tnpuv2) apply it without fusing.
void remove_clamps_before_q(Graph& g);

}  // namespace drv::ir
