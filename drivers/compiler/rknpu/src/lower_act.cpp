// SPDX-License-Identifier: MIT
// Element-wise functions of one int8 tensor on the DPU's EW LUT (issue 15): standalone activations
// (QLinearSigmoid / QLinearLeakyRelu, and DequantizeLinear -> Sigmoid / Tanh / HardSwish / Gelu /
// Mish / ... -> QuantizeLinear regions in float), Swish = QLinearSigmoid read only by
// QLinearMul(x, sigmoid(x)), and QLinearAdd / QLinearMul by a scalar constant.
//
// The table: an int8 output is a function of the int8 input code alone, so the layer's own
// reference nodes (the imported graph's, what the runtime checks the NPU against) are evaluated by
// the reference operator library on all 256 codes. The DPU's LO table (257 entries, LUT_LO_START
// -128, LUT_LO_INDEX_SELECT 0: one entry per integer input, docs/rknpu-register-semantics.md)
// then holds exactly those outputs, so an int8 -> int8 activation is reference-exact; the entries
// are the device codes (uint8 graphs stored as u - 128), the output convert is the identity.
// ASSUMPTION (the vendor's LUT programming is not public): RKNN's compiler samples the function
// into the two tables with interpolation; one entry per input code is the plausible exact mapping
// for 8-bit inputs and uses only the linear index mode the model implements.
#include <fmt/format.h>

#include "compiler_internal.h"
#include "dpu_only.h"
#include "hw/rknpu_regs.h"
#include "numerics/ops.h"

namespace drv::rknpu {

void dpu_only::emit_lut(BodyBuilder& bb, const std::vector<int8_t>& table, int32_t start) {
    if (table.size() != 256) throw std::logic_error("emit_lut: 256 entries expected");
    // The LE table is left as it is: the priorities select LO wherever it is hit or not.
    bb.write_fields("DPU_LUT_ACCESS_CFG", {{"LUT_ACCESS_TYPE", 1}, {"LUT_TABLE_ID", 1}, {"LUT_ADDR", 0}});
    for (size_t i = 0; i <= table.size(); ++i)
        bb.write_fields("DPU_LUT_ACCESS_DATA",
                        {{"LUT_ACCESS_DATA", static_cast<uint16_t>(static_cast<int16_t>(table[std::min<size_t>(i, 255)]))}});
    bb.write_fields("DPU_LUT_CFG", {{"LUT_EXPAND_EN", 0},
                                    {"LUT_HYBRID_PRIORITY", 1},
                                    {"LUT_UFLOW_PRIORITY", 1},
                                    {"LUT_OFLOW_PRIORITY", 1}});
    bb.write_fields("DPU_LUT_INFO", {{"LUT_LE_INDEX_SELECT", 0}, {"LUT_LO_INDEX_SELECT", 0}});
    bb.write("DPU_LUT_LO_START", static_cast<uint32_t>(start));
    bb.write("DPU_LUT_LO_END", static_cast<uint32_t>(start + 256));
    bb.write("DPU_LUT_LE_START", 0);
    bb.write("DPU_LUT_LE_END", 0);
    for (const char* r : {"DPU_LUT_LE_SLOPE_SCALE", "DPU_LUT_LE_SLOPE_SHIFT", "DPU_LUT_LO_SLOPE_SCALE",
                          "DPU_LUT_LO_SLOPE_SHIFT"})
        bb.write(r, 0);
}

std::vector<TaskBody> lower_lut_op(const std::string& name, const std::string& op, const DeviceTensor& in,
                                   const DeviceTensor& out, const std::vector<int8_t>& table, ArenaBuilder& arena,
                                   const hw::SocProfile& soc, int core) {
    dpu_only::check(name, in, soc);
    dpu_only::check(name, out, soc);
    if (table.size() != 256)
        throw std::invalid_argument(fmt::format("'{}': LUT needs 256 entries (one per int8 code), got {}", name, table.size()));
    if (auto split = dpu_only::split_unary(name, in, out, [&](const DeviceTensor& a, const DeviceTensor& b) {
            return lower_lut_op(name, op, a, b, table, arena, soc, core);
        }))
        return *split;
    BodyBuilder bb;
    dpu_only::emit_common(bb, in, out);
    // EW: no operand, the LUT on the input value as is; output convert: identity (the entries are
    // the output codes).
    bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                   {"EW_OP_BYPASS", 1},
                                   {"EW_LUT_BYPASS", 0},
                                   {"EW_OP_CVT_BYPASS", 1},
                                   {"EW_RELU_BYPASS", 1}});
    dpu_only::emit_lut(bb, table, -128);
    bb.write("DPU_OUT_CVT_OFFSET", 0);
    bb.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 1}});
    bb.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 0}});
    return {bb.finish(dpu_only::meta(fmt::format("{} lut {}x{}x{}", op, out.c, out.h, out.w), out, core))};
}

}  // namespace drv::rknpu

