// SPDX-License-Identifier: MIT
// Model compiler, the fp16 path's recurrent layers (issue 15): ONNX LSTM and GRU unrolled over the
// sequence at compile time (assumption A-RNN, COMPILER.md "Recurrent operators") into one layer
// whose tasks are the blocks the fp16 path already drives: per step and direction a 1x1
// convolution of x_t with W (bias Wb + Rb), a 1x1 convolution of h_{t-1} with R, DPU adds and
// multiplies (lower_fp16_dpu_op) and the gate functions on the DPU float-path LUT (fp16_lut.cpp).
// Tensors are flat fp16 images [1, numel, 1, 1] (row-major order, so x_t and h_t are channel
// slices): X [S,1,I], Y [S,D,1,H], Y_h / Y_c [D,1,H]; the gates live in a layer-internal scratch.
#include "compiler_internal.h"

namespace drv::rknpu::compiler_detail {

namespace {

constexpr float kRnnLutRange = 16.f;  // as the fp16 path's other tables: LO on [-4, 4], LE on [-16, 16]

Fp16Lut table_of(const std::function<double(double)>& f) {
    return make_fp16_lut(kRnnLutRange, [&](const std::vector<float>& pts) {
        std::vector<float> v(pts.size());
        for (size_t k = 0; k < pts.size(); ++k) v[k] = static_cast<float>(f(static_cast<double>(pts[k])));
        return v;
    });
}

bool all_zero(const num::Tensor& t) {
    if (t.dtype() != num::DType::F32) return false;
    for (size_t k = 0; k < t.numel(); ++k)
        if (t.data<float>()[k] != 0.f) return false;
    return true;
}

std::string lower_ascii(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

DeviceTensor& Compiler::flat_f16(const std::string& name) {
    const ir::Value& v = g_.value(name);
    if (v.dtype != num::DType::F32) unsupported(fmt::format("tensor '{}' is {}, not float32", name, num::dtype_name(v.dtype)));
    size_t numel = 1;
    for (int64_t d : v.shape) numel *= static_cast<size_t>(d);
    auto it = m_.tensors.find(name);
    if (it != m_.tensors.end()) {
        const DeviceTensor& t = it->second;
        if (!t.fp16 || t.row_major || t.h != 1 || t.w != 1 || static_cast<size_t>(t.c) != numel)
            unsupported(fmt::format("tensor '{}' is not a flat fp16 image on the device", name));
        if (journal_on_) journal_old_.emplace(name, it->second);
        return it->second;
    }
    DeviceTensor t;
    t.name = name;
    t.ir_shape = v.shape;
    t.c = static_cast<int>(numel), t.h = 1, t.w = 1;
    t.fp16 = true;
    t.c2 = soc_.npu.c2_fp16.value;
    if (t.c2 <= 0) unsupported(fmt::format("{} has no fp16 C2 (npu.c2_fp16)", soc_.name));
    t.line_stride = static_cast<uint32_t>(t.c2 * 2);
    t.surf_stride = static_cast<uint32_t>(align_up(t.line_stride, 16));
    t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((t.c + t.c2 - 1) / t.c2);
    if (journal_on_) journal_new_.push_back(name);
    return m_.tensors.emplace(name, t).first->second;
}

bool Compiler::rnn_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const bool lstm = n.op_type == "LSTM";
    const int G = lstm ? 4 : 3;
    const std::string& op = n.op_type;
    // Attributes: what the unrolling implements (ONNX defaults); anything else stays on the CPU.
    const std::string dir = ir::attr_string(n.attrs, "direction", "forward");
    if (dir != "forward" && dir != "reverse" && dir != "bidirectional") unsupported(op + " direction '" + dir + "'");
    const int D = dir == "bidirectional" ? 2 : 1;
    if (ir::attr_int(n.attrs, "layout", 0) != 0) unsupported(op + " with layout 1 (batch first)");
    if (n.attrs.has("clip")) unsupported(op + " with clip");
    if (n.attrs.has("activation_alpha") || n.attrs.has("activation_beta")) unsupported(op + " with activation_alpha/beta");
    if (const num::AttrValue* a = n.attrs.find("activations")) {
        const auto* names = std::get_if<std::vector<std::string>>(a);
        const std::vector<std::string> dflt = lstm ? std::vector<std::string>{"sigmoid", "tanh", "tanh"}
                                                   : std::vector<std::string>{"sigmoid", "tanh"};
        bool ok = names && (names->size() == dflt.size() || names->size() == dflt.size() * static_cast<size_t>(D));
        for (size_t k = 0; ok && k < names->size(); ++k) ok = lower_ascii((*names)[k]) == dflt[k % dflt.size()];
        if (!ok) unsupported(op + " with activations other than the defaults");
    }
    if (lstm && ir::attr_int(n.attrs, "input_forget", 0) != 0) unsupported("LSTM with input_forget (CIFG)");
    const bool lbr = !lstm && ir::attr_int(n.attrs, "linear_before_reset", 0) != 0;
    const ir::Value& xv = g_.value(n.input(0));
    if (xv.shape.size() != 3) unsupported(op + " X is not [seq_length, batch, input_size]");
    const int S = static_cast<int>(xv.shape[0]), B = static_cast<int>(xv.shape[1]), I = static_cast<int>(xv.shape[2]);
    if (S < 1 || I < 1) unsupported(op + " with an empty X");
    if (B != 1) unsupported(fmt::format("{} with batch {} (one sequence per device tensor)", op, B));
    const num::Tensor* W = const_of(g_, n, 1);
    const num::Tensor* R = const_of(g_, n, 2);
    if (!W || !R || W->dtype() != num::DType::F32 || R->dtype() != num::DType::F32)
        unsupported(op + " W / R are not constant float32");
    if (W->rank() != 3 || R->rank() != 3 || W->dim(0) != D || R->dim(0) != D || W->dim(2) != I)
        unsupported(op + " W / R shapes");
    const int H = static_cast<int>(R->dim(2));
    if (ir::attr_int(n.attrs, "hidden_size", H) != H || W->dim(1) != G * H || R->dim(1) != G * H)
        unsupported(op + " hidden_size differs from W / R");
    const int c2 = soc_.npu.c2_fp16.value;
    if (c2 <= 0 || H % c2 != 0)
        unsupported(fmt::format("{} hidden_size {} is not a multiple of the {}-channel fp16 atom (the gates and h_t "
                                "are channel slices)", op, H, c2));
    const num::Tensor* Bt = n.has_input(3) ? const_of(g_, n, 3) : nullptr;
    if (n.has_input(3) && (!Bt || Bt->dtype() != num::DType::F32 || Bt->numel() != static_cast<size_t>(D * 2 * G * H)))
        unsupported(op + " B is not a constant float32 [num_directions, " + std::to_string(2 * G) + " hidden_size]");
    if (n.has_input(4)) {
        const num::Tensor* sl = const_of(g_, n, 4);
        bool full = sl != nullptr;
        for (size_t k = 0; full && k < sl->numel(); ++k)
            full = (sl->dtype() == num::DType::I32 ? sl->data<int32_t>()[k] : -1) == S;
        if (!full) unsupported(op + " with sequence_lens other than a constant seq_length");
    }
    if (lstm && n.has_input(7)) {
        const num::Tensor* P = const_of(g_, n, 7);
        if (!P || !all_zero(*P)) unsupported("LSTM with peepholes (P)");
    }
    // Initial states: activations, or constants that are all zeros (as absent).
    const auto state = [&](size_t k) -> std::string {
        if (!n.has_input(k)) return "";
        const ir::Value& v = g_.value(n.input(k));
        if (v.is_constant()) {
            if (!all_zero(*v.data)) unsupported(op + " with a constant non-zero initial state");
            return "";
        }
        if (v.dtype != num::DType::F32 || v.shape != std::vector<int64_t>{D, 1, H})
            unsupported(op + " initial state is not float32 [num_directions, 1, hidden_size]");
        return n.input(k);
    };
    const std::string h0 = state(5), c0 = lstm ? state(6) : "";
    const std::string x = n.input(0);
    const std::string y = n.outputs.size() > 0 ? n.outputs[0] : "";
    const std::string yh = n.outputs.size() > 1 ? n.outputs[1] : "";
    const std::string yc = lstm && n.outputs.size() > 2 ? n.outputs[2] : "";
    if (y.empty() && yh.empty() && yc.empty()) unsupported(op + " without outputs");

    // Weights (OIHW, 1x1): per direction the input projection (shifted copies when x_t does not
    // start at an atom: the conv reads the atoms around it, other channels times 0), R, R's parts.
    const float* w = W->data<float>();
    const float* r = R->data<float>();
    std::vector<float> bias(static_cast<size_t>(D * 2 * G * H), 0.f);
    if (Bt) bias = floats_of(*Bt);
    struct Dir {
        std::map<int, std::vector<float>> wx;  // by shift (x_t's first channel - the window's)
        std::vector<float> bx;                 // Wb + the Rb terms that are not gated by r
        std::vector<float> r_all, r_zr, r_h;   // R; GRU (lbr 0): R_z R_r rows, R_h rows
        std::vector<float> rb_h;               // GRU: Rb_h (h_0 = 0, lbr 1: r * Rb_h)
        std::vector<float> rb3;                // GRU, lbr 1: the R conv's bias (0, 0, Rb_h)
    };
    std::vector<Dir> dirs(static_cast<size_t>(D));
    const size_t GH = static_cast<size_t>(G * H), uI = static_cast<size_t>(I), uH = static_cast<size_t>(H);
    for (int d = 0; d < D; ++d) {
        Dir& e = dirs[static_cast<size_t>(d)];
        const float* wd = w + static_cast<size_t>(d) * GH * uI;
        const float* rd = r + static_cast<size_t>(d) * GH * uH;
        const float* wb = bias.data() + static_cast<size_t>(d) * 2 * GH;
        const float* rb = wb + GH;
        for (int t = 0; t < S; ++t) {
            const int c0t = t * I, a0 = c0t / c2 * c2, shift = c0t - a0;
            if (e.wx.count(shift)) continue;
            const int a1 = std::min(S * I, static_cast<int>(align_up(static_cast<uint64_t>(c0t + I), static_cast<uint64_t>(c2))));
            const size_t cin = static_cast<size_t>(a1 - a0);
            std::vector<float> m(GH * cin, 0.f);
            for (size_t o = 0; o < GH; ++o)
                for (size_t k = 0; k < uI; ++k) m[o * cin + static_cast<size_t>(shift) + k] = wd[o * uI + k];
            e.wx.emplace(shift, std::move(m));
        }
        e.bx.assign(wb, wb + GH);
        for (size_t o = 0; o < GH; ++o)
            if (lstm || o < 2 * uH || !lbr) e.bx[o] += rb[o];
        e.r_all.assign(rd, rd + GH * uH);
        e.r_zr.assign(rd, rd + 2 * uH * uH);
        e.r_h.assign(rd + 2 * uH * uH, rd + GH * uH);
        e.rb_h.assign(rb + 2 * uH, rb + GH);
        e.rb3.assign(2 * uH, 0.f);
        e.rb3.insert(e.rb3.end(), e.rb_h.begin(), e.rb_h.end());
    }

    // Device tensors: flat fp16 images.
    flat_f16(x);
    if (!h0.empty()) flat_f16(h0);
    if (!c0.empty()) flat_f16(c0);
    for (const std::string& v : {y, yh, yc})
        if (!v.empty()) flat_f16(v);
    // The scratch: per direction G H (x_t W), G H (h R), G H (sum), and the step's H-wide values.
    const int per_dir = 3 * G * H + 10 * H;
    const std::string first_out = !y.empty() ? y : !yh.empty() ? yh : yc;
    const std::string scratch = first_out + "/npusim_rnn_scratch";
    {
        DeviceTensor t = m_.tensors.at(first_out);
        t.name = scratch;
        t.c = per_dir;
        t.ir_shape = {1, per_dir, 1, 1};
        t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((t.c + t.c2 - 1) / t.c2);
        t.alias_of.clear();
        m_.tensors[scratch] = t;
        if (journal_on_) journal_new_.push_back(scratch);
        scratch_[scratch] = cur_unit_;
    }
    // The arena's weight estimate: the packed fp16 weights of every step's convolutions.
    init_estimate_ += static_cast<uint64_t>(D) * static_cast<uint64_t>(S) *
                      (GH * (2 * (uI + 2 * static_cast<uint64_t>(c2)) + 2 * uH + 128) + 8192);

    Layer L = base_layer(i, op, Unit::Npu);
    L.outputs.erase(std::remove(L.outputs.begin(), L.outputs.end(), std::string()), L.outputs.end());
    L.out_shape = shape_of(L.outputs.at(0));
    // Real MACs: x_t W every step, h_(t-1) R (GRU lbr 0: R_zr and R_h, the same G H H) from the
    // second step on unless an initial h is given.
    const uint64_t uS = static_cast<uint64_t>(S), rec = h0.empty() ? uS - 1 : uS;
    L.macs = static_cast<uint64_t>(D) * GH * (uS * uI + rec * uH);
    L.note = fmt::format(
        "fp16; unrolled over {} step(s) x {} direction(s) (A-RNN): per step 1x1 convs of x_t (W) and h_(t-1) (R), "
        "DPU adds / multiplies, gates on the float-path LUT{}",
        S, D, lstm ? "" : lbr ? " (linear_before_reset 1)" : " (linear_before_reset 0)");
    const int core = m_.cores.front();
    push_npu(
        std::move(L),
        [this, dirs = std::move(dirs), x, h0, c0, y, yh, yc, first_out, scratch, lstm, lbr, S, D, I, H, G, core,
         reverse = dir == "reverse",
         name = n.name]() {
            std::vector<TaskBody> tasks;
            const DeviceTensor& X = m_.tensors.at(x);
            const DeviceTensor& scr = m_.tensors.at(scratch);
            const int c2t = X.c2;
            // Emits `bodies` writing `dst` (a tensor name) at channel `off`: only the layer's first
            // output is checked for coverage; every other write is layer-internal.
            const auto emit = [&](std::vector<TaskBody> bodies, const std::string& dst, int off, int c) {
                for (TaskBody& b : bodies) {
                    if (dst == first_out) {
                        b.meta.intermediate = false;
                        b.meta.out_window = {off, off + c, 0, 1, 0, 1};
                    } else {
                        b.meta.intermediate = true;
                    }
                    tasks.push_back(std::move(b));
                }
            };
            struct Ref {
                std::string t;  // tensor name (scratch included)
                int off = 0;
            };
            const auto view = [&](const Ref& v, int c) { return slice(m_.tensors.at(v.t), v.off, c); };
            const auto conv = [&](const std::string& what, const DeviceTensor& in, const std::vector<float>& wts,
                                  const std::vector<float>* b, int out_c, const Ref& out) {
                ConvOp cop;
                cop.fp16 = true;
                cop.name = name + " " + what;
                cop.in_c = in.c, cop.out_c = out_c;
                cop.weights_f_ref = wts.data();
                if (b) cop.bias_f = *b;
                emit(lower_conv_op(cop, in, view(out, out_c), arena_, soc_, {core}), out.t, out.off, out_c);
            };
            const auto dpu = [&](const std::string& what, Fp16DpuOp::Kind kind, const Ref& a, const Ref* bb,
                                 const Ref& out, int c, std::vector<float> mul = {}, std::vector<float> add = {},
                                 const Fp16Lut* lut = nullptr) {
                Fp16DpuOp o;
                o.kind = kind;
                o.what = what;
                o.mul = std::move(mul), o.add = std::move(add);
                if (lut) o.lut = *lut;
                const DeviceTensor ta = view(a, c), to = view(out, c);
                DeviceTensor tb;
                if (bb) tb = view(*bb, c);
                emit(lower_fp16_dpu_op(name + " " + what, o, ta, bb ? &tb : nullptr, to, arena_, soc_, core), out.t,
                     out.off, c);
            };
            const Fp16Lut sig = table_of([](double v) { return 1.0 / (1.0 + std::exp(-v)); });
            const Fp16Lut sig_neg = table_of([](double v) { return 1.0 / (1.0 + std::exp(v)); });  // 1 - sigmoid
            const Fp16Lut th = table_of([](double v) { return std::tanh(v); });
            using K = Fp16DpuOp::Kind;
            for (int d = 0; d < D; ++d) {
                const Dir& e = dirs[static_cast<size_t>(d)];
                const bool rev = (D == 2 && d == 1) || (D == 1 && reverse);
                int cur = 0;  // the directions run one after the other: one scratch
                const auto take = [&](int c) {
                    Ref v{scratch, cur};
                    cur += c;
                    return v;
                };
                const Ref GX = take(G * H), GR = take(G * H), GA = take(G * H);
                const Ref T1 = take(H), T2 = take(H), T3 = take(H), T4 = take(H), T5 = take(H), T6 = take(H);
                const Ref HB[2] = {take(H), take(H)}, CB[2] = {take(H), take(H)};
                if (cur > scr.c) throw std::invalid_argument(name + ": internal: scratch too small");
                std::optional<Ref> hp, cp;  // h_(t-1), c_(t-1)
                if (!h0.empty()) hp = Ref{h0, d * H};
                if (!c0.empty()) cp = Ref{c0, d * H};
                for (int k = 0; k < S; ++k) {
                    const int t = rev ? S - 1 - k : k;
                    const bool last = k == S - 1;
                    const std::string st = fmt::format("d{} t{}", d, t);
                    // x_t: the atoms around channels [t I, t I + I) of X.
                    const int a0 = t * I / c2t * c2t, shift = t * I - a0;
                    const int a1 = std::min(S * I, static_cast<int>(align_up(static_cast<uint64_t>(t * I + I),
                                                                             static_cast<uint64_t>(c2t))));
                    const DeviceTensor xt = slice(X, a0, a1 - a0);
                    // Where h_t goes: Y[t, d], else Y_h (last step), else a ping-pong buffer.
                    const Ref hdst = !y.empty() ? Ref{y, (t * D + d) * H}
                                     : last && !yh.empty() ? Ref{yh, d * H}
                                                           : HB[k % 2];
                    conv(st + " x W", xt, e.wx.at(shift), &e.bx, G * H, GX);
                    if (lstm) {
                        // i o f c gates: a = x_t W^T + Wb + Rb (+ h_(t-1) R^T).
                        const Ref pre = hp ? GA : GX;
                        if (hp) {
                            conv(st + " h R", view(*hp, H), e.r_all, nullptr, G * H, GR);
                            dpu(st + " gates add", K::Add, GX, &GR, GA, G * H);
                        }
                        dpu(st + " sigmoid i o f", K::Lut, pre, nullptr, GR, 3 * H, {}, {}, &sig);  // GR is free
                        const Ref gi{GR.t, GR.off}, go{GR.t, GR.off + H}, gf{GR.t, GR.off + 2 * H};
                        dpu(st + " tanh g", K::Lut, Ref{pre.t, pre.off + 3 * H}, nullptr, T1, H, {}, {}, &th);
                        const Ref cdst = last && !yc.empty() ? Ref{yc, d * H} : CB[k % 2];
                        if (cp) {
                            dpu(st + " f c", K::Mul, gf, &*cp, T2, H);
                            dpu(st + " i g", K::Mul, gi, &T1, T3, H);
                            dpu(st + " c = f c + i g", K::Add, T2, &T3, cdst, H);
                        } else {
                            dpu(st + " c = i g", K::Mul, gi, &T1, cdst, H);
                        }
                        dpu(st + " tanh c", K::Lut, cdst, nullptr, T4, H, {}, {}, &th);
                        dpu(st + " h = o tanh c", K::Mul, go, &T4, hdst, H);
                        cp = cdst;
                    } else {
                        // z r h: x_t W^T + Wb + (Rb_z, Rb_r, lbr ? 0 : Rb_h).
                        Ref zr_pre = GX;
                        if (hp) {
                            const DeviceTensor ht = view(*hp, H);
                            if (lbr) conv(st + " h R", ht, e.r_all, &e.rb3, G * H, GR);
                            else conv(st + " h R_zr", ht, e.r_zr, nullptr, 2 * H, GR);
                            dpu(st + " z r add", K::Add, GX, &GR, GA, 2 * H);
                            zr_pre = GA;
                        }
                        // sigmoid(z r) into T1 T2 (adjacent), 1 - z = sigmoid(-a_z) into T3.
                        dpu(st + " sigmoid z r", K::Lut, zr_pre, nullptr, T1, 2 * H, {}, {}, &sig);
                        const Ref gz = T1, gr = T2;
                        dpu(st + " 1 - z", K::Lut, zr_pre, nullptr, T3, H, {}, {}, &sig_neg);
                        const Ref xh{GX.t, GX.off + 2 * H};
                        Ref npre = xh;
                        if (hp && lbr) {  // r (h R_h^T + Rb_h)
                            const Ref rh{GR.t, GR.off + 2 * H};
                            dpu(st + " r (h R_h + Rb_h)", K::Mul, gr, &rh, T4, H);
                            dpu(st + " n add", K::Add, xh, &T4, T6, H);
                            npre = T6;
                        } else if (hp) {  // (r h) R_h^T
                            dpu(st + " r h", K::Mul, gr, &*hp, T4, H);
                            conv(st + " (r h) R_h", view(T4, H), e.r_h, nullptr, H, GR);
                            dpu(st + " n add", K::Add, xh, &GR, T6, H);
                            npre = T6;
                        } else if (lbr) {  // h_0 = 0: r Rb_h
                            dpu(st + " r Rb_h", K::Affine, gr, nullptr, T4, H, e.rb_h, std::vector<float>(e.rb_h.size(), 0.f));
                            dpu(st + " n add", K::Add, xh, &T4, T6, H);
                            npre = T6;
                        }
                        dpu(st + " tanh n", K::Lut, npre, nullptr, T4, H, {}, {}, &th);
                        if (hp) {
                            dpu(st + " (1 - z) n", K::Mul, T3, &T4, T6, H);
                            dpu(st + " z h", K::Mul, gz, &*hp, T5, H);
                            dpu(st + " h = (1 - z) n + z h", K::Add, T6, &T5, hdst, H);
                        } else {
                            dpu(st + " h = (1 - z) n", K::Mul, T3, &T4, hdst, H);
                        }
                    }
                    hp = hdst;
                    if (last && !y.empty() && !yh.empty())
                        dpu(st + " Y_h", K::Affine, hdst, nullptr, Ref{yh, d * H}, H, {1.f});
                }
            }
            return tasks;
        },
        false);
    return true;
}

}  // namespace drv::rknpu::compiler_detail
