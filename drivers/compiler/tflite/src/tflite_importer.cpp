// SPDX-License-Identifier: MIT
// TFLite flatbuffer -> graph IR. The flatbuffers verifier runs on every load before any field is
// read, so bad offsets, truncation and out-of-range vectors are reported, never followed. Tensors
// keep the file's NHWC shapes and quantization (per-tensor or per-channel via
// quantized_dimension); operators keep their TFLite names in domain "tflite".
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "numerics/limits.h"
#include "tflite_internal.h"

namespace drv::importer {

namespace tfl {

const char* builtin_name(int32_t code) {
    // Public BuiltinOperator values for the operators of seed 000's TFLite list (and neighbours).
    static const std::map<int32_t, const char*> k{
        {0, "ADD"}, {1, "AVERAGE_POOL_2D"}, {2, "CONCATENATION"}, {3, "CONV_2D"}, {4, "DEPTHWISE_CONV_2D"},
        {5, "DEPTH_TO_SPACE"}, {6, "DEQUANTIZE"}, {8, "FLOOR"}, {9, "FULLY_CONNECTED"}, {11, "L2_NORMALIZATION"},
        {14, "LOGISTIC"}, {17, "MAX_POOL_2D"}, {18, "MUL"}, {19, "RELU"}, {21, "RELU6"}, {22, "RESHAPE"},
        {23, "RESIZE_BILINEAR"}, {25, "SOFTMAX"}, {26, "SPACE_TO_DEPTH"}, {28, "TANH"}, {32, "CUSTOM"}, {34, "PAD"},
        {36, "GATHER"}, {39, "TRANSPOSE"}, {40, "MEAN"}, {41, "SUB"}, {42, "DIV"}, {43, "SQUEEZE"},
        {45, "STRIDED_SLICE"}, {47, "EXP"}, {48, "TOPK_V2"}, {49, "SPLIT"}, {50, "LOG_SOFTMAX"}, {53, "CAST"},
        {54, "PRELU"}, {55, "MAXIMUM"}, {56, "ARG_MAX"}, {57, "MINIMUM"}, {58, "LESS"}, {59, "NEG"}, {60, "PADV2"},
        {61, "GREATER"}, {62, "GREATER_EQUAL"}, {63, "LESS_EQUAL"}, {64, "SELECT"}, {65, "SLICE"}, {66, "SIN"},
        {67, "TRANSPOSE_CONV"}, {69, "TILE"}, {70, "EXPAND_DIMS"}, {71, "EQUAL"}, {72, "NOT_EQUAL"}, {73, "LOG"},
        {74, "SUM"}, {75, "SQRT"}, {76, "RSQRT"}, {77, "SHAPE"}, {78, "POW"}, {79, "ARG_MIN"}, {81, "REDUCE_PROD"},
        {82, "REDUCE_MAX"}, {83, "PACK"}, {84, "LOGICAL_OR"}, {85, "ONE_HOT"}, {86, "LOGICAL_AND"},
        {87, "LOGICAL_NOT"}, {88, "UNPACK"}, {89, "REDUCE_MIN"}, {92, "SQUARE"}, {94, "FILL"},
        {97, "RESIZE_NEAREST_NEIGHBOR"}, {98, "LEAKY_RELU"}, {100, "MIRROR_PAD"}, {101, "ABS"}, {102, "SPLIT_V"},
        {103, "UNIQUE"}, {104, "CEIL"}, {105, "REVERSE_V2"}, {107, "GATHER_ND"}, {108, "COS"}, {111, "ELU"},
        {112, "REVERSE_SEQUENCE"}, {114, "QUANTIZE"}, {116, "ROUND"}, {117, "HARD_SWISH"}, {118, "IF"},
        {119, "WHILE"}, {122, "SCATTER_ND"}, {123, "SELECT_V2"}, {126, "BATCH_MATMUL"}, {128, "CUMSUM"},
        {129, "CALL_ONCE"}, {132, "CONV_3D"}, {150, "GELU"}};
    auto it = k.find(code);
    return it == k.end() ? "" : it->second;
}

}  // namespace tfl

namespace {

using namespace tfl;

constexpr uint32_t kSchemaVersion = 3;

num::DType dtype_of(TensorType t, const std::string& where) {
    switch (t) {
        case TensorType::FLOAT32: return num::DType::F32;
        case TensorType::FLOAT16: return num::DType::F16;
        case TensorType::INT32: return num::DType::I32;
        case TensorType::UINT8: return num::DType::U8;
        case TensorType::INT64: return num::DType::I64;
        case TensorType::BOOL: return num::DType::Bool;
        case TensorType::INT16: return num::DType::I16;
        case TensorType::INT8: return num::DType::I8;
        case TensorType::UINT16: return num::DType::U16;
        default: break;
    }
    throw ImportError(where + ": unsupported tensor type " + std::to_string(static_cast<int>(t)) + " (" + EnumNameTensorType(t) + ")");
}

struct Ctx {
    const Model* model;
    const SubGraph* sg;
    const ImportOptions& opts;
    std::string src;
    std::vector<std::string> names;  // tensor index -> unique value name
};

num::QuantParams quant_of(const Tensor& t, size_t rank, const std::string& where) {
    num::QuantParams q;
    const QuantizationParameters* p = t.quantization();
    if (!p || !p->scale() || p->scale()->size() == 0) return q;
    if (p->details_type() != QuantizationDetails::NONE) throw ImportError(where + ": custom quantization is not supported");
    size_t n = p->scale()->size();
    if (!p->zero_point() || (p->zero_point()->size() != n && p->zero_point()->size() != 1))
        throw ImportError(where + ": " + std::to_string(n) + " scales but " + std::to_string(p->zero_point() ? p->zero_point()->size() : 0) + " zero points");
    // The verifier aligns a vector's length prefix to 4 bytes only, so 8-byte zero points may be
    // misaligned in a hostile file: read them with memcpy rather than as int64_t lvalues.
    const uint8_t* zp = p->zero_point()->Data();
    for (size_t k = 0; k < n; ++k) {
        q.scale.push_back(p->scale()->Get(static_cast<flatbuffers::uoffset_t>(k)));
        int64_t z = 0;
        std::memcpy(&z, zp + sizeof(int64_t) * (p->zero_point()->size() == 1 ? 0 : k), sizeof z);
        if (z < INT32_MIN || z > INT32_MAX) throw ImportError(where + ": zero point " + std::to_string(z) + " out of range");
        q.zero_point.push_back(static_cast<int32_t>(z));
    }
    if (n > 1) {
        int axis = p->quantized_dimension();
        if (axis < 0 || static_cast<size_t>(axis) >= rank) throw ImportError(where + ": quantized_dimension " + std::to_string(axis) + " out of range");
        q.axis = axis;
    }
    return q;
}

ir::Value tensor_value(Ctx& c, uint32_t index) {
    const Tensor* t = c.sg->tensors()->Get(index);
    std::string where = c.src + ": tensor " + std::to_string(index) + " '" + c.names[index] + "'";
    if (t->sparsity()) throw ImportError(where + ": sparse tensors are not supported");
    ir::Value v;
    v.name = c.names[index];
    v.dtype = dtype_of(t->type(), where);
    if (t->shape())
        for (int32_t d : *t->shape()) {
            if (d < 0) throw ImportError(where + ": negative dimension " + std::to_string(d));
            v.shape.push_back(d);
        }
    bool dynamic = false;
    if (t->shape_signature())
        for (int32_t d : *t->shape_signature()) dynamic |= d < 0;
    auto ov = c.opts.input_shapes.find(v.name);
    if (ov != c.opts.input_shapes.end()) {
        if (ov->second.size() != v.shape.size()) throw ImportError(where + ": --input-shape rank differs from the model's");
        v.shape = ov->second;
        dynamic = false;
    }
    if (dynamic) throw ImportError(where + " has dynamic dimensions (shape_signature " + ir::shape_to_string(v.shape) + "); fix it with --input-shape " + v.name + "=...");
    v.shape_known = true;
    v.quant = quant_of(*t, v.shape.size(), where);
    uint32_t b = t->buffer();
    if (b == 0) return v;
    if (!c.model->buffers() || b >= c.model->buffers()->size())
        throw ImportError(where + ": buffer index " + std::to_string(b) + " out of range");
    const Buffer* buf = c.model->buffers()->Get(b);
    if (buf->offset() > 1) throw ImportError(where + ": buffer stored outside the flatbuffer (>2 GiB models) is not supported");
    if (!buf->data() || buf->data()->size() == 0) return v;  // empty buffer: activation
    uint64_t n = 1;
    for (int64_t d : v.shape) {
        n *= static_cast<uint64_t>(d);
        if (n > (uint64_t{1} << 31)) throw ImportError(where + ": tensor too large");
    }
    if (buf->data()->size() != n * num::dtype_size(v.dtype))
        throw ImportError(where + ": buffer " + std::to_string(b) + " has " + std::to_string(buf->data()->size()) + " bytes, shape " + ir::shape_to_string(v.shape) + " needs " + std::to_string(n * num::dtype_size(v.dtype)));
    num::Tensor data(v.dtype, v.shape);
    std::memcpy(data.raw(), buf->data()->data(), data.nbytes());
    data.quant = v.quant;
    v.data = std::move(data);
    return v;
}

std::vector<std::string> io_names(Ctx& c, const flatbuffers::Vector<int32_t>* v, const std::string& what, bool allow_absent) {
    std::vector<std::string> out;
    if (!v) return out;
    for (int32_t k : *v) {
        if (k == -1 && allow_absent) {
            out.emplace_back();
            continue;
        }
        if (k < 0 || static_cast<uint32_t>(k) >= c.names.size())
            throw ImportError(c.src + ": " + what + " refers to tensor " + std::to_string(k) + ", the subgraph has " + std::to_string(c.names.size()));
        out.push_back(c.names[static_cast<size_t>(k)]);
    }
    return out;
}

ir::Node make_node(Ctx& c, const Operator& op, size_t index) {
    std::string where = c.src + ": operator " + std::to_string(index);
    const auto* codes = c.model->operator_codes();
    if (!codes || op.opcode_index() >= codes->size())
        throw ImportError(where + ": opcode_index " + std::to_string(op.opcode_index()) + " out of range");
    const OperatorCode* oc = codes->Get(op.opcode_index());
    int32_t code = std::max<int32_t>(oc->builtin_code(), oc->deprecated_builtin_code());
    const char* name = builtin_name(code);
    if (code == 32) throw ImportError(where + ": custom operator '" + (oc->custom_code() ? oc->custom_code()->str() : std::string()) + "' is not supported");
    if (!*name) throw ImportError(where + ": builtin operator code " + std::to_string(code) + " is not supported");
    std::string n(name);
    if (n == "IF" || n == "WHILE" || n == "CALL_ONCE") throw ImportError(where + " " + n + ": control flow (subgraph calls) is not supported");
    ir::Node node;
    node.op_type = n;
    node.domain = "tflite";
    node.inputs = io_names(c, op.inputs(), where + " inputs", true);
    node.outputs = io_names(c, op.outputs(), where + " outputs", false);
    node.name = node.outputs.empty() ? n + "_" + std::to_string(index) : node.outputs[0];
    if (node.outputs.empty()) throw ImportError(where + " " + n + ": operator without outputs");
    node.attrs.set("version", static_cast<int64_t>(oc->version()));
    decode_options(op, node.attrs);
    return node;
}

/// The operator library computes outputs from inputs; a TFLite output's type and quantization are
/// properties of the output tensor, recorded on the node for it (_output_dtype, _output_scale,
/// _output_zero_point, _output_quantized_dimension).
void record_output(const ir::Graph& g, ir::Node& n) {
    const ir::Value* v = g.find_value(n.outputs.at(0));
    if (!v) return;
    n.attrs.set("_output_dtype", std::string(num::dtype_name(v->dtype)));
    if (v->quant.empty()) return;
    n.attrs.set("_output_scale", v->quant.scale);
    std::vector<int64_t> zp(v->quant.zero_point.begin(), v->quant.zero_point.end());
    n.attrs.set("_output_zero_point", zp);
    if (v->quant.per_axis()) n.attrs.set("_output_quantized_dimension", static_cast<int64_t>(v->quant.axis));
}

/// DEQUANTIZE of a constant (float16 or int8 weights, the MediaPipe pattern) is a constant: TFLite
/// evaluates it once at preparation, and so do we, at import. The float result replaces the node.
void fold_constant_dequantize(ir::Graph& g) {
    std::vector<ir::Node> keep;
    for (auto& n : g.nodes()) {
        const ir::Value* x = n.op_type == "DEQUANTIZE" && n.inputs.size() == 1 ? g.find_value(n.inputs[0]) : nullptr;
        if (!x || !x->is_constant()) {
            keep.push_back(std::move(n));
            continue;
        }
        num::Tensor t;
        try {
            t = num::run_op("DEQUANTIZE", n.attrs, {&*x->data}, "tflite").at(0);
        } catch (const num::OpError& e) {
            throw ImportError(n.label() + ": " + e.what());
        }
        ir::Value& out = g.value(n.outputs.at(0), n.label());
        if (t.shape() != out.shape || out.dtype != num::DType::F32)
            throw ImportError(n.label() + ": output tensor '" + out.name + "' must be float32 " + ir::shape_to_string(t.shape()));
        out.data = std::move(t);
    }
    g.nodes() = std::move(keep);
    g.remove_dead_nodes();
}

void unique_names(Ctx& c) {
    std::set<std::string> used;
    for (uint32_t k = 0; k < c.sg->tensors()->size(); ++k) {
        const Tensor* t = c.sg->tensors()->Get(k);
        std::string n = t->name() && t->name()->size() ? t->name()->str() : "tensor_" + std::to_string(k);
        while (!used.insert(n).second) n += "#" + std::to_string(k);  // TFLite allows duplicate names
        c.names.push_back(n);
    }
}

}  // namespace

ir::Graph import_tflite_bytes(const void* data, size_t size, const ImportOptions& opts, const std::string& src) {
    // The verifier needs the buffer aligned; copy into an aligned vector first.
    std::vector<uint64_t> aligned((size + 7) / 8);
    if (size) std::memcpy(aligned.data(), data, size);
    const auto* bytes = reinterpret_cast<const uint8_t*>(aligned.data());
    if (size < 8 || !flatbuffers::BufferHasIdentifier(bytes, ModelIdentifier()))
        throw ImportError(src + ": not a TFLite model (no \"TFL3\" file identifier)");
    flatbuffers::Verifier::Options vo;
    vo.max_depth = 64;
    vo.max_tables = 10000000;
    flatbuffers::Verifier verifier(bytes, size, vo);
    if (!VerifyModelBuffer(verifier))
        throw ImportError(src + ": TFLite flatbuffer failed verification (bad offset, truncated vector or table, or size " + std::to_string(size) + " too small)");
    const Model* m = GetModel(bytes);
    if (m->version() != kSchemaVersion) throw ImportError(src + ": TFLite schema version " + std::to_string(m->version()) + " (expected 3)");
    if (!m->subgraphs() || m->subgraphs()->size() == 0) throw ImportError(src + ": model has no subgraphs");
    const SubGraph* sg = m->subgraphs()->Get(0);
    if (!sg->tensors()) throw ImportError(src + ": subgraph 0 has no tensors");
    try {
        Ctx c{m, sg, opts, src, {}};
        unique_names(c);
        ir::Graph g;
        g.set_opset("tflite", kSchemaVersion);
        std::set<std::string> produced;
        if (sg->operators())
            for (const Operator* op : *sg->operators())
                for (auto o : io_names(c, op->outputs(), src + ": operator outputs", false)) produced.insert(o);
        for (uint32_t k = 0; k < sg->tensors()->size(); ++k) {
            ir::Value v = tensor_value(c, k);
            if (v.is_constant() && produced.count(v.name)) throw ImportError(src + ": tensor '" + v.name + "' has a buffer and is also an operator output");
            g.add_value(std::move(v));
        }
        g.inputs() = io_names(c, sg->inputs(), src + ": subgraph inputs", false);
        g.outputs() = io_names(c, sg->outputs(), src + ": subgraph outputs", false);
        if (g.outputs().empty()) throw ImportError(src + ": subgraph has no outputs");
        for (const auto& [name, s] : opts.input_shapes)
            if (std::find(g.inputs().begin(), g.inputs().end(), name) == g.inputs().end())
                throw ImportError(src + ": --input-shape names '" + name + "', which is not a graph input");
        if (sg->operators())
            for (uint32_t k = 0; k < sg->operators()->size(); ++k) {
                ir::Node n = make_node(c, *sg->operators()->Get(k), k);
                record_output(g, n);
                g.add_node(std::move(n));
            }
        g.validate();
        g.sort_topologically();
        fold_constant_dequantize(g);
        return g;
    } catch (const ImportError&) {
        throw;
    } catch (const ir::GraphError& e) {  // duplicate names, cycles, dangling inputs
        throw ImportError(src + ": " + e.what());
    }
}

ir::Graph import_tflite_file(const std::string& path, const ImportOptions& opts) {
    std::vector<char> bytes;
    try {
        bytes = num::read_input_file(path);
    } catch (const std::runtime_error& e) {
        throw ImportError(e.what());
    }
    return import_tflite_bytes(bytes.data(), bytes.size(), opts, path);
}

}  // namespace drv::importer