namespace drv::rknpu::compiler_detail {

namespace {

/// Float element-wise ops a DequantizeLinear -> ... -> QuantizeLinear region may hold (scalar
/// constants only, so the region stays a function of one value per element).
const std::set<std::string>& table_ops() {
    static const std::set<std::string> k{"Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu", "Selu", "Celu",
                                         "Softplus", "Softsign", "Mish", "Gelu", "LeakyRelu", "PRelu", "Relu",
                                         "Clip", "ThresholdedRelu", "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow",
                                         "Exp", "Log", "Sqrt", "Abs", "Neg", "Erf", "Reciprocal", "Identity",
                                         "Floor", "Ceil", "Round", "Sin", "Cos"};
    return k;
}

/// The layer name a region's operators make (the seed's fused names where they apply).
std::string region_op(const std::multiset<std::string>& ops) {
    auto has = [&](const char* o) { return ops.count(o) > 0; };
    if (ops.size() == 1) return *ops.begin();
    if (has("Sigmoid") && has("Mul") && ops.size() == 2) return "Swish";
    if (has("HardSigmoid") && has("Mul") && ops.size() == 2) return "HardSwish";
    if (has("Clip") && has("Mul") && (has("Div") || ops.count("Mul") == 2) && has("Add")) return "HardSwish";
    if (has("Erf") || has("Gelu")) return "Gelu";
    if (has("Softplus") && has("Tanh") && has("Mul")) return "Mish";
    std::string s;
    for (const auto& o : ops) s += (s.empty() ? "" : "+") + o;
    return "Lut(" + s + ")";
}

}  // namespace

std::vector<int8_t> Compiler::lut_table(const std::vector<size_t>& ref_idx, const std::string& x,
                                        const std::string& y) const {
    const ir::Value& xv = ref_.value(x);
    const bool u8 = xv.dtype == num::DType::U8;
    num::Tensor codes(xv.dtype, {256});
    for (int k = 0; k < 256; ++k) {
        if (u8)
            codes.data<uint8_t>()[k] = static_cast<uint8_t>(k);
        else
            codes.data<int8_t>()[k] = static_cast<int8_t>(k - 128);
    }
    std::map<std::string, num::Tensor> env;
    env.emplace(x, std::move(codes));
    for (size_t k : ref_idx) {
        const ir::Node& n = ref_.nodes()[k];
        std::vector<const num::Tensor*> ins;
        for (const std::string& in : n.inputs) {
            if (in.empty()) {
                ins.push_back(nullptr);
                continue;
            }
            if (auto it = env.find(in); it != env.end()) {
                ins.push_back(&it->second);
                continue;
            }
            const ir::Value* v = ref_.find_value(in);
            if (!v || !v->is_constant()) unsupported(fmt::format("table input '{}' is not constant", in));
            ins.push_back(&*v->data);
        }
        std::vector<num::Tensor> r = num::run_op(n.op_type, n.attrs, ins, n.domain);
        for (size_t o = 0; o < r.size() && o < n.outputs.size(); ++o) env.insert_or_assign(n.outputs[o], std::move(r[o]));
    }
    auto it = env.find(y);
    if (it == env.end()) unsupported("the table nodes do not produce the layer output");
    const num::Tensor& t = it->second;
    if (t.numel() != 256 || !is_q8(t.dtype())) unsupported("the table function is not element-wise on int8 codes");
    std::vector<int8_t> table(256);
    for (size_t k = 0; k < 256; ++k)
        table[k] = t.dtype() == num::DType::U8 ? static_cast<int8_t>(t.data<uint8_t>()[k] - 128) : t.data<int8_t>()[k];
    return table;
}

void Compiler::push_lut(Layer L, const std::string& x, const std::string& y, std::vector<int8_t> table) {
    const std::string op = L.op;
    const std::string name = L.name;
    push_npu(
        std::move(L),
        [this, x, y, op, name, table = std::move(table)]() {
            const DeviceTensor &tx = m_.tensors.at(x), &ty = m_.tensors.at(y);
            return across_cores(ty.h, [&](int y0, int rows, int core) {
                return lower_lut_op(name, op, rows_of(tx, y0, rows), rows_of(ty, y0, rows), table, arena_, soc_, core);
            });
        },
        true);
}

bool Compiler::lut_allowed(size_t u) const {
    const ir::Node& n = g_.nodes()[u];
    return !forced_cpu(n) && !checker_cpu_.count(n.name) && !consumed_.count(u);
}

std::optional<Compiler::LutPlan> Compiler::plan_lut_unit(size_t i) const {
    const ir::Node& n = g_.nodes()[i];
    if (n.domain != "com.microsoft") return std::nullopt;
    const bool sig = n.op_type == "QLinearSigmoid", leaky = n.op_type == "QLinearLeakyRelu";
    const bool binary = n.op_type == "QLinearAdd" || n.op_type == "QLinearMul";
    if ((!sig && !leaky && !binary) || !lut_allowed(i)) return std::nullopt;
    // One activation input; the rest (scales, zero points, a QLinearAdd/Mul constant) scalars.
    size_t xi = 0, acts = 0;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (n.input(k).empty()) continue;
        const ir::Value& v = g_.value(n.input(k));
        if (!v.is_constant()) {
            xi = k, ++acts;
        } else if (v.data->numel() != 1) {
            return std::nullopt;
        }
    }
    if (acts != 1 || (binary && xi != 0 && xi != 3)) return std::nullopt;
    LutPlan p;
    p.x = n.input(xi), p.y = n.outputs.at(0);
    if (n.outputs.size() != 1 || g_.value(p.x).shape != g_.value(p.y).shape || !is_q8(g_.value(p.x).dtype) ||
        !is_q8(g_.value(p.y).dtype))
        return std::nullopt;
    const size_t ys = binary ? 6 : 3;
    p.xs = scalar_scale(g_, n, xi + 1), p.xz = scalar_zp(g_, n, xi + 2);
    p.ys = scalar_scale(g_, n, ys), p.yz = scalar_zp(g_, n, ys + 1);
    p.units = {i};
    p.op = sig ? "Sigmoid" : leaky ? "LeakyRelu" : (n.op_type == "QLinearAdd" ? "Add" : "Mul");
    p.note = binary ? fmt::format("{} by a scalar constant as a 256-entry DPU LUT", p.op)
                    : fmt::format("{} as a 256-entry DPU LUT (the reference on every int8 code)", p.op);
    if (sig && std::find(g_.outputs().begin(), g_.outputs().end(), p.y) == g_.outputs().end()) {
        const auto c = g_.consumers(p.y);
        if (c.size() == 1 && c[0] > i && lut_allowed(c[0])) {
            const ir::Node& m = g_.nodes()[c[0]];
            if (m.op_type == "QLinearMul" && m.domain == "com.microsoft" && m.outputs.size() == 1 &&
                ((m.input(0) == p.x && m.input(3) == p.y) || (m.input(3) == p.x && m.input(0) == p.y)) &&
                g_.value(m.outputs.at(0)).shape == g_.value(p.x).shape && is_q8(g_.value(m.outputs[0]).dtype)) {
                // x * sigmoid(x) (YOLOv5/v8 SiLU): still a function of the input code alone.
                const size_t sx = m.input(0) == p.x ? 1 : 4;
                if (scalar_zp(g_, m, sx + 1) == p.xz && std::fabs(scalar_scale(g_, m, sx) - p.xs) <= 1e-6f * p.xs) {
                    p.units.push_back(c[0]);
                    p.y = m.outputs.at(0);
                    p.ys = scalar_scale(g_, m, 6), p.yz = scalar_zp(g_, m, 7);
                    p.op = "Swish";
                    p.note = "QLinearSigmoid -> QLinearMul(x, sigmoid(x)) as one 256-entry DPU LUT (the reference "
                             "chain on every int8 code)";
                }
            }
        }
    }
    return p;
}

