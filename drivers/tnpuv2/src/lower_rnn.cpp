// SPDX-License-Identifier: MIT
// GRU (seed 003: restricted, 8-bit data, linear_before_reset, 16-aligned sizes, even weight widths
// <= 8) -> MAC-array matrix products and the vector unit's FP32 GRU step. Seed 003 names the
// operator and its limits but not how the hardware runs it; the mapping below is our assumption
// (docs/tnpuv2.md "GRU"):
//   once per direction  CONV MATMUL   X [T*B, I] (8-bit) x W [3H][I]  -> Xg (F32, OUT_MODE FP32)
//   per time step       CONV MATMUL   h16 [B, H] (16-bit) x R [3H][H]  -> Hg (F32)
//                       VECTOR GRU_CELL Xg[t], Hg, h (F32), biases     -> h (F32)
//                       VECTOR QUANT  h -> h16 (the next step's MAC operand), h -> Y[t] (8-bit)
//   after the last step VECTOR QUANT  h -> Y_h
// The hidden state stays FP32 on the vector side and enters the MAC array at 16 bits (a16w8), so
// the recurrence adds no 8-bit rounding: Y and Y_h are the float GRU of the dequantized inputs
// rounded once to their grids (1 LSB at a rounding tie: float sums in another order).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler_internal.h"

