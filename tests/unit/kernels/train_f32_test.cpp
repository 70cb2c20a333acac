// SPDX-License-Identifier: MIT
// Issue 21 acceptance 4: every FP32 training configuration the ws63 trainer has gets its gradients
// checked against central finite differences of the forward kernels (in double around float
// evaluations): depthwise-equivalent conv (dx, dw; pads 0 and 1, 3x3 and 5x3), FC (dx, dw, db),
// ReLU backward, and the softmax cross-entropy loss (dlogits). L = sum(dy * y) with a fixed random
// dy makes every check a directional derivative of a real scalar loss.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "mk/mk_train.h"

namespace {

std::vector<float> rnd(size_t n, uint32_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    uint32_t s = seed;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = scale * (float(s >> 8) / float(1u << 24) * 2.0f - 1.0f);
    }
    return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * double(b[i]);
    return s;
}

/// d/dp[i] of loss() by central differences, for every i.
void expect_gradient(std::vector<float>& p, const std::function<double()>& loss, const std::vector<float>& analytic, const char* what) {
    ASSERT_EQ(p.size(), analytic.size());
    const float eps = 1e-2f;
    double worst = 0;
    for (size_t i = 0; i < p.size(); ++i) {
        const float keep = p[i];
        p[i] = keep + eps;
        const double up = loss();
        p[i] = keep - eps;
        const double dn = loss();
        p[i] = keep;
        const double fd = (up - dn) / (2.0 * double(eps));
        const double err = std::fabs(fd - double(analytic[i])) / std::max(1.0, std::fabs(fd));
        worst = std::max(worst, err);
        EXPECT_LE(err, 2e-3) << what << "[" << i << "]: analytic " << analytic[i] << ", finite difference " << fd;
    }
    std::printf("%s: %zu gradients, worst relative error %.2e\n", what, p.size(), worst);
}

TEST(TrainGradients, DepthwiseConvFp32) {
    for (auto [kh, kw, pad] : {std::tuple<int, int, int>{3, 3, 1}, {3, 3, 0}, {5, 3, 1}}) {
        const mk_shape4 xs{1, 6, 5, 3};
        const mk_shape4 ys{1, 6 + 2 * pad - kh + 1, 5 + 2 * pad - kw + 1, 3};
        std::vector<float> x = rnd(size_t(6 * 5 * 3), 1), w = rnd(size_t(kh * kw * 3), 2, 0.5f);
        const std::vector<float> dy = rnd(size_t(ys.h * ys.w * 3), 3);
        std::vector<float> y(dy.size()), dx(x.size()), dw(w.size(), 0.0f);
        auto loss = [&] {
            mk_train_dwconv_fwd(x.data(), xs, w.data(), kh, kw, pad, pad, y.data(), ys);
            return dot(dy, y);
        };
        mk_train_dwconv_bwd(x.data(), xs, w.data(), kh, kw, pad, pad, dy.data(), ys, dx.data(), dw.data());
        expect_gradient(w, loss, dw, "dwconv dW");
        expect_gradient(x, loss, dx, "dwconv dX");
    }
}

TEST(TrainGradients, FullyConnectedFp32WithBias) {
    const int k = 12, n = 5;
    std::vector<float> x = rnd(k, 4), w = rnd(size_t(k * n), 5, 0.3f), b = rnd(n, 6);
    const std::vector<float> dy = rnd(n, 7);
    std::vector<float> y(n), dx(k), dw(w.size(), 0.0f), db(n, 0.0f);
    auto loss = [&] {
        mk_train_fc_fwd(x.data(), k, w.data(), b.data(), n, y.data());
        return dot(dy, y);
    };
    mk_train_fc_bwd(x.data(), k, w.data(), n, dy.data(), dx.data(), dw.data(), db.data());
    expect_gradient(w, loss, dw, "fc dW");
    expect_gradient(b, loss, db, "fc dB");
    expect_gradient(x, loss, dx, "fc dX");
}

TEST(TrainGradients, ReluBackward) {
    std::vector<float> x = rnd(40, 8);
    for (auto& v : x) v = std::fabs(v) < 0.05f ? 0.3f : v;  // away from the kink
    const std::vector<float> dy = rnd(40, 9);
    std::vector<float> y(40), dx(40);
    auto loss = [&] {
        for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0 ? x[i] : 0;
        return dot(dy, y);
    };
    loss();
    mk_train_relu_bwd(y.data(), dy.data(), dx.data(), 40);
    expect_gradient(x, loss, dx, "relu dX");
}

