// SPDX-License-Identifier: MIT
// ONNX RNN, GRU and LSTM as the MCU runs them (seed 000: GRU/LSTM float, RNN FP32): one node through
// the converter and the host build of the firmware runtime (byte-identical to the ISS build, checked
// by the model tests) against the reference executor's recurrent operators (num::run_op, themselves
// checked against onnxruntime in tests/oracle), float32 within 1e-5 relative. Directions, batch > 1,
// initial states, Y / Y_h / Y_c, GRU linear_before_reset 0 and 1, RNN activations, clip and constant
// sequence_lens; and the configurations the seed rules refuse have no kernel either.
#include "mcu_op_test_util.h"

namespace {

using namespace mcut;

struct Cfg {
    const char* name;
    int gates;  // 1 RNN, 3 GRU, 4 LSTM
    const char* dir;
    int64_t T, B, I, H;
    bool bias, h0, c0;
    std::vector<int32_t> lens;
    A attrs;
    bool want_y = true, want_h = true, want_c = true;
};

std::string run_cfg(const Cfg& c) {
    T t(false, false);
    const int64_t D = std::string(c.dir) == "bidirectional" ? 2 : 1, G = c.gates;
    t.in("x", {c.T, c.B, c.I});
    if (c.h0) t.in("h0", {D, c.B, c.H});
    if (c.c0) t.in("c0", {D, c.B, c.H});
    t.weight("W", {D, G * c.H, c.I}).weight("R", {D, G * c.H, c.H});
    if (c.bias) t.weight("Bias", {D, 2 * G * c.H});
    if (!c.lens.empty()) t.ints("lens", {c.B}, c.lens);
    std::vector<std::string> outs;
    outs.push_back(c.want_y ? "y" : "");
    outs.push_back(c.want_h ? "yh" : "");
    if (c.gates == 4) outs.push_back(c.want_c ? "yc" : "");
    if (c.want_y) t.out("y", {c.T, D, c.B, c.H});
    if (c.want_h) t.out("yh", {D, c.B, c.H});
    if (c.gates == 4 && c.want_c) t.out("yc", {D, c.B, c.H});
    std::vector<std::string> ins{"x", "W", "R", c.bias ? "Bias" : "", c.lens.empty() ? "" : "lens", c.h0 ? "h0" : ""};
    if (c.gates == 4) ins.push_back(c.c0 ? "c0" : "");
    while (ins.back().empty()) ins.pop_back();
    A a = c.attrs;
    a.push_back({"hidden_size", c.H});
    a.push_back({"direction", S(c.dir)});
    t.op(c.gates == 1 ? "RNN" : c.gates == 3 ? "GRU" : "LSTM", ins, a, outs);
    return run(t);
}

TEST(McuRecurrent, MatchesTheReferenceExecutor) {
    using Strs = std::vector<std::string>;
    const std::vector<Cfg> cfgs = {
        {"gru_kws", 3, "forward", 12, 1, 10, 8, true, false, false, {}, {{"linear_before_reset", int64_t(1)}}},
        {"gru_lbr0", 3, "forward", 6, 1, 5, 4, true, false, false, {}, {}},
        {"gru_reverse_h0_batch3", 3, "reverse", 5, 3, 4, 6, true, true, false, {}, {}},
        {"gru_bidir_lbr1", 3, "bidirectional", 7, 2, 3, 5, true, true, false, {}, {{"linear_before_reset", int64_t(1)}}},
        {"gru_nobias_yh_only", 3, "forward", 4, 2, 3, 3, false, false, false, {}, {}, false, true},
        {"lstm_kws", 4, "forward", 10, 1, 8, 6, true, false, false, {}, {}},
        {"lstm_states_batch2", 4, "forward", 6, 2, 5, 4, true, true, true, {}, {}},
        {"lstm_bidir", 4, "bidirectional", 5, 2, 3, 4, true, true, true, {}, {}},
        {"lstm_y_only", 4, "reverse", 5, 1, 3, 4, false, false, false, {}, {}, true, false, false},
        {"rnn_tanh", 1, "forward", 8, 2, 4, 5, true, true, false, {}, {}},
        {"rnn_bidir_relu_lens", 1, "bidirectional", 6, 3, 4, 3, true, true, false, {6, 2, 0}, {{"activations", Strs{"Relu", "Sigmoid"}}}},
        {"rnn_scaled_tanh_clip", 1, "reverse", 5, 2, 3, 4, true, false, false, {4, 5},
         {{"activations", Strs{"ScaledTanh"}}, {"activation_alpha", std::vector<float>{0.8f}}, {"activation_beta", std::vector<float>{1.3f}},
          {"clip", 0.9f}}},
        {"rnn_hardsigmoid", 1, "forward", 4, 1, 3, 3, true, false, false, {}, {{"activations", Strs{"HardSigmoid"}}}},
        {"rnn_softplus", 1, "forward", 4, 1, 3, 3, true, false, false, {}, {{"activations", Strs{"Softplus"}}}},
        {"rnn_affine_thresholded", 1, "bidirectional", 4, 1, 3, 3, true, false, false, {},
         {{"activations", Strs{"Affine", "ThresholdedRelu"}}, {"activation_alpha", std::vector<float>{0.5f, 0.1f}},
          {"activation_beta", std::vector<float>{0.2f}}}},
    };
    for (const auto& c : cfgs) EXPECT_EQ(run_cfg(c), "") << c.name;
}

// The seed refuses these (GRU/LSTM activations, clip, layout, P, sequence_lens); the converter has no
// kernel for them either and says so.
TEST(McuRecurrent, SeedRefusedFormsHaveNoKernel) {
    Cfg lstm_clip{"lstm_clip", 4, "forward", 4, 1, 3, 3, true, false, false, {}, {{"clip", 1.0f}}};
    EXPECT_NE(run_cfg(lstm_clip).find("no MCU kernel yet for LSTM activations / clip"), std::string::npos);
    Cfg gru_lens{"gru_lens", 3, "forward", 4, 2, 3, 3, true, false, false, {4, 2}, {}};
    EXPECT_NE(run_cfg(gru_lens).find("no MCU kernel yet for GRU sequence_lens"), std::string::npos);
    Cfg gru_layout{"gru_layout1", 3, "forward", 1, 1, 3, 3, true, false, false, {}, {{"layout", int64_t(1)}}};
    EXPECT_NE(run_cfg(gru_layout).find("no MCU kernel yet for GRU layout 1"), std::string::npos) << run_cfg(gru_layout);
}

// layout = 1 (batch-major) in the reference: the same numbers as layout 0 on transposed tensors
// (onnxruntime's CPU kernels refuse layout 1, so this property is the check).
TEST(ReferenceRecurrent, Layout1IsLayout0Transposed) {
    const int64_t T = 4, B = 3, I = 2, H = 3;
    for (const char* op : {"RNN", "GRU", "LSTM"}) {
        const int64_t G = std::string(op) == "RNN" ? 1 : std::string(op) == "GRU" ? 3 : 4;
        num::Tensor x(num::DType::F32, {T, B, I}), w(num::DType::F32, {1, G * H, I}), r(num::DType::F32, {1, G * H, H});
        num::Tensor h0(num::DType::F32, {1, B, H});
        for (num::Tensor* t : {&x, &w, &r, &h0})
            for (size_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = float(int(next() % 2001) - 1000) / 1000.0f;
        num::Tensor xb(num::DType::F32, {B, T, I}), h0b(num::DType::F32, {B, 1, H});
        for (int64_t t = 0; t < T; ++t)
            for (int64_t b = 0; b < B; ++b)
                for (int64_t i = 0; i < I; ++i) xb.data<float>()[(b * T + t) * I + i] = x.data<float>()[(t * B + b) * I + i];
        std::memcpy(h0b.raw(), h0.raw(), h0.nbytes());  // [1, B, H] and [B, 1, H] hold the same order
        num::Attributes a0, a1;
        a0.set("hidden_size", H);
        a1.set("hidden_size", H);
        a1.set("layout", int64_t(1));
        const auto y0 = num::run_op(op, a0, {&x, &w, &r, nullptr, nullptr, &h0});
        const auto y1 = num::run_op(op, a1, {&xb, &w, &r, nullptr, nullptr, &h0b});
        ASSERT_EQ(y1[0].shape(), (std::vector<int64_t>{B, T, 1, H})) << op;
        for (int64_t t = 0; t < T; ++t)
            for (int64_t b = 0; b < B; ++b)
                for (int64_t j = 0; j < H; ++j)
                    EXPECT_EQ(y1[0].data<float>()[(b * T + t) * H + j], y0[0].data<float>()[(t * B + b) * H + j]) << op;
        for (size_t i = 0; i < y0[1].numel(); ++i) EXPECT_EQ(y1[1].data<float>()[i], y0[1].data<float>()[i]) << op;
    }
}

}  // namespace
