// SPDX-License-Identifier: MIT
// Element-wise integer layers on the vector engine: QLinearAdd / QLinearMul (broadcast through
// zero strides), the per-channel affine a DequantizeLinear -> BatchNormalization -> QuantizeLinear
// unit becomes (the converter's Mul + Add), and Relu/Clip on codes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler_internal.h"

namespace drv::tnpuv2::detail {
namespace {

namespace EW = hw::tnpuv2::ELTWISE;
namespace OP = hw::tnpuv2::enums::ELT_OP;

/// Memory order of a device tensor (outermost first).
std::vector<size_t> order_of(const DeviceTensor& t) {
    if (t.nhwc) return {0, 2, 3, 1};
    std::vector<size_t> o(t.shape.size());
    for (size_t i = 0; i < o.size(); ++i) o[i] = i;
    return o;
}

/// `t` laid over the output shape `os` (numpy broadcasting, right-aligned): stride 0 on broadcast dims.
View broadcast_view(Compiler& c, const DeviceTensor& t, const std::vector<int64_t>& os) {
    View v = c.view(t);
    View b;
    b.offset = v.offset;
    b.format = v.format;
    b.bits = v.bits;
    b.zp = v.zp;
    b.ext = os;
    b.stride.assign(os.size(), 0);
    const size_t lead = os.size() - v.ext.size();
    for (size_t i = 0; i < v.ext.size(); ++i)
        if (v.ext[i] == os[lead + i])
            b.stride[lead + i] = v.stride[i];
        else if (v.ext[i] != 1)
            c.refuse(fmt::format("{} does not broadcast to {}", ir::shape_to_string(v.ext), ir::shape_to_string(os)));
    return b;
}

/// Multipliers for two ratios sharing one shift (ADD): the largest shift keeping both in 31 bits.
void shared_shift(double ra, double rb, int32_t& ma, int32_t& mb, int32_t& sh) {
    const double mx = std::max(std::fabs(ra), std::fabs(rb));
    int e = 0;
    std::frexp(mx, &e);  // mx in [2^(e-1), 2^e)
    int s = 31 - e;
    s = std::min(62, std::max(0, s));
    auto q = [&](double r) {
        const double v = std::nearbyint(std::ldexp(r, s));
        if (std::fabs(v) >= 2147483648.0)
            throw std::invalid_argument(fmt::format("requantization ratio {} too large", r));
        return static_cast<int32_t>(v);
    };
    ma = q(ra);
    mb = q(rb);
    sh = s;
}

void fill_clamp(Command& cmd) {
    set_field(cmd, EW::ACT_MIN, -(int64_t{1} << 31));
    set_field(cmd, EW::ACT_MAX, (int64_t{1} << 31) - 1);
}

}  // namespace

void lower_eltwise(Compiler& c, const ir::Node& n) {
    const bool mul = n.op_type == "QLinearMul";
    const DeviceTensor& a = c.dt(n.input(0));
    const DeviceTensor& b = c.dt(n.input(3));
    const DeviceTensor& y = c.dt(n.outputs[0]);
    const float sa = c.scalar_f(n, 1), sb = c.scalar_f(n, 4), sc = c.scalar_f(n, 6);
    const std::vector<size_t> order = order_of(y);
    const std::vector<int64_t>& os = y.shape;
    c.sb().tensor(S::IFM, c.desc_of(broadcast_view(c, a, os), order));
    c.sb().tensor(S::IFM2, c.desc_of(broadcast_view(c, b, os), order));
    c.sb().tensor(S::OFM, c.desc_of(c.view(y), order));
    Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::ELTWISE);
    int32_t ma = 0, mb = 0, sh = 0;
    if (mul) {
        fixed_scale(static_cast<double>(sa * sb / sc), 31, ma, sh);
        set_field(cmd, EW::OP, OP::MUL);
    } else {
        shared_shift(static_cast<double>(sa / sc), static_cast<double>(sb / sc), ma, mb, sh);
        set_field(cmd, EW::OP, OP::ADD);
    }
    set_field(cmd, EW::MULT_A, ma);
    set_field(cmd, EW::MULT_B, mb);
    set_field(cmd, EW::SHIFT, sh);
    fill_clamp(cmd);
    c.emit(cmd);
    c.layer().op = mul ? "Mul" : "Add";
}

