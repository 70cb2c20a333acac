// SPDX-License-Identifier: MIT
// Model compiler, phase 1b on the fp16 path (issue 14, CompileOptions::fp16): the float32 nodes
// of a float model lowered in fp16, what RKNN does with a model it is not asked to quantize.
// Conv (depthwise, grouped), Gemm / MatMul with a constant B as 1x1 convs, GlobalAveragePool as a
// depthwise conv with 1/(H W) weights, each with a following Relu / Clip fused into its DPU; Add /
// Mul / Sub / Div / Max / Min of two tensors (a Relu / ReLU6 fused), BatchNormalization and standalone Relu / ReLU6 as DPU-only tasks;
// AveragePool as a depthwise conv with 1/(kh kw) weights;
// Concat by addressing (or fp16 copies); MaxPool and views share the int8 lowerings (dtype
// plumbing in model_compiler_ops.cpp). fp16 tensors: DeviceTensor::fp16.
#include "compiler_internal.h"
#include "hw/rknpu_regs.h"

#include <array>
#include <map>
#include <tuple>

namespace drv::rknpu::compiler_detail {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

bool is_float(const ir::Value& v) { return v.dtype == num::DType::F32; }

/// Clip bounds: opset >= 11 inputs 1 and 2 (constants, optional), earlier the min/max attributes.
bool clip_bounds(const UnitGraph& g, const ir::Node& n, float& lo, float& hi) {
    lo = -kInf, hi = kInf;
    if (n.op_type == "Relu") {
        lo = 0.f;
        return true;
    }
    if (n.op_type != "Clip") return false;
    if (g.opset() < 11) {
        lo = ir::attr_float(n.attrs, "min", -kInf);
        hi = ir::attr_float(n.attrs, "max", kInf);
        return true;
    }
    for (size_t k = 1; k <= 2; ++k) {
        if (!n.has_input(k)) continue;
        const num::Tensor* t = const_of(g, n, k);
        if (!t || t->dtype() != num::DType::F32 || t->numel() != 1) return false;
        (k == 1 ? lo : hi) = t->data<float>()[0];
    }
    return lo <= hi;
}

}  // namespace

}  // namespace drv::rknpu::compiler_detail

namespace drv::rknpu {

bool is_float_model(const ir::Graph& g) {
    for (const ir::Node& n : g.nodes()) {
        const std::string& op = n.op_type;
        if (op == "QuantizeLinear" || op == "DequantizeLinear" || op.rfind("QLinear", 0) == 0 || op == "QGemm" ||
            op == "DynamicQuantizeLinear" || op == "MatMulInteger" || op == "ConvInteger")
            return false;
    }
    for (const std::string& in : g.inputs())
        if (const ir::Value* v = g.find_value(in); v && compiler_detail::is_q8(v->dtype)) return false;
    return true;
}

}  // namespace drv::rknpu

