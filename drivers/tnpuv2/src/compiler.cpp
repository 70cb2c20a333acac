// SPDX-License-Identifier: MIT
// compile_model (model.h): converter view + seed-003 rule check, QDQ rewrite, partition into
// layers (fused units: DQ -> op -> Q, Swish, the YOLO decode), device tensors (activations first
// in the arena, each in its own range), lowering of every layer to commands, then the blobs and
// the stream after the activations, with the relocation list.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "checker/checker.h"
#include "checker/spec_db.h"
#include "compiler/ir/qdq.h"
#include "compiler_internal.h"

namespace drv::tnpuv2 {

namespace detail {

namespace {

bool is(const ir::Node& n, const char* op) { return n.op_type == op; }
bool is_dq(const ir::Node& n) { return n.op_type == "DequantizeLinear"; }
bool is_q(const ir::Node& n) { return n.op_type == "QuantizeLinear"; }

/// Float ops the vector engine runs between a DequantizeLinear and a QuantizeLinear as one
/// quantized layer (the model's DQ -> op -> Q unit).
bool dq_op_q_op(const ir::Node& n) {
    static const std::set<std::string> ops = {"Softmax",
                                              "ReduceMean",
                                              "ReduceSum",
                                              "ReduceMax",
                                              "LpNormalization",
                                              "LayerNormalization",
                                              "Resize",
                                              "Upsample",
                                              "BatchNormalization",
                                              "Pow",
                                              "Relu",
                                              "Pad",
                                              "DepthToSpace",
                                              "SpaceToDepth"};
    return ops.count(n.op_type) != 0;
}

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

}  // namespace

void exact_scale(double s, int32_t& mult, int32_t& shift) {
    if (!(s > 0.0) || !std::isfinite(s))
        throw std::invalid_argument(fmt::format("requantization scale {} is not positive", s));
    int e = 0;
    const double m = std::frexp(static_cast<double>(static_cast<float>(s)), &e);  // s = m 2^e, m in [0.5, 1)
    int64_t mu = static_cast<int64_t>(std::ldexp(m, 24));                         // exact: a float has 24 bits
    int64_t sh = 24 - e;
    while (sh > 63) {  // tiny scales: give up low multiplier bits (rounded)
        mu = (mu + 1) >> 1;
        --sh;
    }
    while (sh < 0) {
        if (mu >= (int64_t{1} << 30)) throw std::invalid_argument(fmt::format("requantization scale {} too large", s));
        mu <<= 1;
        ++sh;
    }
    mult = static_cast<int32_t>(mu);
    shift = static_cast<int32_t>(sh);
}

void fixed_scale(double s, int bits, int32_t& mult, int32_t& shift) {
    if (!(s > 0.0) || !std::isfinite(s)) throw std::invalid_argument(fmt::format("scale {} is not positive", s));
    int e = 0;
    const double m = std::frexp(s, &e);
    int64_t mu = std::llround(std::ldexp(m, bits));
    int64_t sh = bits - e;
    if (mu == (int64_t{1} << bits)) {
        mu >>= 1;
        --sh;
    }
    while (sh > 63) {
        mu = (mu + 1) >> 1;
        --sh;
    }
    while (sh < 0) {
        if (mu >= (int64_t{1} << 30)) throw std::invalid_argument(fmt::format("scale {} too large", s));
        mu <<= 1;
        ++sh;
    }
    mult = static_cast<int32_t>(mu);
    shift = static_cast<int32_t>(sh);
}

void Compiler::refuse(const std::string& why) const {
    const Layer& l = m_.layers.at(cur_);
    throw RefusedError(fmt::format("layer '{}' ({}): {}", l.name, l.op, why));
}

const num::Tensor* Compiler::constant(const ir::Node& n, size_t i) const {
    if (!n.has_input(i)) return nullptr;
    const ir::Value* v = g().find_value(n.input(i));
    return v && v->is_constant() ? &*v->data : nullptr;
}

float Compiler::scalar_f(const ir::Node& n, size_t i) const {
    const num::Tensor* t = constant(n, i);
    if (!t || t->dtype() != num::DType::F32 || t->numel() != 1)
        refuse(fmt::format("input {} must be a constant float scalar", i));
    return t->data<float>()[0];
}

int32_t Compiler::scalar_zp(const ir::Node& n, size_t i) const {
    const num::Tensor* t = constant(n, i);
    if (!t) return 0;
    if (t->numel() != 1) refuse(fmt::format("input {} must be a scalar zero point", i));
    switch (t->dtype()) {
        case num::DType::I8:
            return t->data<int8_t>()[0];
        case num::DType::U8:
            return t->data<uint8_t>()[0];
        case num::DType::I16:
            return t->data<int16_t>()[0];
        case num::DType::U16:
            return t->data<uint16_t>()[0];
        case num::DType::I32:
            return t->data<int32_t>()[0];
        default:
            refuse(fmt::format("input {}: zero point of type {}", i, num::dtype_name(t->dtype())));
    }
}

DeviceTensor& Compiler::dt(const std::string& name) {
    auto it = m_.tensors.find(name);
    if (it != m_.tensors.end()) return it->second;
    const ir::Value& v = g().value(name, "tnpuv2 compiler");
    DeviceTensor t;
    t.name = name;
    t.dtype = v.dtype;
    t.shape = v.shape.empty() ? std::vector<int64_t>{1} : v.shape;
    t.nhwc = t.shape.size() == 4;
    const int data = o_.widths.data;
    switch (v.dtype) {
        case num::DType::F32:
            t.format = F::F32;
            t.bits = 32;
            break;
        case num::DType::I8:
            t.format = data <= 4 ? F::S4 : F::S8;
            t.bits = std::min(8, data);
            break;
        case num::DType::U8:
            t.format = data <= 4 ? F::U4 : F::U8;
            t.bits = std::min(8, data);
            break;
        case num::DType::I16:
            t.format = F::S16;
            t.bits = data > 8 ? data : 16;
            break;
        case num::DType::U16:
            t.format = F::U16;
            t.bits = data > 8 ? data : 16;
            break;
        case num::DType::I32:
        case num::DType::I64:
            t.format = F::S32;
            t.bits = 20;
            break;
        default:
            throw RefusedError(
                fmt::format("tensor '{}' of type {} has no tnpuv2 format", name, num::dtype_name(v.dtype)));
    }
    if (v.is_quantized()) {
        if (v.quant.per_axis() && !v.is_constant())
            throw RefusedError(fmt::format(
                "tensor '{}': per-channel activation quantization (seed 003 quantizes activations per tensor)", name));
        t.scale = v.quant.scale[0];
        t.zp = v.quant.zero_point[0];
    }
    // Strides: innermost memory dim packed (4-bit) or element-sized, outer dims row-major.
    const size_t r = t.shape.size();
    std::vector<size_t> order(r);
    for (size_t i = 0; i < r; ++i) order[i] = i;
    if (t.nhwc) order = {0, 2, 3, 1};
    t.strides.assign(r, 0);
    const int eb = hw::tnpuv2::enums::FORMAT::S4 == t.format || F::U4 == t.format
                       ? 0
                       : (t.format == F::F32 || t.format == F::S32 ? 4 : (t.format >= F::S16 ? 2 : 1));
    const int64_t inner = t.shape[order.back()];
    int64_t run = eb ? inner * eb : (inner + 1) / 2;
    t.strides[order.back()] = eb;
    for (size_t k = r - 1; k-- > 0;) {
        t.strides[order[k]] = run;
        run *= t.shape[order[k]];
    }
    t.bytes = static_cast<uint64_t>(align_up(std::max<int64_t>(run, 1), 4));
    // Constants read as data (Add with a constant, an embedding table, Gather indices) live in
    // the initialised part of the arena.
    if (v.is_constant()) t.offset = blob(to_device(t, *v.data));
    return m_.tensors.emplace(name, std::move(t)).first->second;
}

View Compiler::view(const DeviceTensor& t) const {
    View v;
    v.ext = t.shape;
    v.stride = t.strides;
    v.offset = t.offset;
    v.format = t.format;
    v.bits = t.bits;
    v.zp = t.zp;
    return v;
}

Desc Compiler::desc_of(const View& v, const std::vector<size_t>& order) const {
    if (order.size() > 6)
        throw RefusedError(fmt::format("a {}-D tensor view exceeds the descriptor's six dims", order.size()));
    Desc d;
    d.format = v.format;
    d.bits = v.bits;
    d.zp = v.zp;
    d.offset = v.offset;
    d.rank = static_cast<int>(std::max<size_t>(1, order.size()));
    const size_t base = 6 - order.size();
    for (size_t i = 0; i < order.size(); ++i) {
        d.dims[base + i] = v.ext[order[i]];
        d.strides[base + i] = v.stride[order[i]];
    }
    return d;
}

Desc Compiler::fm_desc(const DeviceTensor& t) const {
    if (t.shape.size() != 4) throw RefusedError(fmt::format("tensor '{}' is not a 4-D feature map", t.name));
    return desc_of(view(t), {0, 2, 3, 1});
}

uint64_t Compiler::blob(const std::vector<uint8_t>& bytes, uint64_t align) {
    const uint64_t off =
        static_cast<uint64_t>(align_up(static_cast<int64_t>(blobs_.size()), static_cast<int64_t>(align)));
    blobs_.resize(off, 0);
    blobs_.insert(blobs_.end(), bytes.begin(), bytes.end());
    return blob_base_ + off;
}

uint32_t Compiler::emit(const Command& c,
                        std::initializer_list<std::pair<hw::tnpuv2::Field, hw::tnpuv2::Field>> addrs) {
    const uint32_t k = sb_.engine(c, addrs);
    layer().ops.push_back(k);
    return k;
}

void Compiler::partition() {
    const auto& nodes = g().nodes();
    std::vector<bool> taken(nodes.size(), false);
    std::map<size_t, Group> at;  // group placed at its last node
    for (const DecodeMatch& d : find_yolo_decodes(g())) {
        Group gr{d.nodes, "genbox"};
        for (size_t i : d.nodes) taken[i] = true;
        at[*std::max_element(d.nodes.begin(), d.nodes.end())] = gr;
        m_.notes.push_back(fmt::format("GenerateBox: YOLOv{} decode of {} head(s) ({} nodes) runs on the GENBOX unit",
                                       d.version, d.head_inputs.size(), d.nodes.size()));
    }
    // GRU: the node with the DequantizeLinear nodes feeding it (X, W, R, B; each read by it alone)
    // and the QuantizeLinear nodes of Y / Y_h, one layer (lower_gru).
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (!is(nodes[i], "GRU") || taken[i]) continue;
        std::vector<size_t> mem{i};
        for (const std::string& in : nodes[i].inputs) {
            if (in.empty()) continue;
            const int p = g().producer(in);
            if (p < 0 || taken[static_cast<size_t>(p)] || !is_dq(nodes[static_cast<size_t>(p)])) continue;
            if (g().consumers(in).size() != 1) continue;
            mem.push_back(static_cast<size_t>(p));
        }
        for (size_t k = 0; k < nodes[i].outputs.size() && k < 2; ++k) {
            const std::string& o = nodes[i].outputs[k];
            if (o.empty() || std::find(g().outputs().begin(), g().outputs().end(), o) != g().outputs().end()) continue;
            const std::vector<size_t> cs = g().consumers(o);
            if (cs.size() == 1 && is_q(nodes[cs[0]]) && !taken[cs[0]]) mem.push_back(cs[0]);
        }
        for (size_t k : mem) taken[k] = true;
        at[*std::max_element(mem.begin(), mem.end())] = Group{mem, "gru"};
    }
    auto reads_q = [&](const std::string& v) {
        for (size_t cn : g().consumers(v))
            if (is_q(nodes[cn])) return true;
        return false;
    };
    auto single_consumer = [&](const std::string& v) -> int {
        const std::vector<size_t> cs = g().consumers(v);
        if (cs.size() != 1) return -1;
        if (std::find(g().outputs().begin(), g().outputs().end(), v) != g().outputs().end()) return -1;
        return static_cast<int>(cs[0]);
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (taken[i]) continue;
        const ir::Node& n = nodes[i];
        // DQ -> op -> Q
        if (is_dq(n)) {
            const int o = single_consumer(n.outputs[0]);
            if (o > 0 && !taken[static_cast<size_t>(o)] && dq_op_q_op(nodes[static_cast<size_t>(o)]) &&
                nodes[static_cast<size_t>(o)].input(0) == n.outputs[0]) {
                const int q = single_consumer(nodes[static_cast<size_t>(o)].outputs[0]);
                if (q > 0 && !taken[static_cast<size_t>(q)] && is_q(nodes[static_cast<size_t>(q)])) {
                    taken[i] = taken[static_cast<size_t>(o)] = taken[static_cast<size_t>(q)] = true;
                    at[static_cast<size_t>(q)] = Group{{i, static_cast<size_t>(o), static_cast<size_t>(q)}, "dq_op_q"};
                    continue;
                }
                // Seed 003 FP32 outputs (Softmax, ReLU): DQ -> op whose float result is not requantized.
                const ir::Node& op = nodes[static_cast<size_t>(o)];
                if ((is(op, "Softmax") || is(op, "Relu")) && !reads_q(op.outputs[0])) {
                    taken[i] = taken[static_cast<size_t>(o)] = true;
                    at[static_cast<size_t>(o)] = Group{{i, static_cast<size_t>(o)}, "dq_op_f"};
                    continue;
                }
            }
        }
        // Conv with FP32 output: DQ(x), DQ(W), DQ(bias) -> Conv, its float result not requantized.
        if (is(n, "Conv") && !reads_q(n.outputs[0])) {
            std::vector<size_t> mem;
            for (size_t k = 0; k < n.inputs.size() && k < 3; ++k) {
                const int p = n.inputs[k].empty() ? -1 : g().producer(n.inputs[k]);
                if (p >= 0 && !taken[static_cast<size_t>(p)] && is_dq(nodes[static_cast<size_t>(p)]) &&
                    g().consumers(n.inputs[k]).size() == 1)
                    mem.push_back(static_cast<size_t>(p));
                else if (!n.inputs[k].empty())
                    mem.clear(), k = n.inputs.size();
            }
            if (mem.size() >= 2) {
                // The DQ nodes were visited before the Conv: take them back from their own groups.
                for (size_t k : mem) at.erase(k);
                mem.push_back(i);
                for (size_t k : mem) taken[k] = true;
                at[i] = Group{mem, "dq_conv_f"};
                continue;
            }
        }
        // Swish: QLinearSigmoid(x) read only by QLinearMul(x, sigmoid(x)).
        if (is(n, "QLinearSigmoid")) {
            // Mixed widths (seed 003: 16-bit input to 8-bit output) keep the Mul in QDQ form:
            // DQ(sigmoid) and DQ(x) -> Mul -> Q. One table from the input codes to the output codes.
            const int d2 = single_consumer(n.outputs[0]);
            if (d2 > 0 && is_dq(nodes[static_cast<size_t>(d2)]) && !taken[static_cast<size_t>(d2)]) {
                const int mi = single_consumer(nodes[static_cast<size_t>(d2)].outputs[0]);
                const ir::Node* mul = mi > 0 ? &nodes[static_cast<size_t>(mi)] : nullptr;
                if (mul && is(*mul, "Mul") && mul->inputs.size() == 2) {
                    const std::string& other =
                        mul->input(0) == nodes[static_cast<size_t>(d2)].outputs[0] ? mul->input(1) : mul->input(0);
                    const int d1 = g().producer(other);
                    const int q = single_consumer(mul->outputs[0]);
                    if (d1 >= 0 && is_dq(nodes[static_cast<size_t>(d1)]) &&
                        nodes[static_cast<size_t>(d1)].input(0) == n.input(0) && g().consumers(other).size() == 1 &&
                        q > 0 && is_q(nodes[static_cast<size_t>(q)])) {
                        std::vector<size_t> mem{static_cast<size_t>(d1), i, static_cast<size_t>(d2),
                                                static_cast<size_t>(mi), static_cast<size_t>(q)};
                        at.erase(static_cast<size_t>(d1));  // visited before the sigmoid as a node of its own
                        for (size_t k : mem) taken[k] = true;
                        at[static_cast<size_t>(q)] = Group{mem, "swish"};
                        continue;
                    }
                }
            }
            const int mi = single_consumer(n.outputs[0]);
            if (mi > 0) {
                const ir::Node& mul = nodes[static_cast<size_t>(mi)];
                if (is(mul, "QLinearMul") && ((mul.input(0) == n.input(0) && mul.input(3) == n.outputs[0]) ||
                                              (mul.input(3) == n.input(0) && mul.input(0) == n.outputs[0]))) {
                    taken[i] = taken[static_cast<size_t>(mi)] = true;
                    at[static_cast<size_t>(mi)] = Group{{i, static_cast<size_t>(mi)}, "swish"};
                    continue;
                }
            }
        }
        if (!at.count(i)) at[i] = Group{{i}, "node"};
    }
    for (auto& [pos, gr] : at) {
        (void)pos;
        std::sort(gr.nodes.begin(), gr.nodes.end());
        groups_.push_back(gr);
    }
    // Layers: inputs = non-constant values read from outside the group; outputs = values read
    // outside it or graph outputs.
    for (const Group& gr : groups_) {
        Layer L;
        const ir::Node& first = nodes[gr.nodes.front()];
        std::set<std::string> inside, produced;
        for (size_t k : gr.nodes)
            for (const auto& o : nodes[k].outputs) produced.insert(o);
        for (size_t k : gr.nodes) {
            for (const auto& in : nodes[k].inputs) {
                if (in.empty() || produced.count(in)) continue;
                const ir::Value* v = g().find_value(in);
                if (!v || v->is_constant()) continue;
                if (std::find(L.inputs.begin(), L.inputs.end(), in) == L.inputs.end()) L.inputs.push_back(in);
            }
        }
        for (size_t k : gr.nodes)
            for (const auto& o : nodes[k].outputs) {
                if (o.empty()) continue;
                bool outside = std::find(g().outputs().begin(), g().outputs().end(), o) != g().outputs().end();
                for (size_t cn : g().consumers(o))
                    if (std::find(gr.nodes.begin(), gr.nodes.end(), cn) == gr.nodes.end()) outside = true;
                if (outside) L.outputs.push_back(o);
            }
        const ir::Node* namedp = &first;
        for (size_t k : gr.nodes)
            if ((gr.kind == "gru" && is(nodes[k], "GRU")) || (gr.kind == "dq_conv_f" && is(nodes[k], "Conv")))
                namedp = &nodes[k];
        const ir::Node& named = *namedp;
        L.name = named.name.empty() ? named.op_type : named.name;
        if (gr.kind == "genbox")
            L.op = "GenerateBox";
        else if (gr.kind == "swish")
            L.op = "Swish";
        else if (gr.kind == "gru")
            L.op = "GRU";
        else if (gr.kind == "dq_op_q" || gr.kind == "dq_op_f")
            L.op = nodes[gr.nodes[1]].op_type;
        else if (gr.kind == "dq_conv_f")
            L.op = "Conv";
        else
            L.op = first.op_type;
        L.ir_nodes = gr.nodes;
        if (!L.inputs.empty()) L.in_shape = g().value(L.inputs[0]).shape_str();
        if (!L.outputs.empty()) L.out_shape = g().value(L.outputs[0]).shape_str();
        m_.layers.push_back(std::move(L));
    }
}

namespace {

/// True when the device bytes are in IR row-major order (a view can reinterpret them).
bool rowmajor_bytes(const DeviceTensor& t) {
    if (!t.nhwc) return true;
    return (t.shape[2] * t.shape[3] == 1) || t.shape[1] == 1;
}

}  // namespace

void Compiler::plan_tensors() {
    // Views: a reshape-like layer whose input and output bytes coincide aliases its input.
    static const std::set<std::string> reshape_ops = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
    for (Layer& L : m_.layers) {
        for (const std::string& in : L.inputs) dt(in);
        for (const std::string& out : L.outputs) dt(out);
        if (L.ir_nodes.size() != 1 || !reshape_ops.count(L.op) || L.inputs.size() != 1 || L.outputs.size() != 1)
            continue;
        const DeviceTensor& a = dt(L.inputs[0]);
        DeviceTensor& b = dt(L.outputs[0]);
        if (rowmajor_bytes(a) && rowmajor_bytes(b) && a.format == b.format && a.zp == b.zp && a.bits == b.bits &&
            std::find(g().inputs().begin(), g().inputs().end(), L.outputs[0]) == g().inputs().end()) {
            L.unit = Unit::View;
            b.alias_of = a.alias_of.empty() ? a.name : a.alias_of;
            L.note = "same bytes (view)";
        }
    }
    // Activations from arena offset 0, each in its own range (the per-layer check reads them).
    uint64_t off = 0;
    for (auto& [name, t] : m_.tensors) {
        if (!t.alias_of.empty()) continue;
        const ir::Value& v = g().value(name);
        if (v.is_constant()) continue;
        t.offset = off;
        off += static_cast<uint64_t>(align_up(static_cast<int64_t>(t.bytes), 64));
    }
    for (auto& [name, t] : m_.tensors)
        if (!t.alias_of.empty()) t.offset = m_.tensors.at(t.alias_of).offset;
    blob_base_ = static_cast<uint64_t>(align_up(static_cast<int64_t>(off), 4096));
}

void Compiler::lower_layer(size_t li) {
    cur_ = li;
    Layer& L = m_.layers[li];
    if (L.unit == Unit::View) return;
    const auto& nodes = g().nodes();
    std::vector<const ir::Node*> unit;
    for (size_t k : L.ir_nodes) unit.push_back(&nodes[k]);
    const Group& gr = groups_[li];
    const ir::Node& n = *unit.front();
    if (gr.kind == "genbox") return lower_genbox(*this, unit);
    if (gr.kind == "swish") {
        lower_lut(*this, unit);
        L.op = "Swish";
        return;
    }
    if (gr.kind == "gru") return lower_gru(*this, unit);
    if (gr.kind == "dq_conv_f") return lower_conv_fp32(*this, unit);
    if (gr.kind == "dq_op_f") return unit[1]->op_type == "Relu" ? lower_lut(*this, unit) : lower_dq_op_q(*this, unit);
    if (gr.kind == "dq_op_q") {
        const std::string& op = unit[1]->op_type;
        if (op == "Pow") return lower_lut(*this, unit);
        if (op == "BatchNormalization") return lower_affine(*this, unit);
        if (op == "Relu") return lower_lut(*this, unit);
        if (op == "Pad" || op == "DepthToSpace" || op == "SpaceToDepth") {
            // Data movement between a DQ and a Q: the op on codes, requantized when the two differ.
            ir::Node mv = *unit[1];
            mv.inputs[0] = unit[0]->input(0);
            mv.outputs = unit[2]->outputs;
            return lower_move(*this, mv);
        }
        return lower_dq_op_q(*this, unit);
    }
    const std::string& op = n.op_type;
    if (op == "QLinearConv") return lower_conv(*this, n);
    if (op == "QLinearMatMul" || op == "QGemm") return lower_matmul(*this, n);
    if (op == "QLinearAdd" || op == "QLinearMul") return lower_eltwise(*this, n);
    if (op == "MaxPool" || op == "QLinearAveragePool" || op == "QLinearGlobalAveragePool") return lower_pool(*this, n);
    if (op == "QLinearSigmoid" || op == "QLinearLeakyRelu") return lower_lut(*this, unit);
    if (op == "QLinearSoftmax") {
        // onnxruntime's (and the import's) fusion of DQ -> Softmax -> Q: the vector unit's Softmax,
        // lowered as that unit (the same x, scales and axis; the layer is checked against the fused op).
        ir::Node dq, sm, q;
        dq.op_type = "DequantizeLinear";
        dq.inputs = {n.input(0), n.input(1), n.input(2)};
        sm.op_type = "Softmax";
        sm.name = n.name;
        sm.attrs = n.attrs;
        q.op_type = "QuantizeLinear";
        q.inputs = {"", n.input(3), n.input(4)};
        q.outputs = n.outputs;
        return lower_dq_op_q(*this, {&dq, &sm, &q});
    }
    if (op == "QuantizeLinear" || op == "DequantizeLinear") return lower_quant(*this, n);
    if (op == "Erf" || op == "Sqrt" || op == "Pow") return lower_fp32(*this, n);
    if (op == "Relu" || op == "Clip") return lower_relu(*this, n);
    static const std::set<std::string> moves = {"Transpose", "Reshape",  "Flatten",       "Squeeze",      "Unsqueeze",
                                                "Identity",  "Concat",   "QLinearConcat", "Slice",        "Pad",
                                                "Resize",    "Upsample", "DepthToSpace",  "SpaceToDepth", "Gather"};
    if (moves.count(op)) return lower_move(*this, n);
    refuse("no tnpuv2 lowering for this operator");
}

void Compiler::finish() {
    std::vector<std::pair<uint32_t, uint32_t>> srel;
    const std::vector<uint32_t> words = sb_.finish(srel);
    const uint64_t soff = blob(std::vector<uint8_t>(words.size() * 4), 64);
    const uint64_t rel0 = soff - blob_base_;
    std::memcpy(blobs_.data() + rel0, words.data(), words.size() * 4);
    m_.stream_offset = soff;
    m_.stream_words = static_cast<uint32_t>(words.size());
    m_.engine_ops = sb_.engine_ops();
    m_.relocs = blob_relocs_;
    for (const auto& [lo, hi] : srel) m_.relocs.emplace_back(soff + uint64_t{lo} * 4, soff + uint64_t{hi} * 4);
    std::sort(m_.relocs.begin(), m_.relocs.end());
    m_.arena_init_offset = blob_base_;
    m_.arena_init = std::move(blobs_);
    m_.arena_bytes = blob_base_ + m_.arena_init.size();
}

void Compiler::run() {
    partition();
    plan_tensors();
    for (size_t li = 0; li < m_.layers.size(); ++li) {
        try {
            lower_layer(li);
        } catch (const std::invalid_argument& e) {
            throw RefusedError(fmt::format("layer '{}' ({}): {}", m_.layers[li].name, m_.layers[li].op, e.what()));
        }
    }
    finish();
}

}  // namespace detail