std::optional<Compiler::LutPlan> Compiler::plan_lut_region(size_t dq) const {
    const ir::Node& d = g_.nodes()[dq];
    if (d.op_type != "DequantizeLinear" || !lut_allowed(dq)) return std::nullopt;
    const std::string x = d.input(0);
    const ir::Value& xv = g_.value(x);
    if (xv.is_constant() || !is_q8(xv.dtype)) return std::nullopt;
    const auto is_graph_out = [&](const std::string& v) {
        return std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
    };
    // Grow the region from the DQ output (and the outputs of identical DQs of x: the QDQ import
    // gives each float reader its own): every reader of a region value joins it, until each path
    // ends in one QuantizeLinear.
    std::set<size_t> region, dqs{dq};
    std::vector<std::string> work{d.outputs.at(0)};
    for (size_t c : g_.consumers(x)) {
        const ir::Node& o = g_.nodes()[c];
        if (c == dq || o.op_type != "DequantizeLinear" || o.input(0) != x) continue;
        if (c < dq) return std::nullopt;  // the first of them forms the layer
        if (!lut_allowed(c) || scalar_scale(g_, o, 1) != scalar_scale(g_, d, 1) ||
            scalar_zp(g_, o, 2) != scalar_zp(g_, d, 2))
            continue;
        dqs.insert(c);
        work.push_back(o.outputs.at(0));
    }
    std::set<std::string> seen;
    int q = -1;
    while (!work.empty()) {
        const std::string v = work.back();
        work.pop_back();
        if (!seen.insert(v).second) continue;
        if (is_graph_out(v)) return std::nullopt;
        const auto cons = g_.consumers(v);
        if (cons.empty()) return std::nullopt;
        for (size_t c : cons) {
            if (c <= dq || !lut_allowed(c)) return std::nullopt;
            const ir::Node& n = g_.nodes()[c];
            if (n.op_type == "QuantizeLinear" && n.domain.empty()) {
                if (q >= 0 && static_cast<size_t>(q) != c) return std::nullopt;
                q = static_cast<int>(c);
                continue;
            }
            if (!n.domain.empty() || !table_ops().count(n.op_type) || n.outputs.size() != 1) return std::nullopt;
            if (region.insert(c).second) work.push_back(n.outputs[0]);
        }
        if (region.size() > 16) return std::nullopt;
    }
    if (q < 0 || region.empty()) return std::nullopt;
    const ir::Node& qn = g_.nodes()[static_cast<size_t>(q)];
    LutPlan p;
    p.x = x, p.y = qn.outputs.at(0);
    if (!is_q8(g_.value(p.y).dtype) || g_.value(p.y).shape != xv.shape) return std::nullopt;
    // Inputs from outside the region: scalar constants, or a DequantizeLinear of one (a quantized
    // initializer), only (else the region is not a function of x).
    std::set<size_t> own_consts;
    for (size_t r : region) {
        const ir::Node& n = g_.nodes()[r];
        for (const std::string& in : n.inputs) {
            if (in.empty() || seen.count(in)) continue;
            const ir::Value& v = g_.value(in);
            if (v.is_constant()) {
                if (v.data->numel() != 1) return std::nullopt;
                continue;
            }
            const int k = g_.producer(in);
            if (k < 0 || v.shape.size() > 4) return std::nullopt;
            const ir::Node& c = g_.nodes()[static_cast<size_t>(k)];
            if (c.op_type != "DequantizeLinear" || c.outputs.size() != 1) return std::nullopt;
            for (const std::string& ci : c.inputs)
                if (!ci.empty() && (!g_.value(ci).is_constant() || g_.value(ci).data->numel() != 1)) return std::nullopt;
            p.feed.push_back(static_cast<size_t>(k));
            // Read only by the region and not yet placed: the layer covers it.
            bool inside = static_cast<size_t>(k) > dq && lut_allowed(static_cast<size_t>(k));
            for (size_t u : g_.consumers(in)) inside &= region.count(u) > 0;
            if (inside) own_consts.insert(static_cast<size_t>(k));
        }
        if (g_.value(n.outputs[0]).shape != xv.shape) return std::nullopt;
    }
    p.xs = scalar_scale(g_, d, 1), p.xz = scalar_zp(g_, d, 2);
    p.ys = scalar_scale(g_, qn, 1), p.yz = scalar_zp(g_, qn, 2);
    p.units.assign(region.begin(), region.end());
    p.units.insert(p.units.end(), dqs.begin(), dqs.end());
    p.units.insert(p.units.end(), own_consts.begin(), own_consts.end());
    p.units.push_back(static_cast<size_t>(q));
    std::multiset<std::string> ops;
    std::string chain;
    for (size_t r : region) {
        ops.insert(g_.nodes()[r].op_type);
        chain += g_.nodes()[r].op_type + " -> ";
    }
    p.op = region_op(ops);
    p.name = g_.nodes()[*region.begin()].name;
    p.note = "DequantizeLinear -> " + chain + "QuantizeLinear as a 256-entry DPU LUT (the reference on every int8 code)";
    return p;
}

