// SPDX-License-Identifier: MIT
// Graph IR -> MCU model blob (see blob_writer.h and firmware/runtime/mcu_blob.h).
#include "mcu/blob_writer.h"

#include "blob_converter.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/ir/graph.h"
#include "mcu_blob.h"
#include "mk/mk_common.h"
#include "mk/mk_f32.h"
#include "numerics/ops.h"

namespace mcu {
namespace detail {

const num::Tensor& Converter::cval(const Node& n, size_t i) const {
    const Value& v = g_.value(n.input(i), n.label());
    if (!v.is_constant()) throw ConvertError(n.label() + ": input " + std::to_string(i) + " ('" + v.name + "') must be a constant");
    return *v.data;
}
float Converter::cf(const Node& n, size_t i) const {
    const num::Tensor& t = cval(n, i);
    if (t.dtype() != num::DType::F32 || t.numel() != 1) throw ConvertError(n.label() + ": scale input " + std::to_string(i) + " must be a float scalar");
    return t.data<float>()[0];
}
int32_t Converter::czp(const Node& n, size_t i) const {
    if (!n.has_input(i)) return 0;
    const num::Tensor& t = cval(n, i);
    if (t.numel() != 1) throw ConvertError(n.label() + ": per-axis zero points are not supported here");
    if (t.dtype() == num::DType::I8) return t.data<int8_t>()[0];
    throw ConvertError(n.label() + ": zero point must be int8 (uint8 quantization is not an MCU path; MindSpore Lite Micro v106 spec s1.4 rule 8)");
}
std::vector<float> Converter::cfs(const Node& n, size_t i) const {
    const num::Tensor& t = cval(n, i);
    if (t.dtype() != num::DType::F32) throw ConvertError(n.label() + ": scales must be float");
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

uint32_t Converter::act(const std::string& name) {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return it->second;
    const Value& v = g_.value(name);
    if (v.is_constant()) {
        // A constant used as an activation operand (e.g. Add's B): stored in the blob.
        const num::Tensor& c = *v.data;
        const uint32_t dt = mk_dtype(c.dtype(), "constant '" + name + "'");
        std::vector<uint8_t> bytes(c.raw(), c.raw() + c.nbytes());
        const auto cd = sdims(c.shape());
        if (c.rank() == 4 && !nhwc_) bytes = nchw_to_nhwc(c.raw(), c.shape(), c.nbytes() / std::max<size_t>(1, c.numel()));
        const uint32_t idx = add_const(dt, std::move(bytes), cd);
        if (!v.quant.empty() && !v.quant.per_axis()) set_quant(idx, v.quant.scale[0], v.quant.zero_point.empty() ? 0 : v.quant.zero_point[0]);
        by_name_[name] = idx;
        return idx;
    }
    for (int64_t d : v.shape)
        if (d <= 0) throw ConvertError("value '" + name + "' has an unknown/empty shape " + v.shape_str());
    std::vector<int32_t> d;
    try {
        d = sdims(v.shape);
    } catch (const ConvertError& e) {
        throw ConvertError("value '" + name + "' " + v.shape_str() + ": " + e.what());
    }
    Tens t;
    t.rec.dtype = mk_dtype(v.dtype, "value '" + name + "'");
    t.rec.storage = MK_ST_ARENA;
    const uint64_t bytes = uint64_t(std::max<int64_t>(1, v.numel())) * mk_elem(t.rec.dtype);
    if (bytes > 0x7fffffffu) throw ConvertError("value '" + name + "' " + v.shape_str() + " is larger than any MCU memory");
    t.rec.bytes = uint32_t(bytes);
    std::copy(d.begin(), d.end(), t.rec.dims);
    if (!v.quant.empty()) {
        if (v.quant.per_axis()) throw ConvertError("value '" + name + "': per-axis activation quantization is not supported (MindSpore Lite Micro v106 spec: activations per tensor)");
        t.rec.scale = v.quant.scale[0];
        t.rec.zero_point = v.quant.zero_point.empty() ? 0 : v.quant.zero_point[0];
    }
    t_.push_back(std::move(t));
    by_name_[name] = uint32_t(t_.size() - 1);
    return uint32_t(t_.size() - 1);
}

uint32_t Converter::add_const(uint32_t dt, std::vector<uint8_t> bytes, std::vector<int32_t> d) {
    Tens t;
    t.rec.dtype = dt;
    t.rec.storage = MK_ST_CONST;
    t.rec.bytes = uint32_t(bytes.size());
    std::copy(d.begin(), d.end(), t.rec.dims);
    t.data = std::move(bytes);
    t_.push_back(std::move(t));
    return uint32_t(t_.size() - 1);
}

mk_blob_layer& Converter::layer(const Node& n, uint32_t op, std::vector<uint32_t> in, uint32_t out, const char* kernel,
                                uint64_t macs) {
    mk_blob_layer l{};
    l.op = op;
    l.n_in = uint32_t(in.size());
    l.n_out = 1;
    for (size_t k = 0; k < in.size(); ++k) l.in[k] = in[k];
    l.out = out;
    std::strncpy(l.name, n.name.c_str(), sizeof l.name - 1);
    const int idx = int(layers_.size());
    for (uint32_t i : in) {
        t_[i].first = std::min(t_[i].first, idx);
        t_[i].last = std::max(t_[i].last, idx);
    }
    t_[out].first = std::min(t_[out].first, idx);
    t_[out].last = std::max(t_[out].last, idx);
    layers_.push_back(l);
    info_.push_back({n.name, n.op_type, kernel, macs});
    return layers_.back();
}

Geo conv_geo(const Node& n, int64_t kh, int64_t kw) {
    const auto st = drv::ir::attr_ints(n.attrs, "strides", {1, 1});
    const auto dl = drv::ir::attr_ints(n.attrs, "dilations", {1, 1});
    const auto pd = drv::ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
    const std::string ap = drv::ir::attr_string(n.attrs, "auto_pad", "NOTSET");
    if (ap != "NOTSET" && ap != "VALID" && !n.attrs.has("pads"))
        throw ConvertError(n.label() + ": auto_pad=" + ap + " must be resolved to explicit pads by the importer");
    if (st.size() != 2 || dl.size() != 2 || pd.size() != 4) throw ConvertError(n.label() + ": only 2-D convolutions/pools are supported");
    return {int32_t(kh), int32_t(kw), int32_t(st[0]), int32_t(st[1]), int32_t(dl[0]), int32_t(dl[1]), int32_t(pd[0]), int32_t(pd[1])};
}

void Converter::node(const Node& n) {
    const std::string& op = n.op_type;
    if (n.domain == "tflite") return tfl_node(n);
    const bool ms = n.domain == "com.microsoft";
    auto in_dtype = [&](size_t i) { return g_.value(n.input(i), n.label()).dtype; };
    if (op == "QLinearConv") return conv_s8(n);
    if (op == "QGemm" && ms) return gemm_s8(n, true);
    if (op == "QLinearMatMul") return gemm_s8(n, false);
    if (op == "MaxPool") return pool(n, true, in_dtype(0) == num::DType::I8);
    if (op == "QLinearAveragePool" && ms) return pool(n, false, true);
    if (op == "AveragePool") return pool(n, false, false);
    if (op == "QLinearGlobalAveragePool" && ms) return gap_s8(n);
    if (op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity" || op == "Dropout") return reshape(n);
    if (op == "QuantizeLinear") return quantize(n, true);
    if (op == "DequantizeLinear") return quantize(n, false);
    if ((op == "QLinearAdd" || op == "QLinearMul") && ms) return eltwise_s8(n, op == "QLinearMul");
    if ((op == "QLinearSigmoid" || op == "QLinearLeakyRelu") && ms) return lut_s8(n);
    if (op == "Conv") return conv_f32(n);
    if (op == "MatMul" && !g_.value(n.input(1), n.label()).is_constant()) return matmul_rt(n);
    if (op == "Gemm" || op == "MatMul") return gemm_f32(n);
    if (op == "ConvTranspose") return conv_transpose_f32(n);
    if (op == "Relu" && in_dtype(0) == num::DType::I8) {  // int8 ReLU on codes: clamp at the zero point
        const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
        t_[y].rec.scale = t_[x].rec.scale;
        t_[y].rec.zero_point = t_[x].rec.zero_point;
        mk_blob_layer& l = layer(n, MK_OP_CLAMP_S8, {x}, y, "clamp_s8", t_[y].rec.bytes);
        l.p[0] = t_[x].rec.zero_point;
        l.p[1] = 127;
        return;
    }
    const float alpha = drv::ir::attr_float(n.attrs, "alpha", op == "LeakyRelu" ? 0.01f : (op == "HardSigmoid" ? 0.2f : 1.0f));
    if (op == "Clip") {  // min/max from inputs (opset 11+) or attributes; int8: a clamp of the codes
        auto bound = [&](size_t i, const char* attr, float dflt) {
            if (n.has_input(i)) {
                const num::Tensor& t = cval(n, i);
                if (t.numel() != 1 || t.dtype() != num::DType::F32) throw ConvertError(n.label() + ": no MCU kernel yet for a non-float Clip bound");
                return t.data<float>()[0];
            }
            return drv::ir::attr_float(n.attrs, attr, dflt);
        };
        const float hi = bound(2, "max", INFINITY);
        // ONNX Clip is min(max(x, min), max) (onnxruntime's kernel, the ONNX reference): with
        // min > max every element is max. The MCU kernel tests the low bound first (nnacl's
        // order), which would give min; clamping the low bound to max gives ONNX's result.
        const float lo = std::min(bound(1, "min", -INFINITY), hi);
        if (in_dtype(0) != num::DType::F32) throw ConvertError(n.label() + ": no MCU kernel yet for a non-float Clip");
        return unary_f32(n, MK_UN_CLIP, lo, hi);
    }
    if (op == "Sqrt") return unary_f32(n, MK_UN_SQRT, 0, 0);
    if (op == "Floor") return unary_f32(n, MK_UN_FLOOR, 0, 0);
    if (op == "Ceil") return unary_f32(n, MK_UN_CEIL, 0, 0);
    if (op == "Log") return unary_f32(n, MK_UN_LOG, 0, 0);
    if (op == "Gelu") {  // opset 20: approximate "none" (erf) or "tanh"
        const std::string ap = drv::ir::attr_string(n.attrs, "approximate", "none");
        if (ap != "none" && ap != "tanh") throw ConvertError(n.label() + ": Gelu approximate must be 'none' or 'tanh'");
        return unary_f32(n, ap == "tanh" ? MK_UN_GELU_TANH : MK_UN_GELU, 0, 0);
    }
    if (op == "Relu") return unary_f32(n, MK_UN_RELU, 0, 0);
    if (op == "LeakyRelu") return unary_f32(n, MK_UN_LEAKY_RELU, alpha, 0);
    if (op == "HardSwish") return unary_f32(n, MK_UN_HARD_SWISH, 0, 0);
    if (op == "Sigmoid") return unary_f32(n, MK_UN_SIGMOID, 0, 0);
    if (op == "Tanh") return unary_f32(n, MK_UN_TANH, 0, 0);
    if (op == "Elu") return unary_f32(n, MK_UN_ELU, alpha, 0);
    if (op == "Abs") return unary_f32(n, MK_UN_ABS, 0, 0);
    if (op == "Neg") return unary_f32(n, MK_UN_NEG, 0, 0);
    if (op == "Exp") return unary_f32(n, MK_UN_EXP, 0, 0);
    if (op == "HardSigmoid") return unary_f32(n, MK_UN_HARD_SIGMOID, alpha, drv::ir::attr_float(n.attrs, "beta", 0.5f));
    if (op == "Add") return binary_f32(n, MK_BIN_ADD);
    if (op == "Sub") return binary_f32(n, MK_BIN_SUB);
    if (op == "Mul") return binary_f32(n, MK_BIN_MUL);
    if (op == "Div") return binary_f32(n, MK_BIN_DIV);
    if (op == "Max" && n.inputs.size() == 2) return binary_f32(n, MK_BIN_MAX);
    if (op == "Min" && n.inputs.size() == 2) return binary_f32(n, MK_BIN_MIN);
    if (op == "Softmax" || op == "LogSoftmax") return softmax(n, op == "LogSoftmax");
    if (op == "Concat") return concat(n);
    if (op == "QLinearConcat" && ms) return qconcat(n);
    if (op == "Transpose") return transpose(n);
    if (op == "Pad") return pad(n);
    if (op == "Slice") return slice(n);
    if (op == "Resize") return resize(n);
    if (op == "ReduceMean") return reduce(n, MK_RED_MEAN);
    if (op == "ReduceSum") return reduce(n, MK_RED_SUM);
    if (op == "ReduceMax") return reduce(n, MK_RED_MAX);
    if (op == "ReduceMin") return reduce(n, MK_RED_MIN);
    if (op == "GlobalAveragePool") return gap_f32(n);
    if (op == "RNN") return recurrent(n, 1);
    if (op == "GRU") return recurrent(n, 3);
    if (op == "LSTM") return recurrent(n, 4);
    if (op == "BatchNormalization") return batchnorm(n);
    if (op == "ArgMax" || op == "ArgMin") return argmax(n);
    if (op == "Gather") return gather(n);
    if (op == "Tile") return tile(n);
    throw ConvertError(n.label() + ": no MCU kernel yet for " + (n.domain.empty() ? "" : n.domain + ".") + op);
}

// First-fit arena placement by decreasing size over layer-index lifetimes (deterministic).
void Converter::plan_arena() {
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < t_.size(); ++i)
        if (t_[i].rec.storage == MK_ST_ARENA) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return t_[a].rec.bytes > t_[b].rec.bytes; });
    std::vector<uint32_t> placed;
    for (uint32_t i : order) {
        Tens& t = t_[i];
        if (t.last < 0) t.first = t.last = 0;  // never used: still gets a slot
        std::vector<std::pair<uint32_t, uint32_t>> busy;
        for (uint32_t j : placed) {
            const Tens& o = t_[j];
            if (o.first <= t.last && t.first <= o.last) busy.push_back({o.rec.offset, o.rec.offset + o.rec.bytes});
        }
        std::sort(busy.begin(), busy.end());
        uint32_t off = 0;
        for (const auto& b : busy) {
            if (off + t.rec.bytes <= b.first) break;
            off = std::max(off, (b.second + 15u) & ~15u);
        }
        t.rec.offset = off;
        arena_bytes_ = std::max(arena_bytes_, (off + t.rec.bytes + 15u) & ~15u);
        placed.push_back(i);
    }
}

Blob Converter::run(const std::map<std::string, num::Tensor>& inputs) {
    std::vector<uint32_t> in_idx, out_idx;
    for (const auto& name : g_.inputs()) {
        auto it = inputs.find(name);
        if (it == inputs.end()) throw ConvertError("no data for graph input '" + name + "'");
        const uint32_t t = act(name);
        const num::Tensor& d = it->second;
        if (d.nbytes() != t_[t].rec.bytes) throw ConvertError("graph input '" + name + "' has " + std::to_string(d.nbytes()) + " bytes, expected " + std::to_string(t_[t].rec.bytes));
        t_[t].data = d.rank() == 4 && !nhwc_ ? nchw_to_nhwc(d.raw(), d.shape(), mk_elem(t_[t].rec.dtype)) : std::vector<uint8_t>(d.raw(), d.raw() + d.nbytes());
        t_[t].first = -1;
        in_idx.push_back(t);
    }
    for (const Node& n : g_.nodes()) node(n);
    Blob blob;
    for (const auto& name : g_.outputs()) {
        const uint32_t t = act(name);
        t_[t].last = int(layers_.size());
        out_idx.push_back(t);
        const Value& v = g_.value(name);
        blob.outputs.push_back({name, t, v.dtype, v.shape, t_[t].rec.scale, nhwc_});
    }
    for (auto& t : t_) t.first = std::max(t.first, 0);
    plan_arena();

    // Serialise: header | tensors | layers | io | data.
    mk_blob_header h{};
    h.magic = MK_BLOB_MAGIC;
    h.version = MK_BLOB_VERSION;
    h.n_tensors = uint32_t(t_.size());
    h.n_layers = uint32_t(layers_.size());
    h.n_inputs = uint32_t(in_idx.size());
    h.n_outputs = uint32_t(out_idx.size());
    h.tensors_off = sizeof(mk_blob_header);
    h.layers_off = h.tensors_off + h.n_tensors * uint32_t(sizeof(mk_blob_tensor));
    h.io_off = h.layers_off + h.n_layers * uint32_t(sizeof(mk_blob_layer));
    uint32_t data = (h.io_off + (h.n_inputs + h.n_outputs) * 4u + 15u) & ~15u;
    for (auto& t : t_) {
        if (t.data.empty()) continue;
        if (t.rec.storage == MK_ST_CONST) t.rec.offset = data;
        else t.rec.init_off = data;
        data = (data + uint32_t(t.data.size()) + 15u) & ~15u;
        blob.const_bytes += uint32_t(t.data.size());
    }
    h.total_bytes = data;
    h.arena_bytes = arena_bytes_;
    std::vector<uint8_t>& b = blob.bytes;
    b.assign(data, 0);
    std::memcpy(b.data(), &h, sizeof h);
    for (size_t i = 0; i < t_.size(); ++i) {
        std::memcpy(&b[h.tensors_off + i * sizeof(mk_blob_tensor)], &t_[i].rec, sizeof(mk_blob_tensor));
        if (!t_[i].data.empty()) {
            const uint32_t off = t_[i].rec.storage == MK_ST_CONST ? t_[i].rec.offset : t_[i].rec.init_off;
            std::memcpy(&b[off], t_[i].data.data(), t_[i].data.size());
        }
    }
    for (size_t i = 0; i < layers_.size(); ++i) std::memcpy(&b[h.layers_off + i * sizeof(mk_blob_layer)], &layers_[i], sizeof(mk_blob_layer));
    std::vector<uint32_t> io = in_idx;
    io.insert(io.end(), out_idx.begin(), out_idx.end());
    if (!io.empty()) std::memcpy(&b[h.io_off], io.data(), io.size() * 4);
    blob.arena_bytes = arena_bytes_;
    blob.layers = info_;
    return blob;
}
std::vector<std::pair<std::string, std::string>> Converter::gaps() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Node& n : g_.nodes()) {
        try {
            node(n);
        } catch (const ConvertError& e) {
            out.emplace_back(n.name, mcu::no_kernel_text(e.what()));
        } catch (const std::exception& e) {  // e.g. an operator error while building a table
            out.emplace_back(n.name, mcu::no_kernel_text(n.label() + ": " + e.what()));
        }
    }
    return out;
}

}  // namespace detail