namespace drv::tnpuv2::detail {
namespace {

namespace C = hw::tnpuv2::CONV;
namespace V = hw::tnpuv2::VECTOR;
namespace MV = hw::tnpuv2::MOVE;
namespace VOP = hw::tnpuv2::enums::VEC_OP;

/// A row-major F32 or code matrix [outer..., rows, cols] at an arena offset.
Desc matrix(uint32_t format, int bits, uint64_t offset, std::vector<int64_t> dims) {
    Desc d;
    d.format = format;
    d.bits = bits;
    d.offset = offset;
    d.rank = static_cast<int>(dims.size());
    const int64_t eb = elem_bytes(format);
    int64_t s = eb;
    for (size_t k = dims.size(); k-- > 0;) {
        const size_t at = 6 - dims.size() + k;
        d.dims[at] = dims[k];
        d.strides[at] = s;
        s *= dims[k];
    }
    return d;
}

/// Integer codes of a constant tensor minus its zero point (per-tensor or per-axis-1 parameters).
struct QConst {
    std::vector<int32_t> codes;  ///< value - zero point
    std::vector<float> scale;    ///< per element of dim 1 (3H gate rows)
};

QConst weight_codes(Compiler& c, const ir::Node& dq, int64_t rows_per_dir, const char* what) {
    const num::Tensor* w = c.constant(dq, 0);
    const num::Tensor* sc = c.constant(dq, 1);
    const num::Tensor* zp = c.constant(dq, 2);
    if (!w || !sc || sc->dtype() != num::DType::F32 || (w->dtype() != num::DType::I8 && w->dtype() != num::DType::U8))
        c.refuse(fmt::format("{} must be a constant 8-bit tensor read through DequantizeLinear", what));
    const size_t ns = sc->numel();
    if (ns != 1 && static_cast<int64_t>(ns) != rows_per_dir)
        c.refuse(fmt::format("{} scales must be per tensor or per gate row (axis 1)", what));
    if (ns != 1 && ir::attr_int(dq.attrs, "axis", 1) != 1)
        c.refuse(fmt::format("{} per-channel scales must run along axis 1 (the gate rows)", what));
    QConst q;
    const size_t n = w->numel();
    const size_t per_row = n / static_cast<size_t>(rows_per_dir) / static_cast<size_t>(w->shape()[0]);
    q.codes.resize(n);
    q.scale.resize(static_cast<size_t>(rows_per_dir));
    for (int64_t r = 0; r < rows_per_dir; ++r) q.scale[static_cast<size_t>(r)] = sc->data<float>()[ns == 1 ? 0 : r];
    for (size_t i = 0; i < n; ++i) {
        const size_t row = (i / per_row) % static_cast<size_t>(rows_per_dir);
        int32_t z = 0;
        if (zp) {
            const size_t zi = zp->numel() == 1 ? 0 : row;
            z = zp->dtype() == num::DType::U8 ? zp->data<uint8_t>()[zi] : zp->data<int8_t>()[zi];
        }
        const int32_t v = w->dtype() == num::DType::U8 ? w->data<uint8_t>()[i] : w->data<int8_t>()[i];
        q.codes[i] = v - z;
    }
    for (int32_t v : q.codes)
        if (v < -128 || v > 127) c.refuse(fmt::format("{} minus its zero point leaves the 8-bit range", what));
    return q;
}

}  // namespace

void lower_gru(Compiler& c, const std::vector<const ir::Node*>& unit) {
    const ir::Node* gru = nullptr;
    for (const ir::Node* n : unit)
        if (n->op_type == "GRU") gru = n;
    if (!gru) c.refuse("internal: GRU group without a GRU node");
    const ir::Node& n = *gru;
    auto producer = [&](size_t i) -> const ir::Node* {
        if (!n.has_input(i)) return nullptr;
        for (const ir::Node* u : unit)
            if (u->op_type == "DequantizeLinear" && u->outputs[0] == n.input(i)) return u;
        return nullptr;
    };
    auto consumer_q = [&](size_t k) -> const ir::Node* {
        if (n.outputs.size() <= k || n.outputs[k].empty()) return nullptr;
        for (const ir::Node* u : unit)
            if (u->op_type == "QuantizeLinear" && u->input(0) == n.outputs[k]) return u;
        return nullptr;
    };
    // Attributes this mapping implements (the rest: refused, naming them).
    const std::string dir = ir::attr_string(n.attrs, "direction", "forward");
    const int D = dir == "bidirectional" ? 2 : 1;
    if (ir::attr_int(n.attrs, "layout", 0) != 0) c.refuse("layout 1 (batch-major) is not mapped: time-major X only");
    if (n.attrs.has("clip")) c.refuse("clip is not mapped (the GRU step has no input clamp)");
    if (n.attrs.has("activations")) {
        const auto* acts = std::get_if<std::vector<std::string>>(n.attrs.find("activations"));
        if (!acts) c.refuse("activations is not a string list");
        for (size_t k = 0; k < acts->size(); ++k)
            if ((*acts)[k] != (k % 2 == 0 ? "Sigmoid" : "Tanh"))
                c.refuse("activations other than Sigmoid, Tanh are not mapped (the GRU step's fixed functions)");
    }
    if (ir::attr_int(n.attrs, "linear_before_reset", 0) != 1)
        c.refuse("linear_before_reset must be 1 (seed 003 GRU)");
    if (n.has_input(4)) c.refuse("sequence_lens is not mapped: every batch entry runs all steps");
    if (n.has_input(5)) c.refuse("initial_h is not mapped: the state starts at zero");
    const ir::Node* dqx = producer(0);
    const ir::Node* dqw = producer(1);
    const ir::Node* dqr = producer(2);
    if (!dqx || c.constant(*dqx, 0)) c.refuse("X must be an 8-bit feature tensor read through DequantizeLinear");
    if (!dqw || !dqr) c.refuse("W and R must be quantized constants (seed 003 GRU: weights of <= 8 bits)");
    const DeviceTensor& x = c.dt(dqx->input(0));
    if (x.format != F::S8 && x.format != F::U8) c.refuse("X must be 8-bit (seed 003 GRU)");
    const float xs = c.scalar_f(*dqx, 1);
    const ir::Value& xv = c.g().value(n.input(0));
    if (xv.shape.size() != 3) c.refuse("X must be [seq_length, batch, input_size]");
    const int64_t T = xv.shape[0], B = xv.shape[1], I = xv.shape[2];
    const int64_t H = ir::attr_int(n.attrs, "hidden_size", 0);
    if (H <= 0) c.refuse("hidden_size must be given");
    const int64_t G = 3 * H;
    const QConst W = weight_codes(c, *dqw, G, "W");
    const QConst R = weight_codes(c, *dqr, G, "R");
    if (W.codes.size() != static_cast<size_t>(D * G * I) || R.codes.size() != static_cast<size_t>(D * G * H))
        c.refuse(fmt::format("W must be [{}, {}, {}] and R [{}, {}, {}]", D, G, I, D, G, H));
    // B: a float constant [D, 6H] (Wb then Rb), or a dequantized constant.
    std::vector<float> bias;
    if (n.has_input(3)) {
        const num::Tensor* bt = c.constant(n, 3);
        std::vector<float> v;
        if (bt && bt->dtype() == num::DType::F32) {
            v.assign(bt->data<float>(), bt->data<float>() + bt->numel());
        } else if (const ir::Node* dqb = producer(3)) {
            const num::Tensor* q = c.constant(*dqb, 0);
            const num::Tensor* s = c.constant(*dqb, 1);
            if (!q || !s || s->numel() != 1 || q->dtype() != num::DType::I32)
                c.refuse("B must be a float constant or an int32 constant with one scale");
            const int32_t z = c.scalar_zp(*dqb, 2);
            for (size_t i = 0; i < q->numel(); ++i)
                v.push_back(static_cast<float>(q->data<int32_t>()[i] - z) * s->data<float>()[0]);
        } else {
            c.refuse("B must be constant");
        }
        if (v.size() != static_cast<size_t>(D * 2 * G)) c.refuse(fmt::format("B must hold {} values", D * 2 * G));
        bias = v;
    }
    const ir::Node* qy = consumer_q(0);
    const ir::Node* qh = consumer_q(1);
    for (size_t k = 0; k < n.outputs.size() && k < 2; ++k)
        if (!n.outputs[k].empty() && !(k == 0 ? qy : qh) &&
            (!c.g().consumers(n.outputs[k]).empty() ||
             std::find(c.g().outputs().begin(), c.g().outputs().end(), n.outputs[k]) != c.g().outputs().end()))
            c.refuse(fmt::format("output {} must be quantized to 8 bits (seed 003 GRU)", k == 0 ? "Y" : "Y_h"));
    if (!qy && !qh) c.refuse("neither Y nor Y_h is used");
    const DeviceTensor* y = qy ? &c.dt(qy->outputs[0]) : nullptr;
    const DeviceTensor* yh = qh ? &c.dt(qh->outputs[0]) : nullptr;
    const float ys = qy ? c.scalar_f(*qy, 1) : 0.0f, yhs = qh ? c.scalar_f(*qh, 1) : 0.0f;
    for (const DeviceTensor* t : {y, yh})
        if (t && t->format != F::S8 && t->format != F::U8) c.refuse("Y and Y_h must be 8-bit (seed 003 GRU)");

    // Scratch: the gates of X for every step, the recurrent gates, the state in F32 and at 16 bits.
    // The state is a convex mix of tanh values and the zero initial state: |h| <= 1.
    const float s16 = 1.0f / 32767.0f;
    const uint64_t xg = c.scratch(static_cast<uint64_t>(T * B * G * 4));
    const uint64_t hg = c.scratch(static_cast<uint64_t>(B * G * 4));
    // Two F32 state buffers, alternating: a command's reads of a range it also writes see its own
    // output (the core stages writes), so the step reads h(t-1) from one and writes h(t) to the other.
    const uint64_t hfs[2] = {c.scratch(static_cast<uint64_t>(B * H * 4)), c.scratch(static_cast<uint64_t>(B * H * 4))};
    int cur = 0;
    const uint64_t h16 = c.scratch(static_cast<uint64_t>(B * H * 2));
    const uint64_t sram = c.profile().npu.conv_sram_bytes.value;
    if (static_cast<uint64_t>(T * B * I + G * I + T * B * G * 4 + G * 16) > sram)
        c.refuse(fmt::format("the input products of {} steps x {} batch do not fit the {}-byte SRAM", T, B, sram));

    auto matmul = [&](const std::vector<int32_t>& codes, int64_t K, const std::vector<float>& scale) {
        Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::CONV);
        set_field(cmd, C::MODE, hw::tnpuv2::enums::CONV_MODE::MATMUL);
        for (const auto& f : {C::KERNEL_H, C::KERNEL_W, C::STRIDE_H, C::STRIDE_W, C::DILATION_H, C::DILATION_W, C::GROUPS})
            set_field(cmd, f, 1);
        set_field(cmd, C::ACT_MIN, -(int64_t{1} << 31));
        set_field(cmd, C::ACT_MAX, (int64_t{1} << 31) - 1);
        set_field(cmd, C::OUT_MODE, hw::tnpuv2::enums::OUT_MODE::FP32);
        set_field(cmd, C::WFORMAT, F::S8);
        set_field(cmd, C::WBITS, 8);
        std::vector<uint8_t> packed;
        pack_rows(codes, K, F::S8, packed);
        hw::tnpuv2::set_addr(cmd, C::WEIGHT_ADDR_LO, C::WEIGHT_ADDR_HI, c.weight_blob(packed));
        set_field(cmd, C::WEIGHT_BYTES, static_cast<int64_t>(packed.size()));
        set_field(cmd, C::QTABLE_ENTRIES, G);
        hw::tnpuv2::set_addr(cmd, C::QTABLE_ADDR_LO, C::QTABLE_ADDR_HI,
                             c.blob(qtable(std::vector<int64_t>(static_cast<size_t>(G), 0), scale, true)));
        c.emit(cmd, {{C::WEIGHT_ADDR_LO, C::WEIGHT_ADDR_HI}, {C::QTABLE_ADDR_LO, C::QTABLE_ADDR_HI}});
    };
    auto vector = [&](uint32_t op) {
        Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::VECTOR);
        set_field(cmd, V::OP, op);
        set_field_f32(cmd, V::IN_SCALE, 1.0f);
        set_field_f32(cmd, V::OUT_SCALE, 1.0f);
        return cmd;
    };
    auto quant_to = [&](const Desc& out, float scale) {
        c.sb().tensor(S::IFM, matrix(F::F32, 32, hfs[cur], {B, H}));
        c.sb().tensor(S::OFM, out);
        Command q = vector(VOP::QUANT);
        set_field_f32(q, V::OUT_SCALE, scale);
        c.emit(q);
    };
    // A [B, H] slice of an output tensor through its own strides (Y: [T, D, B, H]; Y_h: [D, B, H]).
    auto slice = [&](const DeviceTensor& t, std::vector<int64_t> at) {
        View v = c.view(t);
        for (size_t k = 0; k < at.size(); ++k) {
            v.offset += static_cast<uint64_t>(at[k] * v.stride[k]);
            v.ext[k] = 1;
        }
        std::vector<size_t> order(v.ext.size());
        for (size_t k = 0; k < order.size(); ++k) order[k] = k;
        return c.desc_of(v, order);
    };
    for (int d = 0; d < D; ++d) {
        std::vector<float> wsc(static_cast<size_t>(G)), rsc(static_cast<size_t>(G));
        for (int64_t j = 0; j < G; ++j) {
            wsc[static_cast<size_t>(j)] = static_cast<float>(double(xs) * double(W.scale[static_cast<size_t>(j)]));
            rsc[static_cast<size_t>(j)] = static_cast<float>(double(s16) * double(R.scale[static_cast<size_t>(j)]));
        }
        const std::vector<int32_t> wd(W.codes.begin() + d * G * I, W.codes.begin() + (d + 1) * G * I);
        const std::vector<int32_t> rd(R.codes.begin() + d * G * H, R.codes.begin() + (d + 1) * G * H);
        uint64_t btab = 0;
        if (!bias.empty()) {
            std::vector<uint8_t> t(static_cast<size_t>(2 * G * 4));
            std::memcpy(t.data(), bias.data() + d * 2 * G, t.size());
            btab = c.blob(t);
        }
        // The input gates of all steps at once.
        View xview = c.view(x);
        c.sb().tensor(S::IFM, c.desc_of(xview, {0, 1, 2}));
        c.sb().tensor(S::OFM, matrix(F::F32, 32, xg, {T, B, G}));
        matmul(wd, I, wsc);
        // h = 0 (F32 and 16-bit).
        for (const Desc& z : {matrix(F::F32, 32, hfs[cur], {B, H}), matrix(F::S16, 16, h16, {B, H})}) {
            c.sb().tensor(S::OFM, z);
            Command f = hw::tnpuv2::make_command(hw::tnpuv2::op::MOVE);
            set_field(f, MV::MODE, hw::tnpuv2::enums::MOVE_MODE::FILL);
            c.emit(f);
        }
        const bool rev = dir == "reverse" || d == 1;
        for (int64_t k = 0; k < T; ++k) {
            const int64_t t = rev ? T - 1 - k : k;
            c.sb().tensor(S::IFM, matrix(F::S16, 16, h16, {B, H}));
            c.sb().tensor(S::OFM, matrix(F::F32, 32, hg, {B, G}));
            matmul(rd, H, rsc);
            c.sb().tensor(S::IFM, matrix(F::F32, 32, xg + static_cast<uint64_t>(t * B * G * 4), {B, G}));
            c.sb().tensor(S::IFM2, matrix(F::F32, 32, hg, {B, G}));
            c.sb().tensor(S::AUX, matrix(F::F32, 32, hfs[cur], {B, H}));
            cur ^= 1;
            c.sb().tensor(S::OFM, matrix(F::F32, 32, hfs[cur], {B, H}));
            Command cell = vector(VOP::GRU_CELL);
            if (btab) {
                hw::tnpuv2::set_addr(cell, V::TABLE_ADDR_LO, V::TABLE_ADDR_HI, btab);
                set_field(cell, V::TABLE_ENTRIES, 2 * G);
            }
            c.emit(cell, {{V::TABLE_ADDR_LO, V::TABLE_ADDR_HI}});
            if (k + 1 < T) quant_to(matrix(F::S16, 16, h16, {B, H}), s16);
            if (y) quant_to(slice(*y, {t, d}), ys);
        }
        if (yh) quant_to(slice(*yh, {d}), yhs);
    }
    Layer& L = c.layer();
    L.op = "GRU";
    L.macs = static_cast<uint64_t>(D * T * B * G * (I + H));
    L.note = fmt::format("{} direction(s) x {} steps: X gates in one MATMUL, per step R MATMUL (16-bit state) + "
                         "GRU_CELL + QUANT",
                         D, T);
}

}  // namespace drv::tnpuv2::detail