namespace drv::rknpu::compiler_detail {

DeviceTensor& Compiler::dev_f16(const std::string& name, const int* dims) {
    auto it = m_.tensors.find(name);
    const ir::Value& v = g_.value(name);
    if (it != m_.tensors.end()) {
        if (!it->second.fp16) unsupported(fmt::format("tensor '{}' is int8 on the device, read here as fp16", name));
        // A flat image (a recurrent layer's Y, model_compiler_rnn.cpp) is not the NCHW layout of
        // its shape: a reader of that layout would misread it.
        int c = 0, h = 0, w = 0;
        if (device_dims(v.shape, c, h, w) && (c != it->second.c || h != it->second.h || w != it->second.w))
            unsupported(fmt::format("tensor '{}' is laid out {}x{}x{} on the device, not as its shape {}", name,
                                    it->second.c, it->second.h, it->second.w, v.shape_str()));
        return it->second;
    }
    if (!is_float(v)) unsupported(fmt::format("tensor '{}' is {}, not float32", name, num::dtype_name(v.dtype)));
    DeviceTensor t;
    t.name = name;
    t.ir_shape = v.shape;
    if (dims)
        t.c = dims[0], t.h = dims[1], t.w = dims[2];
    else if (!device_dims(v.shape, t.c, t.h, t.w))
        unsupported(
            fmt::format("tensor '{}' shape {} has no device layout (batch 1, rank 4 or 2)", name, v.shape_str()));
    t.fp16 = true;
    t.c2 = soc_.npu.c2_fp16.value;
    if (t.c2 <= 0) unsupported(fmt::format("{} has no fp16 C2 (npu.c2_fp16)", soc_.name));
    t.line_stride = static_cast<uint32_t>(t.w * t.c2 * 2);
    t.surf_stride =
        static_cast<uint32_t>(align_up(static_cast<uint64_t>(t.line_stride) * static_cast<uint64_t>(t.h), 16));
    t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((t.c + t.c2 - 1) / t.c2);
    return m_.tensors.emplace(name, t).first->second;
}

std::optional<size_t> Compiler::fusable_act_f16(const std::string& y, float& lo, float& hi) const {
    for (const auto& o : g_.outputs())
        if (o == y) return std::nullopt;
    const auto c = g_.consumers(y);
    if (c.size() != 1 || consumed_.count(c[0])) return std::nullopt;
    const ir::Node& a = g_.nodes()[c[0]];
    if (a.input(0) != y || forced_cpu(a) || checker_cpu_.count(a.name) || !a.domain.empty()) return std::nullopt;
    if (!clip_bounds(g_, a, lo, hi)) return std::nullopt;
    return c[0];
}

void Compiler::fuse_act_f16(Layer& L, size_t act, ConvOp* op, float lo, float hi) {
    const ir::Node& a = g_.nodes()[act];
    consumed_.insert(act);
    L.outputs = a.outputs;
    L.out_shape = shape_of(a.outputs.at(0));
    std::vector<size_t> units{cur_unit_, act};
    L.ir_nodes = ref_nodes(units);
    L.op += a.op_type == "Relu" ? "Relu" : "Clip";
    if (op) {
        op->act = Act::Clip;
        op->clip_lo_f = lo, op->clip_hi_f = hi;
        if (lo == 0.f && hi == kInf) op->act = Act::Relu;
    }
}

void Compiler::push_conv_f16(Layer L, ConvOp op, const std::string& in, const std::string& out,
                             std::function<void(ConvOp&)> fill) {
    const uint64_t c2 = static_cast<uint64_t>(soc_.npu.c2_fp16.value);
    const uint64_t kin = op.depthwise ? 1 : (static_cast<uint64_t>(op.in_c) + c2 - 1) / c2 * c2;
    init_estimate_ +=
        static_cast<uint64_t>(op.out_c) * (2 * kin * static_cast<uint64_t>(op.kernel_h * op.kernel_w) + 64) + 4096;
    L.note = L.note.empty() ? "fp16 (fp32 accumulate)" : "fp16 (fp32 accumulate); " + L.note;
    push_npu(
        std::move(L),
        [this, op = std::move(op), in, out, fill = std::move(fill)]() mutable {
            if (!opts_.timing_only) fill(op);
            auto bodies = lower_conv_op(op, m_.tensors.at(in), m_.tensors.at(out), arena_, soc_, m_.cores);
            std::vector<float>().swap(op.weights_f);
            return bodies;
        },
        true);
}

bool Compiler::conv_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& x = g_.value(n.input(0));
    const num::Tensor* w = const_of(g_, n, 1);
    if (!w) unsupported("weights are not constant");
    if (w->dtype() != num::DType::F32) unsupported("weights are not float32");
    if (w->rank() != 4 || x.shape.size() != 4) unsupported("only 2-D convolution is lowered");
    if (ir::attr_string(n.attrs, "auto_pad", "NOTSET") != "NOTSET") unsupported("auto_pad is not lowered");
    const int64_t group = ir::attr_int(n.attrs, "group", 1);
    ConvOp op;
    op.fp16 = true;
    op.name = n.name;
    op.in_c = static_cast<int>(x.shape[1]);
    op.out_c = static_cast<int>(w->dim(0));
    op.kernel_h = static_cast<int>(w->dim(2));
    op.kernel_w = static_cast<int>(w->dim(3));
    op.depthwise = group > 1 && group == op.in_c && op.out_c == op.in_c && w->dim(1) == 1;
    const bool grouped = group > 1 && !op.depthwise;
    if (group < 1 || op.in_c % group != 0 || op.out_c % group != 0)
        unsupported(fmt::format("group {} does not divide the channels", group));
    if (w->dim(1) != (op.depthwise ? 1 : op.in_c / group)) unsupported("weight input channels differ from the input's");
    const auto st = ir::attr_ints(n.attrs, "strides", {1, 1});
    const auto dl = ir::attr_ints(n.attrs, "dilations", {1, 1});
    const auto pd = ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
    if (st.size() != 2 || dl.size() != 2 || pd.size() != 4) unsupported("strides/dilations/pads rank");
    op.stride_h = static_cast<int>(st[0]), op.stride_w = static_cast<int>(st[1]);
    op.dilation_h = static_cast<int>(dl[0]), op.dilation_w = static_cast<int>(dl[1]);
    op.pad_top = static_cast<int>(pd[0]), op.pad_left = static_cast<int>(pd[1]);
    op.pad_bottom = static_cast<int>(pd[2]), op.pad_right = static_cast<int>(pd[3]);
    const num::Tensor* b = const_of(g_, n, 2);
    if (n.has_input(2) && !b) unsupported("bias is not constant");
    if (b && (b->dtype() != num::DType::F32 || b->numel() != static_cast<size_t>(op.out_c))) unsupported("bias shape");
    dev_f16(n.input(0));
    float lo = 0, hi = 0;
    const auto act = fusable_act_f16(n.outputs.at(0), lo, hi);
    Layer L = base_layer(i, op.depthwise ? "DepthwiseConv" : "Conv", Unit::Npu);
    const auto& ys = g_.value(n.outputs[0]).shape;
    L.macs = static_cast<uint64_t>(op.out_c) * static_cast<uint64_t>(ys[2] * ys[3]) *
             static_cast<uint64_t>(op.depthwise ? 1 : op.in_c / group) * static_cast<uint64_t>(op.kernel_h * op.kernel_w);
    if (act) fuse_act_f16(L, *act, &op, lo, hi);
    else fuse_conv_lut_f16(op, L);  // SiLU / Sigmoid / HardSwish / ... in the conv's EW stage
    const std::string y = L.outputs.at(0);
    dev_f16(y);
    if (grouped) L.note = fmt::format("group {} as a dense convolution with block-diagonal weights", group);
    push_conv_f16(std::move(L), std::move(op), n.input(0), y, [w, b, group, grouped](ConvOp& o) {
        if (b) o.bias_f = floats_of(*b);
        if (!grouped) {
            o.weights_f_ref = w->data<float>();
            return;
        }
        const size_t cg = static_cast<size_t>(o.in_c / group), mg = static_cast<size_t>(o.out_c / group);
        const size_t k = static_cast<size_t>(o.kernel_h * o.kernel_w), C = static_cast<size_t>(o.in_c);
        o.weights_f.assign(static_cast<size_t>(o.out_c) * C * k, 0.f);
        const float* src = w->data<float>();
        for (size_t oc = 0; oc < static_cast<size_t>(o.out_c); ++oc)
            for (size_t c = 0; c < cg; ++c)
                std::memcpy(&o.weights_f[(oc * C + (oc / mg) * cg + c) * k], src + (oc * cg + c) * k, 4 * k);
    });
    return true;
}

