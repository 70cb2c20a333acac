// SPDX-License-Identifier: MIT
// Model compiler: element-wise Add / Sub / Mul / Div of an int8 activation and a per-channel
// constant as the DPU's per-channel affine task (lower_affine_op, the BatchNormalization lowering's).
//
// Where these come from: onnxruntime's quantize_static with its default types (uint8 activations,
// int8 weights) quantizes a Mul / Add's constant input as a weight, so the unit is DQ(uint8 x),
// DQ(int8 c) -> Mul -> Q(uint8); its QDQ binary-op rule forms QLinearMul only when both inputs and
// the output have one type, so onnxruntime runs this unit in float, Q(DQ(x) op DQ(c)) (a LayerNorm's
// gamma / beta after a decomposed LayerNorm, layer scales, a model's input normalisation). The
// UnitGraph folds the constant's DequantizeLinear into a float constant (model_compiler_units.cpp);
// a QOperator graph writes QLinearAdd / QLinearMul with the constant as an initializer. The vendor
// compiler folds a constant operand into the DPU (its BS / BN stages: RKNN's per-channel Mul / Add
// with a [1,C,1,1] constant); npusim maps it onto the same per-channel affine map as
// BatchNormalization: out = sat(round(mul[c] (x - zx) + add[c]) + zy) with, in real units,
//   x * c: mul = sx c / sy          x / c: mul = sx / (c sy)
//   x + c: mul = sx / sy, add = c / sy        x - c: add = -c / sy        c - x: mul = -sx / sy
// The reference is onnxruntime's float computation; the affine map rounds once (half up on the
// DPU) where onnxruntime rounds the float32 result half to even: ties and float32 rounding can
// differ by 1 LSB.
#include <cmath>
#include <limits>
#include <set>

#include "compiler_internal.h"