void apply_data_bits(ir::Graph& g, int data_bits) {
    if (data_bits < 2 || data_bits > 16)
        throw RefusedError(fmt::format("--bits {}: tnpuv2 data widths are 4, 8, 12, 14 or 16", data_bits));
    // Mixed widths (seed 003 Swish: 16-bit input to 8-bit output): with --bits above 8, 8-bit
    // QuantizeLinear nodes keep their 8 bits as long as some QuantizeLinear has a 16-bit container.
    bool wide = false;
    for (const ir::Node& n : g.nodes())
        if (n.op_type == "QuantizeLinear") {
            const num::DType t = g.value(n.outputs[0]).dtype;
            wide = wide || t == num::DType::I16 || t == num::DType::U16;
        }
    for (ir::Node& n : g.nodes()) {
        if (n.op_type != "QuantizeLinear") continue;
        const ir::Value& y = g.value(n.outputs[0]);
        const int container = num::dtype_size(y.dtype) * 8;
        if (y.dtype != num::DType::I8 && y.dtype != num::DType::U8 && y.dtype != num::DType::I16 &&
            y.dtype != num::DType::U16)
            continue;
        if (container == 8 && data_bits > 8 && wide) continue;
        if (data_bits > container || (container == 16 && data_bits <= 8) || (container == 8 && data_bits > 8))
            throw RefusedError(
                fmt::format("--bits {}: '{}' is quantized to {} ({}-bit container): {}-bit data need a{} model",
                            data_bits, y.name, num::dtype_name(y.dtype), container, data_bits,
                            data_bits > 8 ? " 16-bit (int16/uint16 QDQ)" : "n 8-bit (int8/uint8 QDQ)"));
        if (data_bits < container) n.attrs.set("_qbits", static_cast<int64_t>(data_bits));
    }
}