void lower_affine(Compiler& c, const std::vector<const ir::Node*>& unit) {
    const ir::Node& dq = *unit[0];
    const ir::Node& bn = *unit[1];
    const ir::Node& q = *unit[2];
    const DeviceTensor& x = c.dt(dq.input(0));
    const DeviceTensor& y = c.dt(q.outputs[0]);
    if (x.shape.size() < 2) c.refuse("BatchNormalization needs [N, C, ...]");
    const int64_t C = x.shape[1];
    const float sx = c.scalar_f(dq, 1), sy = c.scalar_f(q, 1);
    const float eps = ir::attr_float(bn.attrs, "epsilon", 1e-5f);
    const num::Tensor* p[4];
    for (size_t i = 0; i < 4; ++i) {
        p[i] = c.constant(bn, i + 1);
        if (!p[i] || p[i]->dtype() != num::DType::F32 || static_cast<int64_t>(p[i]->numel()) != C)
            c.refuse("BatchNormalization parameters must be constant float[C]");
    }
    std::vector<uint8_t> table(static_cast<size_t>(C) * 16);
    for (int64_t ch = 0; ch < C; ++ch) {
        // The reference's per-channel factors (numerics BatchNormalization), then x_scale / y_scale.
        const float k = p[0]->data<float>()[ch] / std::sqrt(p[3]->data<float>()[ch] + eps);
        const float sh = p[1]->data<float>()[ch] - p[2]->data<float>()[ch] * k;
        const double m = static_cast<double>(sx) * k / sy, b = static_cast<double>(sh) / sy;
        int32_t mult = 0, mb = 0, shift = 0;
        shared_shift(m, std::max(std::fabs(m), 1e-30), mult, mb, shift);
        int64_t bias = static_cast<int64_t>(std::nearbyint(std::ldexp(b, shift)));
        // Keep the bias term representable: trade shift bits if the offset is large.
        while (std::fabs(std::ldexp(b, shift)) > 9.0e15 && shift > 0) {
            --shift;
            mult = static_cast<int32_t>(std::nearbyint(std::ldexp(m, shift)));
            bias = static_cast<int64_t>(std::nearbyint(std::ldexp(b, shift)));
        }
        std::memcpy(table.data() + ch * 16, &bias, 8);
        std::memcpy(table.data() + ch * 16 + 8, &mult, 4);
        std::memcpy(table.data() + ch * 16 + 12, &shift, 4);
    }
    const uint64_t toff = c.blob(table);
    const std::vector<size_t> order = order_of(y);
    c.sb().tensor(S::IFM, c.desc_of(c.view(x), order));
    c.sb().tensor(S::OFM, c.desc_of(c.view(y), order));
    Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::ELTWISE);
    set_field(cmd, EW::OP, OP::AFFINE);
    fill_clamp(cmd);
    hw::tnpuv2::set_addr(cmd, EW::TABLE_ADDR_LO, EW::TABLE_ADDR_HI, toff);
    set_field(cmd, EW::TABLE_ENTRIES, C);
    c.emit(cmd, {{EW::TABLE_ADDR_LO, EW::TABLE_ADDR_HI}});
    c.layer().op = "BatchNorm (affine)";
    c.layer().note = "per-channel multiply-add (converter: Mul + Add)";
}

void lower_relu(Compiler& c, const ir::Node& n) {
    const DeviceTensor& x = c.dt(n.input(0));
    const DeviceTensor& y = c.dt(n.outputs[0]);
    if (x.format == F::F32) c.refuse("float Relu: quantize it (seed 003 ReLU runs on 8/16-bit data)");
    const std::vector<size_t> order = order_of(y);
    c.sb().tensor(S::IFM, c.desc_of(c.view(x), order));
    c.sb().tensor(S::OFM, c.desc_of(c.view(y), order));
    Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::ELTWISE);
    set_field(cmd, EW::OP, OP::CLAMP);
    set_field(cmd, EW::MULT_A, 1);
    set_field(cmd, EW::SHIFT, 0);
    // On raw codes (what ONNX Relu/Clip on an integer tensor means): max(x, 0) / clamp to [min, max].
    int64_t lo = 0, hi = (int64_t{1} << 31) - 1;
    if (n.op_type == "Clip") {
        lo = -(int64_t{1} << 31);
        if (const num::Tensor* t = c.constant(n, 1))
            lo =
                static_cast<int64_t>(num::dtype_size(t->dtype()) == 1
                                         ? (t->dtype() == num::DType::I8 ? t->data<int8_t>()[0] : t->data<uint8_t>()[0])
                                         : t->data<int16_t>()[0]);
        if (const num::Tensor* t = c.constant(n, 2))
            hi =
                static_cast<int64_t>(num::dtype_size(t->dtype()) == 1
                                         ? (t->dtype() == num::DType::I8 ? t->data<int8_t>()[0] : t->data<uint8_t>()[0])
                                         : t->data<int16_t>()[0]);
    }
    if (y.zp != x.zp) c.refuse("Relu/Clip on codes keeps the quantization");
    set_field(cmd, EW::ACT_MIN, lo);
    set_field(cmd, EW::ACT_MAX, hi);
    c.emit(cmd);
}

}  // namespace drv::tnpuv2::detail