using detail::Converter;

std::string no_kernel_text(const std::string& why) {
    return why.find("no MCU kernel yet") != std::string::npos ? why : "no MCU kernel yet: " + why;
}

std::vector<std::pair<std::string, std::string>> conversion_gaps(const drv::ir::Graph& g) {
    return Converter(g, {}).gaps();
}

Blob convert_graph(const drv::ir::Graph& g, const std::map<std::string, num::Tensor>& inputs, const ConvertOptions& opts) {
    return Converter(g, opts).run(inputs);
}

num::Tensor output_tensor(const BlobOutput& o, const std::vector<uint8_t>& bytes) {
    num::Tensor t(o.dtype, o.shape);
    const size_t n = t.numel();
    if (o.dtype == num::DType::I64) {  // the kernel wrote int32 indices
        if (bytes.size() != n * 4) throw ConvertError("output '" + o.value + "': size mismatch");
        for (size_t i = 0; i < n; ++i) {
            int32_t v;
            std::memcpy(&v, &bytes[i * 4], 4);
            t.data<int64_t>()[i] = v;
        }
        return t;
    }
    if (bytes.size() != t.nbytes()) throw ConvertError("output '" + o.value + "': " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(t.nbytes()));
    if (o.shape.size() != 4 || o.nhwc) {
        std::memcpy(t.raw(), bytes.data(), bytes.size());
        return t;
    }
    const int64_t N = o.shape[0], C = o.shape[1], H = o.shape[2], W = o.shape[3];
    const size_t e = t.nbytes() / std::max<size_t>(1, n);
    for (int64_t a = 0; a < N; ++a)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t y = 0; y < H; ++y)
                for (int64_t x = 0; x < W; ++x)
                    std::memcpy(t.raw() + size_t(((a * C + c) * H + y) * W + x) * e, &bytes[size_t(((a * H + y) * W + x) * C + c) * e], e);
    return t;
}