CompiledModel compile_model(ir::Graph g, const hw::tnpuv2::Profile& p, const check::PlatformSpec& spec,
                            const CompileOptions& opts, check::CheckResult* check_out) {
    CompiledModel m;
    m.widths = opts.widths;
    apply_data_bits(g, opts.widths.data);
    std::vector<std::string> notes;
    const ir::Graph view = check::quantized_view(converter_view(g, &notes));
    check::CheckOptions co;
    co.quant_bits = opts.widths.data;
    check::CheckResult r = check::check_graph(view, spec, co);
    if (check_out) *check_out = r;
    for (const check::NodeResult& nr : r.nodes) {
        if (nr.verdict != check::Verdict::Unsupported) continue;
        std::string why = nr.reason;
        if (!nr.violations.empty()) {
            const check::Violation& v = nr.violations.front();
            why = fmt::format("{} — {} {}, seed 003 §{}", v.text, spec.id, v.op, v.rule->source.section);
        }
        throw RefusedError(fmt::format("node '{}' ({}) is unsupported on tnpuv2: {}", nr.node, nr.op_type, why));
    }
    // The QDQ graph as the converter reads it: no onnxruntime rewrites (QDQ propagation would split
    // the YOLO decode chain the GENBOX match walks, and the vendor converter is not onnxruntime).
    ir::fold_qdq(g, true, false, false);
    m.graph = std::move(g);
    m.notes = notes;
    detail::Compiler c(m, p, opts);
    c.run();
    return m;
}

void relocate(CompiledModel& m, uint64_t base) {
    if (m.relocated_base == base) return;
    const uint64_t delta = base - m.relocated_base;
    for (const auto& [lo, hi] : m.relocs) {
        uint32_t l, h;
        std::memcpy(&l, m.arena_init.data() + (lo - m.arena_init_offset), 4);
        std::memcpy(&h, m.arena_init.data() + (hi - m.arena_init_offset), 4);
        const uint64_t a = (static_cast<uint64_t>(h) << 32 | l) + delta;
        l = static_cast<uint32_t>(a);
        h = static_cast<uint32_t>(a >> 32);
        std::memcpy(m.arena_init.data() + (lo - m.arena_init_offset), &l, 4);
        std::memcpy(m.arena_init.data() + (hi - m.arena_init_offset), &h, 4);
    }
    m.relocated_base = base;
}

}  // namespace drv::tnpuv2
