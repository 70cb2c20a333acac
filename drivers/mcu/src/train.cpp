// SPDX-License-Identifier: MIT
// On-device training on ws63 (see mcu_train.h). FP32 (this file): the float model mapped onto the FP32
// training configurations of seed 000's tables - Conv depthwise-equivalent (group = in = out channels,
// batch 1, no bias, stride = dilation = 1, weights OHWI with I = 1; TP-CONV), Relu (TP-ACT), Abs
// (TP-ABS), Add/Sub/Mul without broadcast (TP-ELT), Div with broadcasting (TP-DIV), Concat of two
// (TP-CONCAT), constant Pad (TP-PAD), ReduceMean/ReduceSum (TP-RED), Slice with positive steps
// (TP-SLICE), Transpose (TP-TRANS), Flatten / Reshape (TP-RESHAPE), Gemm / MatMul rank 2 with a bias
// of the output channels (TP-FC). QAS INT8 (`--quantize int8`, train_qas.cpp): the quantizer's integer
// graph onto the QAS rows. A final Softmax is the inference head (training uses softmax cross-entropy
// on the logits).
#include "mcu/mcu_train.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "compiler/model_loader.h"
#include "compiler/quantize/pipeline.h"
#include "mcu/mcu_target.h"
#include "mk/mk_train.h"
#include "mk_train_blob.h"
#include "mk_trainer.h"
#include "numerics/npy.h"
#include "train_internal.h"

