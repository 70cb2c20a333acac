// SPDX-License-Identifier: MIT
// The ws63 trainer as a whole (firmware/train/trainer.c, host build): one SGD step on one sample of a
// DAG (depthwise conv -> ReLU -> Add(input) -> Pad -> conv -> Concat(input) -> ReduceMean(H, W) and
// Abs/Mul branches -> FC) moves every parameter by -lr * dL/dp; the loss the trainer reports,
// evaluated at p +- eps (lr = 0), gives dL/dp by central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "mk/mk_train.h"
#include "mk_trainer.h"

namespace {

struct Net {
    std::vector<mk_train_layer> layers;
    std::vector<float> params, x;
    int32_t label = 2;
    uint32_t classes = 3, act = 0;
};

Net make_net() {
    Net n;
    uint32_t s = 77;
    auto r = [&] {
        s = s * 1664525u + 1013904223u;
        return float(s >> 8) / float(1u << 24) - 0.5f;
    };
    const int32_t H = 4, W = 4, C = 2;
    n.x.resize(H * W * C);
    for (auto& v : n.x) v = 2.0f * r();
    auto L = [&](uint32_t op, uint32_t in0, uint32_t in1, int32_t ih, int32_t iw, int32_t ic, int32_t oh, int32_t ow, int32_t oc) {
        mk_train_layer l{};
        l.op = op, l.in0 = in0, l.in1 = in1, l.in_h = ih, l.in_w = iw, l.in_c = ic, l.out_h = oh, l.out_w = ow, l.out_c = oc;
        l.w_param = ~0u, l.b_param = ~0u;
        n.act = std::max({n.act, uint32_t(ih * iw * ic), uint32_t(oh * ow * oc)});
        return l;
    };
    mk_train_layer l = L(MK_TR_DWCONV, 0, ~0u, H, W, C, H, W, C);  // t1
    l.p[0] = 3, l.p[1] = 3, l.p[2] = 1, l.p[3] = 1, l.w_param = 0;
    for (int i = 0; i < 18; ++i) n.params.push_back(r());
    n.layers.push_back(l);
    n.layers.push_back(L(MK_TR_RELU, 1, ~0u, H, W, C, H, W, C));  // t2
    l = L(MK_TR_EW, 2, 0, H, W, C, H, W, C);                       // t3 = t2 + x
    l.p[0] = MK_TR_EW_ADD;
    n.layers.push_back(l);
    l = L(MK_TR_PAD, 3, ~0u, H, W, C, H + 2, W + 2, C);            // t4
    l.p[0] = 1, l.p[1] = 1;
    n.layers.push_back(l);
    l = L(MK_TR_DWCONV, 4, ~0u, H + 2, W + 2, C, H, W, C);        // t5 (valid 3x3)
    l.p[0] = 3, l.p[1] = 3, l.w_param = uint32_t(n.params.size());
    for (int i = 0; i < 18; ++i) n.params.push_back(r());
    n.layers.push_back(l);
    l = L(MK_TR_CONCAT, 5, 0, H, W, C, H, W, 2 * C);               // t6 = concat(t5, x) over channels
    l.p[0] = H * W, l.p[1] = C, l.p[2] = C, l.p[3] = 1;
    n.layers.push_back(l);
    n.layers.push_back(L(MK_TR_ABS, 6, ~0u, H, W, 2 * C, H, W, 2 * C));  // t7
    l = L(MK_TR_EW, 7, 6, H, W, 2 * C, H, W, 2 * C);                       // t8 = t7 * t6
    l.p[0] = MK_TR_EW_MUL;
    n.layers.push_back(l);
    l = L(MK_TR_REDUCE, 8, ~0u, H, W, 2 * C, 1, 1, 2 * C);         // t9 mean over H, W
    l.p[0] = 1, l.p[1] = 1, l.p[2] = H * W, l.p[3] = 2 * C;
    n.layers.push_back(l);
    l = L(MK_TR_FC, 9, ~0u, 1, 1, 2 * C, 1, 1, 3);                 // t10 logits
    l.w_param = uint32_t(n.params.size());
    for (int i = 0; i < 12; ++i) n.params.push_back(r());
    l.b_param = uint32_t(n.params.size());
    for (int i = 0; i < 3; ++i) n.params.push_back(r());
    n.layers.push_back(l);
    return n;
}

std::vector<uint8_t> blob_of(const Net& n, const std::vector<float>& params, float lr) {
    mk_train_header h{};
    h.magic = MK_TRAIN_MAGIC;
    h.n_layers = uint32_t(n.layers.size());
    h.n_samples = 1;
    h.epochs = 1;
    h.classes = n.classes;
    h.lr = lr;
    h.in_floats = uint32_t(n.x.size());
    h.act_floats = n.act;
    h.params_floats = uint32_t(params.size());
    h.params_off = uint32_t(sizeof h + n.layers.size() * sizeof(mk_train_layer));
    h.x_off = h.params_off + h.params_floats * 4;
    h.y_off = h.x_off + h.in_floats * 4;
    h.total_bytes = h.y_off + 4;
    std::vector<uint8_t> b(h.total_bytes);
    std::memcpy(b.data(), &h, sizeof h);
    std::memcpy(&b[sizeof h], n.layers.data(), n.layers.size() * sizeof(mk_train_layer));
    std::memcpy(&b[h.params_off], params.data(), params.size() * 4);
    std::memcpy(&b[h.x_off], n.x.data(), n.x.size() * 4);
    std::memcpy(&b[h.y_off], &n.label, 4);
    return b;
}

float g_loss = 0;
void on_epoch(void*, uint32_t, float loss, uint32_t, uint64_t) { g_loss = loss; }

/// Runs one step; returns the loss at `params` and the parameters after the step.
float step(const Net& n, const std::vector<float>& params, float lr, std::vector<float>* after = nullptr) {
    const std::vector<uint8_t> b = blob_of(n, params, lr);
    std::vector<uint32_t> arena(mk_tr_sram_bytes(b.data()) / 4 + 4);
    const mk_tr_hooks hooks{nullptr, on_epoch, nullptr};
    EXPECT_EQ(mk_tr_run(b.data(), uint32_t(b.size()), reinterpret_cast<uint8_t*>(arena.data()), uint32_t(arena.size() * 4), &hooks), MK_TR_OK);
    if (after) after->assign(reinterpret_cast<const float*>(arena.data()), reinterpret_cast<const float*>(arena.data()) + params.size());
    return g_loss;
}

TEST(TrainerGradients, DagStepMatchesFiniteDifferences) {
    const Net n = make_net();
    const float lr = 1e-3f;
    std::vector<float> after;
    step(n, n.params, lr, &after);
    double worst = 0;
    for (size_t i = 0; i < n.params.size(); ++i) {
        const double analytic = (double(n.params[i]) - double(after[i])) / double(lr);
        std::vector<float> p = n.params;
        const float eps = 1e-2f;
        p[i] = n.params[i] + eps;
        const double up = step(n, p, 0.0f);
        p[i] = n.params[i] - eps;
        const double dn = step(n, p, 0.0f);
        const double fd = (up - dn) / (2.0 * double(eps));
        const double err = std::fabs(fd - analytic) / std::max(1.0, std::fabs(fd));
        worst = std::max(worst, err);
        EXPECT_LE(err, 5e-3) << "parameter " << i << ": step " << analytic << ", finite difference " << fd;
    }
    std::printf("trainer DAG: %zu parameters, worst relative error %.2e\n", n.params.size(), worst);
}

// The other FP32 rows: depthwise conv -> Slice (positive steps) -> Transpose -> Div by a broadcast
// tensor (TP-DIV: mean over H, W of |x|) -> ReduceSum over the channels -> FC.
Net make_net2() {
    Net n;
    uint32_t s = 91;
    auto r = [&] {
        s = s * 1664525u + 1013904223u;
        return float(s >> 8) / float(1u << 24) - 0.5f;
    };
    const int32_t H = 4, W = 4, C = 2;
    n.x.resize(H * W * C);
    for (auto& v : n.x) v = 2.0f * r();
    auto L = [&](uint32_t op, uint32_t in0, uint32_t in1, int32_t ih, int32_t iw, int32_t ic, int32_t oh, int32_t ow, int32_t oc) {
        mk_train_layer l{};
        l.op = op, l.in0 = in0, l.in1 = in1, l.in_h = ih, l.in_w = iw, l.in_c = ic, l.out_h = oh, l.out_w = ow, l.out_c = oc;
        l.w_param = ~0u, l.b_param = ~0u;
        n.act = std::max({n.act, uint32_t(ih * iw * ic), uint32_t(oh * ow * oc)});
        return l;
    };
    mk_train_layer l = L(MK_TR_DWCONV, 0, ~0u, H, W, C, H, W, C);  // t1
    l.p[0] = 3, l.p[1] = 3, l.p[2] = 1, l.p[3] = 1, l.w_param = 0;
    for (int i = 0; i < 18; ++i) n.params.push_back(r());
    n.layers.push_back(l);
    l = L(MK_TR_SLICE, 1, ~0u, H, W, C, 3, 2, C);  // t2 = t1[:, 1:4, 0:4:2, :]
    const int32_t q[8] = {0, 1, 0, 0, 1, 1, 2, 1};
    std::copy(q, q + 8, l.q);
    n.layers.push_back(l);
    l = L(MK_TR_TRANSPOSE, 2, ~0u, 3, 2, C, 2, 3, C);  // t3: swap H and W
    l.p[0] = 0, l.p[1] = 2, l.p[2] = 1, l.p[3] = 3;
    n.layers.push_back(l);
    n.layers.push_back(L(MK_TR_ABS, 0, ~0u, H, W, C, H, W, C));  // t4 = |x|
    l = L(MK_TR_REDUCE, 4, ~0u, H, W, C, 1, 1, C);                // t5 = mean over H, W
    l.p[0] = 1, l.p[1] = 1, l.p[2] = H * W, l.p[3] = C;
    n.layers.push_back(l);
    l = L(MK_TR_EWB, 3, 5, 2, 3, C, 2, 3, C);  // t6 = t3 / t5 (broadcast over H, W)
    l.p[0] = MK_TR_EW_DIV;
    const int32_t st[8] = {0, 3 * C, C, 1, 0, 0, 0, 1};
    std::copy(st, st + 8, l.q);
    n.layers.push_back(l);
    l = L(MK_TR_REDUCE, 6, ~0u, 2, 3, C, 2, 3, 1);  // t7 = sum over the channels
    l.p[0] = 0, l.p[1] = 6, l.p[2] = C, l.p[3] = 1;
    n.layers.push_back(l);
    l = L(MK_TR_FC, 7, ~0u, 1, 1, 6, 1, 1, 3);  // t8 logits
    l.w_param = uint32_t(n.params.size());
    for (int i = 0; i < 18; ++i) n.params.push_back(r());
    l.b_param = uint32_t(n.params.size());
    for (int i = 0; i < 3; ++i) n.params.push_back(r());
    n.layers.push_back(l);
    return n;
}

TEST(TrainerGradients, SliceTransposeBroadcastDivReduceStep) {
    const Net n = make_net2();
    const float lr = 1e-3f;
    std::vector<float> after;
    step(n, n.params, lr, &after);
    double worst = 0;
    for (size_t i = 0; i < n.params.size(); ++i) {
        const double analytic = (double(n.params[i]) - double(after[i])) / double(lr);
        std::vector<float> p = n.params;
        const float eps = 1e-2f;
        p[i] = n.params[i] + eps;
        const double up = step(n, p, 0.0f);
        p[i] = n.params[i] - eps;
        const double dn = step(n, p, 0.0f);
        const double fd = (up - dn) / (2.0 * double(eps));
        const double err = std::fabs(fd - analytic) / std::max(1.0, std::fabs(fd));
        worst = std::max(worst, err);
        EXPECT_LE(err, 5e-3) << "parameter " << i << ": step " << analytic << ", finite difference " << fd;
    }
    std::printf("trainer slice/transpose/div/reduce: %zu parameters, worst relative error %.2e\n", n.params.size(), worst);
}

TEST(TrainerGradients, RejectsBadBlobs) {
    const Net n = make_net();
    std::vector<uint8_t> b = blob_of(n, n.params, 0.1f);
    std::vector<uint32_t> arena(mk_tr_sram_bytes(b.data()) / 4 + 4);
    auto* ar = reinterpret_cast<uint8_t*>(arena.data());
    EXPECT_EQ(mk_tr_run(b.data(), uint32_t(b.size()) - 1, ar, uint32_t(arena.size() * 4), nullptr), MK_TR_BAD_BLOB);  // truncated
    EXPECT_EQ(mk_tr_run(b.data(), uint32_t(b.size()), ar, 16, nullptr), MK_TR_NO_MEMORY);
    auto* l = reinterpret_cast<mk_train_layer*>(&b[sizeof(mk_train_header)]);
    l[2].in1 = 7;  // a later tensor: not a DAG in order
    EXPECT_EQ(mk_tr_run(b.data(), uint32_t(b.size()), ar, uint32_t(arena.size() * 4), nullptr), MK_TR_BAD_BLOB);
}

}  // namespace