TEST(TrainGradients, SoftmaxCrossEntropy) {
    std::vector<float> z = rnd(6, 10, 2.0f), g(6), scratch(6);
    auto loss = [&] { return double(mk_train_softmax_xent(z.data(), 6, 2, scratch.data())); };
    mk_train_softmax_xent(z.data(), 6, 2, g.data());
    expect_gradient(z, loss, g, "softmax-xent dZ");
}

TEST(TrainGradients, SgdStepAndClear) {
    std::vector<float> w{1.0f, -2.0f}, g{0.5f, -0.25f};
    mk_train_sgd(w.data(), g.data(), 2, 0.1f);
    EXPECT_FLOAT_EQ(w[0], 0.95f);
    EXPECT_FLOAT_EQ(w[1], -1.975f);
    EXPECT_EQ(g[0], 0.0f);
    EXPECT_EQ(g[1], 0.0f);
}

// The other FP32 rows (TP-ELT, TP-ABS, TP-CONCAT, TP-SLICE, TP-TRANS, TP-PAD, TP-RED): forward written
// here from the operator definitions, backward from the kernels.
TEST(TrainGradients, ElementwiseNoBroadcast) {
    for (mk_tr_ew op : {MK_TR_EW_ADD, MK_TR_EW_SUB, MK_TR_EW_MUL, MK_TR_EW_DIV}) {
        std::vector<float> a = rnd(20, 11), b = rnd(20, 12);
        for (auto& v : b) v = v >= 0 ? v + 0.5f : v - 0.5f;  // Div: away from 0
        const std::vector<float> dy = rnd(20, 13);
        std::vector<float> da(20), db(20);
        auto loss = [&] {
            double s = 0;
            for (size_t i = 0; i < a.size(); ++i) {
                const float y = op == MK_TR_EW_ADD ? a[i] + b[i] : op == MK_TR_EW_SUB ? a[i] - b[i] : op == MK_TR_EW_MUL ? a[i] * b[i] : a[i] / b[i];
                s += double(dy[i]) * double(y);
            }
            return s;
        };
        mk_train_eltwise_bwd(op, a.data(), b.data(), dy.data(), 20, da.data(), db.data());
        expect_gradient(a, loss, da, "eltwise dA");
        expect_gradient(b, loss, db, "eltwise dB");
    }
}

TEST(TrainGradients, AbsConcatReduce) {
    std::vector<float> x = rnd(24, 14);
    for (auto& v : x) v = std::fabs(v) < 0.05f ? 0.2f : v;
    std::vector<float> dy = rnd(24, 15), dx(24);
    auto abs_loss = [&] {
        double s = 0;
        for (size_t i = 0; i < x.size(); ++i) s += double(dy[i]) * std::fabs(double(x[i]));
        return s;
    };
    mk_train_abs_bwd(x.data(), dy.data(), dx.data(), 24);
    expect_gradient(x, abs_loss, dx, "abs dX");
    // concat of [2][3][4] and [2][1][4] over axis 1
    std::vector<float> a = rnd(24, 16), b = rnd(8, 17), dyc = rnd(32, 18), da(24), db(8);
    auto cat_loss = [&] {
        double s = 0;
        for (int o = 0; o < 2; ++o)
            for (int i = 0; i < 16; ++i) s += double(dyc[o * 16 + i]) * double(i < 12 ? a[o * 12 + i] : b[o * 4 + i - 12]);
        return s;
    };
    mk_train_concat2_bwd(dyc.data(), 2, 3, 1, 4, da.data(), db.data());
    expect_gradient(a, cat_loss, da, "concat dA");
    expect_gradient(b, cat_loss, db, "concat dB");
    for (int mean : {0, 1}) {  // [2][3][4] over axis 1
        std::vector<float> r = rnd(24, 19), dyr = rnd(8, 20), dr(24);
        auto red_loss = [&] {
            double s = 0;
            for (int o = 0; o < 2; ++o)
                for (int i = 0; i < 4; ++i) {
                    double acc = 0;
                    for (int k = 0; k < 3; ++k) acc += r[(o * 3 + k) * 4 + i];
                    s += double(dyr[o * 4 + i]) * (mean ? acc / 3.0 : acc);
                }
            return s;
        };
        mk_train_reduce_bwd(mean, dyr.data(), 2, 3, 4, dr.data());
        expect_gradient(r, red_loss, dr, mean ? "reduce_mean dX" : "reduce_sum dX");
    }
}

