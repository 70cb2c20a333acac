// SPDX-License-Identifier: MIT
// Recurrent operators with ONNX semantics (opset 7-22): RNN, GRU and LSTM, float32. Every attribute
// of the ONNX definition: direction forward/reverse/bidirectional, layout 0 (time-major) and 1
// (batch-major), sequence_lens (steps past a sequence's length give Y = 0 and leave Y_h at the last
// valid step; reverse runs from its last valid step), initial_h / initial_c, LSTM peepholes P and
// input_forget, clip (applied to every activation's input), activations with activation_alpha /
// activation_beta consumed in order by the functions that take them (onnxruntime's convention; a
// bidirectional node given one direction's list uses it for both). Gate order as ONNX: LSTM i, o, f, c;
// GRU z, r, h. Products are accumulated in double, gates stored in float.
#include <cmath>

#include "op_common.h"

namespace num::ops {
namespace {

struct Act {
    std::string name;
    float alpha = 0.0f, beta = 0.0f;
    float operator()(float x) const {
        if (name == "Sigmoid") return 1.0f / (1.0f + std::exp(-x));
        if (name == "Tanh") return std::tanh(x);
        if (name == "Relu") return std::max(0.0f, x);
        if (name == "Affine") return alpha * x + beta;
        if (name == "LeakyRelu") return x >= 0.0f ? x : alpha * x;
        if (name == "ThresholdedRelu") return x > alpha ? x : 0.0f;
        if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
        if (name == "HardSigmoid") return std::max(0.0f, std::min(1.0f, alpha * x + beta));
        if (name == "Elu") return x >= 0.0f ? x : alpha * (std::exp(x) - 1.0f);
        if (name == "Softsign") return x / (1.0f + std::fabs(x));
        return std::log1p(std::exp(x));  // Softplus (names are checked in parse_acts)
    }
};

// ONNX's default alpha/beta of each activation, and how many of each it consumes.
struct ActSpec {
    const char* name;
    int n_alpha, n_beta;
    float alpha, beta;
};
const ActSpec kActs[] = {{"Sigmoid", 0, 0, 0, 0},      {"Tanh", 0, 0, 0, 0},          {"Relu", 0, 0, 0, 0},
                         {"Affine", 1, 1, 1.0f, 0.0f}, {"LeakyRelu", 1, 0, 0.01f, 0}, {"ThresholdedRelu", 1, 0, 1.0f, 0},
                         {"ScaledTanh", 1, 1, 1, 1},   {"HardSigmoid", 1, 1, 0.2f, 0.5f}, {"Elu", 1, 0, 1.0f, 0},
                         {"Softsign", 0, 0, 0, 0},     {"Softplus", 0, 0, 0, 0}};

std::string canonical(const std::string& s, const std::string& op) {
    auto low = [](std::string v) {
        for (auto& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return v;
    };
    for (const auto& a : kActs)
        if (low(a.name) == low(s)) return a.name;
    fail(op, "unsupported activation '" + s + "'");
}

/// Activations per direction: `per_dir` functions for each of `dirs` directions.
std::vector<Act> parse_acts(const Attributes& at, const std::string& op, const std::vector<std::string>& dflt, int dirs) {
    std::vector<std::string> names;
    if (const AttrValue* v = at.find("activations")) {
        const auto* p = std::get_if<std::vector<std::string>>(v);
        if (!p) fail(op, "attribute 'activations' is not a string list");
        names = *p;
    } else {
        for (int d = 0; d < dirs; ++d) names.insert(names.end(), dflt.begin(), dflt.end());
    }
    const size_t per = dflt.size();
    if (dirs == 2 && names.size() == per) names.insert(names.end(), names.begin(), names.end());
    if (names.size() != per * size_t(dirs))
        fail(op, "activations has " + std::to_string(names.size()) + " entries, expected " + std::to_string(per * size_t(dirs)));
    const std::vector<float> alphas = at.get_floats("activation_alpha", {}), betas = at.get_floats("activation_beta", {});
    size_t ai = 0, bi = 0;
    std::vector<Act> out;
    for (const auto& nm : names) {
        Act a;
        a.name = canonical(nm, op);
        for (const auto& s : kActs)
            if (a.name == s.name) {
                a.alpha = s.alpha, a.beta = s.beta;
                if (s.n_alpha && ai < alphas.size()) a.alpha = alphas[ai++];
                if (s.n_beta && bi < betas.size()) a.beta = betas[bi++];
            }
        out.push_back(a);
    }
    return out;
}

/// Shapes and options common to the three operators.
struct Rnn {
    std::string op;
    int dirs = 1, layout = 0;
    bool reverse_only = false;
    int64_t T = 0, B = 0, I = 0, H = 0;
    float clip = 0.0f;  // <= 0: none
    std::vector<int64_t> lens;
    const float *x = nullptr, *w = nullptr, *r = nullptr, *b = nullptr, *h0 = nullptr, *c0 = nullptr, *p = nullptr;

    float xat(int64_t t, int64_t bb, int64_t i) const { return layout == 0 ? x[(t * B + bb) * I + i] : x[(bb * T + t) * I + i]; }
    // Y: layout 0 [T, D, B, H]; layout 1 [B, T, D, H]. States: layout 0 [D, B, H]; layout 1 [B, D, H].
    size_t yat(int64_t t, int d, int64_t bb, int64_t j) const {
        return size_t(layout == 0 ? ((t * dirs + d) * B + bb) * H + j : ((bb * T + t) * dirs + d) * H + j);
    }
    size_t sat(int d, int64_t bb, int64_t j) const { return size_t(layout == 0 ? (d * B + bb) * H + j : (bb * dirs + d) * H + j); }
    float clipped(float v) const { return clip > 0.0f ? std::max(-clip, std::min(clip, v)) : v; }
};

Rnn setup(const std::string& op, const Attributes& at, const Inputs& in, int gates) {
    Rnn s;
    s.op = op;
    const std::string dir = at.get_string("direction", "forward");
    if (dir == "bidirectional") s.dirs = 2;
    else if (dir == "reverse") s.reverse_only = true;
    else if (dir != "forward") fail(op, "direction must be forward, reverse or bidirectional, got '" + dir + "'");
    s.layout = static_cast<int>(at.get_int("layout", 0));
    if (s.layout != 0 && s.layout != 1) fail(op, "layout must be 0 or 1");
    s.clip = at.has("clip") ? at.get_float("clip", 0.0f) : 0.0f;
    const Tensor& X = need(in, 0, op);
    const Tensor& W = need(in, 1, op);
    const Tensor& R = need(in, 2, op);
    for (const Tensor* t : {&X, &W, &R}) expect_dtype(*t, DType::F32, op, "X, W and R");
    if (X.rank() != 3 || W.rank() != 3 || R.rank() != 3) fail(op, "X, W and R must be rank 3");
    s.T = s.layout == 0 ? X.dim(0) : X.dim(1);
    s.B = s.layout == 0 ? X.dim(1) : X.dim(0);
    s.I = X.dim(2);
    s.H = at.get_int("hidden_size", R.dim(2));
    if (s.H <= 0 || W.dim(0) != s.dirs || W.dim(1) != gates * s.H || W.dim(2) != s.I)
        fail(op, "W must be [" + std::to_string(s.dirs) + ", " + std::to_string(gates * s.H) + ", " + std::to_string(s.I) + "], got " + W.shape_str());
    if (R.dim(0) != s.dirs || R.dim(1) != gates * s.H || R.dim(2) != s.H)
        fail(op, "R must be [" + std::to_string(s.dirs) + ", " + std::to_string(gates * s.H) + ", " + std::to_string(s.H) + "], got " + R.shape_str());
    s.x = X.data<float>(), s.w = W.data<float>(), s.r = R.data<float>();
    if (const Tensor* B = opt(in, 3)) {
        expect_dtype(*B, DType::F32, op, "B");
        if (B->rank() != 2 || B->dim(0) != s.dirs || B->dim(1) != 2 * gates * s.H) fail(op, "B must be [D, " + std::to_string(2 * gates * s.H) + "], got " + B->shape_str());
        s.b = B->data<float>();
    }
    s.lens.assign(size_t(s.B), s.T);
    if (const Tensor* L = opt(in, 4)) {
        const std::vector<int64_t> v = int_values(*L, op);
        if (int64_t(v.size()) != s.B) fail(op, "sequence_lens must have batch_size entries");
        for (size_t i = 0; i < v.size(); ++i) {
            if (v[i] < 0 || v[i] > s.T) fail(op, "sequence_lens[" + std::to_string(i) + "] = " + std::to_string(v[i]) + " outside [0, seq_length]");
            s.lens[i] = v[i];
        }
    }
    const std::vector<int64_t> state = s.layout == 0 ? std::vector<int64_t>{s.dirs, s.B, s.H} : std::vector<int64_t>{s.B, s.dirs, s.H};
    auto state_in = [&](size_t i, const char* what) -> const float* {
        const Tensor* t = opt(in, i);
        if (!t) return nullptr;
        expect_dtype(*t, DType::F32, op, what);
        if (t->shape() != state) fail(op, std::string(what) + " must be " + Tensor(DType::F32, state).shape_str() + ", got " + t->shape_str());
        return t->data<float>();
    };
    s.h0 = state_in(5, "initial_h");
    if (gates == 4) {
        s.c0 = state_in(6, "initial_c");
        if (const Tensor* P = opt(in, 7)) {
            expect_dtype(*P, DType::F32, op, "P");
            if (P->rank() != 2 || P->dim(0) != s.dirs || P->dim(1) != 3 * s.H) fail(op, "P must be [D, 3H], got " + P->shape_str());
            s.p = P->data<float>();
        }
    }
    return s;
}

/// acc[g] = sum_i W[g][i] x_t[i] + Wb[g] (double), for the gates g of one direction.
void input_part(const Rnn& s, int d, int gates, int64_t t, int64_t bb, std::vector<double>& acc) {
    const int64_t G = gates * s.H;
    const float* w = s.w + d * G * s.I;
    for (int64_t g = 0; g < G; ++g) {
        double a = s.b ? double(s.b[d * 2 * G + g]) : 0.0;
        for (int64_t i = 0; i < s.I; ++i) a += double(w[g * s.I + i]) * double(s.xat(t, bb, i));
        acc[size_t(g)] = a;
    }
}

/// sum_j R[g][j] v[j] + Rb[g] for gate row g.
double recur(const Rnn& s, int d, int gates, int64_t g, const float* v) {
    const int64_t G = gates * s.H;
    const float* r = s.r + (d * G + g) * s.H;
    double a = s.b ? double(s.b[d * 2 * G + G + g]) : 0.0;
    for (int64_t j = 0; j < s.H; ++j) a += double(r[j]) * double(v[j]);
    return a;
}

Outputs make_outputs(const Rnn& s, int n) {
    Outputs o;
    o.emplace_back(DType::F32, s.layout == 0 ? std::vector<int64_t>{s.T, s.dirs, s.B, s.H} : std::vector<int64_t>{s.B, s.T, s.dirs, s.H});
    for (int i = 1; i < n; ++i)
        o.emplace_back(DType::F32, s.layout == 0 ? std::vector<int64_t>{s.dirs, s.B, s.H} : std::vector<int64_t>{s.B, s.dirs, s.H});
    for (auto& t : o) std::fill(t.data<float>(), t.data<float>() + t.numel(), 0.0f);
    return o;
}

/// Runs `step(t, h_prev, h_new, c...)` over one direction and batch entry in time order.
template <typename Step>
void sweep(const Rnn& s, int d, int64_t bb, Outputs& o, std::vector<float>& h, Step step) {
    const bool rev = s.reverse_only || d == 1;
    const int64_t len = s.lens[size_t(bb)];
    if (len == 0) std::fill(h.begin(), h.end(), 0.0f);  // no step ran: Y_h (and Y_c) are 0, as onnxruntime writes them
    for (int64_t k = 0; k < len; ++k) {
        const int64_t t = rev ? len - 1 - k : k;
        step(t);
        for (int64_t j = 0; j < s.H; ++j) o[0].data<float>()[s.yat(t, d, bb, j)] = h[size_t(j)];
    }
    if (o.size() > 1)
        for (int64_t j = 0; j < s.H; ++j) o[1].data<float>()[s.sat(d, bb, j)] = h[size_t(j)];
}

Outputs rnn(const Attributes& at, const Inputs& in) {
    Rnn s = setup("RNN", at, in, 1);
    const std::vector<Act> acts = parse_acts(at, "RNN", {"Tanh"}, s.dirs);
    Outputs o = make_outputs(s, 2);
    std::vector<double> acc(size_t(s.H));
    for (int d = 0; d < s.dirs; ++d)
        for (int64_t bb = 0; bb < s.B; ++bb) {
            std::vector<float> h(size_t(s.H), 0.0f), prev;
            if (s.h0)
                for (int64_t j = 0; j < s.H; ++j) h[size_t(j)] = s.h0[s.sat(d, bb, j)];
            sweep(s, d, bb, o, h, [&](int64_t t) {
                input_part(s, d, 1, t, bb, acc);
                prev = h;
                for (int64_t j = 0; j < s.H; ++j)
                    h[size_t(j)] = acts[size_t(d)](s.clipped(float(acc[size_t(j)] + recur(s, d, 1, j, prev.data()))));
            });
        }
    return o;
}

Outputs gru(const Attributes& at, const Inputs& in) {
    Rnn s = setup("GRU", at, in, 3);
    const std::vector<Act> acts = parse_acts(at, "GRU", {"Sigmoid", "Tanh"}, s.dirs);
    const bool lbr = at.get_int("linear_before_reset", 0) != 0;
    Outputs o = make_outputs(s, 2);
    const int64_t H = s.H;
    std::vector<double> acc(static_cast<size_t>(3 * H));
    for (int d = 0; d < s.dirs; ++d)
        for (int64_t bb = 0; bb < s.B; ++bb) {
            const Act &f = acts[size_t(2 * d)], &g = acts[size_t(2 * d + 1)];
            std::vector<float> h(static_cast<size_t>(H), 0.0f), prev, z(static_cast<size_t>(H)), rh(static_cast<size_t>(H));
            if (s.h0)
                for (int64_t j = 0; j < H; ++j) h[size_t(j)] = s.h0[s.sat(d, bb, j)];
            sweep(s, d, bb, o, h, [&](int64_t t) {
                input_part(s, d, 3, t, bb, acc);
                prev = h;
                std::vector<float> r(static_cast<size_t>(H));
                for (int64_t j = 0; j < H; ++j) {
                    z[size_t(j)] = f(s.clipped(float(acc[size_t(j)] + recur(s, d, 3, j, prev.data()))));
                    r[size_t(j)] = f(s.clipped(float(acc[size_t(H + j)] + recur(s, d, 3, H + j, prev.data()))));
                    rh[size_t(j)] = r[size_t(j)] * prev[size_t(j)];
                }
                for (int64_t j = 0; j < H; ++j) {
                    // linear_before_reset: r (.) (R_h h + Rb_h); else R_h (r (.) h) + Rb_h.
                    const double hr = lbr ? double(r[size_t(j)]) * recur(s, d, 3, 2 * H + j, prev.data())
                                          : recur(s, d, 3, 2 * H + j, rh.data());
                    const float hh = g(s.clipped(float(acc[size_t(2 * H + j)] + hr)));
                    h[size_t(j)] = (1.0f - z[size_t(j)]) * hh + z[size_t(j)] * prev[size_t(j)];
                }
            });
        }
    return o;
}

Outputs lstm(const Attributes& at, const Inputs& in) {
    Rnn s = setup("LSTM", at, in, 4);
    const std::vector<Act> acts = parse_acts(at, "LSTM", {"Sigmoid", "Tanh", "Tanh"}, s.dirs);
    const bool coupled = at.get_int("input_forget", 0) != 0;
    Outputs o = make_outputs(s, 3);
    const int64_t H = s.H;
    std::vector<double> acc(static_cast<size_t>(4 * H));
    for (int d = 0; d < s.dirs; ++d)
        for (int64_t bb = 0; bb < s.B; ++bb) {
            const Act &f = acts[size_t(3 * d)], &g = acts[size_t(3 * d + 1)], &hf = acts[size_t(3 * d + 2)];
            const float* P = s.p ? s.p + d * 3 * H : nullptr;  // Pi, Po, Pf
            std::vector<float> h(static_cast<size_t>(H), 0.0f), c(static_cast<size_t>(H), 0.0f), prev;
            if (s.h0)
                for (int64_t j = 0; j < H; ++j) h[size_t(j)] = s.h0[s.sat(d, bb, j)];
            if (s.c0)
                for (int64_t j = 0; j < H; ++j) c[size_t(j)] = s.c0[s.sat(d, bb, j)];
            sweep(s, d, bb, o, h, [&](int64_t t) {
                input_part(s, d, 4, t, bb, acc);
                prev = h;
                for (int64_t j = 0; j < H; ++j) {
                    const size_t J = size_t(j);
                    auto pre = [&](int64_t gate) { return acc[size_t(gate * H + j)] + recur(s, d, 4, gate * H + j, prev.data()); };
                    const float ig = f(s.clipped(float(pre(0) + (P ? double(P[j]) * c[J] : 0.0))));
                    const float fg = coupled ? 1.0f - ig : f(s.clipped(float(pre(2) + (P ? double(P[2 * H + j]) * c[J] : 0.0))));
                    const float cg = g(s.clipped(float(pre(3))));
                    c[J] = fg * c[J] + ig * cg;
                    const float og = f(s.clipped(float(pre(1) + (P ? double(P[H + j]) * c[J] : 0.0))));
                    h[J] = og * hf(c[J]);
                }
            });
            if (s.lens[size_t(bb)] > 0)
                for (int64_t j = 0; j < H; ++j) o[2].data<float>()[s.sat(d, bb, j)] = c[size_t(j)];
        }
    return o;
}

}  // namespace

void register_rnn(OpTable& t) {
    t[":RNN"] = rnn;
    t[":GRU"] = gru;
    t[":LSTM"] = lstm;
}

}  // namespace num::ops
