// SPDX-License-Identifier: MIT
// QAS INT8 on-device training (ws63): the integer graph the compiler's quantizer makes of a float model
// (`npusim train --quantize int8`: the toolchain's FULL_QUANT, seed 000 s1.4 rule 1) mapped onto the
// QAS rows of seed 000's training tables - QuantizeLinear of the sample, QLinearConv 3x3 group 1
// (TP-CONV; per-tensor or per-output-channel weights, int32 bias, a ReLU folded into the output range),
// MaxPool (TP-POOL), Relu (TP-ACT), Flatten / Reshape (TP-RESHAPE), Transpose (TP-TRANS), QGemm with
// B transposed and an optional bias (TP-FC), then DequantizeLinear of the logits and an optional
// Softmax head. Layouts become NHWC / OHWI as the firmware's kernels take them.
#include "train_internal.h"

#include <algorithm>
#include <map>

namespace mcu::detail {
namespace {

struct QT {  // an int8 tensor of the training graph
    uint32_t id = 0;
    int32_t h = 1, w = 1, c = 1;
    int32_t flat_h = 0, flat_w = 0, flat_c = 0;  // the NHWC dims it was flattened from
    float scale = 0;
    int32_t zp = 0;
};

float scalar_f(const drv::ir::Graph& g, const drv::ir::Node& n, size_t i) {
    const drv::ir::Value& v = g.value(n.input(i), n.label());
    if (!v.is_constant() || v.data->dtype() != num::DType::F32 || v.data->numel() != 1) throw Refusal(n.label() + ": input " + std::to_string(i) + " must be a float32 scalar scale");
    return v.data->data<float>()[0];
}

int32_t scalar_zp(const drv::ir::Graph& g, const drv::ir::Node& n, size_t i) {
    if (!n.has_input(i)) return 0;
    const drv::ir::Value& v = g.value(n.input(i), n.label());
    if (!v.is_constant() || v.data->numel() != 1) throw Refusal(n.label() + ": zero point " + std::to_string(i) + " must be a scalar constant");
    if (v.data->dtype() == num::DType::I8) return v.data->data<int8_t>()[0];
    throw Refusal(n.label() + ": QAS INT8 training takes int8 tensors (zero point " + num::dtype_name(v.data->dtype()) + ")");
}

/// Per-output-channel weight scales (a per-tensor scale repeated) and the check of symmetric weights.
std::vector<float> weight_scales(const drv::ir::Graph& g, const drv::ir::Node& n, size_t si, size_t zi, int64_t channels) {
    const drv::ir::Value& s = g.value(n.input(si), n.label());
    if (!s.is_constant() || s.data->dtype() != num::DType::F32 || (s.data->numel() != 1 && int64_t(s.data->numel()) != channels))
        throw Refusal(n.label() + ": weights quantized per tensor or per output channel (seed 000 QAS INT8)");
    if (n.has_input(zi)) {
        const drv::ir::Value& z = g.value(n.input(zi), n.label());
        for (size_t i = 0; z.is_constant() && i < z.data->numel(); ++i)
            if ((z.data->dtype() == num::DType::I8 ? z.data->data<int8_t>()[i] : 1) != 0) throw Refusal(n.label() + ": int8 weights must be symmetric (zero point 0)");
    }
    std::vector<float> v(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) v[size_t(c)] = s.data->data<float>()[s.data->numel() == 1 ? 0 : size_t(c)];
    return v;
}

}  // namespace

QasBuilt map_qas(const drv::ir::Graph& g) {
    QasBuilt b;
    if (g.inputs().size() != 1) throw Refusal("the model must have one input");
    const drv::ir::Value& in = g.value(g.inputs()[0]);
    if (in.dtype != num::DType::F32 || in.shape.size() != 4 || in.shape[0] != 1) throw Refusal("the float input must be NCHW with batch 1");
    b.in_shape = in.shape;
    b.in_floats = uint32_t(in.shape[1] * in.shape[2] * in.shape[3]);
    b.act_floats = b.in_floats;
    std::map<std::string, QT> tensors;
    const std::string sfx = " (seed 000 training tables, QAS INT8 rows)";
    bool ended = false;
    auto input = [&](const drv::ir::Node& n, size_t i) -> const QT& {
        auto it = tensors.find(n.input(i));
        if (it == tensors.end()) throw Refusal(n.label() + ": input '" + n.input(i) + "' is not an int8 tensor of the training graph" + sfx);
        return it->second;
    };
    for (const auto& n : g.nodes()) {
        const std::string& op = n.op_type;
        if (ended) {
            if (op == "Softmax" && &n == &g.nodes().back()) break;
            throw Refusal(n.label() + ": only a Softmax may follow the dequantized logits" + sfx);
        }
        mk_train_qlayer l{};
        l.w_param = ~0u, l.b_param = ~0u, l.act_min = -128, l.act_max = 127;
        QT o;
        o.id = uint32_t(b.layers.size() + 1);
        const drv::ir::Value& ov = g.value(n.outputs.at(0), n.label());
        if (op == "QuantizeLinear") {
            if (!b.layers.empty() || n.input(0) != in.name) throw Refusal(n.label() + ": QuantizeLinear of the model input only" + sfx);
            l.op = MK_TQ_QUANTIZE, l.in0 = 0;
            o.c = int32_t(in.shape[1]), o.h = int32_t(in.shape[2]), o.w = int32_t(in.shape[3]);
            o.scale = scalar_f(g, n, 1), o.zp = scalar_zp(g, n, 2);
            l.in_h = o.h, l.in_w = o.w, l.in_c = o.c;
            l.x_scale = o.scale, l.x_zp = o.zp;
        } else if (op == "DequantizeLinear") {
            const QT& a = input(n, 0);
            if (a.h != 1 || a.w != 1 || a.id != b.layers.size()) throw Refusal(n.label() + ": the model must end in the logits [1, classes]" + sfx);
            ended = true;
            continue;
        } else {
            const QT& a = input(n, 0);
            l.in0 = a.id, l.in_h = a.h, l.in_w = a.w, l.in_c = a.c, l.x_scale = a.scale, l.x_zp = a.zp;
            o.scale = a.scale, o.zp = a.zp;
            if (op == "QLinearConv") {
                const drv::ir::Value& wv = g.value(n.input(3), n.label());
                const auto st = drv::ir::attr_ints(n.attrs, "strides", {1, 1}), dl = drv::ir::attr_ints(n.attrs, "dilations", {1, 1});
                const auto pd = drv::ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
                if (!wv.is_constant() || wv.data->dtype() != num::DType::I8 || wv.data->rank() != 4 || a.flat_c ||
                    drv::ir::attr_int(n.attrs, "group", 1) != 1 || wv.data->dim(2) != 3 || wv.data->dim(3) != 3 || wv.data->dim(1) != a.c ||
                    dl != std::vector<int64_t>{1, 1} || st.size() != 2 || pd.size() != 4 ||
                    drv::ir::attr_string(n.attrs, "auto_pad", "NOTSET") != "NOTSET" || ov.shape.size() != 4)
                    throw Refusal(n.label() + ": QAS INT8 Conv training on ws63 takes the 3x3 group-1 convolution only (int8 weights, dilation 1; "
                                  "seed 000 TFLite Conv2D / ONNX Conv training table)");
                const num::Tensor& w = *wv.data;
                const int32_t M = int32_t(w.dim(0)), C = a.c;
                l.op = MK_TQ_CONV;
                l.p[0] = 3, l.p[1] = 3, l.p[2] = int32_t(st[0]), l.p[3] = int32_t(st[1]), l.p[4] = int32_t(pd[0]), l.p[5] = int32_t(pd[1]);
                o.c = M, o.h = int32_t(ov.shape[2]), o.w = int32_t(ov.shape[3]);
                if ((a.h + pd[0] + pd[2] - 3) / st[0] + 1 != o.h || (a.w + pd[1] + pd[3] - 3) / st[1] + 1 != o.w)
                    throw Refusal(n.label() + ": output size disagrees with the pads and strides");
                const std::vector<float> ws = weight_scales(g, n, 4, 5, M);
                l.ws_off = uint32_t(b.qscales.size());
                b.qscales.insert(b.qscales.end(), ws.begin(), ws.end());
                l.w_param = uint32_t(b.params.size()), l.wq_off = b.wq_bytes;
                for (int32_t m = 0; m < M; ++m)  // [M][C][3][3] -> OHWI
                    for (int32_t ky = 0; ky < 3; ++ky)
                        for (int32_t kx = 0; kx < 3; ++kx)
                            for (int32_t c = 0; c < C; ++c) b.params.push_back(float(w.data<int8_t>()[((m * C + c) * 3 + ky) * 3 + kx]));
                b.wq_bytes += uint32_t(M * 9 * C);
                o.scale = scalar_f(g, n, 6), o.zp = scalar_zp(g, n, 7);
                if (n.has_input(8)) {
                    const drv::ir::Value& bv = g.value(n.input(8), n.label());
                    if (!bv.is_constant() || bv.data->dtype() != num::DType::I32 || int64_t(bv.data->numel()) != M)
                        throw Refusal(n.label() + ": the bias must be an int32 constant of the output channels" + sfx);
                    l.b_param = uint32_t(b.params.size()), l.bq_off = b.bq_words;
                    for (int32_t m = 0; m < M; ++m) b.params.push_back(float(bv.data->data<int32_t>()[m]));
                    b.bq_words += uint32_t(M);
                }
            } else if ((op == "QGemm" && n.domain == "com.microsoft") || op == "QLinearMatMul") {
                const size_t wi = 3;
                const drv::ir::Value& wv = g.value(n.input(wi), n.label());
                const bool tb = op == "QGemm" && drv::ir::attr_int(n.attrs, "transB", 0) != 0;
                if (!tb || drv::ir::attr_int(n.attrs, "transA", 0) != 0 || drv::ir::attr_float(n.attrs, "alpha", 1.0f) != 1.0f)
                    throw Refusal(n.label() + ": QAS INT8 FC training takes rank 2, A not transposed, B transposed (seed 000 FullyConnected / "
                                  "Gemm / Matmul training table)");
                if (a.h != 1 || a.w != 1 || !wv.is_constant() || wv.data->dtype() != num::DType::I8 || wv.data->rank() != 2 ||
                    wv.data->dim(1) != a.c || n.input(7).empty())
                    throw Refusal(n.label() + ": QAS INT8 FC: an int8 [N, K] weight matching the input, an int8 output" + sfx);
                const num::Tensor& w = *wv.data;
                const int32_t N = int32_t(w.dim(0)), K = a.c;
                l.op = MK_TQ_FC;
                o.h = 1, o.w = 1, o.c = N;
                const std::vector<float> ws = weight_scales(g, n, 4, 5, N);
                l.ws_off = uint32_t(b.qscales.size());
                b.qscales.insert(b.qscales.end(), ws.begin(), ws.end());
                l.w_param = uint32_t(b.params.size()), l.wq_off = b.wq_bytes;
                for (int32_t j = 0; j < N; ++j)
                    for (int32_t k = 0; k < K; ++k) {
                        int32_t src = k;  // our k is NHWC (y, x, c) when flattened from an image; the model's is NCHW
                        if (a.flat_c > 0) {
                            const int32_t c = k % a.flat_c, x = (k / a.flat_c) % a.flat_w, y = k / (a.flat_c * a.flat_w);
                            src = (c * a.flat_h + y) * a.flat_w + x;
                        }
                        b.params.push_back(float(w.data<int8_t>()[j * K + src]));
                    }
                b.wq_bytes += uint32_t(N * K);
                o.scale = scalar_f(g, n, 7), o.zp = scalar_zp(g, n, 8);
                if (n.has_input(6)) {
                    const drv::ir::Value& bv = g.value(n.input(6), n.label());
                    if (!bv.is_constant() || bv.data->dtype() != num::DType::I32 || int64_t(bv.data->numel()) != N)
                        throw Refusal(n.label() + ": the optional bias must be int32 [N] (seed 000 QAS INT8 FC)");
                    l.b_param = uint32_t(b.params.size()), l.bq_off = b.bq_words;
                    for (int32_t j = 0; j < N; ++j) b.params.push_back(float(bv.data->data<int32_t>()[j]));
                    b.bq_words += uint32_t(N);
                }
            } else if (op == "MaxPool") {
                const auto ks = drv::ir::attr_ints(n.attrs, "kernel_shape", {}), st = drv::ir::attr_ints(n.attrs, "strides", {1, 1});
                const auto pd = drv::ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
                if (a.flat_c || ks.size() != 2 || ks[0] != ks[1] || st.size() != 2 || st[0] != st[1] || pd != std::vector<int64_t>{0, 0, 0, 0} ||
                    drv::ir::attr_int(n.attrs, "ceil_mode", 0) != 0 || ov.shape.size() != 4)
                    throw Refusal(n.label() + ": QAS INT8 MaxPool training takes square windows without padding (no MCU training kernel yet "
                                  "for others)");
                l.op = MK_TQ_MAXPOOL, l.p[0] = int32_t(ks[0]), l.p[1] = int32_t(st[0]);
                o.c = a.c, o.h = int32_t(ov.shape[2]), o.w = int32_t(ov.shape[3]);
                if ((a.h - ks[0]) / st[0] + 1 != o.h || (a.w - ks[0]) / st[0] + 1 != o.w) throw Refusal(n.label() + ": output size disagrees");
            } else if (op == "Relu") {
                l.op = MK_TQ_RELU;
                o.h = a.h, o.w = a.w, o.c = a.c, o.flat_h = a.flat_h, o.flat_w = a.flat_w, o.flat_c = a.flat_c;
            } else if (op == "Flatten" || op == "Reshape") {
                l.op = MK_TQ_COPY;
                o.h = 1, o.w = 1, o.c = a.h * a.w * a.c;
                if (ov.shape.size() != 2 || ov.shape[0] != 1) throw Refusal(n.label() + ": reshape to [1, K] only (same element count)" + sfx);
                if (a.h * a.w > 1 && a.c > 1 && !a.flat_c) o.flat_h = a.h, o.flat_w = a.w, o.flat_c = a.c;
                else o.flat_h = a.flat_h, o.flat_w = a.flat_w, o.flat_c = a.flat_c;
            } else if (op == "Transpose") {
                const auto perm = drv::ir::attr_ints(n.attrs, "perm", {});
                if (a.flat_c || perm.size() != 4 || perm[0] != 0 || ov.shape.size() != 4)
                    throw Refusal(n.label() + ": QAS INT8 Transpose training: a constant permutation of an NCHW tensor keeping the batch" + sfx);
                // NCHW perm p -> the stored NHWC permutation q: y_nhwc[.., j] = x_nhwc[.., q[j]]
                static const int nhwc_of_nchw[4] = {0, 3, 1, 2}, nchw_of_nhwc[4] = {0, 2, 3, 1};
                l.op = MK_TQ_TRANSPOSE;
                for (int j = 0; j < 4; ++j) l.p[j] = nhwc_of_nchw[perm[size_t(nchw_of_nhwc[j])]];
                const int32_t d[4] = {1, a.h, a.w, a.c};
                o.h = d[l.p[1]], o.w = d[l.p[2]], o.c = d[l.p[3]];
                if (o.c != ov.shape[1] || o.h != ov.shape[2] || o.w != ov.shape[3]) throw Refusal(n.label() + ": output shape disagrees");
            } else {
                throw Refusal(n.label() + ": " + op + " is not in the ws63 QAS INT8 training configurations (QuantizeLinear, 3x3 group-1 "
                              "QLinearConv, MaxPool, Relu, Flatten/Reshape, Transpose, QGemm with B transposed)" + sfx);
            }
        }
        l.out_h = o.h, l.out_w = o.w, l.out_c = o.c, l.y_scale = o.scale, l.y_zp = o.zp;
        if (!(l.y_scale > 0.0f) || !(l.x_scale > 0.0f)) throw Refusal(n.label() + ": scales must be positive");
        b.act_floats = std::max({b.act_floats, uint32_t(l.in_h * l.in_w * l.in_c), uint32_t(o.h * o.w * o.c)});
        b.layers.push_back(l);
        if (b.layers.size() > MK_TRAIN_MAX_LAYERS) throw Refusal("more than 32 layers");
        tensors[n.outputs.at(0)] = o;
    }
    if (!ended || b.layers.size() < 2) throw Refusal("the model must end in the dequantized logits [1, classes] (before an optional Softmax)");
    b.classes = uint32_t(b.layers.back().out_c);
    return b;
}

std::vector<uint8_t> build_qas_blob(const QasBuilt& b, const num::Tensor& x, const std::vector<int32_t>& y, uint32_t epochs, float lr) {
    mk_train_header h{};
    h.magic = MK_TRAIN_MAGIC_QAS;
    h.n_layers = uint32_t(b.layers.size());
    h.n_samples = uint32_t(y.size());
    h.epochs = epochs;
    h.classes = b.classes;
    h.lr = lr;
    h.in_floats = b.in_floats;
    h.act_floats = b.act_floats;
    h.params_floats = uint32_t(b.params.size());
    h.params_off = uint32_t(sizeof h + b.layers.size() * sizeof(mk_train_qlayer));
    h.qscales_off = h.params_off + h.params_floats * 4u;
    h.qscales_floats = uint32_t(b.qscales.size());
    h.wq_bytes = b.wq_bytes;
    h.bq_words = b.bq_words;
    h.x_off = h.qscales_off + h.qscales_floats * 4u;
    h.y_off = h.x_off + h.n_samples * h.in_floats * 4u;
    h.total_bytes = h.y_off + h.n_samples * 4u;
    std::vector<uint8_t> blob(h.total_bytes);
    std::memcpy(blob.data(), &h, sizeof h);
    std::memcpy(&blob[sizeof h], b.layers.data(), b.layers.size() * sizeof(mk_train_qlayer));
    std::memcpy(&blob[h.params_off], b.params.data(), b.params.size() * 4);
    std::memcpy(&blob[h.qscales_off], b.qscales.data(), b.qscales.size() * 4);
    write_samples_nhwc(blob, h.x_off, x, h.in_floats);
    std::memcpy(&blob[h.y_off], y.data(), y.size() * 4);
    return blob;
}

}  // namespace mcu::detail
