// SPDX-License-Identifier: MIT
// The QAS INT8 trainer as a whole (firmware/train/trainer_qas.c, host build): one SGD step on one sample
// of QUANTIZE -> conv 3x3 (per-channel weights, bias, ReLU folded into the range) -> MaxPool 2x2 ->
// conv 3x3 stride 2 (per-tensor weights, no bias) -> ReLU -> Transpose -> Flatten -> FC (bias).
// Independent expectation: the forward codes from the reference executor (QuantizeLinear, QLinearConv,
// MaxPool, Transpose, QGemm of num::run_op: onnxruntime's float requantization, which the MCU kernels
// reproduce bit for bit), and the backward pass written here in double from the definitions: the
// straight-through estimator of each rounding (no gradient where an output code saturated at its
// activation range), the chain rule on the real values x = s (q - z), and quantization-aware scaling
// of the code gradients (Lin et al. 2022: g(W_q) s_w^-2 = g(W) / s_w; bias g(b) / (s_x s_w)). Every
// master code must move by -lr times that gradient, and the reported loss must be the reference's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "mk/mk_train.h"
#include "mk_trainer.h"
#include "numerics/ops.h"

namespace {

using Ints = std::vector<int64_t>;

uint32_t g_s = 12345;
int rnd(int lo, int hi) {
    g_s = g_s * 1664525u + 1013904223u;
    return lo + int((g_s >> 8) % uint32_t(hi - lo + 1));
}

num::Tensor scalar_f(float v) {
    num::Tensor t(num::DType::F32, {});
    t.data<float>()[0] = v;
    return t;
}
num::Tensor scalar_q(int v) {
    num::Tensor t(num::DType::I8, {});
    t.data<int8_t>()[0] = int8_t(v);
    return t;
}
num::Tensor floats(Ints s, const std::vector<float>& v) {
    num::Tensor t(num::DType::F32, s);
    std::memcpy(t.raw(), v.data(), v.size() * 4);
    return t;
}

float g_loss = 0;
void on_epoch(void*, uint32_t, float loss, uint32_t, uint64_t) { g_loss = loss; }

TEST(TrainerQas, OneStepMatchesTheStraightThroughReference) {
    const int C = 2, H = 6, W = 6, M1 = 3, M2 = 2, K = 4, label = 1;
    const float s0 = 0.02f, s1 = 0.05f, s2 = 0.04f, s3 = 0.1f;
    const int z0 = 3, z1 = -128, z2 = 5, z3 = 0;
    std::vector<float> x(size_t(C * H * W));  // NCHW
    for (auto& v : x) v = float(rnd(-100, 100)) * 0.01f;
    std::vector<int8_t> w1(static_cast<size_t>(M1 * C * 9)), w2(static_cast<size_t>(M2 * M1 * 9)), wf(static_cast<size_t>(K * 8));  // [M][C][3][3], [N][K]
    for (auto& v : w1) v = int8_t(rnd(-127, 127));
    for (auto& v : w2) v = int8_t(rnd(-127, 127));
    for (auto& v : wf) v = int8_t(rnd(-127, 127));
    const std::vector<float> ws1{0.004f, 0.006f, 0.005f}, ws2{0.007f, 0.007f}, wsf{0.02f, 0.03f, 0.025f, 0.02f};
    std::vector<int32_t> b1(static_cast<size_t>(M1)), bf(static_cast<size_t>(K));
    for (auto& v : b1) v = rnd(-300, 300);
    for (auto& v : bf) v = rnd(-200, 200);

    // ---- the blob ----
    std::vector<mk_train_qlayer> L;
    auto layer = [&](uint32_t op, uint32_t in0, std::vector<int32_t> in, std::vector<int32_t> out, float xs, int xz, float ys, int yz) {
        mk_train_qlayer l{};
        l.op = op, l.in0 = in0, l.in_h = in[0], l.in_w = in[1], l.in_c = in[2], l.out_h = out[0], l.out_w = out[1], l.out_c = out[2];
        l.x_scale = xs, l.x_zp = xz, l.y_scale = ys, l.y_zp = yz, l.act_min = -128, l.act_max = 127, l.w_param = ~0u, l.b_param = ~0u;
        return l;
    };
    std::vector<float> params, qscales;
    uint32_t wq = 0, bq = 0;
    L.push_back(layer(MK_TQ_QUANTIZE, 0, {H, W, C}, {H, W, C}, s0, z0, s0, z0));
    mk_train_qlayer c1 = layer(MK_TQ_CONV, 1, {H, W, C}, {H, W, M1}, s0, z0, s1, z1);
    c1.p[0] = 3, c1.p[1] = 3, c1.p[2] = 1, c1.p[3] = 1, c1.p[4] = 1, c1.p[5] = 1;
    c1.w_param = uint32_t(params.size()), c1.wq_off = wq, c1.ws_off = uint32_t(qscales.size());
    for (int m = 0; m < M1; ++m)  // OHWI
        for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx)
                for (int c = 0; c < C; ++c) params.push_back(float(w1[size_t(((m * C + c) * 3 + ky) * 3 + kx)]));
    wq += uint32_t(M1 * 9 * C);
    qscales.insert(qscales.end(), ws1.begin(), ws1.end());
    c1.b_param = uint32_t(params.size()), c1.bq_off = bq;
    for (int m = 0; m < M1; ++m) params.push_back(float(b1[size_t(m)]));
    bq += uint32_t(M1);
    L.push_back(c1);
    mk_train_qlayer mp = layer(MK_TQ_MAXPOOL, 2, {H, W, M1}, {3, 3, M1}, s1, z1, s1, z1);
    mp.p[0] = 2, mp.p[1] = 2;
    L.push_back(mp);
    mk_train_qlayer c2 = layer(MK_TQ_CONV, 3, {3, 3, M1}, {2, 2, M2}, s1, z1, s2, z2);
    c2.p[0] = 3, c2.p[1] = 3, c2.p[2] = 2, c2.p[3] = 2, c2.p[4] = 1, c2.p[5] = 1;
    c2.w_param = uint32_t(params.size()), c2.wq_off = wq, c2.ws_off = uint32_t(qscales.size());
    for (int m = 0; m < M2; ++m)
        for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx)
                for (int c = 0; c < M1; ++c) params.push_back(float(w2[size_t(((m * M1 + c) * 3 + ky) * 3 + kx)]));
    wq += uint32_t(M2 * 9 * M1);
    qscales.insert(qscales.end(), ws2.begin(), ws2.end());
    L.push_back(c2);
    L.push_back(layer(MK_TQ_RELU, 4, {2, 2, M2}, {2, 2, M2}, s2, z2, s2, z2));
    mk_train_qlayer tr = layer(MK_TQ_TRANSPOSE, 5, {2, 2, M2}, {2, 2, M2}, s2, z2, s2, z2);
    tr.p[0] = 0, tr.p[1] = 2, tr.p[2] = 1, tr.p[3] = 3;  // swap the stored H and W
    L.push_back(tr);
    L.push_back(layer(MK_TQ_COPY, 6, {2, 2, M2}, {1, 1, 8}, s2, z2, s2, z2));
    mk_train_qlayer fc = layer(MK_TQ_FC, 7, {1, 1, 8}, {1, 1, K}, s2, z2, s3, z3);
    fc.w_param = uint32_t(params.size()), fc.wq_off = wq, fc.ws_off = uint32_t(qscales.size());
    for (int8_t v : wf) params.push_back(float(v));
    wq += uint32_t(K * 8);
    qscales.insert(qscales.end(), wsf.begin(), wsf.end());
    fc.b_param = uint32_t(params.size()), fc.bq_off = bq;
    for (int32_t v : bf) params.push_back(float(v));
    bq += uint32_t(K);
    L.push_back(fc);
    const float lr = 1.0f;
    mk_train_header h{};
    h.magic = MK_TRAIN_MAGIC_QAS, h.n_layers = uint32_t(L.size()), h.n_samples = 1, h.epochs = 1, h.classes = K, h.lr = lr;
    h.in_floats = uint32_t(C * H * W), h.act_floats = uint32_t(H * W * M1), h.params_floats = uint32_t(params.size());
    h.params_off = uint32_t(sizeof h + L.size() * sizeof(mk_train_qlayer));
    h.qscales_off = h.params_off + h.params_floats * 4, h.qscales_floats = uint32_t(qscales.size()), h.wq_bytes = wq, h.bq_words = bq;
    h.x_off = h.qscales_off + h.qscales_floats * 4, h.y_off = h.x_off + h.in_floats * 4, h.total_bytes = h.y_off + 4;
    std::vector<uint8_t> blob(h.total_bytes);
    std::memcpy(blob.data(), &h, sizeof h);
    std::memcpy(&blob[sizeof h], L.data(), L.size() * sizeof(mk_train_qlayer));
    std::memcpy(&blob[h.params_off], params.data(), params.size() * 4);
    std::memcpy(&blob[h.qscales_off], qscales.data(), qscales.size() * 4);
    for (int c = 0; c < C; ++c)  // NCHW -> NHWC
        for (int y = 0; y < H; ++y)
            for (int xx = 0; xx < W; ++xx) std::memcpy(&blob[h.x_off + 4u * uint32_t((y * W + xx) * C + c)], &x[size_t((c * H + y) * W + xx)], 4);
    std::memcpy(&blob[h.y_off], &label, 4);
    std::vector<uint32_t> arena(mk_tr_sram_bytes(blob.data()) / 4 + 4);
    const mk_tr_hooks hooks{nullptr, on_epoch, nullptr};
    ASSERT_EQ(mk_tr_run(blob.data(), uint32_t(blob.size()), reinterpret_cast<uint8_t*>(arena.data()), uint32_t(arena.size() * 4), &hooks), MK_TR_OK);
    const float* after = reinterpret_cast<const float*>(arena.data());

    // ---- the reference forward (NCHW, num::run_op) ----
    num::Attributes none;
    const num::Tensor X = floats({1, C, H, W}, x), S0 = scalar_f(s0), Z0 = scalar_q(z0), S1 = scalar_f(s1), Z1 = scalar_q(z1);
    const num::Tensor S2 = scalar_f(s2), Z2 = scalar_q(z2), S3 = scalar_f(s3), Z3 = scalar_q(z3), ZW = scalar_q(0);
    const num::Tensor q0 = num::run_op("QuantizeLinear", none, {&X, &S0, &Z0}).at(0);
    num::Tensor W1(num::DType::I8, {M1, C, 3, 3}), W2(num::DType::I8, {M2, M1, 3, 3}), WF(num::DType::I8, {K, 8});
    std::memcpy(W1.raw(), w1.data(), w1.size());
    std::memcpy(W2.raw(), w2.data(), w2.size());
    const num::Tensor WS1 = floats({M1}, ws1), WS2 = scalar_f(ws2[0]), WSF = floats({K}, wsf);
    num::Tensor ZW1(num::DType::I8, {M1}), B1(num::DType::I32, {M1}), BF(num::DType::I32, {K}), ZWF(num::DType::I8, {K});
    std::memset(ZW1.raw(), 0, ZW1.nbytes());
    std::memset(ZWF.raw(), 0, ZWF.nbytes());
    std::memcpy(B1.raw(), b1.data(), b1.size() * 4);
    std::memcpy(BF.raw(), bf.data(), bf.size() * 4);
    num::Attributes ca;
    ca.set("pads", Ints{1, 1, 1, 1});
    const num::Tensor q1 = num::run_op("QLinearConv", ca, {&q0, &S0, &Z0, &W1, &WS1, &ZW1, &S1, &Z1, &B1}).at(0);
    num::Attributes pa;
    pa.set("kernel_shape", Ints{2, 2});
    pa.set("strides", Ints{2, 2});
    const num::Tensor q2 = num::run_op("MaxPool", pa, {&q1}).at(0);
    num::Attributes c2a = ca;
    c2a.set("strides", Ints{2, 2});
    const num::Tensor q3 = num::run_op("QLinearConv", c2a, {&q2, &S1, &Z1, &W2, &WS2, &ZW, &S2, &Z2}).at(0);
    num::Tensor q4 = q3;  // ReLU on codes: clamp at the zero point
    for (size_t i = 0; i < q4.numel(); ++i) q4.data<int8_t>()[i] = int8_t(std::max<int>(q4.data<int8_t>()[i], z2));
    num::Attributes ta;
    ta.set("perm", Ints{0, 1, 3, 2});  // NCHW H <-> W, i.e. the stored NHWC H <-> W
    const num::Tensor q5 = num::run_op("Transpose", ta, {&q4}).at(0);
    // Flatten in the trainer's (NHWC) order: k = (y * 2 + x) * M2 + c
    num::Tensor q6(num::DType::I8, {1, 8});
    for (int c = 0; c < M2; ++c)
        for (int y = 0; y < 2; ++y)
            for (int xx = 0; xx < 2; ++xx) q6.data<int8_t>()[(y * 2 + xx) * M2 + c] = q5.data<int8_t>()[(c * 2 + y) * 2 + xx];
    std::memcpy(WF.raw(), wf.data(), wf.size());
    num::Attributes ga;
    ga.set("transB", int64_t(1));
    const num::Tensor q7 = num::run_op("QGemm", ga, {&q6, &S2, &Z2, &WF, &WSF, &ZWF, &BF, &S3, &Z3}, "com.microsoft").at(0);

    // ---- loss and the straight-through backward in double ----
    std::vector<double> logit(K), p(K), g7(K);
    double mx = -1e30, sum = 0;
    for (int k = 0; k < K; ++k) mx = std::max(mx, logit[size_t(k)] = s3 * (q7.data<int8_t>()[k] - z3));
    for (int k = 0; k < K; ++k) sum += p[size_t(k)] = std::exp(logit[size_t(k)] - mx);
    for (int k = 0; k < K; ++k) g7[size_t(k)] = p[size_t(k)] / sum - (k == label ? 1.0 : 0.0);
    EXPECT_NEAR(g_loss, -std::log(p[size_t(label)] / sum), 1e-5);
    auto sat = [](int8_t q) { return q <= -128 || q >= 127; };
    std::vector<double> grad(params.size(), 0.0);
    // FC: y = W x + b on reals; mask saturated logits
    std::vector<double> g6(8, 0.0);
    for (int j = 0; j < K; ++j) {
        const double g = sat(q7.data<int8_t>()[j]) ? 0.0 : g7[size_t(j)];
        grad[fc.b_param + size_t(j)] = g / (s2 * wsf[size_t(j)]);
        for (int k = 0; k < 8; ++k) {
            grad[fc.w_param + size_t(j * 8 + k)] = g * s2 * (q6.data<int8_t>()[k] - z2) / wsf[size_t(j)];
            g6[size_t(k)] += g * wsf[size_t(j)] * wf[size_t(j * 8 + k)];
        }
    }
    // Flatten / Transpose back to NCHW [M2][2][2] of q4, ReLU on codes
    std::vector<double> g4(size_t(M2 * 4), 0.0);
    for (int c = 0; c < M2; ++c)
        for (int y = 0; y < 2; ++y)
            for (int xx = 0; xx < 2; ++xx) g4[size_t((c * 2 + xx) * 2 + y)] = g6[size_t((y * 2 + xx) * M2 + c)];
    std::vector<double> g3(g4.size());
    for (size_t i = 0; i < g4.size(); ++i) g3[i] = q3.data<int8_t>()[i] > z2 ? g4[i] : 0.0;
    // conv 2 (stride 2, pad 1, per-tensor weights, no bias) over q2 [M1][3][3]
    std::vector<double> g2(size_t(M1 * 9), 0.0);
    for (int m = 0; m < M2; ++m)
        for (int oy = 0; oy < 2; ++oy)
            for (int ox = 0; ox < 2; ++ox) {
                const double g = sat(q3.data<int8_t>()[(m * 2 + oy) * 2 + ox]) ? 0.0 : g3[size_t((m * 2 + oy) * 2 + ox)];
                for (int ky = 0; ky < 3; ++ky)
                    for (int kx = 0; kx < 3; ++kx) {
                        const int iy = oy * 2 + ky - 1, ix = ox * 2 + kx - 1;
                        if (iy < 0 || iy >= 3 || ix < 0 || ix >= 3) continue;
                        for (int c = 0; c < M1; ++c) {
                            const double xr = s1 * (q2.data<int8_t>()[(c * 3 + iy) * 3 + ix] - z1);
                            grad[c2.w_param + size_t(((m * 3 + ky) * 3 + kx) * M1 + c)] += g * xr / ws2[size_t(m)];
                            g2[size_t((c * 3 + iy) * 3 + ix)] += g * ws2[size_t(m)] * w2[size_t(((m * M1 + c) * 3 + ky) * 3 + kx)];
                        }
                    }
            }
    // MaxPool 2x2: to the first maximum of each window
    std::vector<double> g1(size_t(M1 * H * W), 0.0);
    for (int c = 0; c < M1; ++c)
        for (int oy = 0; oy < 3; ++oy)
            for (int ox = 0; ox < 3; ++ox) {
                int best = -1;
                for (int ky = 0; ky < 2; ++ky)
                    for (int kx = 0; kx < 2; ++kx) {
                        const int i = (c * H + oy * 2 + ky) * W + ox * 2 + kx;
                        if (best < 0 || q1.data<int8_t>()[i] > q1.data<int8_t>()[best]) best = i;
                    }
                g1[size_t(best)] += g2[size_t((c * 3 + oy) * 3 + ox)];
            }
    // conv 1 (pad 1, per-channel weights, bias; ReLU folded: codes at -128 are saturated)
    for (int m = 0; m < M1; ++m)
        for (int oy = 0; oy < H; ++oy)
            for (int ox = 0; ox < W; ++ox) {
                const double g = sat(q1.data<int8_t>()[(m * H + oy) * W + ox]) ? 0.0 : g1[size_t((m * H + oy) * W + ox)];
                grad[c1.b_param + size_t(m)] += g / (s0 * ws1[size_t(m)]);
                for (int ky = 0; ky < 3; ++ky)
                    for (int kx = 0; kx < 3; ++kx) {
                        const int iy = oy + ky - 1, ix = ox + kx - 1;
                        if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                        for (int c = 0; c < C; ++c)
                            grad[c1.w_param + size_t(((m * 3 + ky) * 3 + kx) * C + c)] +=
                                g * s0 * (q0.data<int8_t>()[(c * H + iy) * W + ix] - z0) / ws1[size_t(m)];
                    }
            }
    size_t moved = 0;
    double worst = 0;
    for (size_t i = 0; i < params.size(); ++i) {
        const double step = (double(params[i]) - double(after[i])) / lr;
        const double err = std::fabs(step - grad[i]) / std::max(0.05, std::fabs(grad[i]));
        worst = std::max(worst, err);
        moved += grad[i] != 0.0;
        EXPECT_LE(err, 2e-3) << "master code " << i << ": moved " << step << ", reference gradient " << grad[i];
    }
    EXPECT_GT(moved, params.size() / 2);  // the gradient reaches most codes (not all masked)
    std::printf("QAS trainer: %zu master codes, %zu with a gradient, worst relative error %.2e\n", params.size(), moved, worst);
}

}  // namespace