bool Compiler::conv_transpose_f16(size_t i) {
    // Stride phases as on the int8 path (lower_conv_phase.cpp, A-CONVT), fp16 tensors and weights.
    const ir::Node& n = g_.nodes()[i];
    const num::Tensor* w = const_of(g_, n, 1);
    if (!w) unsupported("weights are not constant");
    if (w->dtype() != num::DType::F32) unsupported("weights are not float32");
    ConvTransposeOp ct = convtranspose_geometry(n, *w);
    ConvOp& op = ct.base;
    op.fp16 = true;
    const num::Tensor* b = const_of(g_, n, 2);
    if (n.has_input(2) && !b) unsupported("bias is not constant");
    if (b && (b->dtype() != num::DType::F32 || b->numel() != static_cast<size_t>(op.out_c))) unsupported("bias shape");
    if (b) op.bias_f = floats_of(*b);
    dev_f16(n.input(0));
    float lo = 0, hi = 0;
    const auto act = fusable_act_f16(n.outputs.at(0), lo, hi);
    Layer L = base_layer(i, "ConvTranspose", Unit::Npu);
    if (act) {
        fuse_act_f16(L, *act, &op, lo, hi);
    } else if (fuse_conv_lut_f16(op, L)) {  // SiLU / Sigmoid / HardSwish / ... in each phase's EW stage
        const std::string conv = op.depthwise ? "DepthwiseConvolution" : "Convolution";
        if (L.op.rfind(conv, 0) == 0) L.op = "ConvTranspose" + L.op.substr(conv.size());
    }
    const std::string y = L.outputs.at(0);
    dev_f16(y);
    L.note = L.note.empty() ? "fp16 (fp32 accumulate)" : "fp16 (fp32 accumulate); " + L.note;
    push_conv_transpose(std::move(L), std::move(ct), n.input(0), y, w);
    return true;
}

