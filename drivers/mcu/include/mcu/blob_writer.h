// SPDX-License-Identifier: MIT
// MCU model converter: graph IR (ONNX import, QDQ rewritten into QLinear* ops) -> model blob
// (firmware/runtime/mcu_blob.h): NHWC activations, OHWI/[kh][kw][C] weights, requantization
// parameters, a lifetime-planned SRAM arena and the input payload. Called by mcu::run_cli.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "numerics/tensor.h"

namespace mcu {

/// A graph the MCU runtime cannot execute (operator, attribute or dtype): the message names the node.
class ConvertError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

struct ConvertOptions {
    /// true: float requantization (bit-exact with onnxruntime/num::run_op on RV32F);
    /// false: Q31 fixed-point multiplier + shift (integer-only; <= 1 LSB per layer vs. the reference).
    bool float_requant = true;
};

/// Where one graph output is in the blob and how to turn its bytes back into an ONNX tensor.
struct BlobOutput {
    std::string value;
    uint32_t tensor = 0;
    num::DType dtype = num::DType::F32;  ///< ONNX dtype (ArgMax: I64 from the kernel's int32)
    std::vector<int64_t> shape;          ///< ONNX shape
    float scale = 0.0f;                  ///< int8 outputs: quantization (for LSB reports)
    bool nhwc = false;                   ///< TFLite: the shape is already the stored layout
};

struct BlobLayerInfo {
    std::string node, op_type, kernel;
    uint64_t macs = 0;
};

struct Blob {
    std::vector<uint8_t> bytes;
    uint32_t arena_bytes = 0;     ///< SRAM for activations (planned)
    uint32_t const_bytes = 0;     ///< weights, biases, scales, LUTs, input payload
    std::vector<BlobLayerInfo> layers;
    std::vector<BlobOutput> outputs;
};

/// Converts `g` with the given input tensors (by graph-input name, ONNX layout) into a blob.
/// Throws ConvertError naming the node for anything unsupported.
Blob convert_graph(const drv::ir::Graph& g, const std::map<std::string, num::Tensor>& inputs,
                   const ConvertOptions& opts = {});

/// Why each node the converter cannot take is refused ({node name, message}), converting every node
/// it can (the same code paths as convert_graph, on seeded inputs). Empty: the whole graph converts.
/// A converter refusal as check and run word it: "no MCU kernel yet: ..." (kept when already so worded).
std::string no_kernel_text(const std::string& why);

std::vector<std::pair<std::string, std::string>> conversion_gaps(const drv::ir::Graph& g);

/// Runs a blob with the host build of the runtime and kernels (mcu_runtime_host): the outputs in
/// order, or `error` set.
std::vector<std::vector<uint8_t>> run_blob_on_host(const Blob& b, std::string& error);

/// Turns the bytes of output `o` as the runtime wrote them (NHWC for rank 4) into an ONNX tensor.
num::Tensor output_tensor(const BlobOutput& o, const std::vector<uint8_t>& bytes);

/// Name of a blob opcode ("conv2d_s8", ...).
const char* op_name(uint32_t op);

}  // namespace mcu