namespace {

// A QAS blob whose layers contradict each other is refused before anything runs (issue 23 style).
TEST(TrainerQas, RejectsInconsistentBlobs) {
    auto make = [](int32_t pool_out) {
        std::vector<mk_train_qlayer> L(3);
        for (auto& l : L) l.x_scale = l.y_scale = 0.1f, l.act_min = -128, l.act_max = 127, l.w_param = l.b_param = ~0u;
        L[0].op = MK_TQ_QUANTIZE, L[0].in0 = 0, L[0].in_h = L[0].out_h = 4, L[0].in_w = L[0].out_w = 4, L[0].in_c = L[0].out_c = 1;
        L[1].op = MK_TQ_MAXPOOL, L[1].in0 = 1, L[1].in_h = L[1].in_w = 4, L[1].in_c = 1, L[1].out_h = L[1].out_w = pool_out, L[1].out_c = 1;
        L[1].p[0] = 2, L[1].p[1] = 2;
        L[2].op = MK_TQ_COPY, L[2].in0 = 2, L[2].in_h = L[2].in_w = pool_out, L[2].in_c = 1, L[2].out_h = L[2].out_w = 1;
        L[2].out_c = pool_out * pool_out;
        mk_train_header h{};
        h.magic = MK_TRAIN_MAGIC_QAS, h.n_layers = 3, h.n_samples = 1, h.epochs = 1, h.classes = uint32_t(pool_out * pool_out), h.lr = 0.1f;
        h.in_floats = 16, h.act_floats = 16, h.params_off = uint32_t(sizeof h + 3 * sizeof(mk_train_qlayer));
        h.qscales_off = h.params_off, h.x_off = h.params_off, h.y_off = h.x_off + 64, h.total_bytes = h.y_off + 4;
        std::vector<uint8_t> b(h.total_bytes, 0);
        std::memcpy(b.data(), &h, sizeof h);
        std::memcpy(&b[sizeof h], L.data(), 3 * sizeof(mk_train_qlayer));
        return b;
    };
    std::vector<uint32_t> arena(4096);
    auto* ar = reinterpret_cast<uint8_t*>(arena.data());
    std::vector<uint8_t> ok = make(2);
    EXPECT_EQ(mk_tr_run(ok.data(), uint32_t(ok.size()), ar, uint32_t(arena.size() * 4), nullptr), MK_TR_OK);
    std::vector<uint8_t> big = make(3);  // a 3x3 pool output of 2x2 windows, stride 2, over 4x4: reads past the input
    EXPECT_EQ(mk_tr_run(big.data(), uint32_t(big.size()), ar, uint32_t(arena.size() * 4), nullptr), MK_TR_BAD_BLOB);
    EXPECT_EQ(mk_tr_run(ok.data(), uint32_t(ok.size()) - 1, ar, uint32_t(arena.size() * 4), nullptr), MK_TR_BAD_BLOB);
    EXPECT_EQ(mk_tr_run(ok.data(), uint32_t(ok.size()), ar, 8, nullptr), MK_TR_NO_MEMORY);
}

}  // namespace
