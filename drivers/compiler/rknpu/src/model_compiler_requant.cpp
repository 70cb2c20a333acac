// SPDX-License-Identifier: MIT
// DequantizeLinear -> QuantizeLinear with nothing between (issue 15): a requantization of an int8
// tensor to another scale / zero point. The QDQ import leaves one where it drops an operator the
// Q makes redundant (a Relu before a uint8 Q of zero point 0: RetinaFace's SSH Relu after its
// concat) or where a producer quantizes one tensor twice. On the NPU it is the per-tensor affine
// DPU task of the concat copies: out = sat(round((x - zx) * xs / ys) + zy), BS multiply by
// M = round(xs / ys * 2^T), output convert >> T (COMPILER.md, "DPU-only arithmetic").
//
// DequantizeLinear -> PRelu with one slope per channel -> QuantizeLinear: the same affine task with
// the EW stage's PReLU multiply (lower_prelu_op, conv_prelu.h); one slope is a LUT (lower_act.cpp).
#include "compiler_internal.h"
#include "conv_prelu.h"

namespace drv::rknpu::compiler_detail {

bool Compiler::prelu_node(size_t i) {
    const ir::Node& dq = g_.nodes()[i];
    const std::string x = dq.input(0), f = dq.outputs.at(0);
    const ir::Value& xv = g_.value(x);
    if (xv.is_constant() || !is_q8(xv.dtype) || xv.shape.size() != 4) return false;
    auto is_output = [&](const std::string& v) {
        return std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
    };
    const auto c1 = g_.consumers(f);
    if (c1.size() != 1 || c1[0] <= i || is_output(f)) return false;
    const ir::Node& pn = g_.nodes()[c1[0]];
    std::vector<float> slopes;
    if (pn.op_type != "PRelu" || pn.input(0) != f || !prelu_slopes(g_.ref(), pn, slopes) || slopes.size() < 2)
        return false;
    const std::string v = pn.outputs.at(0);
    const auto c2 = g_.consumers(v);
    if (c2.size() != 1 || c2[0] <= c1[0] || is_output(v)) return false;
    const ir::Node& q = g_.nodes()[c2[0]];
    if (q.op_type != "QuantizeLinear" || !q.domain.empty() || q.input(0) != v) return false;
    for (size_t k : {c1[0], c2[0]}) {
        if (forced_cpu(g_.nodes()[k]) || consumed_.count(k)) return false;
        if (auto it = checker_cpu_.find(g_.nodes()[k].name); it != checker_cpu_.end()) unsupported(it->second);
    }
    const std::string y = q.outputs.at(0);
    if (!is_q8(g_.value(y).dtype) || g_.value(y).shape != xv.shape) return false;
    if (slopes.size() != static_cast<size_t>(xv.shape[1])) unsupported("PRelu slope count differs from the channels");
    dev(x, scalar_scale(g_, dq, 1), scalar_zp(g_, dq, 2));
    dev(y, scalar_scale(g_, q, 1), scalar_zp(g_, q, 2));
    Layer L = base_layer(i, "PRelu", Unit::Npu);
    L.name = pn.name;
    L.outputs = {y};
    L.out_shape = shape_of(y);
    L.ir_nodes = ref_nodes({i, c1[0], c2[0]});
    L.note = "DequantizeLinear -> PRelu (per channel) -> QuantizeLinear as a DPU affine task with the EW PReLU multiply";
    consumed_.insert(c1[0]);
    consumed_.insert(c2[0]);
    const int core = m_.cores.front();
    push_npu(
        std::move(L),
        [this, x, y, slopes, core, name = pn.name]() {
            return lower_prelu_op(name, m_.tensors.at(x), m_.tensors.at(y), slopes, arena_, soc_, core);
        },
        false);
    return true;
}

bool Compiler::requant_node(size_t i) {
    const ir::Node& dq = g_.nodes()[i];
    const std::string x = dq.input(0), f = dq.outputs.at(0);
    const ir::Value& xv = g_.value(x);
    if (xv.is_constant() || !is_q8(xv.dtype)) return false;
    const auto cons = g_.consumers(f);
    if (cons.size() != 1 || cons[0] <= i) return false;
    if (std::find(g_.outputs().begin(), g_.outputs().end(), f) != g_.outputs().end()) return false;
    const ir::Node& q = g_.nodes()[cons[0]];
    if (q.op_type != "QuantizeLinear" || !q.domain.empty() || q.input(0) != f || q.outputs.size() != 1) return false;
    if (forced_cpu(q) || consumed_.count(cons[0])) return false;
    if (auto it = checker_cpu_.find(q.name); it != checker_cpu_.end()) unsupported(it->second);
    const std::string y = q.outputs[0];
    if (!is_q8(g_.value(y).dtype) || g_.value(y).shape != xv.shape) return false;
    const float xs = scalar_scale(g_, dq, 1), ys = scalar_scale(g_, q, 1);
    dev(x, xs, scalar_zp(g_, dq, 2));
    dev(y, ys, scalar_zp(g_, q, 2));
    Layer L = base_layer(i, "Requantize", Unit::Npu);
    L.outputs = {y};
    L.out_shape = shape_of(y);
    L.ir_nodes = ref_nodes({i, cons[0]});
    L.note = "DequantizeLinear -> QuantizeLinear as a DPU per-tensor affine task";
    consumed_.insert(cons[0]);
    const std::vector<double> mul{static_cast<double>(xs) / ys}, add{0.0};
    push_npu(
        std::move(L),
        [this, x, y, mul, add, name = dq.name]() {
            const DeviceTensor &tx = m_.tensors.at(x), &ty = m_.tensors.at(y);
            return across_cores(ty.h, [&](int y0, int rows, int core) {
                return lower_affine_op(name, "requantize", rows_of(tx, y0, rows), rows_of(ty, y0, rows), mul, add,
                                       arena_, soc_, core);
            });
        },
        true);
    return true;
}

}  // namespace drv::rknpu::compiler_detail
