// SPDX-License-Identifier: MIT
// Convolutions and matrix products -> CONV commands: weights minus their zero point packed at the
// chosen width (OHWI; depthwise HWC; MatMul [N][K]), one QTABLE record per output channel (the
// model's int32 bias and the exact multiplier/shift of x_scale * w_scale / y_scale), tiled into
// output-channel chunks and row bands that fit the on-chip SRAM.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler_internal.h"

namespace drv::tnpuv2::detail {
namespace C = hw::tnpuv2::CONV;
namespace MODE = hw::tnpuv2::enums::CONV_MODE;

namespace {

int64_t int_at(const num::Tensor& t, size_t i) {
    switch (t.dtype()) {
        case num::DType::I8:
            return t.data<int8_t>()[i];
        case num::DType::U8:
            return t.data<uint8_t>()[i];
        case num::DType::I16:
            return t.data<int16_t>()[i];
        case num::DType::U16:
            return t.data<uint16_t>()[i];
        case num::DType::I32:
            return t.data<int32_t>()[i];
        default:
            return 0;
    }
}

std::vector<int32_t> zps(const num::Tensor* t, size_t n) {
    std::vector<int32_t> v(n, 0);
    if (!t) return v;
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(int_at(*t, t->numel() > 1 ? i : 0));
    return v;
}

std::vector<float> floats(const num::Tensor& t, size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = t.data<float>()[t.numel() > 1 ? i : 0];
    return v;
}

/// Weight width and format for `vals` (already minus zero point): the requested width (seed 003:
/// 4/8/16/20) or the narrowest of 8/16/20 holding the container's values; depthwise stays 8-bit.
void weight_format(Compiler& c, const std::vector<int32_t>& vals, num::DType container, bool depthwise, uint32_t& fmt,
                   int& bits) {
    int32_t lo = 0, hi = 0;
    for (int32_t v : vals) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    auto fits = [&](int b) { return lo >= -(int64_t{1} << (b - 1)) && hi <= (int64_t{1} << (b - 1)) - 1; };
    int want = c.widths().weight;
    if (depthwise) want = 8;  // seed 003 Conv2D: depthwise weights 8-bit only
    if (!want)
        want =
            container == num::DType::I32 ? 20 : (container == num::DType::I16 || container == num::DType::U16 ? 16 : 8);
    if (!fits(want)) {
        if (c.widths().weight || depthwise)
            c.refuse(fmt::format("weights span [{}, {}] after the zero point, outside the {}-bit grid{}", lo, hi, want,
                                 depthwise ? " (seed 003: depthwise weights are 8-bit)" : ""));
        while (want < 20 && !fits(want)) want = want < 16 ? 16 : 20;
        if (!fits(want)) c.refuse(fmt::format("weights span [{}, {}]: wider than 20 bits", lo, hi));
    }
    bits = want;
    fmt = want <= 4 ? F::S4 : want <= 8 ? F::S8 : want <= 16 ? F::S16 : F::S32;
}

}  // namespace

/// Rows of `inner` weights packed at `fmt`.
void pack_rows(const std::vector<int32_t>& v, int64_t inner, uint32_t fmt, std::vector<uint8_t>& out) {
    const int64_t rows = static_cast<int64_t>(v.size()) / inner;
    for (int64_t r = 0; r < rows; ++r) {
        const int32_t* s = v.data() + r * inner;
        if (fmt == F::S4) {
            for (int64_t k = 0; k < inner; k += 2) {
                const uint8_t lo = static_cast<uint8_t>(s[k] & 0xf),
                              hi = k + 1 < inner ? static_cast<uint8_t>(s[k + 1] & 0xf) : 0;
                out.push_back(static_cast<uint8_t>(lo | (hi << 4)));
            }
        } else {
            const int eb = fmt == F::S8 ? 1 : fmt == F::S16 ? 2 : 4;
            for (int64_t k = 0; k < inner; ++k) {
                const uint32_t u = static_cast<uint32_t>(s[k]);
                for (int b = 0; b < eb; ++b) out.push_back(static_cast<uint8_t>(u >> (8 * b)));
            }
        }
    }
}

std::vector<uint8_t> qtable(const std::vector<int64_t>& bias, const std::vector<float>& scale, bool fp32_out) {
    std::vector<uint8_t> t(bias.size() * 16);
    for (size_t i = 0; i < bias.size(); ++i) {
        int32_t mult = 0, shift = 0;
        if (fp32_out)
            std::memcpy(&mult, &scale[i], 4);
        else
            exact_scale(scale[i], mult, shift);
        std::memcpy(t.data() + i * 16, &bias[i], 8);
        std::memcpy(t.data() + i * 16 + 8, &mult, 4);
        std::memcpy(t.data() + i * 16 + 12, &shift, 4);
    }
    return t;
}

int elem_bytes(uint32_t fmt) {
    return fmt == F::S4 || fmt == F::U4 ? 1 : fmt == F::F32 || fmt == F::S32 ? 4 : fmt >= F::S16 ? 2 : 1;
}

void lower_conv(Compiler& c, const ir::Node& n, bool fp32_out) {
    const DeviceTensor& x = c.dt(n.input(0));
    const DeviceTensor& y = c.dt(n.outputs[0]);
    const num::Tensor* w = c.constant(n, 3);
    if (!w || w->rank() != 4) c.refuse("weights must be a constant 4-D tensor (2-D convolution)");
    if (x.shape.size() != 4) c.refuse("input must be a 4-D feature map");
    const int64_t M = w->dim(0), CG = w->dim(1), KH = w->dim(2), KW = w->dim(3);
    const int64_t Cin = x.shape[1], H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3];
    const int64_t G = ir::attr_int(n.attrs, "group", 1);
    const std::vector<int64_t> st = ir::attr_ints(n.attrs, "strides", {1, 1}),
                               dl = ir::attr_ints(n.attrs, "dilations", {1, 1});
    std::vector<int64_t> pads = ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
    const std::string ap = ir::attr_string(n.attrs, "auto_pad", "NOTSET");
    if (ap != "NOTSET" && ap != "VALID") {  // SAME_UPPER / SAME_LOWER: the pads the output size implies
        for (int d = 0; d < 2; ++d) {
            const int64_t in = d ? W : H, out = d ? OW : OH, k = ((d ? KW : KH) - 1) * dl[static_cast<size_t>(d)] + 1;
            const int64_t total = std::max<int64_t>(0, (out - 1) * st[static_cast<size_t>(d)] + k - in);
            const int64_t small = total / 2, big = total - small;
            pads[static_cast<size_t>(d)] = ap == "SAME_UPPER" ? small : big;
            pads[static_cast<size_t>(d + 2)] = ap == "SAME_UPPER" ? big : small;
        }
    } else if (ap == "VALID") {
        pads = {0, 0, 0, 0};
    }
    const bool dw = G > 1 && G == Cin && G == M;
    const float xs = c.scalar_f(n, 1), ys = fp32_out ? 1.0f : c.scalar_f(n, 6);
    if (fp32_out != (y.format == F::F32)) c.refuse("internal: the output format does not match the FP32 mode");
    const std::vector<float> ws = floats(*c.constant(n, 4), static_cast<size_t>(M));
    const std::vector<int32_t> wz = zps(c.constant(n, 5), static_cast<size_t>(M));
    const num::Tensor* b = c.constant(n, 8);
    std::vector<int64_t> bias(static_cast<size_t>(M), 0);
    for (int64_t m = 0; m < M && b; ++m) bias[static_cast<size_t>(m)] = b->data<int32_t>()[m];
    std::vector<float> scale(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m) scale[static_cast<size_t>(m)] = xs * ws[static_cast<size_t>(m)] / ys;
    // Weights minus zero point, in the engine's order: OHWI, or HWC for depthwise.
    std::vector<int32_t> wv(static_cast<size_t>(M * CG * KH * KW));
    for (int64_t m = 0; m < M; ++m)
        for (int64_t ci = 0; ci < CG; ++ci)
            for (int64_t ky = 0; ky < KH; ++ky)
                for (int64_t kx = 0; kx < KW; ++kx) {
                    const int32_t v =
                        static_cast<int32_t>(int_at(*w, static_cast<size_t>(((m * CG + ci) * KH + ky) * KW + kx))) -
                        wz[static_cast<size_t>(m)];
                    const size_t o = dw ? static_cast<size_t>((ky * KW + kx) * M + m)
                                        : static_cast<size_t>(((m * KH + ky) * KW + kx) * CG + ci);
                    wv[o] = v;
                }
    uint32_t wfmt = 0;
    int wbits = 8;
    weight_format(c, wv, w->dtype(), dw, wfmt, wbits);
    Layer& L = c.layer();
    L.op = dw ? "DepthwiseConv" : (G > 1 ? "GroupConv" : "Conv");
    if (fp32_out) {
        // The device writes the exact integer sum x (x_scale w_scale) (one float rounding); the
        // reference sums K float32 products of dequantized values, whose a-priori error is at most
        // (K + 3) u sum|x w| (u = 2^-24: K - 1 additions, the product, the two dequantizations;
        // Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 4.4). The check
        // compares in units of that bound (or of the accumulator step, if larger), over channels.
        const int64_t K = CG * KH * KW;
        const double xmax = static_cast<double>(std::max<int64_t>(std::abs((-(int64_t{1} << (x.bits - 1))) - x.zp),
                                                                  std::abs(((int64_t{1} << (x.bits - 1)) - 1) - x.zp)));
        double lsb = 0;
        for (int64_t m = 0; m < M; ++m) {
            const double step = static_cast<double>(xs) * static_cast<double>(ws[static_cast<size_t>(m)]);
            double wsum = 0;
            for (int64_t k = 0; k < K; ++k) {
                const size_t o = dw ? static_cast<size_t>(k * M + m) : static_cast<size_t>(m * K + k);
                wsum += std::abs(static_cast<double>(wv[o]));
            }
            const double bound = step * (wsum * xmax + std::abs(static_cast<double>(bias[static_cast<size_t>(m)])));
            lsb = std::max({lsb, step, static_cast<double>(K + 3) * std::ldexp(1.0, -24) * bound});
        }
        L.float_lsb[n.outputs[0]] = lsb;
    }
    L.macs = static_cast<uint64_t>(OH * OW * M * CG * KH * KW * x.shape[0]);
    // Tiling: output-channel chunks (whole groups), then row bands, within the SRAM.
    const uint64_t sram = c.profile().npu.conv_sram_bytes.value;
    const int64_t mg = M / G, cg_in = CG;
    const int64_t unit = dw ? 16 : (G == 1 ? 16 : mg);
    const double wb = wfmt == F::S4 ? 0.5 : elem_bytes(wfmt);
    auto wbytes = [&](int64_t ch) {
        const int64_t inner = dw ? ch : cg_in;
        const int64_t rows = dw ? KH * KW : ch * KH * KW;
        return static_cast<uint64_t>(rows * (wfmt == F::S4 ? (inner + 1) / 2 : inner * elem_bytes(wfmt)));
    };
    const int64_t ebx = elem_bytes(x.format), eby = elem_bytes(y.format);
    auto footprint = [&](int64_t rows, int64_t ch) {
        const int64_t in_rows = std::min<int64_t>(H, (rows - 1) * st[0] + (KH - 1) * dl[0] + 1);
        const int64_t in_ch = dw ? ch : (G == 1 ? Cin : ch / mg * CG);
        return static_cast<uint64_t>(in_rows * W * in_ch * ebx) + wbytes(ch) +
               static_cast<uint64_t>(rows * OW * ch * eby) + static_cast<uint64_t>(ch) * 16;
    };
    (void)wb;
    int64_t chunk = M;
    while (chunk > unit && (wbytes(chunk) > sram / 2 || footprint(1, chunk) > sram))
        chunk = std::max(unit, (chunk / 2 + unit - 1) / unit * unit);
    if (footprint(1, chunk) > sram)
        c.refuse(fmt::format("one output row of {} channels needs {} bytes of SRAM, the core has {}", chunk,
                             footprint(1, chunk), sram));
    int64_t band = OH;
    while (band > 1 && footprint(band, chunk) > sram) band = (band + 1) / 2;
    while (band < OH && footprint(band + 1, chunk) <= sram) ++band;
    const Desc xd = c.fm_desc(x), yd = c.fm_desc(y);
    int ncmd = 0;
    for (int64_t m0 = 0; m0 < M; m0 += chunk) {
        const int64_t mc = std::min(chunk, M - m0);
        std::vector<int32_t> wc;
        if (dw) {
            for (int64_t t = 0; t < KH * KW; ++t)
                wc.insert(wc.end(), wv.begin() + t * M + m0, wv.begin() + t * M + m0 + mc);
        } else {
            wc.assign(wv.begin() + m0 * KH * KW * CG, wv.begin() + (m0 + mc) * KH * KW * CG);
        }
        std::vector<uint8_t> packed;
        pack_rows(wc, dw ? mc : CG, wfmt, packed);
        const uint64_t woff = c.weight_blob(packed);
        const std::vector<int64_t> bc(bias.begin() + m0, bias.begin() + m0 + mc);
        const std::vector<float> sc(scale.begin() + m0, scale.begin() + m0 + mc);
        const uint64_t qoff = c.blob(qtable(bc, sc, fp32_out));
        const int64_t c0 = dw ? m0 : (G == 1 ? 0 : m0 / mg * CG), cin = dw ? mc : (G == 1 ? Cin : mc / mg * CG);
        for (int64_t oy0 = 0; oy0 < OH; oy0 += band) {
            const int64_t oy1 = std::min(OH, oy0 + band);
            const int64_t ekh = (KH - 1) * dl[0] + 1;
            const int64_t a = oy0 * st[0] - pads[0], bb = (oy1 - 1) * st[0] - pads[0] + ekh - 1;
            const int64_t a2 = std::max<int64_t>(a, 0), b2 = std::min<int64_t>(bb, H - 1);
            Desc xi = xd;
            xi.dims[3] = b2 - a2 + 1;
            xi.dims[5] = cin;
            xi.offset += static_cast<uint64_t>(a2 * xd.strides[3] +
                                               (x.format == F::S4 || x.format == F::U4 ? c0 / 2 : c0 * xd.strides[5]));
            Desc yo = yd;
            yo.dims[3] = oy1 - oy0;
            yo.dims[5] = mc;
            yo.offset += static_cast<uint64_t>(oy0 * yd.strides[3] +
                                               (y.format == F::S4 || y.format == F::U4 ? m0 / 2 : m0 * yd.strides[5]));
            c.sb().tensor(S::IFM, xi);
            c.sb().tensor(S::OFM, yo);
            Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::CONV);
            set_field(cmd, C::MODE, dw ? MODE::DEPTHWISE : MODE::CONV);
            set_field(cmd, C::OUT_MODE, fp32_out ? hw::tnpuv2::enums::OUT_MODE::FP32 : hw::tnpuv2::enums::OUT_MODE::QUANT);
            set_field(cmd, C::WFORMAT, wfmt);
            set_field(cmd, C::WBITS, wbits);
            set_field(cmd, C::WEIGHT_REUSE, oy0 > 0 ? 1 : 0);
            set_field(cmd, C::KERNEL_H, KH);
            set_field(cmd, C::KERNEL_W, KW);
            set_field(cmd, C::STRIDE_H, st[0]);
            set_field(cmd, C::STRIDE_W, st[1]);
            set_field(cmd, C::DILATION_H, dl[0]);
            set_field(cmd, C::DILATION_W, dl[1]);
            set_field(cmd, C::PAD_TOP, a2 - a);
            set_field(cmd, C::PAD_BOTTOM, bb - b2);
            set_field(cmd, C::PAD_LEFT, pads[1]);
            set_field(cmd, C::PAD_RIGHT, pads[3]);
            set_field(cmd, C::GROUPS, dw ? 1 : (G == 1 ? 1 : mc / mg));
            hw::tnpuv2::set_addr(cmd, C::WEIGHT_ADDR_LO, C::WEIGHT_ADDR_HI, woff);
            set_field(cmd, C::WEIGHT_BYTES, static_cast<int64_t>(packed.size()));
            hw::tnpuv2::set_addr(cmd, C::QTABLE_ADDR_LO, C::QTABLE_ADDR_HI, qoff);
            set_field(cmd, C::QTABLE_ENTRIES, mc);
            set_field(cmd, C::ACT_MIN, -(int64_t{1} << 31));
            set_field(cmd, C::ACT_MAX, (int64_t{1} << 31) - 1);
            c.emit(cmd, {{C::WEIGHT_ADDR_LO, C::WEIGHT_ADDR_HI}, {C::QTABLE_ADDR_LO, C::QTABLE_ADDR_HI}});
            ++ncmd;
        }
    }
    L.note = fmt::format("{}-bit weights, {} band(s) x {} chunk(s){}", wbits, (OH + band - 1) / band,
                         (M + chunk - 1) / chunk, fp32_out ? ", FP32 output" : "");
}