bool Compiler::gemm_f16(size_t i, bool matmul, int flat) {
    const ir::Node& n = g_.nodes()[i];
    const std::string what = matmul ? "MatMul" : "Gemm";
    if (!matmul) {
        if (ir::attr_int(n.attrs, "transA", 0) != 0) unsupported("Gemm with transA");
        if (ir::attr_float(n.attrs, "alpha", 1.f) != 1.f || ir::attr_float(n.attrs, "beta", 1.f) != 1.f)
            unsupported("Gemm with alpha or beta != 1");
    }
    const ir::Value& a = g_.value(n.input(0));
    if (a.shape.size() != 2 || a.shape[0] != 1) unsupported(what + " input is not [1, K]");
    // The Flatten's 4-D input when the layer covers Flatten + Gemm (flatten_gemm).
    const std::string x_in = flat >= 0 ? g_.nodes()[static_cast<size_t>(flat)].input(0) : n.input(0);
    const auto& xs = g_.value(x_in).shape;
    const int kh = flat >= 0 ? static_cast<int>(xs[2]) : 1, kw = flat >= 0 ? static_cast<int>(xs[3]) : 1;
    if (kh > 31 || kw > 31) unsupported(what + " after a Flatten of a map wider than the 31-tap conv kernel");
    const num::Tensor* bm = const_of(g_, n, 1);
    if (!bm || bm->dtype() != num::DType::F32 || bm->rank() != 2) unsupported(what + " B is not a constant float matrix");
    const bool tb = !matmul && ir::attr_int(n.attrs, "transB", 0) != 0;
    const int K = static_cast<int>(a.shape[1]);
    const int N = static_cast<int>(tb ? bm->dim(0) : bm->dim(1));
    if ((tb ? bm->dim(1) : bm->dim(0)) != K) unsupported(what + " K mismatch");
    const num::Tensor* c = !matmul && n.has_input(2) ? const_of(g_, n, 2) : nullptr;
    if (!matmul && n.has_input(2) && (!c || c->dtype() != num::DType::F32 || (c->numel() != 1 && c->numel() != static_cast<size_t>(N))))
        unsupported("Gemm C is not a constant per-output bias");
    ConvOp op;
    op.fp16 = true;
    op.name = n.name;
    op.in_c = K / (kh * kw), op.out_c = N;
    op.kernel_h = kh, op.kernel_w = kw;
    dev_f16(x_in);
    float lo = 0, hi = 0;
    const auto act = fusable_act_f16(n.outputs.at(0), lo, hi);
    Layer L = base_layer(i, "FullyConnected", Unit::Npu);
    L.macs = static_cast<uint64_t>(K) * static_cast<uint64_t>(N);
    if (act) fuse_act_f16(L, *act, &op, lo, hi);
    const std::string y = L.outputs.at(0);
    dev_f16(y);
    L.note = flat >= 0 ? fmt::format("{} + {} as a {}x{} convolution of the {}x{}x{} map (the flat index is the "
                                     "kernel's c, h, w)",
                                     g_.nodes()[static_cast<size_t>(flat)].op_type, what, kh, kw, K / (kh * kw), kh, kw)
                       : what + " as a 1x1 convolution on a 1x1xK input";
    if (flat >= 0) absorb_flatten(L, static_cast<size_t>(flat), x_in);
    push_conv_f16(std::move(L), std::move(op), x_in, y, [bm, c, tb, K, N](ConvOp& o) {
        if (c) {
            o.bias_f = floats_of(*c);
            if (o.bias_f.size() == 1) o.bias_f.assign(static_cast<size_t>(N), o.bias_f[0]);
        }
        o.weights_f.resize(static_cast<size_t>(K) * static_cast<size_t>(N));
        const float* bw = bm->data<float>();
        for (size_t r = 0; r < static_cast<size_t>(N); ++r)
            for (size_t k = 0; k < static_cast<size_t>(K); ++k)
                o.weights_f[r * static_cast<size_t>(K) + k] =
                    tb ? bw[r * static_cast<size_t>(K) + k] : bw[k * static_cast<size_t>(N) + r];
    });
    if (flat >= 0) consumed_.insert(i);  // the Gemm is this layer's (placed at its Flatten)
    return true;
}