namespace drv::rknpu::compiler_detail {

namespace {

/// The constant's real values, one per channel of a [1,C,H,W] activation: shapes [1,C,1,1], [C,1,1],
/// or one value (`allow_scalar`); empty when it is none of these.
std::vector<double> per_channel_values(const std::vector<double>& v, const std::vector<int64_t>& shape, int64_t C,
                                       bool allow_scalar) {
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    if (numel == 1 && static_cast<int64_t>(v.size()) == 1) {
        if (!allow_scalar) return {};
        return std::vector<double>(static_cast<size_t>(C), v[0]);
    }
    const bool c111 = shape.size() == 4 && shape[0] == 1 && shape[1] == C && shape[2] == 1 && shape[3] == 1;
    const bool c11 = shape.size() == 3 && shape[0] == C && shape[1] == 1 && shape[2] == 1;
    if ((!c111 && !c11) || static_cast<int64_t>(v.size()) != C) return {};
    return v;
}

/// mul / add of the affine map (header comment) for `op` with the activation at input `xi`.
bool affine_of(const std::string& op, int xi, const std::vector<double>& c, double xs, double ys,
               std::vector<double>& mul, std::vector<double>& add) {
    mul.assign(c.size(), xs / ys);
    add.assign(c.size(), 0.0);
    for (size_t k = 0; k < c.size(); ++k) {
        if (!std::isfinite(c[k])) return false;
        if (op == "Mul") {
            mul[k] = xs * c[k] / ys;
        } else if (op == "Div") {
            if (xi != 0 || c[k] == 0) return false;  // c / x is not affine
            mul[k] = xs / (c[k] * ys);
        } else if (op == "Add") {
            add[k] = c[k] / ys;
        } else if (op == "Sub") {
            if (xi == 0) add[k] = -c[k] / ys;
            else mul[k] = -xs / ys, add[k] = c[k] / ys;
        } else {
            return false;
        }
    }
    return true;
}

}  // namespace

bool Compiler::const_affine(size_t i) {
    const ir::Node& dq = g_.nodes()[i];
    if (!dq.domain.empty() || dq.op_type != "DequantizeLinear" || dq.outputs.empty()) return false;
    const std::string x = dq.input(0), f = dq.outputs.at(0);
    const ir::Value* xv = g_.find_value(x);
    if (!xv || xv->is_constant() || !is_q8(xv->dtype) || xv->shape.size() != 4 || xv->shape[0] != 1) return false;
    auto is_output = [&](const std::string& v) {
        return std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
    };
    const auto c1 = g_.consumers(f);
    if (is_output(f) || c1.size() != 1 || c1[0] <= i) return false;
    const ir::Node& op = g_.nodes()[c1[0]];
    static const std::set<std::string> kOps{"Add", "Sub", "Mul", "Div"};
    if (!op.domain.empty() || !kOps.count(op.op_type) || op.inputs.size() != 2 || op.outputs.size() != 1) return false;
    if ((op.input(0) == f) == (op.input(1) == f)) return false;  // x op x, or not an input
    const int xi = op.input(0) == f ? 0 : 1;
    // The constant: a float initializer (a DequantizeLinear of an int8 one folded by the UnitGraph).
    const num::Tensor* ct = const_of(g_, op, static_cast<size_t>(1 - xi));
    if (!ct || ct->dtype() != num::DType::F32) return false;
    std::vector<double> cv;
    for (float v : floats_of(*ct)) cv.push_back(v);
    // One value: the table of lower_act.cpp (lut_region) holds the exact function of each code.
    const std::vector<double> c =
        per_channel_values(cv, g_.value(op.input(static_cast<size_t>(1 - xi))).shape, xv->shape[1], false);
    if (c.empty() || g_.value(op.outputs[0]).shape != xv->shape) return false;
    // Relu / Clip after it (one reader each), as integer output bounds, then its QuantizeLinear(s).
    std::vector<size_t> chain{i, c1[0]}, qs;
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (!act_q_tail(chain, lo, hi, qs)) return false;
    const float xs = scalar_scale(g_, dq, 1), ys = scalar_scale(g_, g_.nodes()[qs[0]], 1);
    std::vector<double> mul, addv;
    if (!affine_of(op.op_type, xi, c, xs, ys, mul, addv)) return false;
    push_affine_layer(i, op.op_type, op.op_type, chain, qs, x, lo, hi, std::move(mul), std::move(addv),
                      [&op](const std::string& acts) {
                          return fmt::format("DequantizeLinear -> {} by a per-channel constant{} -> QuantizeLinear "
                                             "(onnxruntime runs it in float) as a DPU per-channel affine task",
                                             op.op_type, acts);
                      });
    return true;
}

bool Compiler::const_affine_qlinear(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    if (n.domain != "com.microsoft" || (n.op_type != "QLinearAdd" && n.op_type != "QLinearMul") || n.inputs.size() < 8)
        return false;
    const bool a_const = g_.value(n.input(0)).is_constant(), b_const = g_.value(n.input(3)).is_constant();
    if (a_const == b_const) return false;
    const size_t xi = a_const ? 3 : 0, ci = a_const ? 0 : 3;
    const ir::Value& xv = g_.value(n.input(xi));
    const std::string y = n.outputs.at(0);
    if (!is_q8(xv.dtype) || xv.shape.size() != 4 || xv.shape[0] != 1 || g_.value(y).shape != xv.shape) return false;
    const num::Tensor& ct = required(g_, n, ci);
    if (!is_q8(ct.dtype())) return false;
    const float cs = scalar_scale(g_, n, ci + 1);
    const int32_t cz = scalar_zp(g_, n, ci + 2);
    std::vector<double> cv;
    for (int32_t q : ints_of(ct)) cv.push_back(static_cast<double>(q - cz) * cs);  // DequantizeLinear
    const std::vector<double> c = per_channel_values(cv, g_.value(n.input(ci)).shape, xv.shape[1], true);
    if (c.empty()) return false;
    const float xs = scalar_scale(g_, n, xi + 1), ys = scalar_scale(g_, n, 6);
    const int32_t yz = scalar_zp(g_, n, 7);
    std::vector<double> mul, addv;
    const std::string op = n.op_type.substr(7);  // QLinearAdd -> Add
    if (!affine_of(op, 0, c, xs, ys, mul, addv)) return false;
    const std::string x = n.input(xi);
    dev(x, xs, scalar_zp(g_, n, xi + 2));
    dev(y, ys, yz);
    Layer L = base_layer(i, op, Unit::Npu);
    L.inputs = {x};
    L.in_shape = shape_of(x);
    L.note = fmt::format("{} by a constant ({}) as a DPU per-channel affine task",
                         op, c.size() == cv.size() ? "one value per channel" : "one value");
    push_npu(
        std::move(L),
        [this, x, y, mul, addv, name = n.name, op]() {
            const DeviceTensor &tx = m_.tensors.at(x), &ty = m_.tensors.at(y);
            return across_cores(ty.h, [&](int y0, int rows, int core) {
                return lower_affine_op(name, op, rows_of(tx, y0, rows), rows_of(ty, y0, rows), mul, addv, arena_, soc_,
                                       core);
            });
        },
        true);
    return true;
}

}  // namespace drv::rknpu::compiler_detail