void lower_conv_fp32(Compiler& c, const std::vector<const ir::Node*>& unit) {
    const ir::Node& conv = *unit.back();
    auto dq_of = [&](size_t i) -> const ir::Node* {
        if (!conv.has_input(i)) return nullptr;
        for (const ir::Node* u : unit)
            if (u->op_type == "DequantizeLinear" && u->outputs[0] == conv.input(i)) return u;
        c.refuse(fmt::format("input {} of an FP32-output Conv must be dequantized (QDQ)", i));
    };
    const ir::Node* dx = dq_of(0);
    const ir::Node* dw = dq_of(1);
    const ir::Node* db = dq_of(2);
    if (c.constant(*dx, 0) || !c.constant(*dw, 0)) c.refuse("the FP32-output Conv needs a feature input and constant weights");
    if (c.g().value(conv.outputs[0]).dtype != num::DType::F32) c.refuse("internal: the Conv output is not float");
    // The QLinearConv the unit is (x, x_scale, x_zp, w, w_scale, w_zp, -, -, bias), written as FP32.
    ir::Node q = conv;
    q.op_type = "QLinearConv";
    q.inputs = {dx->input(0), dx->input(1), dx->has_input(2) ? dx->input(2) : "",
                dw->input(0), dw->input(1), dw->has_input(2) ? dw->input(2) : "",
                "", "", db ? db->input(0) : ""};
    if (db) {
        // The int32 bias must be on the product's grid (x_scale x w_scale), as onnxruntime's quantizer writes it.
        const num::Tensor* bs = c.constant(*db, 1);
        const num::Tensor* ws = c.constant(*dw, 1);
        const num::Tensor* bq = c.constant(*db, 0);
        const num::Tensor* bz = c.constant(*db, 2);
        bool zero = true;
        if (bz && bz->dtype() == num::DType::I32)
            for (size_t m = 0; m < bz->numel(); ++m) zero = zero && bz->data<int32_t>()[m] == 0;
        if (!bs || !ws || !bq || bq->dtype() != num::DType::I32 || !zero || (bz && bz->dtype() != num::DType::I32))
            c.refuse("the bias must be an int32 constant with zero point 0");
        const float xs = c.scalar_f(*dx, 1);
        for (size_t m = 0; m < bs->numel(); ++m) {
            const float want = xs * ws->data<float>()[ws->numel() > 1 ? m : 0];
            if (std::fabs(bs->data<float>()[m] - want) > 1e-6f * want)
                c.refuse("the bias scale is not x_scale x w_scale: it cannot join the integer sum");
        }
    }
    lower_conv(c, q, true);
}