namespace mcu {
namespace {

using detail::Refusal;

struct Built {
    std::vector<mk_train_layer> layers;
    std::vector<float> params;
    uint32_t act_floats = 0, in_floats = 0, classes = 0;
    std::vector<int64_t> in_shape;  // ONNX NCHW
};

const num::Tensor& constant(const drv::ir::Graph& g, const drv::ir::Node& n, size_t i) {
    const drv::ir::Value& v = g.value(n.input(i), n.label());
    if (!v.is_constant() || v.data->dtype() != num::DType::F32) throw Refusal(n.label() + ": input " + std::to_string(i) + " must be a float32 constant");
    return *v.data;
}

/// A tensor of the training graph: its number and NHWC dims; `flat_*` are the NHWC dims it was
/// flattened from (an FC reading it permutes its weights from the model's NCHW flatten order).
struct TT {
    uint32_t id = 0;
    int32_t h = 1, w = 1, c = 1;
    int32_t flat_h = 0, flat_w = 0, flat_c = 0;
};

TT dims_of(const drv::ir::Value& v, const std::string& where) {
    TT t;
    if (v.shape.size() == 4 && v.shape[0] == 1) t.c = int32_t(v.shape[1]), t.h = int32_t(v.shape[2]), t.w = int32_t(v.shape[3]);
    else if (v.shape.size() == 2 && v.shape[0] == 1) t.c = int32_t(v.shape[1]);
    else throw Refusal(where + ": tensor '" + v.name + "' " + v.shape_str() + " is neither [1, C, H, W] nor [1, K] (FP32 training: batch 1)");
    return t;
}

Built map_model(const drv::ir::Graph& g) {
    Built b;
    if (g.inputs().size() != 1) throw Refusal("the model must have one input");
    const drv::ir::Value& in = g.value(g.inputs()[0]);
    if (in.dtype != num::DType::F32) throw Refusal("QAS INT8 training (quantized models) has no firmware yet; train the float32 model (FP32 training)");
    if (in.shape.size() != 4 || in.shape[0] != 1) throw Refusal("input must be NCHW with batch 1 (FP32 conv training: batch 1)");
    b.in_shape = in.shape;
    std::map<std::string, TT> tensors;
    TT t0 = dims_of(in, "input");
    tensors[in.name] = t0;
    b.in_floats = uint32_t(t0.h * t0.w * t0.c);
    b.act_floats = b.in_floats;
    auto input = [&](const drv::ir::Node& n, size_t i) -> const TT& {
        auto it = tensors.find(n.input(i));
        if (it == tensors.end()) throw Refusal(n.label() + ": input '" + n.input(i) + "' is not a training tensor (constants are parameters of Conv/Gemm only)");
        return it->second;
    };
    const std::string sfx = " (MindSpore Lite Micro v106 spec training tables, FP32 rows)";
    for (const auto& n : g.nodes()) {
        const std::string& op = n.op_type;
        if (op == "Softmax" && &n == &g.nodes().back()) break;
        mk_train_layer l{};
        l.in1 = ~0u, l.w_param = ~0u, l.b_param = ~0u;
        const TT& a = input(n, 0);
        l.in0 = a.id, l.in_h = a.h, l.in_w = a.w, l.in_c = a.c;
        TT o;
        o.id = uint32_t(b.layers.size() + 1);
        const drv::ir::Value& ov = g.value(n.outputs.at(0), n.label());
        if (op == "Conv") {
            const num::Tensor& w = constant(g, n, 1);
            const int64_t group = drv::ir::attr_int(n.attrs, "group", 1);
            const auto st = drv::ir::attr_ints(n.attrs, "strides", {1, 1}), dl = drv::ir::attr_ints(n.attrs, "dilations", {1, 1});
            const auto pd = drv::ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
            if (a.flat_c || w.rank() != 4 || group != a.c || w.dim(0) != a.c || w.dim(1) != 1 || n.has_input(2) ||
                st != std::vector<int64_t>{1, 1} || dl != std::vector<int64_t>{1, 1} || pd.size() != 4)
                throw Refusal(n.label() + ": FP32 Conv training on ws63 supports the depthwise-equivalent conv only (group = in = out "
                              "channels, no bias, stride 1, dilation 1, batch 1; MindSpore Lite Micro v106 spec TFLite Conv2D / ONNX Conv training table)");
            l.op = MK_TR_DWCONV;
            l.p[0] = int32_t(w.dim(2)), l.p[1] = int32_t(w.dim(3)), l.p[2] = int32_t(pd[0]), l.p[3] = int32_t(pd[1]);
            o.h = a.h + int32_t(pd[0] + pd[2]) - l.p[0] + 1, o.w = a.w + int32_t(pd[1] + pd[3]) - l.p[1] + 1, o.c = a.c;
            l.w_param = uint32_t(b.params.size());
            for (int32_t ky = 0; ky < l.p[0]; ++ky)  // [C][1][kh][kw] -> [kh][kw][C]
                for (int32_t kx = 0; kx < l.p[1]; ++kx)
                    for (int32_t c = 0; c < a.c; ++c) b.params.push_back(w.data<float>()[(c * l.p[0] + ky) * l.p[1] + kx]);
        } else if (op == "Relu" || op == "Abs") {
            l.op = op == "Relu" ? MK_TR_RELU : MK_TR_ABS;
            o = a, o.id = uint32_t(b.layers.size() + 1);
        } else if (op == "Add" && g.value(n.input(1), n.label()).is_constant() && !b.layers.empty() && b.layers.back().op == MK_TR_FC &&
                   b.layers.back().b_param == ~0u && a.id == b.layers.size()) {
            // MatMul + Add(bias [N]): one FullyConnected with a bias (TP-FC FP32: 3 inputs, bias count = output channels)
            const num::Tensor& bias = constant(g, n, 1);
            mk_train_layer& fc = b.layers.back();
            if (int32_t(bias.numel()) != fc.out_c) throw Refusal(n.label() + ": the bias count must equal the output channels (seed 000 FP32 FC training)");
            fc.b_param = uint32_t(b.params.size());
            b.params.insert(b.params.end(), bias.data<float>(), bias.data<float>() + bias.numel());
            tensors[n.outputs.at(0)] = a;
            continue;
        } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
            const TT& c = input(n, 1);
            l.p[0] = op == "Add" ? MK_TR_EW_ADD : op == "Sub" ? MK_TR_EW_SUB : op == "Mul" ? MK_TR_EW_MUL : MK_TR_EW_DIV;
            l.in1 = c.id;
            if (c.h == a.h && c.w == a.w && c.c == a.c && c.flat_c == a.flat_c) {
                l.op = MK_TR_EW;
                o = a, o.id = uint32_t(b.layers.size() + 1);
            } else {
                // TP-ELT (Add/Sub/Mul): no broadcast; TP-DIV: broadcast-compatible (numpy rules over the
                // model's NCHW / NC shapes, applied to the stored NHWC dims).
                if (op != "Div") throw Refusal(n.label() + ": FP32 Add/Sub/Mul training needs identical shapes (no broadcast)" + sfx);
                if (a.flat_c || c.flat_c) throw Refusal(n.label() + ": broadcast Div of flattened tensors" + sfx);
                const int32_t da[4] = {1, a.h, a.w, a.c}, dc[4] = {1, c.h, c.w, c.c};
                int32_t od[4];
                for (int k = 0; k < 4; ++k) {
                    if (da[k] != dc[k] && da[k] != 1 && dc[k] != 1) throw Refusal(n.label() + ": Div inputs do not broadcast" + sfx);
                    od[k] = std::max(da[k], dc[k]);
                }
                const int32_t sa[4] = {da[1] * da[2] * da[3], da[2] * da[3], da[3], 1}, sc[4] = {dc[1] * dc[2] * dc[3], dc[2] * dc[3], dc[3], 1};
                for (int k = 0; k < 4; ++k) {
                    l.q[k] = da[k] == 1 ? 0 : sa[k];
                    l.q[4 + k] = dc[k] == 1 ? 0 : sc[k];
                }
                l.op = MK_TR_EWB;
                o.h = od[1], o.w = od[2], o.c = od[3];
            }
        } else if (op == "Concat") {
            const TT& c = input(n, 1);
            if (n.inputs.size() != 2 || a.flat_c || c.flat_c) throw Refusal(n.label() + ": FP32 Concat training takes exactly 2 inputs" + sfx);
            int64_t axis = drv::ir::attr_int(n.attrs, "axis", 1);
            const bool r4 = ov.shape.size() == 4;
            if (axis < 0) axis += int64_t(ov.shape.size());
            l.op = MK_TR_CONCAT, l.in1 = c.id;
            o = a, o.id = uint32_t(b.layers.size() + 1);
            if ((r4 && axis == 1) || (!r4 && axis == 1)) {  // channels: innermost in NHWC
                if (c.h != a.h || c.w != a.w) throw Refusal(n.label() + ": inputs differ outside the axis");
                l.p[0] = a.h * a.w, l.p[1] = a.c, l.p[2] = c.c, l.p[3] = 1, o.c = a.c + c.c;
            } else if (r4 && axis == 2) {
                if (c.w != a.w || c.c != a.c) throw Refusal(n.label() + ": inputs differ outside the axis");
                l.p[0] = 1, l.p[1] = a.h, l.p[2] = c.h, l.p[3] = a.w * a.c, o.h = a.h + c.h;
            } else if (r4 && axis == 3) {
                if (c.h != a.h || c.c != a.c) throw Refusal(n.label() + ": inputs differ outside the axis");
                l.p[0] = a.h, l.p[1] = a.w, l.p[2] = c.w, l.p[3] = a.c, o.w = a.w + c.w;
            } else {
                throw Refusal(n.label() + ": Concat over the batch axis is not a training configuration" + sfx);
            }
        } else if (op == "Pad") {
            const std::string mode = drv::ir::attr_string(n.attrs, "mode", "constant");
            std::vector<int64_t> pads;
            if (n.has_input(1)) {
                const drv::ir::Value& pv = g.value(n.input(1), n.label());
                if (!pv.is_constant()) throw Refusal(n.label() + ": pads must be constant");
                for (size_t i = 0; i < pv.data->numel(); ++i) pads.push_back(pv.data->dtype() == num::DType::I64 ? pv.data->data<int64_t>()[i] : pv.data->data<int32_t>()[i]);
            } else {
                pads = drv::ir::attr_ints(n.attrs, "pads", {});
            }
            bool zero_value = !n.has_input(2);
            if (n.has_input(2)) {
                const drv::ir::Value& cv = g.value(n.input(2), n.label());
                zero_value = cv.is_constant() && cv.data->dtype() == num::DType::F32 && cv.data->numel() == 1 && cv.data->data<float>()[0] == 0.0f;
            }
            if (mode != "constant" || !zero_value || pads.size() != 8 || a.flat_c || pads[0] || pads[1] || pads[4] || pads[5])
                throw Refusal(n.label() + ": FP32 Pad training takes CONSTANT 0 padding of H and W only" + sfx);
            for (int64_t v : pads)
                if (v < 0) throw Refusal(n.label() + ": negative pads" + sfx);
            l.op = MK_TR_PAD, l.p[0] = int32_t(pads[2]), l.p[1] = int32_t(pads[3]);
            o = a, o.id = uint32_t(b.layers.size() + 1);
            o.h = a.h + int32_t(pads[2] + pads[6]), o.w = a.w + int32_t(pads[3] + pads[7]);
        } else if (op == "ReduceMean" || op == "ReduceSum" || op == "GlobalAveragePool") {
            std::vector<int64_t> axes = op == "GlobalAveragePool" ? std::vector<int64_t>{2, 3} : drv::ir::attr_ints(n.attrs, "axes", {});
            if (op != "GlobalAveragePool" && n.has_input(1)) {
                const drv::ir::Value& av = g.value(n.input(1), n.label());
                if (!av.is_constant()) throw Refusal(n.label() + ": axes must be a constant (seed 000 TP-RED)");
                for (size_t i = 0; i < av.data->numel(); ++i)
                    axes.push_back(av.data->dtype() == num::DType::I64 ? av.data->data<int64_t>()[i] : av.data->data<int32_t>()[i]);
            }
            const drv::ir::Value& iv = g.value(n.input(0), n.label());
            const int64_t r = int64_t(iv.shape.size());
            if (axes.empty()) {  // TP-RED: empty axes allowed, reduce all (unless noop_with_empty_axes)
                if (drv::ir::attr_int(n.attrs, "noop_with_empty_axes", 0) != 0) throw Refusal(n.label() + ": noop_with_empty_axes" + sfx);
                for (int64_t k = 0; k < r; ++k) axes.push_back(k);
            }
            // stored (NHWC) axes of the reduced logical axes; they must be adjacent there
            static const int st4[4] = {0, 3, 1, 2};
            std::vector<int> sa;
            for (int64_t ax : axes) {
                const int64_t k = ax < 0 ? ax + r : ax;
                if (k < 0 || k >= r) throw Refusal(n.label() + ": axis out of range");
                sa.push_back(r == 4 ? st4[k] : 3 - int(r - 1 - k));
            }
            std::sort(sa.begin(), sa.end());
            for (size_t k = 1; k < sa.size(); ++k)
                if (sa[k] == sa[k - 1] || sa[k] != sa[k - 1] + 1)
                    throw Refusal(n.label() + ": reduced axes must be unique and adjacent in the NHWC layout (no MCU training kernel yet for others)");
            if (a.flat_c && !(r == 2 && sa == std::vector<int>{3})) throw Refusal(n.label() + ": reduction of a flattened tensor" + sfx);
            const int32_t d[4] = {1, a.h, a.w, a.c};
            int32_t outer = 1, axis = 1, inner = 1, od[4] = {1, a.h, a.w, a.c};
            for (int k = 0; k < 4; ++k) {
                const bool red = std::find(sa.begin(), sa.end(), k) != sa.end();
                (k < sa.front() ? outer : k > sa.back() ? inner : axis) *= d[k];
                if (red) od[k] = 1;
            }
            l.op = MK_TR_REDUCE, l.p[0] = op != "ReduceSum", l.p[1] = outer, l.p[2] = axis, l.p[3] = inner;
            o.h = od[1], o.w = od[2], o.c = od[3];
            const bool keep = op == "GlobalAveragePool" || drv::ir::attr_int(n.attrs, "keepdims", 1) != 0;
            if (!keep && !(o.h == 1 && o.w == 1) && !(ov.shape.size() == 2))
                throw Refusal(n.label() + ": keepdims = 0 leaves a tensor the trainer's [1, C, H, W] / [1, K] layout cannot hold" + sfx);
        } else if (op == "Slice") {
            // TP-SLICE (ONNX Slice): constant starts/ends/axes/steps, positive steps, no empty slice.
            const drv::ir::Value& iv = g.value(n.input(0), n.label());
            const int64_t r = int64_t(iv.shape.size());
            if (r != 4 || a.flat_c) throw Refusal(n.label() + ": FP32 Slice training of [1, C, H, W] tensors here" + sfx);
            auto ints = [&](size_t i, std::vector<int64_t> dflt) {
                if (!n.has_input(i)) return dflt;
                const drv::ir::Value& v = g.value(n.input(i), n.label());
                if (!v.is_constant()) throw Refusal(n.label() + ": starts/ends/axes/steps must be constants (seed 000 TP-SLICE)");
                std::vector<int64_t> out;
                for (size_t k = 0; k < v.data->numel(); ++k)
                    out.push_back(v.data->dtype() == num::DType::I64 ? v.data->data<int64_t>()[k] : v.data->data<int32_t>()[k]);
                return out;
            };
            const std::vector<int64_t> starts = ints(1, drv::ir::attr_ints(n.attrs, "starts", {})), ends = ints(2, drv::ir::attr_ints(n.attrs, "ends", {}));
            std::vector<int64_t> axes = ints(3, drv::ir::attr_ints(n.attrs, "axes", {})), steps = ints(4, {});
            if (axes.empty())
                for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
            if (steps.empty()) steps.assign(starts.size(), 1);
            if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
                throw Refusal(n.label() + ": starts, ends, axes and steps differ in length");
            static const int st4[4] = {0, 3, 1, 2};
            const int32_t d[4] = {1, a.h, a.w, a.c};
            int32_t begin[4] = {0, 0, 0, 0}, step[4] = {1, 1, 1, 1}, od[4] = {1, a.h, a.w, a.c};
            for (size_t k = 0; k < axes.size(); ++k) {
                const int64_t ax = axes[k] < 0 ? axes[k] + r : axes[k];
                if (ax < 0 || ax >= r) throw Refusal(n.label() + ": axis out of range");
                if (steps[k] <= 0) throw Refusal(n.label() + ": FP32 Slice training needs positive steps (seed 000 TP-SLICE)");
                const int s4 = st4[ax];
                const int64_t dim = d[s4];
                int64_t st = starts[k] < 0 ? starts[k] + dim : starts[k], en = ends[k] < 0 ? ends[k] + dim : ends[k];
                st = std::clamp<int64_t>(st, 0, dim), en = std::clamp<int64_t>(en, 0, dim);
                const int64_t cnt = en > st ? (en - st + steps[k] - 1) / steps[k] : 0;
                if (cnt <= 0) throw Refusal(n.label() + ": empty slice (seed 000 TP-SLICE: no empty slice)");
                begin[s4] = int32_t(st), step[s4] = int32_t(steps[k]), od[s4] = int32_t(cnt);
            }
            l.op = MK_TR_SLICE;
            for (int k = 0; k < 4; ++k) l.q[k] = begin[k], l.q[4 + k] = step[k];
            o.h = od[1], o.w = od[2], o.c = od[3];
        } else if (op == "Transpose") {
            // TP-TRANS: a valid constant permutation; of a [1, C, H, W] tensor keeping the batch axis here.
            const auto perm = drv::ir::attr_ints(n.attrs, "perm", {});
            if (a.flat_c || perm.size() != 4 || perm[0] != 0 || ov.shape.size() != 4)
                throw Refusal(n.label() + ": FP32 Transpose training: a constant permutation of [1, C, H, W] keeping the batch" + sfx);
            static const int nhwc_of_nchw[4] = {0, 3, 1, 2}, nchw_of_nhwc[4] = {0, 2, 3, 1};
            l.op = MK_TR_TRANSPOSE;
            for (int j = 0; j < 4; ++j) l.p[j] = nhwc_of_nchw[perm[size_t(nchw_of_nhwc[j])]];
            const int32_t d[4] = {1, a.h, a.w, a.c};
            o.h = d[l.p[1]], o.w = d[l.p[2]], o.c = d[l.p[3]];
        } else if (op == "Flatten" || op == "Reshape") {
            l.op = MK_TR_FLATTEN;
            o.h = 1, o.w = 1, o.c = a.h * a.w * a.c;
            if (a.h * a.w > 1 && a.c > 1 && !a.flat_c) o.flat_h = a.h, o.flat_w = a.w, o.flat_c = a.c;
            else o.flat_h = a.flat_h, o.flat_w = a.flat_w, o.flat_c = a.flat_c;
        } else if (op == "Gemm" || op == "MatMul") {
            const num::Tensor& w = constant(g, n, 1);
            const bool tb = op == "Gemm" && drv::ir::attr_int(n.attrs, "transB", 0) != 0;
            if (a.h != 1 || a.w != 1 || w.rank() != 2 ||
                (op == "Gemm" && (drv::ir::attr_int(n.attrs, "transA", 0) != 0 || drv::ir::attr_float(n.attrs, "alpha", 1.0f) != 1.0f)))
                throw Refusal(n.label() + ": FP32 FC training supports rank 2, A not transposed, alpha 1 (MindSpore Lite Micro v106 spec FullyConnected / Gemm training table)");
            const int32_t K = int32_t(tb ? w.dim(1) : w.dim(0)), N = int32_t(tb ? w.dim(0) : w.dim(1));
            if (K != a.c) throw Refusal(n.label() + ": weight rows do not match the input");
            l.op = MK_TR_FC;
            o.c = N;
            l.w_param = uint32_t(b.params.size());
            for (int32_t j = 0; j < N; ++j)
                for (int32_t k = 0; k < K; ++k) {
                    int32_t src = k;  // our k is NHWC (y, x, c) when flattened from an image; the model's is NCHW (c, y, x)
                    if (a.flat_c > 0) {
                        const int32_t c = k % a.flat_c, x = (k / a.flat_c) % a.flat_w, y = k / (a.flat_c * a.flat_w);
                        src = (c * a.flat_h + y) * a.flat_w + x;
                    }
                    b.params.push_back(tb ? w.data<float>()[j * K + src] : w.data<float>()[src * N + j]);
                }
            if (op == "Gemm" && n.has_input(2) && drv::ir::attr_float(n.attrs, "beta", 1.0f) != 0.0f) {
                const num::Tensor& bias = constant(g, n, 2);
                if (int32_t(bias.numel()) != N) throw Refusal(n.label() + ": the bias count must equal the output channels (MindSpore Lite Micro v106 spec FP32 FC training)");
                l.b_param = uint32_t(b.params.size());
                b.params.insert(b.params.end(), bias.data<float>(), bias.data<float>() + N);
            }
        } else {
            throw Refusal(n.label() + ": not in the ws63 FP32 training configurations (depthwise-equivalent Conv, Relu, Abs, Add/Sub/Mul "
                          "without broadcast, Div, Concat of two, constant Pad, ReduceMean/ReduceSum, Slice, Transpose, Flatten/Reshape, "
                          "Gemm/MatMul)" + sfx);
        }
        l.out_h = o.h, l.out_w = o.w, l.out_c = o.c;
        b.act_floats = std::max({b.act_floats, uint32_t(l.in_h * l.in_w * l.in_c), uint32_t(o.h * o.w * o.c)});
        b.layers.push_back(l);
        if (b.layers.size() > MK_TRAIN_MAX_LAYERS) throw Refusal("more than 32 layers");
        tensors[n.outputs.at(0)] = o;
    }
    if (b.layers.empty() || b.layers.back().out_h != 1 || b.layers.back().out_w != 1)
        throw Refusal("the model must end in the logits [1, classes] (before an optional Softmax)");
    b.classes = uint32_t(b.layers.back().out_c);
    return b;
}

std::vector<uint8_t> build_blob(const Built& b, const num::Tensor& x, const std::vector<int32_t>& y, uint32_t epochs, float lr) {
    mk_train_header h{};
    h.magic = MK_TRAIN_MAGIC;
    h.n_layers = uint32_t(b.layers.size());
    h.n_samples = uint32_t(y.size());
    h.epochs = epochs;
    h.classes = b.classes;
    h.lr = lr;
    h.in_floats = b.in_floats;
    h.act_floats = b.act_floats;
    h.params_floats = uint32_t(b.params.size());
    h.params_off = uint32_t(sizeof h + b.layers.size() * sizeof(mk_train_layer));
    h.x_off = h.params_off + h.params_floats * 4u;
    h.y_off = h.x_off + h.n_samples * h.in_floats * 4u;
    h.total_bytes = h.y_off + h.n_samples * 4u;
    std::vector<uint8_t> blob(h.total_bytes);
    std::memcpy(blob.data(), &h, sizeof h);
    std::memcpy(&blob[sizeof h], b.layers.data(), b.layers.size() * sizeof(mk_train_layer));
    std::memcpy(&blob[h.params_off], b.params.data(), b.params.size() * 4);
    detail::write_samples_nhwc(blob, h.x_off, x, h.in_floats);
    std::memcpy(&blob[h.y_off], y.data(), y.size() * 4);
    return blob;
}

struct Epoch {
    uint32_t loss_bits = 0, correct = 0;
    uint64_t cycles = 0;
};

void host_epoch(void* ctx, uint32_t, float loss, uint32_t correct, uint64_t) {
    Epoch e;
    std::memcpy(&e.loss_bits, &loss, 4);
    e.correct = correct;
    static_cast<std::vector<Epoch>*>(ctx)->push_back(e);
}

}  // namespace