TEST(TrainGradients, SlicePadTranspose) {
    const int32_t xd[4] = {1, 5, 6, 3};
    std::vector<float> x = rnd(90, 21);
    {  // slice begin (0,1,0,1) step (1,2,2,1) -> [1][2][3][2]
        const int32_t b[4] = {0, 1, 0, 1}, st[4] = {1, 2, 2, 1}, yd[4] = {1, 2, 3, 2};
        std::vector<float> dy = rnd(12, 22), dx(90);
        auto loss = [&] {
            double s = 0;
            int o = 0;
            for (int i1 = 0; i1 < 2; ++i1)
                for (int i2 = 0; i2 < 3; ++i2)
                    for (int i3 = 0; i3 < 2; ++i3, ++o) s += double(dy[o]) * x[((1 + 2 * i1) * 6 + 2 * i2) * 3 + 1 + i3];
            return s;
        };
        mk_train_slice4_bwd(xd, b, st, yd, dy.data(), dx.data());
        expect_gradient(x, loss, dx, "slice dX");
    }
    {  // constant pad before (0,1,2,0) after (0,0,1,1) -> [1][6][9][4]
        const int32_t bf[4] = {0, 1, 2, 0}, yd[4] = {1, 6, 9, 4};
        std::vector<float> dy = rnd(216, 23), dx(90);
        auto loss = [&] {
            double s = 0;
            for (int i1 = 0; i1 < 5; ++i1)
                for (int i2 = 0; i2 < 6; ++i2)
                    for (int i3 = 0; i3 < 3; ++i3) s += double(dy[((i1 + 1) * 9 + i2 + 2) * 4 + i3]) * x[(i1 * 6 + i2) * 3 + i3];
            return s;
        };
        mk_train_pad4_bwd(xd, bf, yd, dy.data(), dx.data());
        expect_gradient(x, loss, dx, "pad dX");
    }
    {  // transpose perm (0,3,1,2): y[a][c][h][w] = x[a][h][w][c]
        const int32_t perm[4] = {0, 3, 1, 2};
        std::vector<float> dy = rnd(90, 24), dx(90);
        auto loss = [&] {
            double s = 0;
            for (int c = 0; c < 3; ++c)
                for (int h = 0; h < 5; ++h)
                    for (int w = 0; w < 6; ++w) s += double(dy[(c * 5 + h) * 6 + w]) * x[(h * 6 + w) * 3 + c];
            return s;
        };
        mk_train_transpose4_bwd(xd, perm, dy.data(), dx.data());
        expect_gradient(x, loss, dx, "transpose dX");
    }
}

// QAS INT8 rows: the kernels take codes; the loss is a function of the real values the codes stand
// for, so finite differences in the real domain check dx, and dwq * s_w (resp. dbq * s_x s_w) checks
// the QAS-scaled code gradients (dwq = g(W) / s_w).
std::vector<int8_t> codes(size_t n, uint32_t seed) {
    std::vector<int8_t> v(n);
    uint32_t s = seed;
    for (auto& c : v) {
        s = s * 1664525u + 1013904223u;
        c = int8_t(int(s >> 24) - 128);
    }
    return v;
}