bool Compiler::gap_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& x = g_.value(n.input(0));
    if (x.shape.size() != 4) unsupported("GlobalAveragePool input is not 4-D");
    const int C = static_cast<int>(x.shape[1]), H = static_cast<int>(x.shape[2]), W = static_cast<int>(x.shape[3]);
    ConvOp op;
    op.fp16 = true;
    op.name = n.name;
    op.in_c = op.out_c = C;
    op.kernel_h = H, op.kernel_w = W;
    op.depthwise = true;
    dev_f16(n.input(0));
    dev_f16(n.outputs.at(0));
    Layer L = base_layer(i, "GlobalAveragePool", Unit::Npu);
    L.macs = static_cast<uint64_t>(C) * H * W;
    L.note = "depthwise conv with 1/(H W) weights";
    push_conv_f16(std::move(L), std::move(op), n.input(0), n.outputs[0], [C, H, W](ConvOp& o) {
        o.weights_f.assign(static_cast<size_t>(C) * H * W, 1.f / static_cast<float>(H * W));
    });
    return true;
}

bool Compiler::avgpool_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& yv = g_.value(n.outputs.at(0));
    ConvOp op = avgpool_op(n);  // as the int8 lowering: one divisor for every window
    op.fp16 = true;
    const int64_t kh = op.kernel_h, kw = op.kernel_w;
    dev_f16(n.input(0));
    dev_f16(n.outputs[0]);
    Layer L = base_layer(i, "AveragePool", Unit::Npu);
    L.macs = static_cast<uint64_t>(op.out_c) * static_cast<uint64_t>(yv.shape[2] * yv.shape[3]) *
             static_cast<uint64_t>(kh * kw);
    L.note = "depthwise conv with 1/(kh kw) weights (padding reads +0.0)";
    const size_t taps = static_cast<size_t>(kh * kw);
    push_conv_f16(std::move(L), std::move(op), n.input(0), n.outputs[0], [taps](ConvOp& o) {
        o.weights_f.assign(static_cast<size_t>(o.out_c) * taps, 1.f / static_cast<float>(taps));
    });
    return true;
}

void Compiler::push_dpu_f16(Layer L, Fp16DpuOp op, const std::string& a, const std::string& b, const std::string& y) {
    L.note = L.note.empty() ? "fp16" : "fp16; " + L.note;
    const std::string name = L.name;
    push_npu(
        std::move(L),
        [this, op = std::move(op), a, b, y, name]() {
            const DeviceTensor &ta = m_.tensors.at(a), &ty = m_.tensors.at(y);
            const DeviceTensor* tb = b.empty() ? nullptr : &m_.tensors.at(b);
            return across_cores(ty.h, [&](int y0, int rows, int core) {
                const bool pc = tb && tb->h == 1 && tb->w == 1 && (ty.h > 1 || ty.w > 1);  // [1,C,1,1]: whole
                const DeviceTensor rb = tb ? (pc ? *tb : rows_of(*tb, y0, rows)) : DeviceTensor{};
                return lower_fp16_dpu_op(name, op, rows_of(ta, y0, rows), tb ? &rb : nullptr, rows_of(ty, y0, rows),
                                         arena_, soc_, core);
            });
        },
        true);
}

