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

}  // namespace
