// SPDX-License-Identifier: MIT
// Graph -> MCU blob: ONNX RNN, GRU and LSTM (float; seed 000: GRU/LSTM float only, RNN FP32 on the
// RISC-V Micro target). One layer runs every direction and batch entry (runtime.c MK_OP_*_F32):
// X [T, B, I], Y [T, D, B, H] (stored NHWC-style as [T][B][H][D]), Y_h / Y_c [D, B, H], optional
// initial_h / initial_c, RNN sequence_lens (a constant: steps past a sequence's end give Y = 0),
// GRU linear_before_reset 0/1, direction forward / reverse / bidirectional, RNN activations and clip.
// What the seed rules refuse (GRU/LSTM activations, clip, layout, P, input_forget) has no kernel.
#include "blob_converter.h"

namespace mcu::detail {
namespace {

/// RNN activation name -> mk_unop with ONNX's default alpha/beta (onnxruntime's defaults).
bool rnn_act(const std::string& name, mk_unop& op, float& alpha, float& beta) {
    struct A {
        const char* n;
        mk_unop op;
        float a, b;
    };
    static const A acts[] = {{"Tanh", MK_UN_TANH, 0, 0},          {"Relu", MK_UN_RELU, 0, 0},
                             {"Sigmoid", MK_UN_SIGMOID, 0, 0},    {"Affine", MK_UN_AFFINE, 1.0f, 0.0f},
                             {"LeakyRelu", MK_UN_LEAKY_RELU, 0.01f, 0}, {"ThresholdedRelu", MK_UN_THRESHOLDED_RELU, 1.0f, 0},
                             {"ScaledTanh", MK_UN_SCALED_TANH, 1.0f, 1.0f}, {"HardSigmoid", MK_UN_HARD_SIGMOID, 0.2f, 0.5f},
                             {"Elu", MK_UN_ELU, 1.0f, 0},         {"Softsign", MK_UN_SOFTSIGN, 0, 0},
                             {"Softplus", MK_UN_SOFTPLUS, 0, 0}};
    for (const auto& a : acts)
        if (name == a.n) {
            op = a.op, alpha = a.a, beta = a.b;
            return true;
        }
    return false;
}

bool takes_alpha(mk_unop op) {
    return op == MK_UN_AFFINE || op == MK_UN_LEAKY_RELU || op == MK_UN_THRESHOLDED_RELU || op == MK_UN_SCALED_TANH ||
           op == MK_UN_HARD_SIGMOID || op == MK_UN_ELU;
}
bool takes_beta(mk_unop op) { return op == MK_UN_AFFINE || op == MK_UN_SCALED_TANH || op == MK_UN_HARD_SIGMOID; }

}  // namespace

void Converter::recurrent(const Node& n, int gates) {
    const std::string what = gates == 1 ? "RNN" : gates == 3 ? "GRU" : "LSTM";
    const std::string no = n.label() + ": no MCU kernel yet for " + what + " ";
    const Value& xv = g_.value(n.input(0), n.label());
    if (drv::ir::attr_int(n.attrs, "layout", 0) != 0) throw ConvertError(no + "layout 1 (seed 000: layout not configurable / 0 only)");
    const std::string dir = drv::ir::attr_string(n.attrs, "direction", "forward");
    const int mode = dir == "forward" ? 0 : dir == "reverse" ? 1 : dir == "bidirectional" ? 2 : -1;
    if (mode < 0) throw ConvertError(n.label() + ": direction '" + dir + "'");
    if (gates > 1 && (n.attrs.has("activations") || n.attrs.has("clip") || drv::ir::attr_int(n.attrs, "input_forget", 0) != 0))
        throw ConvertError(no + "activations / clip / input_forget (seed 000: not configurable)");
    if (gates == 4 && n.has_input(7)) throw ConvertError(no + "peepholes P (seed 000: not supported)");
    if (gates > 1 && n.has_input(4)) throw ConvertError(no + "sequence_lens (seed 000: not supported)");
    if (xv.shape.size() != 3) throw ConvertError(n.label() + ": X must be [seq, batch, input]");
    const int64_t T = xv.shape[0], B = xv.shape[1], I = xv.shape[2], D = mode == 2 ? 2 : 1;
    const uint32_t x = act(n.input(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(no + "int8 (seed 000: " + what + " float only here)");
    const num::Tensor& W = cval(n, 1);
    const num::Tensor& R = cval(n, 2);
    const int64_t H = drv::ir::attr_int(n.attrs, "hidden_size", R.rank() == 3 ? R.dim(2) : 0), G = gates;
    if (H <= 0 || W.dtype() != num::DType::F32 || R.dtype() != num::DType::F32 || int64_t(W.numel()) != D * G * H * I ||
        int64_t(R.numel()) != D * G * H * H)
        throw ConvertError(n.label() + ": W must be float32 [D, " + std::to_string(G) + "H, I] and R [D, " + std::to_string(G) + "H, H]");
    std::vector<float> prm(W.data<float>(), W.data<float>() + W.numel());
    prm.insert(prm.end(), R.data<float>(), R.data<float>() + R.numel());
    const bool has_bias = n.has_input(3);
    if (has_bias) {
        const num::Tensor& Bt = cval(n, 3);
        if (Bt.dtype() != num::DType::F32 || int64_t(Bt.numel()) != D * 2 * G * H) throw ConvertError(n.label() + ": B must be float32 [D, " + std::to_string(2 * G) + "H]");
        prm.insert(prm.end(), Bt.data<float>(), Bt.data<float>() + Bt.numel());
    }
    std::vector<uint32_t> ins{x, add_const(MK_DT_F32, as_bytes(prm), {1, 1, 1, int32_t(prm.size())})};
    int32_t h0_slot = -1, c0_slot = -1, lens_slot = -1;
    auto state_input = [&](size_t i, const char* name) {
        const Value& v = g_.value(n.input(i), n.label());
        if (v.shape != std::vector<int64_t>{D, B, H}) throw ConvertError(n.label() + ": " + name + " must be [D, batch, hidden]");
        const uint32_t t = act(n.input(i));
        if (t_[t].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": " + name + " must be float32");
        ins.push_back(t);
        return int32_t(ins.size() - 1);
    };
    if (n.has_input(5)) h0_slot = state_input(5, "initial_h");
    if (gates == 4 && n.has_input(6)) c0_slot = state_input(6, "initial_c");
    if (gates == 1 && n.has_input(4)) {
        const Value& lv = g_.value(n.input(4), n.label());
        if (!lv.is_constant()) throw ConvertError(no + "sequence_lens computed at run time (a constant only)");
        const std::vector<int64_t> lens = const_ints(n, 4);
        if (int64_t(lens.size()) != B) throw ConvertError(n.label() + ": sequence_lens must have batch entries");
        std::vector<int32_t> l32;
        for (int64_t v : lens) {
            if (v < 0 || v > T) throw ConvertError(n.label() + ": sequence_lens value " + std::to_string(v) + " outside [0, seq_length]");
            l32.push_back(int32_t(v));
        }
        ins.push_back(add_const(MK_DT_S32, as_bytes(l32), {1, 1, 1, int32_t(B)}));
        lens_slot = int32_t(ins.size() - 1);
    }
    // RNN activations (one per direction) with alpha/beta consumed in order (onnxruntime's convention).
    mk_unop acts[2] = {MK_UN_TANH, MK_UN_TANH};
    float alpha[2] = {0, 0}, beta[2] = {0, 0};
    if (gates == 1) {
        std::vector<std::string> names;
        if (const auto* a = n.attrs.find("activations"))
            if (const auto* v = std::get_if<std::vector<std::string>>(a)) names = *v;
        if (names.empty()) names.assign(size_t(D), "Tanh");
        if (D == 2 && names.size() == 1) names.push_back(names[0]);
        if (int64_t(names.size()) != D) throw ConvertError(n.label() + ": activations must name one function per direction");
        const std::vector<float> al = n.attrs.get_floats("activation_alpha", {}), be = n.attrs.get_floats("activation_beta", {});
        size_t ai = 0, bi = 0;
        for (int64_t d = 0; d < D; ++d) {
            if (!rnn_act(names[size_t(d)], acts[d], alpha[d], beta[d])) throw ConvertError(no + "activation '" + names[size_t(d)] + "'");
            if (takes_alpha(acts[d]) && ai < al.size()) alpha[d] = al[ai++];
            if (takes_beta(acts[d]) && bi < be.size()) beta[d] = be[bi++];
        }
    }
    const bool want_y = !n.outputs.empty() && !n.outputs[0].empty();
    uint32_t y;
    if (want_y) {
        y = act(n.outputs[0]);
    } else {
        y = scratch_f32(uint32_t(T * D * B * H));
        t_[y].rec.dims[0] = int32_t(T), t_[y].rec.dims[1] = int32_t(B), t_[y].rec.dims[2] = int32_t(H), t_[y].rec.dims[3] = int32_t(D);
    }
    const uint32_t scr = scratch_f32(uint32_t(2 * H + 7 * H));  // h, c, then the kernel's gates
    auto state_output = [&](size_t i) -> int32_t {
        if (n.outputs.size() <= i || n.outputs[i].empty()) return -1;
        return int32_t(act(n.outputs[i]));
    };
    const int32_t yh = state_output(1), yc = gates == 4 ? state_output(2) : -1;
    const uint32_t op = gates == 1 ? MK_OP_RNN_F32 : gates == 3 ? MK_OP_GRU_F32 : MK_OP_LSTM_F32;
    mk_blob_layer& l = layer(n, op, ins, y, gates == 1 ? "rnn_f32" : gates == 3 ? "gru_f32" : "lstm_f32",
                             uint64_t(T * B * D) * uint64_t(G * H) * uint64_t(I + H));
    const int32_t p[19] = {int32_t(H), int32_t(D), mode, int32_t(T), int32_t(B), int32_t(I), int32_t(scr), yh, yc, has_bias ? 1 : 0,
                           gates == 3 ? int32_t(drv::ir::attr_int(n.attrs, "linear_before_reset", 0) != 0) : int32_t(acts[0]),
                           f2i(alpha[0]), f2i(beta[0]), f2i(n.attrs.has("clip") ? drv::ir::attr_float(n.attrs, "clip", 0.0f) : 0.0f),
                           h0_slot, gates == 4 ? c0_slot : lens_slot, int32_t(acts[1]), f2i(alpha[1]), f2i(beta[1])};
    std::copy(p, p + 19, l.p);
    const int idx = int(layers_.size() - 1);
    for (int32_t t : {int32_t(scr), yh, yc})
        if (t >= 0) {
            t_[size_t(t)].first = std::min(t_[size_t(t)].first, idx);
            t_[size_t(t)].last = std::max(t_[size_t(t)].last, idx);
        }
}

}  // namespace mcu::detail