bool Compiler::eltwise_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    if (n.inputs.size() != 2) unsupported(n.op_type + fmt::format(" of {} inputs (two are lowered)", n.inputs.size()));
    std::string a = n.input(0), b = n.input(1);
    if (g_.value(a).is_constant() || g_.value(b).is_constant()) unsupported(n.op_type + " with a constant input");
    // Sub / Div: the EW ALU's minus / div of the task input by the ERDMA operand (A-EWALU), so the
    // operands keep their order; Add / Mul / Max / Min commute.
    const bool commutes = n.op_type != "Sub" && n.op_type != "Div";
    // [1,C,1,1] against [1,C,H,W] (squeeze-excite): the ERDMA per channel; either side (commutative).
    const auto& ys = g_.value(n.outputs.at(0)).shape;
    const auto per_channel = [&](const std::string& v) {
        const auto& s = g_.value(v).shape;
        return s.size() == 4 && ys.size() == 4 && s[0] == 1 && s[1] == ys[1] && s[2] == 1 && s[3] == 1;
    };
    if (commutes && g_.value(a).shape != ys && g_.value(b).shape == ys && per_channel(a)) std::swap(a, b);
    // Other 4-D broadcasts ([b,c,1,w], [b,1,1,w], [b,c,h,1], [b,1,h,1], ...): the operand tiled to the
    // output's shape first (tile_tasks, the Expand lowering in fp16), as the int8 Add (Compiler::add).
    auto broadcast = [&](const std::string& v) {
        const auto& s = g_.value(v).shape;
        if (s == ys) return false;
        if (s.size() != 4 || ys.size() != 4 || s[0] != 1 || ys[0] != 1)
            unsupported(n.op_type + " with an operand that is not a 4-D broadcast of the [1,C,H,W] output");
        for (size_t k = 1; k < 4; ++k)
            if (s[k] != ys[k] && s[k] != 1) unsupported(n.op_type + " with operands that do not broadcast");
        return true;
    };
    const bool expand_a = broadcast(a), expand_b = !per_channel(b) && broadcast(b);
    const DeviceTensor& da = dev_f16(a);
    const DeviceTensor& db = dev_f16(b);
    Fp16DpuOp op;
    op.kind = n.op_type == "Mul" ? Fp16DpuOp::Kind::Mul : Fp16DpuOp::Kind::Add;
    using Algo = hw::rknpu::enums::AluAlgo;
    static const std::map<std::string, std::pair<Algo, const char*>> kAlu{
        {"Add", {Algo::ADD, "add"}}, {"Mul", {Algo::ADD, "mul"}}, {"Sub", {Algo::MINUS, "sub"}},
        {"Div", {Algo::DIV, "div"}}, {"Max", {Algo::MAX, "max"}}, {"Min", {Algo::MIN, "min"}}};
    op.alu_algo = static_cast<uint32_t>(kAlu.at(n.op_type).first);
    op.what = kAlu.at(n.op_type).second;
    Layer L = base_layer(i, n.op_type, Unit::Npu);
    float lo = 0, hi = 0;
    if (const auto act = fusable_act_f16(n.outputs[0], lo, hi); act && lo == 0.f) {
        fuse_act_f16(L, *act, nullptr, lo, hi);
        op.lo = lo, op.hi = hi;
    }
    const std::string y = L.outputs.at(0);
    const DeviceTensor& dy = dev_f16(y);
    if (!expand_a && !expand_b) {
        push_dpu_f16(std::move(L), std::move(op), a, b, y);
        return true;
    }
    std::vector<std::array<std::string, 3>> tiled;  // operand, its full-size scratch, its channel broadcast
    for (const auto& [v, d, expand] : {std::tuple{a, &da, expand_a}, std::tuple{b, &db, expand_b}}) {
        if (!expand) continue;
        const std::string full = scratch_like(*d, y + "/npusim_broadcast_" + (v == a ? "a" : "b"), dy.c, dy.h, dy.w);
        const bool spatial = d->h != dy.h || d->w != dy.w;
        tiled.push_back({v, full, d->c != dy.c && spatial ? scratch_like(*d, full + "_channels", dy.c, d->h, d->w) : ""});
    }
    // The full-size input first (its rows are what the DPU task reads).
    L.inputs = expand_a && !expand_b && !per_channel(b) ? std::vector<std::string>{b, a} : std::vector<std::string>{a, b};
    L.in_shape = shape_of(L.inputs[0]);
    L.note = L.note.empty() ? "fp16; broadcast operand tiled first (DPU copies)" : "fp16; broadcast operand tiled first; " + L.note;
    const int core = m_.cores.front();
    const std::string first = L.inputs[0], name = L.name;
    push_npu(
        std::move(L),
        [this, op = std::move(op), a, b, y, tiled, core, first, name]() {
            std::vector<TaskBody> all;
            std::string fa = a, fb = b;
            for (const auto& t : tiled) {
                for (TaskBody& body : tile_tasks(name + "/broadcast", t[0], t[1], t[2], core, true)) all.push_back(std::move(body));
                (t[0] == a ? fa : fb) = t[1];
            }
            const DeviceTensor& f = m_.tensors.at(first);
            for (TaskBody& body : lower_fp16_dpu_op(name, op, m_.tensors.at(fa), &m_.tensors.at(fb), m_.tensors.at(y), arena_, soc_, core)) {
                body.meta.in_window = {0, f.c, 0, f.h, 0, f.w};
                all.push_back(std::move(body));
            }
            return all;
        },
        false);
    return true;
}

