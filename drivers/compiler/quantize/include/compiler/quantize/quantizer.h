// SPDX-License-Identifier: MIT
// The quantizer (issue 14): a float graph IR -> a QDQ graph in onnxruntime's QDQ convention
// (onnxruntime/python/tools/quantization/qdq_quantizer.py and registry.py), calibrated on
// CalibrationSet inputs, target-neutral (the RKNPU compiler, the MCU code generator and
// onnxruntime all read the same QDQ model).
//
// What it writes, per node kind:
// - Conv, Gemm (alpha = beta = 1, constant B, bias of N), MatMul with a constant B: the activation
//   input through DequantizeLinear; the weight as an int8 initializer + DequantizeLinear, symmetric
//   per output channel (Conv axis 0, Gemm axis 0 when transB else 1, MatMul axis 1) or per tensor;
//   the bias as int32 with scale = input scale x weight scale, zero point 0, + DequantizeLinear;
//   the output through QuantizeLinear -> DequantizeLinear.
// - Add, Mul, MatMul of two activations, Concat, GlobalAveragePool, AveragePool, LeakyRelu,
//   Sigmoid, BatchNormalization (parameters stay float, as the QDQ zoo models have them): every
//   data input and the output quantized per tensor. Constant data inputs (x + c) become
//   activation-typed initializers + DequantizeLinear, parameters from their own min/max.
// - MaxPool, Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Slice, Gather, Identity, nearest
//   Resize (onnxruntime's QDQDirect8BitOp): quantized when their input is; the output shares the
//   input's parameters, so the integer op moves the codes unchanged.
// - Relu and Clip (QDQRemovableActivation): removed when their input is the single-use output of
//   a quantized node and the clamp contains 0; the producer then writes the activation's output,
//   whose range starts at the clamp (zero point = qmin for Relu), so QuantizeLinear clamps
//   exactly as the activation did. Otherwise quantized like a unary op.
// - Anything else stays float (its inputs are read through DequantizeLinear, its output is
//   quantized where a quantized node reads it) and is listed in QuantizeResult::float_nodes.
// Names follow onnxruntime: T_QuantizeLinear_Output, T_DequantizeLinear_Output, T_scale,
// T_zero_point, W_quantized, B_quantized_scale ...; a quantized graph output keeps its name on
// the DequantizeLinear, its producer writes T_QuantizeLinear_Input. Models below opset 13 get
// com.microsoft QuantizeLinear/DequantizeLinear (the per-axis form onnxruntime runs at any opset).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/quantize/calibration.h"
#include "compiler/quantize/scheme.h"

namespace drv::quant {

/// The model cannot be quantized (already quantized, operators the reference executor cannot run
/// for calibration, TFLite graphs): the message names the node. Mapped to exit code 2.
class QuantizeError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

struct QuantizeOptions {
    Scheme scheme;
    CalibrationMethod method = CalibrationMethod::MinMax;
};

/// One quantized activation: a float tensor of the input graph and its integer image.
struct QuantizedTensor {
    std::string name;       ///< the float tensor in the input graph (what the accuracy analysis compares)
    std::string quantized;  ///< its QuantizeLinear output in the QDQ graph
    std::string producer;   ///< the node writing it ("" for a graph input)
    std::string op;         ///< "Conv+Relu" (a removed activation appended), "input" for a graph input
    IntGrid grid;
    ScaleZp params;
    double observed_min = 0, observed_max = 0;  ///< over the calibration set
    double range_lo = 0, range_hi = 0;          ///< picked by the method, before sharing
    std::string shared_with;                    ///< the first tensor of its share group, "" when its own
};

struct QuantizeResult {
    ir::Graph qdq;                         ///< the QDQ graph (onnxruntime convention), shapes set
    std::vector<QuantizedTensor> tensors;  ///< activations in graph order (graph inputs first)
    size_t quantized_nodes = 0, weights = 0, biases = 0, removed_activations = 0, shared_groups = 0;
    std::vector<std::string> float_nodes;  ///< nodes left in float: "Softmax 'prob' (no integer form)"
    std::string scheme, method, calibration;
    bool seeded_calibration = false;  ///< no data given: ranges from seeded random inputs
    std::vector<std::string> notes;   ///< one line each, for the reports
};

/// Why `g` counts as already quantized (QuantizeLinear/DequantizeLinear, QLinear*, *Integer, QGemm
/// nodes or tensors with quantization parameters), or "" when it is a float model.
std::string quantized_reason(const ir::Graph& g);

/// Quantizes `g` (imported with QdqMode::Keep, shapes inferred, every op runnable by the reference
/// operator library) on `cal`. Throws QuantizeError, CalibrationError, or what the reference
/// executor throws for a sample it cannot run.
QuantizeResult quantize_model(const ir::Graph& g, const CalibrationSet& cal, const QuantizeOptions& opts);

}  // namespace drv::quant
