// SPDX-License-Identifier: MIT
// Internal to the QDQ pass (qdq.cpp, qdq_ort.cpp): node tests and the onnxruntime graph rewrites
// that run before the QDQ unit fusions.
#pragma once
#include "compiler/ir/qdq.h"

namespace drv::ir::qdq {

inline bool is_q(const Node& n) {
    return n.op_type == "QuantizeLinear" && (n.domain.empty() || n.domain == "com.microsoft");
}
inline bool is_dq(const Node& n) {
    return n.op_type == "DequantizeLinear" && (n.domain.empty() || n.domain == "com.microsoft");
}

/// Each rewrite returns whether it changed the graph.
/// EnsureUniqueDQForNodeUnit: a DequantizeLinear read by several node inputs (or also a graph
/// output) is duplicated so that each consumer has its own (exact).
bool ensure_unique_dq(Graph& g);
/// QDQPropagationTransformer: DQ propagated forward and Q backward through MaxPool (opset 12+),
/// Reshape, Transpose, Squeeze, Unsqueeze and Slice by inserting Q/DQ pairs with the same
/// parameters (exact: these ops commute with a per-tensor quantization).
bool propagate_qdq(Graph& g);
/// WeightBiasQuantization: Conv/ConvTranspose/Gemm fed by a per-tensor DQ whose output reaches a Q
/// through Relu/Clip only get a float bias quantized to int32 (scale x_scale * w_scale, float32
/// Div, Round half to even) and a float weight to per-tensor int8, each behind a new DQ.
bool quantize_weight_bias(Graph& g);
/// QDQS8ToU8Transformer (x86-64, where int8 QDQ units are not run as integer ops): an int8 Q whose
/// only consumer is a DQ with the same zero point becomes uint8 with zero point + 128 (exact).
void s8_to_u8(Graph& g);

}  // namespace drv::ir::qdq