bool Compiler::bn_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const std::string x = n.input(0);
    const DeviceTensor& in = dev_f16(x);
    const float eps = ir::attr_float(n.attrs, "epsilon", 1e-5f);
    std::vector<std::vector<float>> prm;
    for (size_t k = 1; k <= 4; ++k) {
        const num::Tensor* t = const_of(g_, n, k);
        if (!t || t->dtype() != num::DType::F32) unsupported("BatchNormalization parameters are not constant float32");
        prm.push_back(floats_of(*t));
        if (prm.back().size() != static_cast<size_t>(in.c)) unsupported("BatchNormalization parameter size");
    }
    Fp16DpuOp op;
    op.what = "batchnorm";
    for (size_t c = 0; c < prm[0].size(); ++c) {
        const float a = prm[0][c] / std::sqrt(prm[3][c] + eps);  // as onnxruntime: scale / sqrt(var + eps)
        op.mul.push_back(a);
        op.add.push_back(prm[1][c] - a * prm[2][c]);
    }
    Layer L = base_layer(i, "BatchNorm", Unit::Npu);
    float lo = 0, hi = 0;
    if (const auto act = fusable_act_f16(n.outputs.at(0), lo, hi); act && lo == 0.f) {
        fuse_act_f16(L, *act, nullptr, lo, hi);
        op.lo = lo, op.hi = hi;
    }
    const std::string y = L.outputs.at(0);
    dev_f16(y);
    L.note = "per-channel affine task";
    push_dpu_f16(std::move(L), std::move(op), x, "", y);
    return true;
}

bool Compiler::act_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    Fp16DpuOp op;
    if (!clip_bounds(g_, n, op.lo, op.hi)) unsupported("Clip bounds are not constant");
    if (op.lo != 0.f) unsupported("Clip with a lower bound other than 0 on its own (fused after a conv it is lowered)");
    op.what = n.op_type == "Relu" ? "relu" : "clip";
    op.mul = {1.f};
    dev_f16(n.input(0));
    dev_f16(n.outputs.at(0));
    push_dpu_f16(base_layer(i, n.op_type, Unit::Npu), std::move(op), n.input(0), "", n.outputs[0]);
    return true;
}