void lower_matmul(Compiler& c, const ir::Node& n) {
    const bool gemm = n.op_type == "QGemm";
    const DeviceTensor& a = c.dt(n.input(0));
    const DeviceTensor& y = c.dt(n.outputs[0]);
    if (a.nhwc && !(a.shape[2] * a.shape[3] == 1 || a.shape[1] == 1))
        c.refuse("a 4-D A operand is stored NHWC: transpose it first");
    if (gemm && ir::attr_int(n.attrs, "transA", 0) != 0)
        c.refuse("transA is not supported (seed 003 MatMul: no input transpose)");
    const bool tb = gemm && ir::attr_int(n.attrs, "transB", 0) != 0;
    const float alpha = gemm ? ir::attr_float(n.attrs, "alpha", 1.0f) : 1.0f;
    const std::vector<int64_t>& as = a.shape;
    const int64_t K = as.back(), Mrows = as.size() >= 2 ? as[as.size() - 2] : 1;
    const num::Tensor* bconst = c.constant(n, 3);
    const size_t ysi = gemm ? 7 : 6, yzi = gemm ? 8 : 7;
    const float xs = c.scalar_f(n, 1), ys = c.scalar_f(n, ysi);
    const int64_t N = y.shape.back();
    const std::vector<float> bsc = floats(*c.constant(n, 4), static_cast<size_t>(N));
    std::vector<float> scale(static_cast<size_t>(N));
    for (int64_t j = 0; j < N; ++j) scale[static_cast<size_t>(j)] = alpha * xs * bsc[static_cast<size_t>(j)] / ys;
    std::vector<int64_t> bias(static_cast<size_t>(N), 0);
    if (gemm)
        if (const num::Tensor* cb = c.constant(n, 6)) {
            if (cb->dtype() != num::DType::I32 || (cb->numel() != 1 && static_cast<int64_t>(cb->numel()) != N))
                c.refuse("QGemm C must be an int32 bias of N values");
            for (int64_t j = 0; j < N; ++j) bias[static_cast<size_t>(j)] = cb->data<int32_t>()[cb->numel() > 1 ? j : 0];
        }
    (void)yzi;
    Layer& L = c.layer();
    L.op = gemm ? "MatMul (Gemm)" : "MatMul";
    int64_t batch = 1;
    for (size_t i = 0; i + 2 < as.size(); ++i) batch *= as[i];
    L.macs = static_cast<uint64_t>(batch * Mrows * K * N);
    // A as [batch..., M, K] rows, right-aligned in DIM2..DIM5.
    View av = c.view(a);
    std::vector<size_t> order(as.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (a.nhwc) {  // H = W = 1 or C = 1: bytes in IR order; describe as row-major
        av.stride.assign(as.size(), 0);
        int64_t s = elem_bytes(a.format);
        for (size_t k = as.size(); k-- > 0;) {
            av.stride[k] = s;
            s *= as[k];
        }
    }
    Desc ad = c.desc_of(av, order);
    View yv = c.view(y);
    if (y.nhwc) c.refuse("a 4-D MatMul output would be stored NHWC");
    Desc ydesc = c.desc_of(yv, order);
    auto base_cmd = [&](uint32_t mode) {
        Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::CONV);
        set_field(cmd, C::MODE, mode);
        set_field(cmd, C::KERNEL_H, 1);
        set_field(cmd, C::KERNEL_W, 1);
        set_field(cmd, C::STRIDE_H, 1);
        set_field(cmd, C::STRIDE_W, 1);
        set_field(cmd, C::DILATION_H, 1);
        set_field(cmd, C::DILATION_W, 1);
        set_field(cmd, C::GROUPS, 1);
        set_field(cmd, C::ACT_MIN, -(int64_t{1} << 31));
        set_field(cmd, C::ACT_MAX, (int64_t{1} << 31) - 1);
        return cmd;
    };
    const int64_t rows_total = batch * Mrows;
    if (bconst && (bconst->rank() == 2 || bconst->numel() == static_cast<size_t>(K * N))) {
        const std::vector<int32_t> bz = zps(c.constant(n, 5), static_cast<size_t>(N));
        std::vector<int32_t> wv(static_cast<size_t>(N * K));  // [N][K]
        for (int64_t j = 0; j < N; ++j)
            for (int64_t k = 0; k < K; ++k)
                wv[static_cast<size_t>(j * K + k)] =
                    static_cast<int32_t>(int_at(*bconst, static_cast<size_t>(tb ? j * K + k : k * N + j))) -
                    bz[static_cast<size_t>(j)];
        uint32_t wfmt = 0;
        int wbits = 8;
        weight_format(c, wv, bconst->dtype(), false, wfmt, wbits);
        // Output-column chunks whose weights, A rows and output fit the SRAM.
        const uint64_t sram = c.profile().npu.conv_sram_bytes.value;
        const uint64_t row_w = static_cast<uint64_t>(wfmt == F::S4 ? (K + 1) / 2 : K * elem_bytes(wfmt));
        const uint64_t a_bytes = static_cast<uint64_t>(rows_total * K * elem_bytes(a.format));
        auto need = [&](int64_t ch) {
            return a_bytes + static_cast<uint64_t>(ch) * row_w +
                   static_cast<uint64_t>(rows_total * ch * elem_bytes(y.format)) + static_cast<uint64_t>(ch) * 16;
        };
        int64_t chunk = N;
        while (chunk > 16 && need(chunk) > sram) chunk = std::max<int64_t>(16, (chunk / 2 + 15) / 16 * 16);
        if (need(chunk) > sram)
            c.refuse(fmt::format("{} A rows of K = {} do not fit the {}-byte SRAM", rows_total, K, sram));
        for (int64_t j0 = 0; j0 < N; j0 += chunk) {
            const int64_t nc = std::min(chunk, N - j0);
            std::vector<int32_t> wc(wv.begin() + j0 * K, wv.begin() + (j0 + nc) * K);
            std::vector<uint8_t> packed;
            pack_rows(wc, K, wfmt, packed);
            Command cmd = base_cmd(MODE::MATMUL);
            set_field(cmd, C::WFORMAT, wfmt);
            set_field(cmd, C::WBITS, wbits);
            hw::tnpuv2::set_addr(cmd, C::WEIGHT_ADDR_LO, C::WEIGHT_ADDR_HI, c.weight_blob(packed));
            set_field(cmd, C::WEIGHT_BYTES, static_cast<int64_t>(packed.size()));
            const std::vector<int64_t> bc(bias.begin() + j0, bias.begin() + j0 + nc);
            const std::vector<float> sc(scale.begin() + j0, scale.begin() + j0 + nc);
            set_field(cmd, C::QTABLE_ENTRIES, nc);
            hw::tnpuv2::set_addr(cmd, C::QTABLE_ADDR_LO, C::QTABLE_ADDR_HI, c.blob(qtable(bc, sc, false)));
            Desc yo = ydesc;
            yo.dims[5] = nc;
            yo.offset += static_cast<uint64_t>(y.format == F::S4 || y.format == F::U4 ? j0 / 2 : j0 * ydesc.strides[5]);
            c.sb().tensor(S::IFM, ad);
            c.sb().tensor(S::OFM, yo);
            c.emit(cmd, {{C::WEIGHT_ADDR_LO, C::WEIGHT_ADDR_HI}, {C::QTABLE_ADDR_LO, C::QTABLE_ADDR_HI}});
        }
        L.note = fmt::format("{}-bit weights, {} column chunk(s)", wbits, (N + chunk - 1) / chunk);
        return;
    }
    if (gemm || tb) c.refuse("QGemm needs a constant B");
    const DeviceTensor& b = c.dt(n.input(3));
    if (b.nhwc && !(b.shape[2] * b.shape[3] == 1 || b.shape[1] == 1)) c.refuse("a 4-D B operand is stored NHWC");
    View bv = c.view(b);
    if (bv.ext.size() != as.size())
        c.refuse("A and B must have the same rank (no leading-dim broadcast, seed 003 MatMul)");
    Command cmd = base_cmd(MODE::MATMUL_FM);
    set_field(cmd, C::WFORMAT, F::S8);
    set_field(cmd, C::WBITS, 8);
    set_field(cmd, C::QTABLE_ENTRIES, N);
    hw::tnpuv2::set_addr(cmd, C::QTABLE_ADDR_LO, C::QTABLE_ADDR_HI, c.blob(qtable(bias, scale, false)));
    c.sb().tensor(S::IFM2, c.desc_of(bv, order));
    c.sb().tensor(S::IFM, ad);
    c.sb().tensor(S::OFM, ydesc);
    c.emit(cmd, {{C::WEIGHT_ADDR_LO, C::WEIGHT_ADDR_HI}, {C::QTABLE_ADDR_LO, C::QTABLE_ADDR_HI}});
    L.note = "B from a feature tensor";
}

}  // namespace drv::tnpuv2::detail
