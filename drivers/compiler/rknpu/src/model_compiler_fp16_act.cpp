// SPDX-License-Identifier: MIT
// Model compiler, the fp16 path's element-wise layers (issue 14): float functions of one tensor
// (Sigmoid, Tanh, HardSigmoid, HardSwish, SiLU = x * Sigmoid(x), Mish, Gelu, Elu, LeakyRelu, ...:
// a region of element-wise nodes reading only that tensor and scalar constants, as the int8
// path's LUT regions in lower_act.cpp) on the DPU's float-path LUT (fp16_lut.cpp); arithmetic with
// a scalar or per-channel constant (Add, Sub, Mul, Div) as the per-channel affine task; Add / Mul
// with a [1,C,1,1] tensor (squeeze-excite) on the ERDMA per channel. The table is the layer's own
// nodes evaluated by the reference operator library on the table's grid.
#include "compiler_internal.h"
#include "numerics/ops.h"

namespace drv::rknpu::compiler_detail {

namespace {

/// Element-wise float ops a table region may hold (inputs: the region's values and scalars).
const std::set<std::string>& region_ops() {
    static const std::set<std::string> k{"Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu", "Selu", "Celu",
                                         "Softplus", "Mish", "Gelu", "LeakyRelu", "PRelu", "Relu", "Clip",
                                         "ThresholdedRelu", "Add", "Sub", "Mul", "Div", "Max", "Min", "Erf", "Neg",
                                         "Abs", "Identity"};
    return k;
}

/// Ops that are not affine: a region without one is the affine task's (or a view's).
bool nonlinear(const std::string& op) {
    static const std::set<std::string> lin{"Add", "Sub", "Mul", "Div", "Neg", "Identity"};
    return !lin.count(op);
}

/// The tables' range: LO (fine, steps of 1/32) on [-4, 4], LE (steps of 1/2) on [-16, 16].
constexpr float kLutRange = 16.f;

std::string region_name(const std::multiset<std::string>& ops) {
    auto has = [&](const char* o) { return ops.count(o) > 0; };
    if (ops.size() == 1) return *ops.begin();
    if (has("Sigmoid") && has("Mul") && ops.size() == 2) return "Swish";
    if (has("HardSigmoid") && has("Mul") && ops.size() == 2) return "HardSwish";
    if (has("Clip") && has("Mul") && has("Add")) return "HardSwish";
    if (has("Erf")) return "Gelu";
    if (has("Softplus") && has("Tanh") && has("Mul")) return "Mish";
    std::string s;
    for (const auto& o : ops) s += (s.empty() ? "" : "+") + o;
    return "Lut(" + s + ")";
}

}  // namespace

std::optional<Compiler::LutPlanF16> Compiler::plan_lut_f16(size_t i) const {
    const ir::Node& n0 = g_.nodes()[i];
    if (!region_ops().count(n0.op_type) || n0.outputs.size() != 1 || !lut_allowed(i)) return std::nullopt;
    const auto is_out = [&](const std::string& v) {
        return std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
    };
    std::string x;
    const auto scalar = [&](const std::string& v) {
        const ir::Value* p = g_.find_value(v);
        return p && p->is_constant() && p->data->dtype() == num::DType::F32 && p->data->numel() == 1;
    };
    for (const std::string& in : n0.inputs) {
        if (in.empty() || scalar(in)) continue;
        if (!x.empty() && in != x) return std::nullopt;
        x = in;
    }
    if (x.empty() || g_.value(x).dtype != num::DType::F32) return std::nullopt;
    const auto& xs = g_.value(x).shape;
    // Grow: every node reading only x, region values and scalars joins (up to 16 nodes).
    std::set<size_t> region{i};
    std::set<std::string> vals{n0.outputs[0]};
    if (g_.value(n0.outputs[0]).shape != xs) return std::nullopt;
    for (bool grew = true; grew && region.size() < 16;) {
        grew = false;
        for (const std::string& v : std::vector<std::string>(vals.begin(), vals.end()))
            for (size_t c : g_.consumers(v)) {
                const ir::Node& n = g_.nodes()[c];
                if (region.count(c) || !region_ops().count(n.op_type) || n.outputs.size() != 1 || !lut_allowed(c) ||
                    !n.domain.empty() || g_.value(n.outputs[0]).shape != xs)
                    continue;
                bool ok = true;
                for (const std::string& in : n.inputs) ok &= in.empty() || in == x || vals.count(in) || scalar(in);
                if (!ok || region.size() >= 16) continue;
                region.insert(c), vals.insert(n.outputs[0]), grew = true;
            }
    }
    // One value leaves the region; else the first node alone.
    std::vector<std::string> leaving;
    for (const std::string& v : vals) {
        bool out = is_out(v);
        for (size_t c : g_.consumers(v)) out |= !region.count(c);
        if (out) leaving.push_back(v);
    }
    if (leaving.size() != 1) region = {i}, leaving = {n0.outputs[0]};
    std::multiset<std::string> ops;
    bool nl = false;
    for (size_t r : region) ops.insert(g_.nodes()[r].op_type), nl |= nonlinear(g_.nodes()[r].op_type);
    if (!nl) return std::nullopt;
    if (region.size() == 1 && n0.op_type == "Relu") return std::nullopt;  // exact as the affine task's clamp (act_f16)
    if (region.size() == 1 && n0.op_type == "Clip") {                // Clip(0, hi) too
        const num::Tensor* lo = g_.opset() >= 11 ? const_of(g_, n0, 1) : nullptr;
        const float l = g_.opset() >= 11 ? (lo ? floats_of(*lo).at(0) : -1.f) : ir::attr_float(n0.attrs, "min", -1.f);
        if (l == 0.f) return std::nullopt;
    }
    const std::string y = leaving[0];
    const float range = kLutRange;
    const std::vector<size_t> nodes(region.begin(), region.end());
    Fp16Lut table;
    try {
        table = make_fp16_lut(range, [&](const std::vector<float>& pts) {
            std::map<std::string, num::Tensor> env;
            num::Tensor t(num::DType::F32, {static_cast<int64_t>(pts.size())});
            std::memcpy(t.data<float>(), pts.data(), 4 * pts.size());
            env.emplace(x, std::move(t));
            for (size_t k : nodes) {
                const ir::Node& n = g_.nodes()[k];
                std::vector<const num::Tensor*> ins;
                for (const std::string& in : n.inputs) {
                    auto it = in.empty() ? env.end() : env.find(in);
                    ins.push_back(in.empty() ? nullptr : it != env.end() ? &it->second : &*g_.value(in).data);
                }
                std::vector<num::Tensor> r = num::run_op(n.op_type, n.attrs, ins, n.domain);
                env.insert_or_assign(n.outputs.at(0), std::move(r.at(0)));
            }
            const num::Tensor& r = env.at(y);
            return std::vector<float>(r.data<float>(), r.data<float>() + r.numel());
        });
    } catch (const std::invalid_argument& e) {
        unsupported(e.what());
    }
    LutPlanF16 p;
    p.x = x, p.y = y, p.nodes = nodes, p.op = region_name(ops), p.table = std::move(table);
    std::string chain;
    for (size_t k : nodes) chain += (chain.empty() ? "" : " -> ") + g_.nodes()[k].op_type;
    p.note = fmt::format("{} as the DPU float-path LUT (LO 257 entries on [-{}, {}], LE 65 on [-{}, {}], linear "
                         "interpolation)", chain, range / 4, range / 4, range, range);
    return p;
}

bool Compiler::lut_f16(size_t i) {
    auto p = plan_lut_f16(i);
    if (!p) return false;
    dev_f16(p->x);
    dev_f16(p->y);
    Layer L = base_layer(i, p->op, Unit::Npu);
    L.inputs = {p->x};
    L.in_shape = shape_of(p->x);
    L.outputs = {p->y};
    L.out_shape = shape_of(p->y);
    L.ir_nodes = ref_nodes(p->nodes);
    L.note = p->note;
    for (size_t k : p->nodes)
        if (k != i) consumed_.insert(k);
    Fp16DpuOp d;
    d.kind = Fp16DpuOp::Kind::Lut;
    d.what = "lut " + p->op;
    d.lut = std::move(p->table);
    push_dpu_f16(std::move(L), std::move(d), p->x, "", p->y);
    return true;
}

bool Compiler::fuse_conv_lut_f16(ConvOp& op, Layer& L) {
    const std::string y = L.outputs.at(0);
    if (std::find(g_.outputs().begin(), g_.outputs().end(), y) != g_.outputs().end()) return false;
    const auto cons = g_.consumers(y);
    if (cons.empty()) return false;
    auto p = plan_lut_f16(*std::min_element(cons.begin(), cons.end()));
    if (!p || p->x != y) return false;
    for (size_t c : cons)  // every reader of the conv output is inside the function
        if (std::find(p->nodes.begin(), p->nodes.end(), c) == p->nodes.end()) return false;
    op.act = Act::Lut;
    op.lut_f = std::move(p->table);
    L.op += p->op;
    L.outputs = {p->y};
    L.out_shape = shape_of(p->y);
    std::vector<size_t> nodes = L.ir_nodes;
    for (size_t k : ref_nodes(p->nodes)) nodes.push_back(k);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    L.ir_nodes = nodes;
    L.note = (L.note.empty() ? "" : L.note + "; ") + "fused " + p->note;
    for (size_t k : p->nodes) consumed_.insert(k);
    return true;
}

bool Compiler::const_arith_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const std::string& op = n.op_type;
    if ((op != "Add" && op != "Sub" && op != "Mul" && op != "Div") || n.inputs.size() != 2) return false;
    const bool c0 = g_.value(n.input(0)).is_constant(), c1 = g_.value(n.input(1)).is_constant();
    if (c0 == c1) return false;
    const std::string x = n.input(c0 ? 1 : 0);
    const num::Tensor* k = const_of(g_, n, c0 ? 0 : 1);
    const auto& xs = g_.value(x).shape;
    if (!k || k->dtype() != num::DType::F32 || g_.value(n.outputs.at(0)).shape != xs) return false;
    // One value, or one per channel of a [1,C,H,W] / [1,C] x ([C,1,1], [1,C,1,1], [1,C], ...).
    const size_t C = xs.size() >= 2 ? static_cast<size_t>(xs[1]) : 1;
    bool per_channel = false;
    if (k->numel() != 1) {
        const size_t r = static_cast<size_t>(k->rank());  // the channel axis: rank(x) - 1 from the right
        per_channel = xs.size() >= 2 && k->numel() == C && r >= xs.size() - 1 && r <= xs.size() &&
                      k->dim(static_cast<int>(r - (xs.size() - 1))) == static_cast<int64_t>(C);
        if (!per_channel) unsupported(fmt::format("{} with a constant of shape other than a scalar or one per channel", op));
    }
    const std::vector<float> v = floats_of(*k);
    Fp16DpuOp d;
    d.what = "affine " + op;
    for (float c : v) {
        if (op == "Add") d.mul.push_back(1.f), d.add.push_back(c);
        if (op == "Sub") d.mul.push_back(c0 ? -1.f : 1.f), d.add.push_back(c0 ? c : -c);
        if (op == "Mul") d.mul.push_back(c), d.add.push_back(0.f);
        if (op == "Div") {
            if (c0) unsupported("Div of a constant by a tensor");
            d.mul.push_back(1.f / c), d.add.push_back(0.f);
        }
    }
    for (float m : d.mul)
        if (!std::isfinite(m) || std::fabs(m) > 65504.f) unsupported(op + " constant outside the fp16 range");
    dev_f16(x);
    Layer L = base_layer(i, op, Unit::Npu);
    float lo = 0, hi = 0;
    if (const auto act = fusable_act_f16(n.outputs[0], lo, hi); act && lo == 0.f) {
        fuse_act_f16(L, *act, nullptr, lo, hi);
        d.lo = lo, d.hi = hi;
    }
    const std::string y = L.outputs.at(0);
    dev_f16(y);
    L.note = fmt::format("by a {} constant as the per-channel affine task", per_channel ? "per-channel" : "scalar");
    push_dpu_f16(std::move(L), std::move(d), x, "", y);
    return true;
}

bool Compiler::prelu_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const num::Tensor* k = const_of(g_, n, 1);
    const auto& xs = g_.value(n.input(0)).shape;
    if (!k || k->dtype() != num::DType::F32) unsupported("PRelu slope is not a constant float32");
    // One slope per channel of [1,C,H,W] ([C,1,1], [1,C,1,1]; one slope is a table, lut_f16).
    if (xs.size() != 4 || k->numel() != static_cast<size_t>(xs[1]) || k->rank() < 3 ||
        k->dim(static_cast<int>(k->rank()) - 3) != xs[1])
        unsupported("PRelu slope other than one per channel");
    dev_f16(n.input(0));
    dev_f16(n.outputs.at(0));
    Fp16DpuOp d;
    d.kind = Fp16DpuOp::Kind::Prelu;
    d.what = "prelu";
    d.mul = floats_of(*k);
    Layer L = base_layer(i, "PRelu", Unit::Npu);
    L.note = "EW PReLU multiply by fp16 slopes per channel";
    push_dpu_f16(std::move(L), std::move(d), n.input(0), "", n.outputs[0]);
    return true;
}

}  // namespace drv::rknpu::compiler_detail