const char* op_name(uint32_t op) {
    switch (op) {
        case MK_OP_CONV2D_S8: return "conv2d_s8";
        case MK_OP_DWCONV_S8: return "dwconv_s8";
        case MK_OP_FC_S8: return "fc_s8";
        case MK_OP_ADD_S8: return "add_s8";
        case MK_OP_MUL_S8: return "mul_s8";
        case MK_OP_MAXPOOL_S8: return "maxpool_s8";
        case MK_OP_AVGPOOL_S8: return "avgpool_s8";
        case MK_OP_CLAMP_S8: return "clamp_s8";
        case MK_OP_LUT_S8: return "lut_s8";
        case MK_OP_SOFTMAX_S8: return "softmax_s8";
        case MK_OP_GAP_S8: return "gap_s8";
        case MK_OP_QUANTIZE: return "quantize";
        case MK_OP_DEQUANTIZE: return "dequantize";
        case MK_OP_COPY: return "copy";
        case MK_OP_TRANSPOSE: return "transpose";
        case MK_OP_CONCAT: return "concat";
        case MK_OP_CONV2D_F32: return "conv2d_f32";
        case MK_OP_DWCONV_F32: return "dwconv_f32";
        case MK_OP_FC_F32: return "fc_f32";
        case MK_OP_BINARY_F32: return "binary_f32";
        case MK_OP_UNARY_F32: return "unary_f32";
        case MK_OP_MAXPOOL_F32: return "maxpool_f32";
        case MK_OP_AVGPOOL_F32: return "avgpool_f32";
        case MK_OP_SOFTMAX_F32: return "softmax_f32";
        case MK_OP_GRU_F32: return "gru_f32";
        case MK_OP_ARGMAX: return "argmax";
        case MK_OP_PAD: return "pad";
        case MK_OP_SLICE: return "slice";
        case MK_OP_RESIZE_F32: return "resize_f32";
        case MK_OP_REDUCE_F32: return "reduce_f32";
        case MK_OP_SOFTMAX_LUT_S8: return "softmax_lut_s8";
        case MK_OP_LSTM_F32: return "lstm_f32";
        case MK_OP_RNN_F32: return "rnn_f32";
        case MK_OP_RESIZE_TFL: return "resize_tfl";
        case MK_OP_BATCH_MATMUL: return "batch_matmul";
        case MK_OP_TCONV_F32: return "tconv_f32";
        case MK_OP_TCONV_S8: return "tconv_s8";
        case MK_OP_PRELU_F32: return "prelu_f32";
        case MK_OP_REDUCE_S8: return "reduce_s8";
        case MK_OP_MINMAX_S8: return "minmax_s8";
        case MK_OP_ARGMIN: return "argmin";
        case MK_OP_GATHER: return "gather";
        case MK_OP_TILE: return "tile";
        default: return "?";
    }
}

}  // namespace mcu
