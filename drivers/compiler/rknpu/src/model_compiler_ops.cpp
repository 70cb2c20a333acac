// SPDX-License-Identifier: MIT
// Model compiler, phase 1b: the NPU lowering of each operator (QLinearConv, QGemm/QLinearMatMul as
// 1x1 convs, GlobalAveragePool as a depthwise conv, QLinearAdd/Mul, MaxPool, DQ-BatchNorm-Q),
// deferred until the memory plan is known. Views and Concat: model_compiler_views.cpp.
#include "compiler_internal.h"
#include "lower_move.h"

#include <tuple>

namespace drv::rknpu::compiler_detail {

namespace {

/// Layer note of an int8 conv / Gemm with a float output (ConvOp::float_out).
constexpr const char* kFloatOutNote = "int8 with an fp16 output (DPU float path on the int32 accumulator)";

/// The bias of a float-output unit in real units, one value per output channel (a single value,
/// Gemm's broadcast C, repeated): a float constant as is, an int32 one (scale x_scale x w_scale[c], as
/// DequantizeLinear of a QLinearConv / QGemm bias) dequantized per channel.
void float_bias(const num::Tensor& b, float xs, ConvOp& op) {
    const size_t n = b.numel() == 1 ? static_cast<size_t>(op.out_c) : b.numel();
    if (b.dtype() == num::DType::F32) {
        const auto v = floats_of(b);
        op.bias_f.assign(n, v.empty() ? 0.f : v[0]);
        if (v.size() > 1) op.bias_f = v;
        return;
    }
    const auto q = ints_of(b);
    op.bias_f.resize(n);
    for (size_t k = 0; k < n; ++k)
        op.bias_f[k] = static_cast<float>(q[q.size() == 1 ? 0 : k]) * (xs * op.w_scales[std::min(k, op.w_scales.size() - 1)]);
}

}  // namespace

void Compiler::float_out_act(Layer& L, ConvOp& op) {
    // A Relu / Clip on the float output (TensorRT style: DQ -> Conv -> Relu with no Q after it) in
    // the same DPU program, as on the fp16 path; then the fp16 output tensor.
    float lo = 0, hi = 0;
    if (const auto act = fusable_act_f16(L.outputs.at(0), lo, hi)) fuse_act_f16(L, *act, &op, lo, hi);
    dev_f16(L.outputs.at(0));
}

void Compiler::push_npu(Layer L, std::function<std::vector<TaskBody>()> f, bool multicore) {
    PendingLayer p;
    p.layer = std::move(L);
    p.lower = std::move(f);
    p.multicore = multicore;
    p.unit_node = cur_unit_;
    pending_.push_back(std::move(p));
}

bool Compiler::conv(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& x = g_.value(n.input(0));
    const num::Tensor* w = const_of(g_, n, 3);
    if (!w) unsupported("weights are not constant");
    if (w->dtype() != num::DType::I8) unsupported("weights are not int8");
    if (w->rank() != 4 || x.shape.size() != 4) unsupported("only 2-D convolution is lowered");
    if (ir::attr_string(n.attrs, "auto_pad", "NOTSET") != "NOTSET") unsupported("auto_pad is not lowered");
    if (const num::Tensor* wz = const_of(g_, n, 5))
        for (int32_t z : ints_of(*wz))
            if (z != 0) unsupported("weight zero point is not 0");
    const int64_t group = ir::attr_int(n.attrs, "group", 1);
    ConvOp op;
    op.name = n.name;
    op.in_c = static_cast<int>(x.shape[1]);
    op.out_c = static_cast<int>(w->dim(0));
    op.kernel_h = static_cast<int>(w->dim(2));
    op.kernel_w = static_cast<int>(w->dim(3));
    op.depthwise = group > 1 && group == op.in_c && op.out_c == op.in_c && w->dim(1) == 1;
    // Other grouped convolutions run as one dense convolution with block-diagonal weights (zeros
    // between groups): exact, the MAC array doing group x the real MACs.
    const bool grouped = group > 1 && !op.depthwise;
    if (group < 1 || op.in_c % group != 0 || op.out_c % group != 0)
        unsupported(fmt::format("group {} does not divide the channels", group));
    if (w->dim(1) != (op.depthwise ? 1 : op.in_c / group))  // the lowering reads out_c x in_c x KH x KW values
        unsupported("weight input channels differ from the input's");
    const auto st = ir::attr_ints(n.attrs, "strides", {1, 1});
    const auto dl = ir::attr_ints(n.attrs, "dilations", {1, 1});
    const auto pd = ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
    if (st.size() != 2 || dl.size() != 2 || pd.size() != 4) unsupported("strides/dilations/pads rank");
    op.stride_h = static_cast<int>(st[0]), op.stride_w = static_cast<int>(st[1]);
    op.dilation_h = static_cast<int>(dl[0]), op.dilation_w = static_cast<int>(dl[1]);
    op.pad_top = static_cast<int>(pd[0]), op.pad_left = static_cast<int>(pd[1]);
    op.pad_bottom = static_cast<int>(pd[2]), op.pad_right = static_cast<int>(pd[3]);
    op.w_scales = floats_of(required(g_, n, 4));
    if (op.w_scales.size() != 1 && op.w_scales.size() != static_cast<size_t>(op.out_c))
        unsupported("weight scale count");
    const bool float_out = ir::attr_int(n.attrs, "npusim_float_out", 0) != 0;  // UnitGraph::fuse_float_out
    op.float_ref = !float_out && ir::attr_int(n.attrs, "npusim_float_ref", 0) != 0;  // UnitGraph::fuse
    if (const num::Tensor* b = const_of(g_, n, 8)) {
        if (float_out || (op.float_ref && b->dtype() == num::DType::F32))
            float_bias(*b, scalar_scale(g_, n, 1), op);
        else if (b->dtype() == num::DType::I32)
            op.bias = ints_of(*b);
        else
            unsupported("bias is not int32");
        if (!op.bias.empty() && op.bias.size() != static_cast<size_t>(op.out_c)) unsupported("bias shape");
        if (!op.bias_f.empty() && op.bias_f.size() != static_cast<size_t>(op.out_c)) unsupported("bias shape");
    } else if (n.has_input(8))
        unsupported("bias is not constant");
    const float xs = scalar_scale(g_, n, 1);
    const DeviceTensor& in = dev(n.input(0), xs, scalar_zp(g_, n, 2));
    op.in_scale = xs, op.in_zp = in.zp;
    // A LeakyRelu / PRelu between the conv and its Q (UnitGraph: npusim_prelu_slopes), conv_prelu.h.
    const bool prelu = !float_out && n.attrs.has("npusim_prelu_slopes");
    if (float_out) {
        op.float_out = true;  // the fp16 output tensor once a fused Relu / Clip is known (below)
    } else {
        const float ys = scalar_scale(g_, n, 6);
        const DeviceTensor& out = dev(n.outputs.at(0), ys, scalar_zp(g_, n, 7));
        op.out_scale = ys, op.out_zp = out.zp;
        fused_clip(n, ys, scalar_zp(g_, n, 7), out.graph_uint8, op);
    }
    if (prelu) {
        op.act = Act::Prelu;
        op.prelu = n.attrs.get_floats("npusim_prelu_slopes", {});
        if (op.prelu.size() != 1 && op.prelu.size() != static_cast<size_t>(op.out_c))
            unsupported(fmt::format("{} PRelu slopes for {} output channels", op.prelu.size(), op.out_c));
    }
    Layer L = base_layer(i, op.depthwise ? "DepthwiseConv" : "Conv", Unit::Npu);
    if (float_out) {
        L.note = kFloatOutNote;
        float_out_act(L, op);
    }
    if (prelu) {
        L.op = std::string(op.depthwise ? "DepthwiseConvolution" : "Convolution") +
               (op.prelu.size() > 1 ? "PRelu" : "LeakyRelu");
        L.note = "negative slope in the DPU EW stage (PReLU multiply)";
    }
    const auto& ys_shape = g_.value(n.outputs[0]).shape;
    L.macs = static_cast<uint64_t>(op.out_c) * static_cast<uint64_t>(ys_shape[2] * ys_shape[3]) *
             static_cast<uint64_t>(op.depthwise ? 1 : op.in_c / group) * static_cast<uint64_t>(op.kernel_h * op.kernel_w);
    if (grouped) {
        L.note = (L.note.empty() ? "" : L.note + "; ") +
                 fmt::format("group {} as a dense convolution with block-diagonal weights", group);
        const std::string y = L.outputs.at(0);
        push_conv(std::move(L), std::move(op), n.input(0), y, [w, group](ConvOp& o) {
            const size_t cg = static_cast<size_t>(o.in_c / group), mg = static_cast<size_t>(o.out_c / group);
            const size_t k = static_cast<size_t>(o.kernel_h * o.kernel_w), C = static_cast<size_t>(o.in_c);
            o.weights.assign(static_cast<size_t>(o.out_c) * C * k, 0);
            const int8_t* src = w->data<int8_t>();
            for (size_t oc = 0; oc < static_cast<size_t>(o.out_c); ++oc)
                for (size_t c = 0; c < cg; ++c)
                    std::memcpy(&o.weights[(oc * C + (oc / mg) * cg + c) * k], src + (oc * cg + c) * k, k);
        });
        return true;
    }
    std::string y = L.outputs.at(0);
    if (n.outputs.size() == 1 && !prelu && !float_out) fuse_conv_lut(op, L, y);  // a Sigmoid / Swish / ... only it reads (lower_act.cpp)
    if (!float_out && conv_rows_exceed_cbuf(op, in, soc_)) {
        push_conv_phases(std::move(L), std::move(op), n.input(0), y, w->data<int8_t>());
        return true;
    }
    push_conv(std::move(L), std::move(op), n.input(0), y,
              [w](ConvOp& o) { o.weights_ref = w->data<int8_t>(); });  // the graph constant, no copy
    return true;
}

ConvTransposeOp Compiler::convtranspose_geometry(const ir::Node& n, const num::Tensor& w) {
    // ONNX ConvTranspose attributes (int8 unit and float node): weights [Cin, Cout / group, kh, kw].
    const ir::Value& x = g_.value(n.input(0));
    if (w.rank() != 4 || x.shape.size() != 4) unsupported("only 2-D ConvTranspose is lowered");
    if (ir::attr_string(n.attrs, "auto_pad", "NOTSET") != "NOTSET") unsupported("auto_pad is not lowered");
    const int64_t group = ir::attr_int(n.attrs, "group", 1);
    ConvTransposeOp ct;
    ConvOp& op = ct.base;
    op.name = n.name;
    op.in_c = static_cast<int>(x.shape[1]);
    if (group < 1 || w.dim(0) != op.in_c || op.in_c % group != 0)
        unsupported(fmt::format("weights [{}, ...] and group {} for {} input channels", w.dim(0), group, op.in_c));
    ct.group = static_cast<int>(group);
    const int cout_g = static_cast<int>(w.dim(1));
    op.out_c = cout_g * ct.group;
    ct.kernel_h = static_cast<int>(w.dim(2)), ct.kernel_w = static_cast<int>(w.dim(3));
    op.depthwise = group > 1 && group == op.in_c && cout_g == 1;
    const auto st = ir::attr_ints(n.attrs, "strides", {1, 1});
    const auto dl = ir::attr_ints(n.attrs, "dilations", {1, 1});
    const auto pd = ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
    const auto opad = ir::attr_ints(n.attrs, "output_padding", {0, 0});
    if (st.size() != 2 || dl.size() != 2 || pd.size() != 4 || opad.size() != 2)
        unsupported("strides/dilations/pads/output_padding rank");
    if (dl[0] != 1 || dl[1] != 1) unsupported("dilated ConvTranspose is not lowered");
    for (int64_t v : pd)
        if (v < 0) unsupported("negative pads");
    ct.stride_h = static_cast<int>(st[0]), ct.stride_w = static_cast<int>(st[1]);
    ct.pad_top = static_cast<int>(pd[0]), ct.pad_left = static_cast<int>(pd[1]);
    // The output size the attributes give (ONNX ConvTranspose); output_shape must agree with it.
    const auto& ys_shape = g_.value(n.outputs[0]).shape;
    const int64_t oh = st[0] * (x.shape[2] - 1) + opad[0] + (w.dim(2) - 1) + 1 - pd[0] - pd[2];
    const int64_t ow = st[1] * (x.shape[3] - 1) + opad[1] + (w.dim(3) - 1) + 1 - pd[1] - pd[3];
    if (ys_shape.size() != 4 || ys_shape[2] != oh || ys_shape[3] != ow || ys_shape[1] != op.out_c)
        unsupported(fmt::format("output shape {} is not the attributes' [1, {}, {}, {}] (output_shape is not lowered)",
                                shape_of(n.outputs[0]), op.out_c, oh, ow));
    return ct;
}

void Compiler::push_conv_transpose(Layer L, ConvTransposeOp ct, const std::string& in, const std::string& y,
                                   const num::Tensor* w) {
    const ConvOp& op = ct.base;
    const ir::Value& x = g_.value(in);
    L.macs = static_cast<uint64_t>(op.in_c) * static_cast<uint64_t>(x.shape[2] * x.shape[3]) *
             static_cast<uint64_t>(op.out_c / ct.group) * static_cast<uint64_t>(ct.kernel_h * ct.kernel_w);
    L.note = (L.note.empty() ? "" : L.note + "; ") +
             fmt::format("{} x {} stride phases (stride-1 convolutions of sub-kernels, DPU interleave){}", ct.stride_h,
                         ct.stride_w, ct.group > 1 && !op.depthwise ? ", groups as block-diagonal dense weights" : "");
    // Layer-internal tensors (conv_transpose_scratch), planned like activations, live in this layer.
    const DeviceTensor& ty = m_.tensors.at(y);
    std::vector<std::string> sn;
    for (const auto& [h, wd] : conv_transpose_scratch(ct, ty)) {
        DeviceTensor t = ty;
        t.name = fmt::format("{}/npusim_convtranspose_scratch{}", y, sn.size());
        t.h = h, t.w = wd;
        t.ir_shape = {1, ty.c, h, wd};
        t.line_stride = static_cast<uint32_t>(wd * ty.c2 * ty.elem_bytes());
        t.surf_stride = static_cast<uint32_t>(align_up(static_cast<uint64_t>(t.line_stride) * static_cast<uint64_t>(h), 16));
        t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((ty.c + ty.c2 - 1) / ty.c2);
        t.alias_of.clear();
        m_.tensors[t.name] = t;
        if (journal_on_) journal_new_.push_back(t.name);
        scratch_[t.name] = cur_unit_;
        sn.push_back(t.name);
    }
    // Each phase packs its own sub-kernels: about the dense weights once, plus bias and scales per phase.
    const uint64_t c2 = static_cast<uint64_t>(op.fp16 ? soc_.npu.c2_fp16.value : soc_.npu.c2_int8.value);
    const uint64_t kin = op.depthwise ? 1 : (static_cast<uint64_t>(op.in_c) + c2 - 1) / c2 * c2;
    init_estimate_ += (op.fp16 ? 2u : 1u) * static_cast<uint64_t>(op.out_c) * kin *
                          static_cast<uint64_t>(ct.kernel_h * ct.kernel_w) +
                      static_cast<uint64_t>(ct.stride_h * ct.stride_w) * (static_cast<uint64_t>(op.out_c) * 64 + 4096);
    push_npu(
        std::move(L),
        [this, ct = std::move(ct), in, y, w, sn]() mutable {
            if (!opts_.timing_only) {  // timing-only: the weights are laid out unpacked
                if (ct.base.fp16) ct.wf = w->data<float>();
                else ct.w = w->data<int8_t>();
            }
            std::vector<DeviceTensor> s;
            for (const auto& k : sn) s.push_back(m_.tensors.at(k));
            return lower_conv_transpose_op(ct, m_.tensors.at(in), m_.tensors.at(y), s, arena_, soc_, m_.cores.front());
        },
        false);
}

bool Compiler::conv_transpose(size_t i) {
    // npusim.QLinearConvTranspose (UnitGraph: DQ x, DQ w [per tensor or along axis 1], [DQ int32 b]
    // -> ConvTranspose -> [Relu / Clip / LeakyRelu / PRelu] -> Q; QLinearConv's input order): stride
    // phases (lower_conv_phase.cpp, assumption A-CONVT).
    const ir::Node& n = g_.nodes()[i];
    const num::Tensor* w = const_of(g_, n, 3);
    if (!w) unsupported("weights are not constant");
    if (w->dtype() != num::DType::I8) unsupported("weights are not int8");
    if (const num::Tensor* wz = const_of(g_, n, 5))
        for (int32_t z : ints_of(*wz))
            if (z != 0) unsupported("weight zero point is not 0");
    ConvTransposeOp ct = convtranspose_geometry(n, *w);
    ConvOp& op = ct.base;
    const int cout_g = op.out_c / ct.group;
    // Scales per tensor or along axis 1 (the Cout / group kernels of every group).
    const std::vector<float> ws = floats_of(required(g_, n, 4));
    if (ws.size() != 1 && ws.size() != static_cast<size_t>(cout_g)) unsupported("weight scale count");
    op.w_scales.resize(ws.size() == 1 ? 1 : static_cast<size_t>(op.out_c));
    for (size_t k = 0; k < op.w_scales.size(); ++k) op.w_scales[k] = ws[ws.size() == 1 ? 0 : k % ws.size()];
    // onnxruntime has no QLinearConvTranspose: it runs DQ -> ConvTranspose -> Q in float, the
    // bias added in float (UnitGraph::fuse marks the unit npusim_float_ref, as for a float Conv).
    op.float_ref = ir::attr_int(n.attrs, "npusim_float_ref", 0) != 0;
    const float xs = scalar_scale(g_, n, 1);
    if (const num::Tensor* b = const_of(g_, n, 8)) {
        if (op.float_ref && b->dtype() == num::DType::F32)
            float_bias(*b, xs, op);
        else if (b->dtype() == num::DType::I32)
            op.bias = ints_of(*b);
        else
            unsupported("bias is not int32");
    } else if (n.has_input(8)) {
        unsupported("bias is not constant");
    }
    if (!op.bias.empty() && op.bias.size() != static_cast<size_t>(op.out_c)) unsupported("bias size");
    if (!op.bias_f.empty() && op.bias_f.size() != static_cast<size_t>(op.out_c)) unsupported("bias size");
    const DeviceTensor& in = dev(n.input(0), xs, scalar_zp(g_, n, 2));
    op.in_scale = xs, op.in_zp = in.zp;
    const float ys = scalar_scale(g_, n, 6);
    const DeviceTensor& out = dev(n.outputs.at(0), ys, scalar_zp(g_, n, 7));
    op.out_scale = ys, op.out_zp = out.zp;
    fused_clip(n, ys, scalar_zp(g_, n, 7), out.graph_uint8, op);
    const bool prelu = n.attrs.has("npusim_prelu_slopes");
    if (prelu) {
        op.act = Act::Prelu;
        op.prelu = n.attrs.get_floats("npusim_prelu_slopes", {});
        if (op.prelu.size() != 1 && op.prelu.size() != static_cast<size_t>(op.out_c))
            unsupported(fmt::format("{} PRelu slopes for {} output channels", op.prelu.size(), op.out_c));
    }
    Layer L = base_layer(i, "ConvTranspose", Unit::Npu);
    if (prelu) L.op = std::string("ConvTranspose") + (op.prelu.size() > 1 ? "PRelu" : "LeakyRelu");
    std::string y = n.outputs[0];
    if (n.outputs.size() == 1 && !prelu && fuse_conv_lut(op, L, y)) {  // a Sigmoid / Swish / ... only it reads
        const std::string conv = op.depthwise ? "DepthwiseConvolution" : "Convolution";
        if (L.op.rfind(conv, 0) == 0) L.op = "ConvTranspose" + L.op.substr(conv.size());
    }
    push_conv_transpose(std::move(L), std::move(ct), n.input(0), y, w);
    return true;
}

void Compiler::push_conv_phases(Layer L, ConvOp op, const std::string& in, const std::string& out, const int8_t* w) {
    // The phases' output rows, one phase at a time: a layer-internal scratch (lower_conv_phase.cpp).
    const DeviceTensor& ty = m_.tensors.at(out);
    DeviceTensor t = ty;
    t.name = out + "/npusim_row_phase_scratch";
    t.h = (ty.h + op.dilation_h - 1) / op.dilation_h;
    t.ir_shape = {1, ty.c, t.h, ty.w};
    t.line_stride = static_cast<uint32_t>(ty.w * ty.c2);
    t.surf_stride = static_cast<uint32_t>(align_up(static_cast<uint64_t>(t.line_stride) * static_cast<uint64_t>(t.h), 16));
    t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((ty.c + ty.c2 - 1) / ty.c2);
    t.alias_of.clear();
    m_.tensors[t.name] = t;
    scratch_[t.name] = cur_unit_;
    // Each phase packs its own copy of the weights (push_conv's estimate, d times).
    const uint64_t c2 = static_cast<uint64_t>(soc_.npu.c2_int8.value);
    const uint64_t kin = op.depthwise ? 1 : (static_cast<uint64_t>(op.in_c) + c2 - 1) / c2 * c2;
    init_estimate_ += static_cast<uint64_t>(op.dilation_h) *
                      (static_cast<uint64_t>(op.out_c) * (kin * static_cast<uint64_t>(op.kernel_h * op.kernel_w) + 64) + 4096);
    L.note = (L.note.empty() ? "" : L.note + "; ") +
             fmt::format("dilation {} in {} row phases (the dilated rows exceed the CBUF)", op.dilation_h, op.dilation_h);
    push_npu(
        std::move(L),
        [this, op = std::move(op), in, out, w, s = t.name]() mutable {
            if (!opts_.timing_only) op.weights_ref = w;  // timing-only: the weights are laid out unpacked
            return lower_conv_row_phases(op, m_.tensors.at(in), m_.tensors.at(out), m_.tensors.at(s), arena_, soc_,
                                         {m_.cores.front()});
        },
        false);
}

void Compiler::push_conv(Layer L, ConvOp op, const std::string& in, const std::string& out,
               std::function<void(ConvOp&)> fill) {
    // Packed weights pad input channels to C2 (depthwise: channels); bias and scales per kernel.
    const uint64_t c2 = static_cast<uint64_t>(soc_.npu.c2_int8.value);
    const uint64_t kin = op.depthwise ? 1 : (static_cast<uint64_t>(op.in_c) + c2 - 1) / c2 * c2;
    init_estimate_ +=
        static_cast<uint64_t>(op.out_c) * (kin * static_cast<uint64_t>(op.kernel_h * op.kernel_w) + 64) + 4096;
    push_npu(
        std::move(L),
        [this, op = std::move(op), in, out, fill = std::move(fill)]() mutable {
            if (!opts_.timing_only) fill(op);  // timing-only: the lowering lays the weights out unpacked
            auto bodies = lower_conv_op(op, m_.tensors.at(in), m_.tensors.at(out), arena_, soc_, m_.cores);
            std::vector<int8_t>().swap(op.weights);
            return bodies;
        },
        true);
}

bool Compiler::flatten_gemm(size_t i) {
    // Flatten / Reshape of a [1, C, H, W] feature map to [1, C H W] read only by a fully connected
    // layer (VGG / AlexNet / CNN keyword-spotting heads): the row-major index c H W + h W + w of
    // the flat vector is the (c, h, w) of a C x H x W kernel, so Gemm(Flatten(x), B^T) is the H x W
    // convolution of x with B's rows as its kernels (the same products and sums; the RKNN converter
    // runs a Gemm as a convolution, issue 13) and the flat tensor never needs the row-major bytes
    // a view cannot give (NC1HWC2 is not row-major).
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& x = g_.value(n.input(0));
    const ir::Value& y = g_.value(n.outputs.at(0));
    const bool f16 = opts_.fp16 && x.dtype == num::DType::F32;  // the fp16 path: a float Gemm
    if (!(f16 || is_q8(x.dtype)) || x.dtype != y.dtype || x.shape.size() != 4 || x.shape[0] != 1 ||
        y.shape.size() != 2 || y.shape[0] != 1 || x.shape[2] * x.shape[3] <= 1 ||
        y.shape[1] != x.shape[1] * x.shape[2] * x.shape[3])
        return false;
    if (n.op_type == "Flatten" && ir::attr_int(n.attrs, "axis", 1) != 1) return false;
    if (!f16 && (x.quant.empty() || y.quant.empty() || x.quant.scale != y.quant.scale ||
                 x.quant.zero_point != y.quant.zero_point))
        return false;
    const auto cons = g_.consumers(n.outputs[0]);
    if (cons.size() != 1 || std::find(g_.outputs().begin(), g_.outputs().end(), n.outputs[0]) != g_.outputs().end())
        return false;
    const ir::Node& c = g_.nodes()[cons[0]];
    const bool gemm_node = f16 ? c.op_type == "Gemm" && c.domain.empty() && const_of(g_, c, 1)
                               : c.op_type == "QGemm" && c.domain == "com.microsoft" && const_of(g_, c, 3);
    if (!gemm_node || c.input(0) != n.outputs[0] || forced_cpu(c) || checker_cpu_.count(c.name) ||
        consumed_.count(cons[0]))
        return false;
    return f16 ? gemm_f16(cons[0], false, static_cast<int>(i)) : gemm(cons[0], false, static_cast<int>(i));
}

void Compiler::absorb_flatten(Layer& L, size_t flat, const std::string& x_in) {
    L.inputs = {x_in};
    L.in_shape = shape_of(x_in);
    std::vector<size_t> nodes = L.ir_nodes;
    for (size_t k : g_.members(flat)) nodes.push_back(k);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    L.ir_nodes = nodes;
    for (const auto& r : g_.rewrites(flat))
        if (std::find(L.rewrites.begin(), L.rewrites.end(), r) == L.rewrites.end()) L.rewrites.push_back(r);
    bool named = false;
    for (auto& r : L.rewrites)  // the report names the rewrite this layer is
        if (r.rfind("Gemm with constant B -> 1x1 Conv", 0) == 0) {
            r = "Flatten + Gemm with constant B -> H x W Conv (the flat index is the kernel's c, h, w)";
            named = true;
        }
    if (!named) L.rewrites.push_back("Flatten + Gemm with constant B -> H x W Conv (the flat index is the kernel's c, h, w)");
}

bool Compiler::gemm(size_t i, bool matmul, int flat) {
    const ir::Node& n = g_.nodes()[i];
    const std::string what = matmul ? "QLinearMatMul" : "QGemm";
    const size_t ys_at = matmul ? 6 : 7;
    if (!matmul) {
        if (ir::attr_int(n.attrs, "transA", 0) != 0) unsupported("QGemm with transA");
        if (std::fabs(ir::attr_float(n.attrs, "alpha", 1.f) - 1.f) > 0) unsupported("QGemm with alpha != 1");
    }
    // No y_scale: onnxruntime's float-output QGemm (or a UnitGraph float-output unit).
    const bool float_out = !matmul && !n.has_input(ys_at);
    if (matmul && !n.has_input(ys_at)) unsupported(what + " without y_scale");
    const ir::Value& a = g_.value(n.input(0));
    if (matmul && !const_of(g_, n, 3))
        unsupported("QLinearMatMul of two activations other than exMatMul's form (A^T B of [1,K,1,N] and [1,K,1,M] "
                    "through Reshape / Transpose, K whole atoms)");
    if (a.shape.size() != 2 || a.shape[0] != 1) unsupported(what + " input is not [1, K]");
    // The Flatten's 4-D input when the layer covers Flatten + QGemm (flatten_gemm).
    const std::string x_in = flat >= 0 ? g_.nodes()[static_cast<size_t>(flat)].input(0) : n.input(0);
    const auto& xs = g_.value(x_in).shape;
    const int kh = flat >= 0 ? static_cast<int>(xs[2]) : 1, kw = flat >= 0 ? static_cast<int>(xs[3]) : 1;
    if (kh > 31 || kw > 31) unsupported(what + " after a Flatten of a map wider than the 31-tap conv kernel");
    const num::Tensor* b = const_of(g_, n, 3);
    if (!b || b->dtype() != num::DType::I8 || b->rank() != 2)
        unsupported(what + " B is not a constant int8 matrix");
    if (const num::Tensor* bz = const_of(g_, n, 5))
        for (int32_t z : ints_of(*bz))
            if (z != 0) unsupported(what + " B zero point is not 0");
    const bool tb = !matmul && ir::attr_int(n.attrs, "transB", 0) != 0;
    const int K = static_cast<int>(a.shape[1]);
    const int N = static_cast<int>(tb ? b->dim(0) : b->dim(1));
    if ((tb ? b->dim(1) : b->dim(0)) != K) unsupported(what + " K mismatch");
    ConvOp op;
    op.name = n.name;
    op.in_c = K / (kh * kw), op.out_c = N;
    op.kernel_h = kh, op.kernel_w = kw;
    op.float_ref = !float_out && ir::attr_int(n.attrs, "npusim_float_ref", 0) != 0;  // UnitGraph::fuse
    op.w_scales = floats_of(required(g_, n, 4));
    if (op.w_scales.size() != 1 && op.w_scales.size() != static_cast<size_t>(N))
        unsupported(what + " B scale count");
    if (float_out && n.has_input(6)) {
        const num::Tensor* c = const_of(g_, n, 6);
        if (!c) unsupported("QGemm C is not constant");
        float_bias(*c, scalar_scale(g_, n, 1), op);
        if (op.bias_f.size() != static_cast<size_t>(N)) unsupported("QGemm bias shape");
    } else if (!matmul && n.has_input(6) && ir::attr_int(n.attrs, "npusim_float_ref", 0) != 0 && const_of(g_, n, 6) &&
               const_of(g_, n, 6)->dtype() == num::DType::F32) {
        float_bias(*const_of(g_, n, 6), scalar_scale(g_, n, 1), op);  // UnitGraph::fuse: a float bias
        if (op.bias_f.size() != static_cast<size_t>(N)) unsupported("QGemm bias shape");
    } else if (!matmul && n.has_input(6)) {
        const num::Tensor* c = const_of(g_, n, 6);
        if (!c || c->dtype() != num::DType::I32) unsupported("QGemm C is not a constant int32 bias");
        op.bias = ints_of(*c);
        if (op.bias.size() == 1) op.bias.assign(static_cast<size_t>(N), op.bias[0]);
        if (op.bias.size() != static_cast<size_t>(N)) unsupported("QGemm bias shape");
    }
    const float as = scalar_scale(g_, n, 1);
    const DeviceTensor& in = dev(x_in, as, scalar_zp(g_, n, 2));
    op.in_scale = as, op.in_zp = in.zp;
    if (float_out) {
        op.float_out = true;  // the fp16 output tensor once a fused Relu / Clip is known (below)
    } else {
        const float ys = scalar_scale(g_, n, ys_at);
        const DeviceTensor& out = dev(n.outputs.at(0), ys, scalar_zp(g_, n, ys_at + 1));
        op.out_scale = ys, op.out_zp = out.zp;
        fused_clip(n, ys, scalar_zp(g_, n, ys_at + 1), out.graph_uint8, op);
    }
    Layer L = base_layer(i, "FullyConnected", Unit::Npu);
    L.macs = static_cast<uint64_t>(K) * static_cast<uint64_t>(N);
    L.note = flat >= 0 ? fmt::format("{} + {} as a {}x{} convolution of the {}x{}x{} map (the flat index is the "
                                     "kernel's c, h, w)",
                                     g_.nodes()[static_cast<size_t>(flat)].op_type, what, kh, kw, K / (kh * kw), kh, kw)
                       : what + " as a 1x1 convolution on a 1x1xK input";
    if (float_out) L.note += std::string("; ") + kFloatOutNote;
    if (flat >= 0) absorb_flatten(L, static_cast<size_t>(flat), x_in);
    if (float_out) float_out_act(L, op);
    const std::string y = L.outputs.at(0);
    push_conv(std::move(L), std::move(op), x_in, y, [b, tb, K, N](ConvOp& o) {
        o.weights.resize(static_cast<size_t>(K) * static_cast<size_t>(N));
        const int8_t* bw = b->data<int8_t>();
        for (size_t r = 0; r < static_cast<size_t>(N); ++r)
            for (size_t k = 0; k < static_cast<size_t>(K); ++k)
                o.weights[r * static_cast<size_t>(K) + k] =
                    tb ? bw[r * static_cast<size_t>(K) + k] : bw[k * static_cast<size_t>(N) + r];
    });
    if (flat >= 0) consumed_.insert(i);  // the QGemm is this layer's (placed at its Flatten)
    return true;
}

bool Compiler::gap(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    if (ir::attr_int(n.attrs, "channels_last", 0) != 0) unsupported("channels_last GlobalAveragePool");
    const ir::Value& x = g_.value(n.input(0));
    if (x.shape.size() != 4) unsupported("GlobalAveragePool input is not 4-D");
    const int C = static_cast<int>(x.shape[1]), H = static_cast<int>(x.shape[2]), W = static_cast<int>(x.shape[3]);
    ConvOp op;
    op.name = n.name;
    op.in_c = op.out_c = C;
    op.kernel_h = H, op.kernel_w = W;
    op.depthwise = true;
    op.w_scales = {1.f / static_cast<float>(H * W)};
    const float xs = scalar_scale(g_, n, 1), ys = scalar_scale(g_, n, 3);
    const DeviceTensor& in = dev(n.input(0), xs, scalar_zp(g_, n, 2));
    const DeviceTensor& out = dev(n.outputs.at(0), ys, scalar_zp(g_, n, 4));
    op.in_scale = xs, op.out_scale = ys, op.in_zp = in.zp, op.out_zp = out.zp;
    Layer L = base_layer(i, "GlobalAveragePool", Unit::Npu);
    L.macs = static_cast<uint64_t>(C) * H * W;
    L.note = "depthwise conv with an all-ones kernel: exact integer sum, one requantization";
    push_conv(std::move(L), std::move(op), n.input(0), n.outputs[0],
              [C, H, W](ConvOp& o) { o.weights.assign(static_cast<size_t>(C) * H * W, 1); });
    return true;
}

bool Compiler::add(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    if (lut_unit(i)) return true;  // by a scalar constant: a table (lower_act.cpp)
    if (const_affine_qlinear(i)) return true;  // by another constant: the affine task
    std::string a = n.input(0), b = n.input(3);
    const std::string y = n.outputs.at(0);
    // [1,C,1,1] against [1,C,H,W] (squeeze-excite): the EW operand per channel (either side; both
    // ops commute).
    const auto& ys_shape = g_.value(y).shape;
    auto per_channel = [&](const std::string& v) {
        const auto& s = g_.value(v).shape;
        return s.size() == 4 && ys_shape.size() == 4 && s[0] == 1 && s[1] == ys_shape[1] && s[2] == 1 && s[3] == 1 &&
               ys_shape[2] * ys_shape[3] > 1;
    };
    size_t ai = 0, bi = 3;
    // Sub (x - y) runs as y's term negated on the MRDMA (lower_rsub_op: b - a), so the MRDMA input
    // is y; a [1,C,1,1] y is tiled to the output's shape first (below): the ERDMA's per-channel
    // operand is not negated (the model reads EW_OP_CVT_SCALE unsigned in the integer path).
    // [1,C,H,1] against [1,C,H,W] (coordinate attention's row weights): one value per (channel, row).
    // ([1,1,H,1]: its one channel broadcast first, a 1x1 selection conv into a [1,C,H,1] scratch.)
    auto per_row = [&](const std::string& v) {
        const auto& s = g_.value(v).shape;
        return s.size() == 4 && ys_shape.size() == 4 && s[0] == 1 && (s[1] == ys_shape[1] || s[1] == 1) &&
               s[2] == ys_shape[2] && s[2] > 1 && s[3] == 1 && ys_shape[3] > 1;
    };
    const bool sub = n.op_type == "QLinearSub";
    if (sub) {
        std::swap(a, b), std::swap(ai, bi);
    } else if ((per_channel(a) && !per_channel(b)) || (per_row(a) && !per_row(b))) {
        std::swap(a, b), std::swap(ai, bi);
    }
    const bool chan = per_channel(b);
    // With 16-byte atoms the compact NC1HWC2 image of the [1,C,H,W] input is C1 x H rows of W
    // atoms back to back, and that of the [1,C,H,1] operand C1 x H atoms: read as a cube of C1 x H
    // surfaces (C1 x H x 16 virtual channels) of one row, the operand is exactly the ERDMA's
    // per-channel operand of that cube with surfaces 16 bytes apart (EW_SURF_STRIDE 1: "if per
    // channel, stride 1", docs/rknpu-register-semantics.md §10). One DPU task, no copy (A-ERDMA's
    // per-channel layout, assumption A-ROWOP in "Tile, Expand and broadcast operands").
    const int atom = soc_.npu.c2_int8.value;
    const bool row_op = per_row(b) && atom == 16 &&
                      (ys_shape[1] + atom - 1) / atom * ys_shape[2] * atom <= 8192;
    // Any other numpy broadcast of a 4-D operand ([b,c,1,w], [b,1,1,w], [b,c,h,1], [b,1,h,1], ...):
    // no DPU operand mode repeats along H or W, so the operand is tiled to the output's shape first
    // (the Expand lowering: a channel selection conv when it has one channel, DPU copies along H / W,
    // into a layer-internal scratch), then the same-shape DPU task reads the scratch.
    auto broadcast = [&](const std::string& v) {
        const auto& s = g_.value(v).shape;
        if (s == ys_shape) return false;
        if (s.size() != 4 || ys_shape.size() != 4 || ys_shape[0] != 1 || s[0] != 1)
            unsupported(n.op_type + " with an operand that is not a 4-D broadcast of the [1,C,H,W] output");
        for (size_t k = 1; k < 4; ++k)
            if (s[k] != ys_shape[k] && s[k] != 1) unsupported(n.op_type + " with operands that do not broadcast");
        return true;
    };
    const bool expand_a = broadcast(a);
    const bool use_rows = row_op && !expand_a;  // both operands broadcast: both tiled
    const bool expand_b = !chan && !use_rows && broadcast(b);
    if (g_.value(a).is_constant() || g_.value(b).is_constant()) unsupported(n.op_type + " with a constant input");
    const DeviceTensor& da = dev(a, scalar_scale(g_, n, ai + 1), scalar_zp(g_, n, ai + 2));
    const DeviceTensor& db = dev(b, scalar_scale(g_, n, bi + 1), scalar_zp(g_, n, bi + 2));
    const DeviceTensor& dy = dev(y, scalar_scale(g_, n, 6), scalar_zp(g_, n, 7));
    const bool mul = n.op_type == "QLinearMul";
    const decltype(&lower_add_op) lower = mul                        ? lower_mul_op
                                 : sub                         ? lower_rsub_op
                                 : n.op_type == "QLinearMax"   ? lower_max_op
                                 : n.op_type == "QLinearMin"   ? lower_min_op
                                                               : lower_add_op;
    Layer L = base_layer(i, n.op_type.substr(7), Unit::Npu);  // QLinearAdd -> Add, ...
    L.inputs = {a, b};  // the full-size input first: its rows are what each task reads
    if (expand_a && !expand_b && !chan) std::swap(L.inputs[0], L.inputs[1]);
    L.in_shape = shape_of(L.inputs[0]);
    if (use_rows) {
        L.note = fmt::format("{} by a [1,C,H,1] operand: one DPU task over C1 x H one-row surfaces, the operand the "
                             "ERDMA's per-channel operand (16-byte surfaces)",
                             n.op_type.substr(7));
        const int core = m_.cores.front();
        const std::string bc = db.c != dy.c ? scratch_like(db, y + "/npusim_broadcast_b", dy.c, dy.h, 1) : "";
        if (!bc.empty()) init_estimate_ += static_cast<uint64_t>(dy.c) * (static_cast<uint64_t>(atom) + 64) + 4096;
        push_npu(
            std::move(L),
            [this, a, b, y, bc, lower, core, atom, name = n.name]() {
                std::vector<TaskBody> all = bc.empty() ? std::vector<TaskBody>{} : tile_tasks(name + "/broadcast", b, bc, "", core, true);
                const DeviceTensor &ta = m_.tensors.at(a), &tb = m_.tensors.at(bc.empty() ? b : bc), &ty = m_.tensors.at(y);
                const uint64_t s1 = static_cast<uint64_t>((ty.c + atom - 1) / atom), row = static_cast<uint64_t>(ty.w * atom);
                auto virt = [&](const DeviceTensor& t, int w) {
                    DeviceTensor v = t;
                    v.c = static_cast<int>(s1) * ty.h * atom, v.h = 1, v.w = w;
                    v.line_stride = v.surf_stride = static_cast<uint32_t>(w * atom);
                    return v;
                };
                for (const DeviceTensor* t : {&ta, &ty})
                    if (t->surf_stride != static_cast<uint64_t>(ty.h) * row || t->line_stride != row)
                        throw std::invalid_argument(fmt::format(
                            "'{}': '{}' is not C1 x H compact rows (a [1,C,H,1] operand needs them)", name, t->name));
                if (tb.surf_stride != static_cast<uint32_t>(ty.h * atom))
                    throw std::invalid_argument(fmt::format("'{}': operand '{}' is not compact", name, tb.name));
                for (TaskBody& body : lower(name, virt(ta, ty.w), virt(tb, 1), virt(ty, ty.w), arena_, soc_, core)) {
                    body.meta.out_window = {0, ty.c, 0, ty.h, 0, ty.w};
                    body.meta.in_window = body.meta.out_window;
                    body.meta.what = fmt::format("{} by [1,{},{},1] over {}x{} one-row surfaces", body.meta.what, ty.c,
                                                 ty.h, s1 * static_cast<uint64_t>(ty.h), ty.w);
                    all.push_back(std::move(body));
                }
                return all;
            },
            false);
        return true;
    }
    if (!expand_a && !expand_b) {
        push_npu(
            std::move(L),
            [this, a, b, y, lower, chan, name = n.name]() {
                const DeviceTensor &ta = m_.tensors.at(a), &tb = m_.tensors.at(b), &ty = m_.tensors.at(y);
                return across_cores(ty.h, [&](int y0, int rows, int core) {
                    return lower(name, rows_of(ta, y0, rows), chan ? tb : rows_of(tb, y0, rows), rows_of(ty, y0, rows),
                                 arena_, soc_, core);
                });
            },
            true);
        return true;
    }
    // The broadcast operands' full-size images (and, for a one-channel operand with H or W to
    // repeat, its channel broadcast): scratch tensors of the operand's quantization, live during
    // this layer. One core: the tiling copies and the DPU task run in order on it.
    struct Tiled {
        std::string v, full, chan;
    };
    std::vector<Tiled> tiled;
    for (const auto& [v, d, expand] : {std::tuple{a, &da, expand_a}, std::tuple{b, &db, expand_b}}) {
        if (!expand) continue;
        const bool one_channel = d->c != dy.c;
        const bool spatial = d->h != dy.h || d->w != dy.w;
        Tiled t{v, scratch_like(*d, y + "/npusim_broadcast_" + (v == a ? "a" : "b"), dy.c, dy.h, dy.w), ""};
        if (one_channel && spatial) t.chan = scratch_like(*d, t.full + "_channels", dy.c, d->h, d->w);
        if (one_channel) {
            const uint64_t kin = static_cast<uint64_t>(d->c2);
            init_estimate_ += static_cast<uint64_t>(dy.c) * (kin + 64) + 4096;
        }
        tiled.push_back(t);
    }
    L.note = fmt::format("{} broadcast: {} tiled to {}x{}x{} first (DPU copies{}), then the same-shape DPU task",
                         n.op_type.substr(7), tiled.size() == 2 ? "both operands" : "the " + shape_of(tiled[0].v) + " operand",
                         dy.c, dy.h, dy.w, da.c != dy.c || db.c != dy.c ? ", a channel selection conv" : "");
    const int core = m_.cores.front();
    const std::string expand_first = L.inputs[0];
    push_npu(
        std::move(L),
        [this, a, b, y, lower, tiled, core, expand_first, name = n.name]() {
            std::vector<TaskBody> all;
            std::string fa = a, fb = b;
            for (const Tiled& t : tiled) {
                for (TaskBody& body : tile_tasks(name + "/broadcast", t.v, t.full, t.chan, core, true))
                    all.push_back(std::move(body));
                (t.v == a ? fa : fb) = t.full;
            }
            // The DPU task reads the full-size images: its input window is all of the layer's first input.
            const DeviceTensor& first = m_.tensors.at(expand_first);
            for (TaskBody& body : lower(name, m_.tensors.at(fa), m_.tensors.at(fb), m_.tensors.at(y), arena_, soc_, core)) {
                body.meta.in_window = {0, first.c, 0, first.h, 0, first.w};
                all.push_back(std::move(body));
            }
            return all;
        },
        false);
    return true;
}

bool Compiler::maxpool(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    if (n.outputs.size() > 1 && !n.outputs[1].empty() && !n.attrs.has("npusim_alias_outputs"))
        unsupported("MaxPool with Indices output");
    const ir::Value& x = g_.value(n.input(0));
    const bool f16 = opts_.fp16 && x.dtype == num::DType::F32;  // the fp16 path: the PPU in fp16
    if (!is_q8(x.dtype) && !f16) unsupported("float MaxPool");
    if (x.shape.size() != 4) unsupported("MaxPool input is not 4-D");
    if (ir::attr_string(n.attrs, "auto_pad", "NOTSET") != "NOTSET") unsupported("auto_pad is not lowered");
    for (int64_t d : ir::attr_ints(n.attrs, "dilations", {1, 1}))
        if (d != 1) unsupported("dilated MaxPool");
    const auto k = ir::attr_ints(n.attrs, "kernel_shape", {});
    const auto s = ir::attr_ints(n.attrs, "strides", {1, 1});
    const auto p = ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
    if (k.size() != 2 || s.size() != 2 || p.size() != 4) unsupported("MaxPool attribute ranks");
    PoolOp op;
    op.name = n.name;
    op.kernel_h = static_cast<int>(k[0]), op.kernel_w = static_cast<int>(k[1]);
    op.stride_h = static_cast<int>(s[0]), op.stride_w = static_cast<int>(s[1]);
    op.pad_top = static_cast<int>(p[0]), op.pad_left = static_cast<int>(p[1]);
    op.pad_bottom = static_cast<int>(p[2]), op.pad_right = static_cast<int>(p[3]);
    const DeviceTensor& in = f16 ? dev_f16(n.input(0)) : dev_q(n.input(0));
    const DeviceTensor& out = f16 ? dev_f16(n.outputs[0]) : dev_q(n.outputs[0]);
    if (!f16 && (in.scale != out.scale || in.zp != out.zp)) unsupported("MaxPool changes the quantization");
    Layer L = base_layer(i, "MaxPool", Unit::Npu);
    if (f16) L.note = "fp16";
    const std::string a = n.input(0), y = n.outputs[0];
    const int core = m_.cores.front();
    push_npu(
        std::move(L),
        [this, op, a, y, core]() {
            return lower_maxpool_op(op, m_.tensors.at(a), m_.tensors.at(y), arena_, soc_, core);
        },
        false);
    return true;
}

bool Compiler::act_q_tail(std::vector<size_t>& chain, float& lo, float& hi, std::vector<size_t>& qs) {
    auto is_output = [&](const std::string& v) {
        return std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
    };
    const size_t first = chain.size();
    std::string v = g_.nodes()[chain.back()].outputs.at(0);
    for (auto r = g_.consumers(v); r.size() == 1 && !is_output(v) && r[0] > chain.back();) {
        const ir::Node& a = g_.nodes()[r[0]];
        if (!a.domain.empty() || (a.op_type != "Relu" && a.op_type != "Clip") || a.input(0) != v) break;
        if (!clamp_of(g_.ref(), a, lo, hi)) return false;
        chain.push_back(r[0]);
        v = a.outputs.at(0);
        r = g_.consumers(v);
    }
    qs = g_.consumers(v);
    if (qs.empty() || is_output(v)) return false;
    for (size_t k : qs) {
        const ir::Node& qk = g_.nodes()[k];
        if (qk.op_type != "QuantizeLinear" || !qk.domain.empty() || qk.input(0) != v || k <= chain.back()) return false;
    }
    for (size_t k = first - 1; k < chain.size(); ++k)
        if (auto it = checker_cpu_.find(g_.nodes()[chain[k]].name); it != checker_cpu_.end()) unsupported(it->second);
    const ir::Node& q = g_.nodes()[qs[0]];
    if (!is_q8(g_.value(q.outputs.at(0)).dtype)) return false;
    const float ys = scalar_scale(g_, q, 1);
    const int32_t yz = scalar_zp(g_, q, 2);
    for (size_t k = 1; k < qs.size(); ++k) {
        const ir::Node& qk = g_.nodes()[qs[k]];
        if (g_.value(qk.outputs.at(0)).dtype != g_.value(q.outputs.at(0)).dtype || scalar_scale(g_, qk, 1) != ys ||
            scalar_zp(g_, qk, 2) != yz)
            return false;
    }
    return true;
}

bool Compiler::bn(size_t i) {
    const ir::Node& dq = g_.nodes()[i];
    const std::string x = dq.input(0), f = dq.outputs.at(0);
    const auto c1 = g_.consumers(f);
    if (c1.size() != 1 || g_.nodes()[c1[0]].op_type != "BatchNormalization") return false;
    const ir::Node& bnn = g_.nodes()[c1[0]];
    if (bnn.input(0) != f) return false;
    auto is_output = [&](const std::string& v) {
        return std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
    };
    if (is_output(f) || c1[0] <= i) return false;
    // Relu / Clip between the BatchNormalization and its QuantizeLinear (one reader each), which
    // onnxruntime keeps when the Q's range does not make them redundant (TensorRT-style symmetric
    // int8): exact integer output bounds, Q(clip(v)) = clamp(Q(v), Q(lo), Q(hi)).
    std::vector<size_t> chain{i, c1[0]}, qs;
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (!act_q_tail(chain, lo, hi, qs)) return false;
    const float xs = scalar_scale(g_, dq, 1), ys = scalar_scale(g_, g_.nodes()[qs[0]], 1);
    const DeviceTensor& in = dev(x, xs, scalar_zp(g_, dq, 2));
    const float eps = ir::attr_float(bnn.attrs, "epsilon", 1e-5f);
    std::vector<std::vector<float>> prm;
    for (size_t k = 1; k <= 4; ++k) {
        const num::Tensor* t = const_of(g_, bnn, k);
        if (!t) unsupported("BatchNormalization parameters are not constant");
        prm.push_back(floats_of(*t));
        if (prm.back().size() != static_cast<size_t>(in.c)) unsupported("BatchNormalization parameter size");
    }
    std::vector<double> mul(static_cast<size_t>(in.c)), addv(static_cast<size_t>(in.c));
    for (size_t c = 0; c < mul.size(); ++c) {
        const double inv = 1.0 / std::sqrt(static_cast<double>(prm[3][c]) + eps);
        const double a = prm[0][c] * inv;
        mul[c] = a * xs / ys;
        addv[c] = (prm[1][c] - a * prm[2][c]) / ys;
    }
    push_affine_layer(i, "BatchNorm", "batchnorm", chain, qs, x, lo, hi, std::move(mul), std::move(addv),
                      [](const std::string& acts) {
                          return "DequantizeLinear -> BatchNormalization" + acts +
                                 " -> QuantizeLinear as a DPU per-channel affine task" +
                                 (acts.empty() ? "" : " (the activation as integer output bounds)");
                      });
    return true;
}

void Compiler::push_affine_layer(size_t i, const std::string& layer_op, const std::string& task_op,
                                 std::vector<size_t> chain, const std::vector<size_t>& qs, const std::string& x,
                                 float lo, float hi, std::vector<double> mul, std::vector<double> addv,
                                 const std::function<std::string(const std::string&)>& note) {
    const ir::Node& dq = g_.nodes()[i];
    const ir::Node& q = g_.nodes()[qs[0]];
    const std::string y = q.outputs.at(0);
    const float xs = scalar_scale(g_, dq, 1), ys = scalar_scale(g_, q, 1);
    const int32_t yz = scalar_zp(g_, q, 2);
    dev(x, xs, scalar_zp(g_, dq, 2));
    dev(y, ys, yz);
    for (size_t k = 1; k < qs.size(); ++k) dev(g_.nodes()[qs[k]].outputs.at(0), ys, yz).alias_of = y;
    const bool u8 = g_.value(y).dtype == num::DType::U8;
    const int32_t clip_lo = device_bound(lo, ys, yz, u8), clip_hi = device_bound(hi, ys, yz, u8);
    Layer L = base_layer(i, layer_op, Unit::Npu);
    L.out_shape = shape_of(y);
    L.outputs.clear();
    std::string acts;
    for (size_t k = 2; k < chain.size(); ++k) acts += " -> " + g_.nodes()[chain[k]].op_type;
    for (size_t k : qs) {
        L.outputs.push_back(g_.nodes()[k].outputs.at(0));
        chain.push_back(k);
    }
    L.ir_nodes = ref_nodes(chain);
    L.note = note(acts);
    for (size_t k = 1; k < chain.size(); ++k) consumed_.insert(chain[k]);
    push_npu(
        std::move(L),
        [this, x, y, mul = std::move(mul), addv = std::move(addv), clip_lo, clip_hi, name = dq.name, task_op]() {
            const DeviceTensor &tx = m_.tensors.at(x), &ty = m_.tensors.at(y);
            return across_cores(ty.h, [&](int y0, int rows, int core) {
                return lower_affine_op(name, task_op, rows_of(tx, y0, rows), rows_of(ty, y0, rows), mul, addv, clip_lo,
                                       clip_hi, arena_, soc_, core);
            });
        },
        true);
}

}  // namespace drv::rknpu::compiler_detail
