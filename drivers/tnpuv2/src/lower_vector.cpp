// SPDX-License-Identifier: MIT
// Vector-engine layers: QuantizeLinear / DequantizeLinear (VECTOR QUANT / DEQUANT), FP32 Erf, Sqrt,
// Pow, the quantized DQ -> op -> Q units (Softmax, reductions, normalisations, linear Resize) and
// the table layers (LUT): the converter fills each table by evaluating the model's own nodes
// (the reference operator library) on every input code, so a table entry is the model's answer
// for that code (seed 003: fixed LUT parameters generated from the quantization information).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler_internal.h"
#include "numerics/ops.h"

namespace drv::tnpuv2::detail {
namespace {

namespace V = hw::tnpuv2::VECTOR;
namespace VOP = hw::tnpuv2::enums::VEC_OP;
namespace LU = hw::tnpuv2::LUT;

std::vector<size_t> order_of(const DeviceTensor& t) {
    if (t.nhwc) return {0, 2, 3, 1};
    std::vector<size_t> o(t.shape.size());
    for (size_t i = 0; i < o.size(); ++i) o[i] = i;
    return o;
}

/// Position (0 = DIM5, innermost) of IR axis `ax` in a tensor's memory order.
int mem_pos(const DeviceTensor& t, int64_t ax) {
    const std::vector<size_t> o = order_of(t);
    for (size_t i = 0; i < o.size(); ++i)
        if (static_cast<int64_t>(o[i]) == ax) return static_cast<int>(o.size() - 1 - i);
    return -1;
}

Command vector_cmd(uint32_t op) {
    Command c = hw::tnpuv2::make_command(hw::tnpuv2::op::VECTOR);
    set_field(c, V::OP, op);
    set_field_f32(c, V::IN_SCALE, 1.0f);
    set_field_f32(c, V::OUT_SCALE, 1.0f);
    return c;
}

int64_t norm_axis(int64_t a, size_t rank) { return a < 0 ? a + static_cast<int64_t>(rank) : a; }

/// Every code of a `bits`-bit grid in its IR container, in index order (code - grid minimum).
num::Tensor all_codes(num::DType d, int bits) {
    const bool sgn = d == num::DType::I8 || d == num::DType::I16;
    const int64_t lo = sgn ? -(int64_t{1} << (bits - 1)) : 0;
    const int64_t n = int64_t{1} << bits;
    num::Tensor t(d, {n});
    for (int64_t i = 0; i < n; ++i) {
        const int64_t v = lo + i;
        switch (d) {
            case num::DType::I8:
                t.data<int8_t>()[i] = static_cast<int8_t>(v);
                break;
            case num::DType::U8:
                t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
                break;
            case num::DType::I16:
                t.data<int16_t>()[i] = static_cast<int16_t>(v);
                break;
            default:
                t.data<uint16_t>()[i] = static_cast<uint16_t>(v);
                break;
        }
    }
    return t;
}

}  // namespace

void lower_quant(Compiler& c, const ir::Node& n) {
    const bool quant = n.op_type == "QuantizeLinear";
    const DeviceTensor& x = c.dt(n.input(0));
    const DeviceTensor& y = c.dt(n.outputs[0]);
    if (c.constant(n, 1) && c.constant(n, 1)->numel() != 1)
        c.refuse("per-axis Quantize/Dequantize of a feature tensor");
    if (quant ? x.format != F::F32 : y.format != F::F32) c.refuse("Quantize reads FP32 and Dequantize writes FP32");
    const std::vector<size_t> o = order_of(y);
    c.sb().tensor(S::IFM, c.desc_of(c.view(x), o));
    c.sb().tensor(S::OFM, c.desc_of(c.view(y), o));
    Command cmd = vector_cmd(quant ? VOP::QUANT : VOP::DEQUANT);
    set_field_f32(cmd, quant ? V::OUT_SCALE : V::IN_SCALE, c.scalar_f(n, 1));
    c.emit(cmd);
    c.layer().op = quant ? "Quantize" : "Dequantize";
}

void lower_fp32(Compiler& c, const ir::Node& n) {
    const DeviceTensor& x = c.dt(n.input(0));
    const DeviceTensor& y = c.dt(n.outputs[0]);
    if (x.format != F::F32 || y.format != F::F32) c.refuse("runs on FP32 tensors (seed 003)");
    uint32_t op = n.op_type == "Erf" ? VOP::ERF : (n.op_type == "Sqrt" ? VOP::SQRT : VOP::POW);
    Command cmd = vector_cmd(op);
    if (op == VOP::POW) {
        const num::Tensor* e = c.constant(n, 1);
        if (!e || e->dtype() != num::DType::F32)
            c.refuse("the exponent must be a constant float (seed 003 Pow: no runtime exponent)");
        if (e->numel() == 1) {
            set_field_f32(cmd, V::PARAM0, e->data<float>()[0]);
        } else {
            // Per-channel exponents: one per channel (the innermost memory dim).
            const int64_t C = x.nhwc ? x.shape[1] : x.shape.back();
            if (static_cast<int64_t>(e->numel()) != C) c.refuse("a per-channel exponent needs one value per channel");
            std::vector<uint8_t> t(static_cast<size_t>(C) * 4);
            std::memcpy(t.data(), e->data<float>(), t.size());
            hw::tnpuv2::set_addr(cmd, V::TABLE_ADDR_LO, V::TABLE_ADDR_HI, c.blob(t));
            set_field(cmd, V::TABLE_ENTRIES, C);
        }
    }
    const std::vector<size_t> o = order_of(y);
    c.sb().tensor(S::IFM, c.desc_of(c.view(x), o));
    c.sb().tensor(S::OFM, c.desc_of(c.view(y), o));
    c.emit(cmd, {{V::TABLE_ADDR_LO, V::TABLE_ADDR_HI}});
}

void lower_dq_op_q(Compiler& c, const std::vector<const ir::Node*>& unit) {
    // DQ -> op -> Q, or DQ -> op with an FP32 result (seed 003 FP32 outputs: the VECTOR unit writes F32).
    const ir::Node& dq = *unit[0];
    const ir::Node& op = *unit[1];
    const bool fp32_out = unit.size() == 2;
    const DeviceTensor& x = c.dt(dq.input(0));
    const DeviceTensor& y = c.dt(fp32_out ? op.outputs[0] : unit[2]->outputs[0]);
    if (fp32_out && op.op_type != "Softmax") c.refuse("only Softmax writes an FP32 result on the vector unit");
    const float sx = c.scalar_f(dq, 1), sy = fp32_out ? 1.0f : c.scalar_f(*unit[2], 1);
    const std::string& t = op.op_type;
    const std::vector<size_t> xo = order_of(x);
    const size_t rank = x.shape.size();
    Command cmd = vector_cmd(0);
    set_field_f32(cmd, V::IN_SCALE, sx);
    set_field_f32(cmd, V::OUT_SCALE, sy);
    Desc yd = c.desc_of(c.view(y), order_of(y));
    if (t == "Softmax") {
        const int64_t ax = norm_axis(ir::attr_int(op.attrs, "axis", c.g().opset("") >= 13 ? -1 : 1), rank);
        if (c.g().opset("") < 13 && ax != static_cast<int64_t>(rank) - 1 && rank != 2)
            c.refuse("opset < 13 Softmax flattens trailing dims; only the channel axis runs on tnpuv2");
        if (mem_pos(x, ax) != 0) c.refuse("Softmax runs along the channel (innermost) dim only (seed 003)");
        set_field(cmd, V::OP, VOP::SOFTMAX);
    } else if (t == "ReduceMean" || t == "ReduceSum" || t == "ReduceMax") {
        std::vector<int64_t> axes = ir::attr_ints(op.attrs, "axes", {});
        if (const num::Tensor* at = c.constant(op, 1)) {
            axes.clear();
            for (size_t i = 0; i < at->numel(); ++i)
                axes.push_back(at->dtype() == num::DType::I64 ? at->data<int64_t>()[i] : at->data<int32_t>()[i]);
        }
        if (axes.empty())
            for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
        uint32_t mask = 0;
        int64_t count = 1;
        for (int64_t a : axes) {
            const int p = mem_pos(x, norm_axis(a, rank));
            if (p < 0 || p > 3) c.refuse("reduction over a dim outside the descriptor's four feature dims");
            mask |= 1u << p;
            count *= x.shape[static_cast<size_t>(norm_axis(a, rank))];
        }
        set_field(cmd, V::OP,
                  t == "ReduceMean" ? VOP::REDUCE_MEAN : (t == "ReduceSum" ? VOP::REDUCE_SUM : VOP::REDUCE_MAX));
        set_field(cmd, V::AXES, mask);
        int32_t mult = 0, shift = 0;
        // ReduceMean: sum x x_scale / (count x y_scale); ReduceSum and ReduceMax: x_scale / y_scale.
        const double r =
            static_cast<double>(sx) / static_cast<double>(sy) / (t == "ReduceMean" ? static_cast<double>(count) : 1.0);
        fixed_scale(r, 31, mult, shift);
        set_field(cmd, V::MULT, mult);
        set_field(cmd, V::SHIFT, shift);
        // The output in the input's memory order with the reduced dims set to 1 (keepdims or not,
        // the bytes are the same).
        Desc xd = c.desc_of(c.view(x), xo);
        yd = xd;
        yd.format = y.format;
        yd.bits = y.bits;
        yd.zp = y.zp;
        yd.offset = y.offset;
        for (int k = 0; k < 4; ++k)
            if (mask & (1u << k)) yd.dims[static_cast<size_t>(5 - k)] = 1;
        int64_t s = y.format == F::S16 || y.format == F::U16 ? 2 : 1;
        for (int d = 5; d >= 0; --d) {
            yd.strides[static_cast<size_t>(d)] = s;
            s *= yd.dims[static_cast<size_t>(d)];
        }
        if (y.format == F::S4 || y.format == F::U4) c.refuse("4-bit reductions (seed 003: 8/12/14/16-bit)");
    } else if (t == "LpNormalization" || t == "LayerNormalization") {
        const int64_t ax = norm_axis(ir::attr_int(op.attrs, "axis", -1), rank);
        if (mem_pos(x, ax) != 0 || (t == "LayerNormalization" && ax != static_cast<int64_t>(rank) - 1))
            c.refuse("normalisation along the innermost dim only (the vector unit's rows)");
        set_field(cmd, V::AXES, 1);
        if (t == "LpNormalization") {
            const int64_t p = ir::attr_int(op.attrs, "p", 2);
            if (p != 1 && p != 2) c.refuse("LpNormalization p must be 1 or 2");
            set_field(cmd, V::OP, VOP::LPNORM);
            set_field_f32(cmd, V::PARAM0, static_cast<float>(p));
        } else {
            set_field(cmd, V::OP, VOP::LAYERNORM);
            set_field_f32(cmd, V::PARAM0, ir::attr_float(op.attrs, "epsilon", 1e-5f));
            const int64_t C = x.shape.back();
            const num::Tensor* gm = c.constant(op, 1);
            const num::Tensor* bt = c.constant(op, 2);
            if (!gm || static_cast<int64_t>(gm->numel()) != C || (bt && static_cast<int64_t>(bt->numel()) != C))
                c.refuse("LayerNormalization scale/bias must be constant [C]");
            std::vector<float> tb(static_cast<size_t>(2 * C));
            for (int64_t k = 0; k < C; ++k) {
                tb[static_cast<size_t>(2 * k)] = gm->data<float>()[k];
                tb[static_cast<size_t>(2 * k + 1)] = bt ? bt->data<float>()[k] : 0.0f;
            }
            std::vector<uint8_t> raw(tb.size() * 4);
            std::memcpy(raw.data(), tb.data(), raw.size());
            hw::tnpuv2::set_addr(cmd, V::TABLE_ADDR_LO, V::TABLE_ADDR_HI, c.blob(raw));
            set_field(cmd, V::TABLE_ENTRIES, 2 * C);
        }
    } else if (t == "Resize" || t == "Upsample") {
        if (rank != 4) c.refuse("linear Resize of 4-D feature maps");
        const std::string mode = ir::attr_string(op.attrs, "mode", "nearest");
        if (mode != "linear" && mode != "bilinear")
            c.refuse("nearest Resize with requantization (input and output scales differ)");
        const std::string ct = ir::attr_string(op.attrs, "coordinate_transformation_mode", "half_pixel");
        uint32_t coord = hw::tnpuv2::enums::RESIZE_COORD::HALF_PIXEL;
        if (ct == "align_corners")
            coord = hw::tnpuv2::enums::RESIZE_COORD::ALIGN_CORNERS;
        else if (ct == "asymmetric")
            coord = hw::tnpuv2::enums::RESIZE_COORD::ASYMMETRIC;
        else if (ct == "pytorch_half_pixel")
            coord = hw::tnpuv2::enums::RESIZE_COORD::PYTORCH_HALF_PIXEL;
        else if (ct != "half_pixel")
            c.refuse("coordinate_transformation_mode " + ct);
        float sh = static_cast<float>(y.shape[2]) / static_cast<float>(x.shape[2]);
        float sw = static_cast<float>(y.shape[3]) / static_cast<float>(x.shape[3]);
        if (const num::Tensor* sc = c.constant(op, t == "Upsample" ? 1 : 2); sc && sc->numel() == 4) {
            sh = sc->data<float>()[2];
            sw = sc->data<float>()[3];
        }
        set_field(cmd, V::OP, VOP::RESIZE_LINEAR);
        set_field(cmd, V::COORD, coord);
        set_field_f32(cmd, V::PARAM0, sh);
        set_field_f32(cmd, V::PARAM1, sw);
    } else {
        c.refuse("no vector-engine lowering for " + t);
    }
    c.sb().tensor(S::IFM, c.desc_of(c.view(x), xo));
    c.sb().tensor(S::OFM, yd);
    c.emit(cmd, {{V::TABLE_ADDR_LO, V::TABLE_ADDR_HI}});
    c.layer().op = t;
}

void lower_lut(Compiler& c, const std::vector<const ir::Node*>& nodes) {
    const ir::Node& first = *nodes.front();
    const bool dq_unit = first.op_type == "DequantizeLinear";
    const std::string in = first.input(0);
    const std::string out = nodes.back()->outputs[0];
    const DeviceTensor& x = c.dt(in);
    const DeviceTensor& y = c.dt(out);
    if (x.format == F::F32) c.refuse("a table is indexed by integer codes");
    // The table: the layer's nodes evaluated by the reference library on every code of the grid.
    const num::Tensor codes = all_codes(c.g().value(in).dtype, x.bits);
    std::map<std::string, num::Tensor> env;
    env[in] = codes;
    for (const ir::Node* n : nodes) {
        std::vector<const num::Tensor*> ins;
        std::vector<num::Tensor> keep;
        keep.reserve(n->inputs.size());
        for (const std::string& i : n->inputs) {
            if (i.empty()) {
                ins.push_back(nullptr);
                continue;
            }
            if (env.count(i)) {
                ins.push_back(&env.at(i));
                continue;
            }
            const ir::Value& v = c.g().value(i);
            if (!v.is_constant()) c.refuse(fmt::format("table input '{}' is not constant", i));
            ins.push_back(&*v.data);
        }
        std::vector<num::Tensor> r = num::run_op(n->op_type, n->attrs, ins, n->domain);
        env[n->outputs[0]] = std::move(r.at(0));
    }
    const num::Tensor& tab = env.at(out);
    if (static_cast<int64_t>(tab.numel()) != codes.dim(0)) c.refuse("the table function is not element-wise");
    std::vector<uint8_t> bytes(tab.nbytes());
    std::memcpy(bytes.data(), tab.raw(), bytes.size());
    const std::vector<size_t> o = order_of(y);
    c.sb().tensor(S::IFM, c.desc_of(c.view(x), o));
    c.sb().tensor(S::OFM, c.desc_of(c.view(y), o));
    Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::LUT);
    set_field(cmd, LU::ENTRY_FORMAT, y.format == F::S4 ? F::S8 : (y.format == F::U4 ? F::U8 : y.format));
    if (y.format == F::S4 || y.format == F::U4) c.refuse("4-bit table outputs");
    hw::tnpuv2::set_addr(cmd, LU::TABLE_ADDR_LO, LU::TABLE_ADDR_HI, c.blob(bytes));
    set_field(cmd, LU::TABLE_ENTRIES, codes.dim(0));
    c.emit(cmd, {{LU::TABLE_ADDR_LO, LU::TABLE_ADDR_HI}});
    Layer& L = c.layer();
    if (dq_unit)
        L.op = nodes[1]->op_type;
    else if (nodes.size() == 2)
        L.op = "Swish";
    else
        L.op = first.op_type == "QLinearSigmoid" ? "Sigmoid" : "LeakyRelu";
    L.note = fmt::format("{}-entry table", codes.dim(0));
}

}  // namespace drv::tnpuv2::detail