std::optional<Compiler::LutPlan> Compiler::plan_lut_after(const std::string& v) const {
    if (std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end()) return std::nullopt;
    const auto cons = g_.consumers(v);
    if (cons.empty()) return std::nullopt;
    const size_t c = cons.front();
    const ir::Node& n = g_.nodes()[c];
    std::optional<LutPlan> p;
    if (n.op_type == "QLinearSigmoid" || n.op_type == "QLinearLeakyRelu")
        p = plan_lut_unit(c);
    else if (n.op_type == "DequantizeLinear")
        p = plan_lut_region(c);
    if (!p || p->x != v) return std::nullopt;
    for (size_t k : cons)  // every reader of the conv output is inside the activation
        if (std::find(p->units.begin(), p->units.end(), k) == p->units.end()) return std::nullopt;
    return p;
}

void Compiler::push_lut_plan(size_t i, const LutPlan& p) {
    dev(p.x, p.xs, p.xz);
    dev(p.y, p.ys, p.yz);
    Layer L = base_layer(i, p.op, Unit::Npu);
    if (!p.name.empty()) L.name = p.name;
    L.inputs = {p.x};
    L.in_shape = shape_of(p.x);
    L.outputs = {p.y};
    L.out_shape = shape_of(p.y);
    L.ir_nodes = ref_nodes(p.units);
    L.note = p.note;
    std::vector<int8_t> table = lut_table(eval_nodes(p), p.x, p.y);
    for (size_t u : p.units)
        if (u != i) consumed_.insert(u);
    push_lut(std::move(L), p.x, p.y, std::move(table));
}