bool Compiler::concat_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const std::string y = n.outputs.at(0);
    const int64_t axis = ir::attr_int(n.attrs, "axis", 1);
    if (g_.value(y).shape.size() == 4 && (axis == 2 || axis == 3 || axis == -2 || axis == -1))
        return concat_spatial(i, axis < 0 ? axis + 4 : axis);  // DPU copies, the int8 lowering's (model_compiler_move.cpp)
    if (g_.value(y).shape.size() != 4 || (axis != 1 && axis != -3)) unsupported("Concat not along channels of a 4-D tensor");
    const DeviceTensor& out = dev_f16(y);
    std::vector<ConcatPart> parts;
    int c_off = 0;
    for (size_t j = 0; j < n.inputs.size(); ++j) {
        const std::string x = n.input(j);
        if (g_.value(x).is_constant()) unsupported("Concat with a constant input");
        const DeviceTensor& t = dev_f16(x);
        if (t.h != out.h || t.w != out.w) unsupported("Concat inputs differ in H/W");
        bool ok = c_off % t.c2 == 0 && (j + 1 == n.inputs.size() || t.c % t.c2 == 0) && g_.producer(x) >= 0 &&
                  !aliased_.count(x) && t.alias_of.empty() &&
                  std::find(g_.outputs().begin(), g_.outputs().end(), x) == g_.outputs().end();
        for (const auto& [nm, dt] : m_.tensors) ok &= dt.alias_of != x;
        for (const auto& p : parts) ok &= p.name != x;
        parts.push_back({x, c_off, ok});
        c_off += t.c;
    }
    if (c_off != out.c) unsupported("Concat channel sum differs from the output");
    const size_t copies = alias_in_place(parts, y);
    Layer L = base_layer(i, "Concat", copies ? Unit::Npu : Unit::View);
    L.note = copies ? fmt::format("fp16: {} of {} inputs written in place, {} copies", parts.size() - copies,
                                  parts.size(), copies)
                    : fmt::format("fp16 concat by addressing: all {} inputs written in place", parts.size());
    if (!copies) {
        pending_.push_back({std::move(L), nullptr, false, cur_unit_});
        return true;
    }
    push_npu(
        std::move(L),
        [this, parts, y, name = n.name]() {
            std::vector<TaskBody> tasks;
            const DeviceTensor& parent = m_.tensors.at(y);
            Fp16DpuOp copy;
            copy.what = "concat copy";
            copy.mul = {1.f};
            for (const auto& p : parts) {
                if (p.in_place) continue;
                const DeviceTensor& src = m_.tensors.at(p.name);
                const DeviceTensor dst = slice(parent, p.c_off, src.c);
                for (auto& b : across_cores(dst.h, [&](int y0, int rows, int core) {
                         return lower_fp16_dpu_op(name, copy, rows_of(src, y0, rows), nullptr, rows_of(dst, y0, rows),
                                                  arena_, soc_, core);
                     })) {
                    b.meta.out_window.c0 += p.c_off, b.meta.out_window.c1 += p.c_off;
                    tasks.push_back(std::move(b));
                }
            }
            return tasks;
        },
        true);
    return true;
}

bool Compiler::classify_fp16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    if (!n.domain.empty() || n.inputs.empty() || n.outputs.empty()) return false;
    const ir::Value* x = g_.find_value(n.input(0));
    if (!x || !is_float(*x)) return false;
    const std::string& op = n.op_type;
    if (op == "Conv") return conv_f16(i);
    if (op == "ConvTranspose") return conv_transpose_f16(i);
    if (op == "Gemm") return gemm_f16(i, false);
    if (op == "MatMul") return gemm_f16(i, true);
    if (op == "GlobalAveragePool") return gap_f16(i);
    if (op == "AveragePool") return avgpool_f16(i);
    if (lut_f16(i)) return true;  // a Sigmoid / SiLU / HardSwish / ... region (model_compiler_fp16_act.cpp)
    if (const_arith_f16(i)) return true;
    if (op == "Add" || op == "Mul" || op == "Sub" || op == "Div" || op == "Max" || op == "Min") return eltwise_f16(i);
    if (op == "BatchNormalization") return bn_f16(i);
    if (op == "Relu" || op == "Clip") return act_f16(i);
    if (op == "Concat") return concat_f16(i);
    if (op == "Softmax") return softmax_f16(i);
    if (op == "PRelu") return prelu_f16(i);
    if (op == "LSTM" || op == "GRU") return rnn_f16(i);
    return false;  // MaxPool and views: the shared lowerings (classify_npu)
}

}  // namespace drv::rknpu::compiler_detail