TEST(TrainGradients, QasInt8Conv3x3Group1) {
    for (int st : {1, 2}) {  // the seed's QAS conv row limits kernel (3x3) and group (1), not the stride
        const int oh = st == 1 ? 5 : 3;
        const mk_shape4 xs{1, 5, 5, 3}, ys{1, oh, oh, 4};
        const float sx = 0.05f;
        const int32_t zx = 3;
        const std::vector<int8_t> xq = codes(75, 31), wq = codes(4 * 9 * 3, 32);
        const std::vector<float> sw{0.01f, 0.02f, 0.015f, 0.03f};
        std::vector<float> xr(75), wr(wq.size()), br = rnd(4, 33);
        for (size_t i = 0; i < xr.size(); ++i) xr[i] = sx * float(xq[i] - zx);
        for (size_t i = 0; i < wr.size(); ++i) wr[i] = sw[i / 27] * float(wq[i]);
        const std::vector<float> dy = rnd(size_t(oh * oh * 4), 34);
        auto loss = [&] {  // real-valued 3x3 conv, pad 1 (OHWI), bias
            double s = 0;
            for (int oy = 0; oy < oh; ++oy)
                for (int ox = 0; ox < oh; ++ox)
                    for (int oc = 0; oc < 4; ++oc) {
                        double acc = br[size_t(oc)];
                        for (int ky = 0; ky < 3; ++ky)
                            for (int kx = 0; kx < 3; ++kx) {
                                const int iy = oy * st + ky - 1, ix = ox * st + kx - 1;
                                if (iy < 0 || iy >= 5 || ix < 0 || ix >= 5) continue;
                                for (int ic = 0; ic < 3; ++ic) acc += double(xr[size_t((iy * 5 + ix) * 3 + ic)]) * wr[size_t(((oc * 3 + ky) * 3 + kx) * 3 + ic)];
                            }
                        s += double(dy[size_t((oy * oh + ox) * 4 + oc)]) * acc;
                    }
            return s;
        };
        std::vector<float> dx(75), dwq(wq.size(), 0.0f), dbq(4, 0.0f);
        mk_train_qconv_bwd(xq.data(), xs, sx, zx, wq.data(), sw.data(), 3, 3, st, st, 1, 1, dy.data(), ys, dx.data(), dwq.data(), dbq.data());
        std::vector<float> dw(wq.size()), db(4);
        for (size_t i = 0; i < dw.size(); ++i) dw[i] = dwq[i] * sw[i / 27];
        for (size_t c = 0; c < 4; ++c) db[c] = dbq[c] * sx * sw[c];
        expect_gradient(xr, loss, dx, "qas conv dX (real)");
        expect_gradient(wr, loss, dw, "qas conv dW (= dWq * s_w)");
        expect_gradient(br, loss, db, "qas conv dB (= dBq * s_x s_w)");
    }
}

// TP-DIV (FP32): Div is broadcast-compatible; the broadcast backward sums over the broadcast axes
// (every op of the kernel, Add/Sub/Mul as well).
TEST(TrainGradients, BroadcastBinary) {
    // a [1, 3, 4, 5] op b [1, 1, 4, 1] (NHWC strides), and b [5] against a [1, 2, 2, 5]
    struct Case {
        mk_shape4 out;
        int32_t sa[4], sb[4];
        size_t na, nb;
    };
    for (const Case& c : {Case{{1, 3, 4, 5}, {60, 20, 5, 1}, {0, 0, 1, 0}, 60, 4}, Case{{1, 2, 2, 5}, {20, 10, 5, 1}, {0, 0, 0, 1}, 20, 5}})
        for (int op = MK_TR_EW_ADD; op <= MK_TR_EW_DIV; ++op) {
            mk_bcast4 bc;
            bc.out = c.out;
            for (int k = 0; k < 4; ++k) bc.a_stride[k] = c.sa[k], bc.b_stride[k] = c.sb[k];
            std::vector<float> a = rnd(c.na, 51), b = rnd(c.nb, 52);
            for (auto& v : b) v = v < 0 ? v - 0.5f : v + 0.5f;  // away from 0 (Div)
            const size_t no = size_t(mk_shape4_numel(c.out));
            const std::vector<float> dy = rnd(no, 53);
            std::vector<float> y(no), da(c.na, 0.0f), db(c.nb, 0.0f);
            auto loss = [&] {
                mk_train_binary_bcast_fwd(mk_tr_ew(op), a.data(), b.data(), &bc, y.data());
                return dot(dy, y);
            };
            mk_train_binary_bcast_bwd(mk_tr_ew(op), a.data(), b.data(), dy.data(), &bc, da.data(), db.data());
            expect_gradient(a, loss, da, "broadcast binary dA");
            expect_gradient(b, loss, db, "broadcast binary dB");
        }
}