std::vector<size_t> Compiler::eval_nodes(const LutPlan& p) const {
    std::vector<size_t> u = p.units;
    u.insert(u.end(), p.feed.begin(), p.feed.end());
    return ref_nodes(u);
}

bool Compiler::lut_unit(size_t i) {
    auto p = plan_lut_unit(i);
    if (!p) return false;
    push_lut_plan(i, *p);
    return true;
}

bool Compiler::lut_region(size_t dq) {
    auto p = plan_lut_region(dq);
    if (!p) return false;
    push_lut_plan(dq, *p);
    return true;
}

bool Compiler::fuse_conv_lut(ConvOp& op, Layer& L, std::string& out) {
    auto p = plan_lut_after(out);
    if (!p) return false;
    const ir::Node& first = g_.nodes()[p->units.front()];
    (void)first;
    // The conv's own output code indexes the table; a fused Relu/Clip bounds the index first.
    std::vector<int8_t> t = lut_table(eval_nodes(*p), p->x, p->y);
    std::vector<int8_t> table(256);
    for (int k = 0; k < 256; ++k) {
        int code = k - 128;
        if (op.act == Act::Clip) code = std::clamp(code, op.clip_lo, op.clip_hi);
        table[static_cast<size_t>(k)] = t[static_cast<size_t>(code + 128)];
    }
    m_.tensors.erase(out);  // the conv's output never reaches memory
    dev(p->y, p->ys, p->yz);
    op.act = Act::Lut;
    op.lut = std::move(table);
    L.op = (op.depthwise ? "DepthwiseConvolution" : "Convolution") + p->op;
    L.outputs = {p->y};
    L.out_shape = shape_of(p->y);
    std::vector<size_t> nodes = L.ir_nodes;
    for (size_t k : ref_nodes(p->units)) nodes.push_back(k);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    L.ir_nodes = nodes;
    L.note = (L.note.empty() ? "" : L.note + "; ") + "fused " + p->note;
    for (size_t u : p->units) consumed_.insert(u);
    out = p->y;
    return true;
}

}  // namespace drv::rknpu::compiler_detail