int train_cli(const TrainOptions& o, std::ostream& out, std::ostream& err) {
    const McuTarget* t = find_target(o.platform);
    if (!t) {
        err << "npusim: error: unknown MCU platform '" << o.platform << "', train (known: ws63)\n";
        return 2;
    }
    if (t->name != "ws63") {
        err << "npusim: error: on-device training is not supported on " << t->name
            << " (MindSpore Lite Micro: on-device training runs on ws63 only; 3066H does not support on-device online training for now)\n";
        return 4;
    }
    if (o.epochs == 0 || o.epochs > 100000 || !(o.lr > 0.0f) || !std::isfinite(o.lr)) {
        err << "npusim: error: --epochs must be 1..100000 and --lr a positive number\n";
        return 2;
    }
    if (!o.quantize.empty() && o.quantize != "int8" && o.quantize != "none") {
        err << "npusim: error: --quantize " << o.quantize << " does not apply to training on " << t->name << " (int8: QAS INT8, or none: FP32)\n";
        return 2;
    }
    const bool qas = o.quantize == "int8";
    if (!qas && (!o.calibration.empty() || !o.calibration_method.empty())) {
        err << "npusim: error: --calibration applies to --quantize int8 only\n";
        return 2;
    }
    num::Tensor x, yt;
    try {
        x = num::read_npy(o.data);
        yt = num::read_npy(o.labels);
    } catch (const std::exception& e) {
        err << "npusim: error: " << e.what() << "\n";
        return 2;
    }
    drv::ir::Graph g;
    std::string quant_summary;
    try {
        g = drv::importer::load_model(o.model);
        if (qas) {
            // The toolchain's own FULL_QUANT of the float model (seed 000 s1.4 rule 1), calibrated on the
            // training samples unless --calibration names other data.
            drv::quant::PipelineOptions po;
            po.calibration = o.calibration.empty() ? std::vector<std::string>{o.data} : o.calibration;
            po.seed = o.seed;
            po.accuracy = false;
            if (!o.calibration_method.empty() && !drv::quant::parse_method(o.calibration_method, po.quantize.method)) {
                err << "npusim: error: --calibration-method '" << o.calibration_method << "' (minmax, kl, mmse)\n";
                return 2;
            }
            const drv::quant::QuantizedModel qm = drv::quant::quantize_file(o.model, po);
            g = qm.folded;
            quant_summary = qm.summary();
        }
    } catch (const std::exception& e) {
        err << "npusim: error: " << e.what() << "\n";
        return 3;
    }
    Built b;
    detail::QasBuilt qb;
    std::vector<int64_t> in_shape;
    uint32_t classes = 0;
    size_t n_layers = 0, n_params = 0;
    try {
        if (qas) {
            qb = detail::map_qas(g);
            in_shape = qb.in_shape, classes = qb.classes, n_layers = qb.layers.size(), n_params = qb.params.size();
        } else {
            for (const auto& n : g.nodes())
                if (n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear")
                    throw Refusal("the model is already quantized (QDQ): MindSpore Lite Micro int8 only supports quantized models, not the "
                                  "onnxruntime quantization scenario; give the float32 model with --quantize int8 (QAS INT8 training)");
            b = map_model(g);
            in_shape = b.in_shape, classes = b.classes, n_layers = b.layers.size(), n_params = b.params.size();
        }
    } catch (const Refusal& e) {
        err << "npusim: error: " << e.what() << ", " << o.model << " (train --platform ws63)\n";
        return 4;
    }
    std::vector<int32_t> y;
    const auto& s = in_shape;
    if (x.dtype() != num::DType::F32 || x.rank() != 4 || x.dim(1) != s[1] || x.dim(2) != s[2] || x.dim(3) != s[3] || x.dim(0) < 1) {
        err << "npusim: error: --data must be float32 [N, " << s[1] << ", " << s[2] << ", " << s[3] << "], got " << num::dtype_name(x.dtype()) << " " << x.shape_str() << ", " << o.data << "\n";
        return 2;
    }
    if (yt.numel() != size_t(x.dim(0)) || (yt.dtype() != num::DType::I64 && yt.dtype() != num::DType::I32)) {
        err << "npusim: error: --labels must be int64/int32 [" << x.dim(0) << "], got " << num::dtype_name(yt.dtype()) << " " << yt.shape_str() << ", " << o.labels << "\n";
        return 2;
    }
    for (size_t i = 0; i < yt.numel(); ++i) {
        const int64_t v = yt.dtype() == num::DType::I64 ? yt.data<int64_t>()[i] : yt.data<int32_t>()[i];
        if (v < 0 || v >= int64_t(classes)) {
            err << "npusim: error: label " << v << " at " << i << " outside [0, " << classes << "), " << o.labels << "\n";
            return 2;
        }
        y.push_back(int32_t(v));
    }
    const std::vector<uint8_t> blob = qas ? detail::build_qas_blob(qb, x, y, o.epochs, o.lr) : build_blob(b, x, y, o.epochs, o.lr);
    const std::string elf = firmware_elf(*t, "train");
    const ElfFootprint fw = elf_footprint(elf, *t);
    if (!fw.ok) {
        err << "npusim: error: " << fw.error << "\n";
        return 1;
    }
    const uint32_t sram_need = mk_tr_sram_bytes(blob.data());
    const FitReport fit = check_fit(*t, fw, uint32_t(blob.size()), sram_need);
    if (qas) out << "quantized for training: " << quant_summary << "\n";
    out << "train on " << t->name << (qas ? " (QAS INT8: int8 forward, quantization-aware scaled gradients, float master codes" : " (FP32")
        << ", SGD batch 1, softmax cross-entropy): " << n_layers << " layers, " << n_params << " parameters, " << y.size() << " samples, "
        << o.epochs << " epochs, lr " << o.lr << "\n" << fit.text();
    if (!fit.fits) {
        err << "npusim: error: the training set and model do not fit " << t->name << " (flash holds the samples, SRAM the parameters, gradients and activations)\n";
        return 4;
    }
    // Host build of the same trainer: the independent check of the ISS run.
    std::vector<Epoch> host;
    std::vector<uint32_t> arena(sram_need / 4 + 4);
    const mk_tr_hooks hooks{nullptr, host_epoch, &host};
    if (mk_tr_run(blob.data(), uint32_t(blob.size()), reinterpret_cast<uint8_t*>(arena.data()), uint32_t(arena.size() * 4), &hooks) != MK_TR_OK) {
        err << "npusim: error: the host trainer rejected the blob\n";
        return 1;
    }
    const FirmwareRun run = o.executor ? o.executor(*t, elf, blob, o.max_insns) : run_firmware(*t, elf, blob, o.max_insns);
    if (!run.error.empty()) {
        err << "npusim: error: " << run.error << "\n" << run.console;
        return 1;
    }
    std::vector<Epoch> dev;
    std::string params_hex;
    std::istringstream in(run.console);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string tag;
        ls >> tag;
        if (tag == "EP") {
            Epoch e;
            uint32_t idx = 0;
            ls >> idx >> std::hex >> e.loss_bits >> std::dec >> e.correct >> e.cycles;
            dev.push_back(e);
        } else if (tag == "P") {
            size_t n = 0;
            ls >> n >> params_hex;
        }
    }
    if (dev.size() != o.epochs) {
        err << "npusim: error: the firmware reported " << dev.size() << " of " << o.epochs << " epochs\n" << run.console;
        return 1;
    }
    const uint64_t steps = uint64_t(y.size());
    out << "\nepoch   mean loss   accuracy       cycles   cycles/step     time at " << t->clock_hz / 1000000 << " MHz\n";
    bool same = true;
    uint64_t total = 0;
    for (size_t e = 0; e < dev.size(); ++e) {
        float loss;
        std::memcpy(&loss, &dev[e].loss_bits, 4);
        same = same && dev[e].loss_bits == host[e].loss_bits && dev[e].correct == host[e].correct;
        total += dev[e].cycles;
        out << std::setw(5) << e + 1 << std::setw(12) << std::fixed << std::setprecision(6) << loss << std::setw(10) << std::setprecision(1)
            << 100.0 * dev[e].correct / double(steps) << "%" << std::setw(13) << dev[e].cycles << std::setw(14) << dev[e].cycles / steps
            << std::setw(14) << std::setprecision(3) << double(dev[e].cycles) * 1e3 / double(t->clock_hz) << " ms\n";
    }
    std::ostringstream host_hex;
    for (size_t i = 0; i < n_params * 4; ++i)
        host_hex << std::hex << std::setw(2) << std::setfill('0') << int(reinterpret_cast<const uint8_t*>(arena.data())[i]);
    same = same && host_hex.str() == params_hex;
    out << "total: " << total << " cycles for " << o.epochs * steps << " steps (" << total / (o.epochs * steps)
        << " cycles per forward+backward+update step); SRAM for training " << sram_need << " bytes\n";
    out << "host build of the trainer: losses and trained parameters " << (same ? "bit-identical to the ISS run" : "DIFFER from the ISS run") << "\n";
    return same ? 0 : 1;
}

}  // namespace mcu