TEST(TrainGradients, QasInt8FullyConnectedAndRelu) {
    const int k = 10, n = 3;
    const float sx = 0.04f;
    const int32_t zx = -7;
    const std::vector<int8_t> xq = codes(size_t(k), 41), wq = codes(size_t(k * n), 42);
    const std::vector<float> sw{0.02f, 0.01f, 0.03f};
    std::vector<float> xr(static_cast<size_t>(k)), wr(wq.size()), br = rnd(size_t(n), 43);
    for (int i = 0; i < k; ++i) xr[size_t(i)] = sx * float(xq[size_t(i)] - zx);
    for (size_t i = 0; i < wr.size(); ++i) wr[i] = sw[i / size_t(k)] * float(wq[i]);
    const std::vector<float> dy = rnd(size_t(n), 44);
    auto loss = [&] {
        double s = 0;
        for (int j = 0; j < n; ++j) {
            double acc = br[size_t(j)];
            for (int i = 0; i < k; ++i) acc += double(xr[size_t(i)]) * wr[size_t(j * k + i)];
            s += double(dy[size_t(j)]) * acc;
        }
        return s;
    };
    std::vector<float> dx(static_cast<size_t>(k)), dwq(wq.size(), 0.0f), dbq(static_cast<size_t>(n), 0.0f);
    mk_train_qfc_bwd(xq.data(), k, sx, zx, wq.data(), sw.data(), n, dy.data(), dx.data(), dwq.data(), dbq.data());
    std::vector<float> dw(wq.size()), db(static_cast<size_t>(n));
    for (size_t i = 0; i < dw.size(); ++i) dw[i] = dwq[i] * sw[i / size_t(k)];
    for (size_t j = 0; j < size_t(n); ++j) db[j] = dbq[j] * sx * sw[j];
    expect_gradient(xr, loss, dx, "qas fc dX (real)");
    expect_gradient(wr, loss, dw, "qas fc dW (= dWq * s_w)");
    expect_gradient(br, loss, db, "qas fc dB");
    // ReLU on codes: relu(s (q - z)) has gradient dy where q > z
    std::vector<float> rr(static_cast<size_t>(k)), dyr = rnd(size_t(k), 45), dr(static_cast<size_t>(k));
    for (int i = 0; i < k; ++i) rr[size_t(i)] = xr[size_t(i)] == 0.0f ? 0.1f : xr[size_t(i)];
    std::vector<int8_t> rq(static_cast<size_t>(k));
    for (int i = 0; i < k; ++i) rq[size_t(i)] = int8_t(std::lround(rr[size_t(i)] / sx) + zx);
    auto relu_loss = [&] {
        double s = 0;
        for (int i = 0; i < k; ++i) s += double(dyr[size_t(i)]) * std::max(0.0, double(rr[size_t(i)]));
        return s;
    };
    mk_train_qrelu_bwd(rq.data(), zx, dyr.data(), dr.data(), k);
    expect_gradient(rr, relu_loss, dr, "qas relu dX");
}

TEST(TrainGradients, QasInt8MaxPool) {
    const mk_shape4 xs{1, 4, 4, 2}, ys{1, 2, 2, 2};
    std::vector<int8_t> xq(32);
    for (size_t i = 0; i < 32; ++i) xq[i] = int8_t(int(i * 37 % 61) - 30);  // distinct within each window
    const float sx = 0.05f;
    std::vector<float> xr(32);
    for (size_t i = 0; i < 32; ++i) xr[i] = sx * float(xq[i]);
    const std::vector<float> dy = rnd(8, 46);
    auto loss = [&] {
        double s = 0;
        for (int oy = 0; oy < 2; ++oy)
            for (int ox = 0; ox < 2; ++ox)
                for (int c = 0; c < 2; ++c) {
                    double m = -1e30;
                    for (int ky = 0; ky < 2; ++ky)
                        for (int kx = 0; kx < 2; ++kx) m = std::max(m, double(xr[size_t(((oy * 2 + ky) * 4 + ox * 2 + kx) * 2 + c)]));
                    s += double(dy[size_t((oy * 2 + ox) * 2 + c)]) * m;
                }
        return s;
    };
    std::vector<float> dx(32);
    mk_train_qmaxpool_bwd(xq.data(), xs, 2, 2, dy.data(), ys, dx.data());
    expect_gradient(xr, loss, dx, "qas maxpool dX");
}

}  // namespace
