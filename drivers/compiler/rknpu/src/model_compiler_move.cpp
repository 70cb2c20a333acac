// SPDX-License-Identifier: MIT
// Model compiler, phase 1b for data movement (issue 15): int8 Slice, Split and nearest Resize
// (the QDQ units model_compiler_units.cpp forms on the quantized tensor, same quantization in and
// out). Channel slices at C2-aligned offsets are views of the input (no task); other windows are
// PPU window copies, channel slices starting inside an atom a 1x1 selection convolution; nearest
// Resize by integer factors two passes of DPU copies (lower_move.cpp). On the fp16 path (issue 14)
// the same lowerings move fp16 tensors (2-byte elements; the selection convolution in fp16, its 1.0
// weights and single products exact).
#include "compiler_internal.h"
#include "lower_move.h"
#include "numerics/half.h"

namespace drv::rknpu::compiler_detail {

namespace {

std::vector<int64_t> int64s(const num::Tensor& t) {
    std::vector<int64_t> v(t.numel());
    for (size_t k = 0; k < v.size(); ++k) {
        if (t.dtype() == num::DType::I64) v[k] = t.data<int64_t>()[k];
        else if (t.dtype() == num::DType::I32) v[k] = t.data<int32_t>()[k];
        else unsupported("Slice / Pad parameter is not int32/int64");
    }
    return v;
}

/// The source index ONNX Resize (nearest) reads for output index `o` at integer factor `s`.
int64_t nearest_src(const std::string& ctm, const std::string& mode, int64_t o, int64_t s, int64_t in_len) {
    const double scale = static_cast<double>(s);
    double x = 0;
    if (ctm == "asymmetric") x = static_cast<double>(o) / scale;
    else if (ctm == "half_pixel" || ctm == "pytorch_half_pixel") x = (static_cast<double>(o) + 0.5) / scale - 0.5;
    else if (ctm == "tf_half_pixel_for_nn") x = (static_cast<double>(o) + 0.5) / scale;
    else if (ctm == "align_corners") x = in_len * s > 1 ? static_cast<double>(o) * (in_len - 1) / (in_len * s - 1) : 0;
    else return -1;
    double r = 0;
    if (mode == "floor") r = std::floor(x);
    else if (mode == "ceil") r = std::ceil(x);
    else if (mode == "round_prefer_ceil") r = std::floor(x + 0.5);
    else if (mode == "round_prefer_floor") r = x == std::floor(x) + 0.5 ? std::floor(x) : std::round(x);
    else return -1;
    return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in_len - 1);
}

}  // namespace

bool Compiler::slice_node(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& xv = g_.value(n.input(0));
    const ir::Value& yv = g_.value(n.outputs.at(0));
    // uint8 and int8 of the same device quantization (zero points z and z - 128) are the same bytes:
    // a QDQ unit with a uint8/int8 mismatch (onnxruntime's x86 int8 rule) folds (model_compiler_units).
    const bool f16 = opts_.fp16 && xv.dtype == num::DType::F32 && yv.dtype == num::DType::F32;
    if (!f16 && (!is_q8(xv.dtype) || !is_q8(yv.dtype))) return false;
    if (xv.shape.size() != 4 || yv.shape.size() != 4 || xv.shape[0] != 1) unsupported("Slice of a tensor that is not [1,C,H,W]");
    std::vector<int64_t> starts, axes, steps;
    if (n.has_input(1)) {
        starts = int64s(required(g_, n, 1));
        if (n.has_input(3)) axes = int64s(required(g_, n, 3));
        if (n.has_input(4)) steps = int64s(required(g_, n, 4));
    } else {
        starts = ir::attr_ints(n.attrs, "starts", {});
        axes = ir::attr_ints(n.attrs, "axes", {});
    }
    int64_t st[4] = {0, 0, 0, 0}, sp[4] = {1, 1, 1, 1};
    for (size_t k = 0; k < starts.size(); ++k) {
        int64_t a = k < axes.size() ? axes[k] : static_cast<int64_t>(k);
        if (a < 0) a += 4;
        if (a < 0 || a > 3) unsupported("Slice axis out of range");
        const int64_t d = xv.shape[static_cast<size_t>(a)];
        const int64_t step = k < steps.size() ? steps[k] : 1;
        if (step < 1) unsupported("Slice with a negative step");
        int64_t s = starts[k] < 0 ? starts[k] + d : starts[k];
        st[a] = std::clamp<int64_t>(s, 0, d), sp[a] = step;
    }
    if (yv.shape[0] != 1 || st[0] != 0) unsupported("Slice along the batch axis");
    DeviceTensor& in = f16 ? dev_f16(n.input(0)) : dev_q(n.input(0));
    DeviceTensor& out = f16 ? dev_f16(n.outputs[0]) : dev_q(n.outputs[0]);
    if (!f16 && (in.scale != out.scale || in.zp != out.zp)) unsupported("Slice changes the quantization");
    const int c0 = static_cast<int>(st[1]), y0 = static_cast<int>(st[2]), x0 = static_cast<int>(st[3]);
    const bool spatial = out.h != in.h || out.w != in.w || sp[2] != 1 || sp[3] != 1;
    if (sp[1] != 1) unsupported("Slice with a step along channels");
    const std::string x = n.input(0), y = n.outputs[0];
    const bool graph_io = std::find(g_.outputs().begin(), g_.outputs().end(), y) != g_.outputs().end() ||
                          std::find(g_.inputs().begin(), g_.inputs().end(), x) != g_.inputs().end();
    if (!spatial && c0 % in.c2 == 0 && (out.c % in.c2 == 0 || c0 + out.c == in.c) && !graph_io) {
        out.alias_of = x;
        slice_off_[y] = c0;
        Layer L = base_layer(i, "Slice", Unit::View);
        L.note = fmt::format("channels {}-{} of '{}' in place (C2-aligned view)", c0, c0 + out.c - 1, x);
        pending_.push_back({std::move(L), nullptr, false, cur_unit_});
        return true;
    }
    const int core = m_.cores.front();
    if (c0 % in.c2 == 0) {
        Layer L = base_layer(i, "Slice", Unit::Npu);
        L.note = "PPU window copy (1x1 max pool, stride = step)";
        const int sh = static_cast<int>(sp[2]), sw = static_cast<int>(sp[3]);
        push_npu(
            std::move(L),
            [this, x, y, c0, y0, x0, sh, sw, core, name = n.name]() {
                const DeviceTensor &src = m_.tensors.at(x), &dst = m_.tensors.at(y);
                DeviceTensor win = src;
                win.offset = src.offset + static_cast<uint64_t>(c0 / src.c2) * src.surf_stride +
                             static_cast<uint64_t>(y0) * src.line_stride + static_cast<uint64_t>(x0 * src.c2 * (src.fp16 ? 2 : 1));
                win.c = dst.c, win.h = (dst.h - 1) * sh + 1, win.w = (dst.w - 1) * sw + 1;
                auto t = lower_window_copy_op(name, win, dst, sh, sw, arena_, soc_, core);
                for (TaskBody& b : t) b.meta.in_window = {c0, c0 + dst.c, y0, y0 + win.h, x0, x0 + win.w};
                return t;
            },
            false);
        return true;
    }
    if (spatial) unsupported(fmt::format("Slice from channel {} (inside a {}-channel atom) with a spatial window", c0, in.c2));
    // Channel selection as a 1x1 convolution with 0/1 weights: exact (one product per output,
    // scale ratio 1), the CNA reading whole atoms.
    ConvOp op;
    op.name = n.name;
    op.in_c = in.c, op.out_c = out.c;
    Layer L = base_layer(i, "Slice", Unit::Npu);
    L.note = fmt::format("channels from {} (inside an atom) as a 1x1 selection convolution", c0);
    if (f16) {
        op.fp16 = true;
        push_conv_f16(std::move(L), std::move(op), x, y, [c0](ConvOp& o) {
            o.weights_f.assign(static_cast<size_t>(o.out_c) * static_cast<size_t>(o.in_c), 0.f);
            for (int k = 0; k < o.out_c; ++k)
                o.weights_f[static_cast<size_t>(k) * static_cast<size_t>(o.in_c) + static_cast<size_t>(c0 + k)] = 1.f;
        });
        return true;
    }
    op.w_scales = {1.f};
    op.in_scale = in.scale, op.out_scale = out.scale, op.in_zp = in.zp, op.out_zp = out.zp;
    push_conv(std::move(L), std::move(op), x, y, [c0](ConvOp& o) {
        o.weights.assign(static_cast<size_t>(o.out_c) * static_cast<size_t>(o.in_c), 0);
        for (int k = 0; k < o.out_c; ++k) o.weights[static_cast<size_t>(k) * static_cast<size_t>(o.in_c) + static_cast<size_t>(c0 + k)] = 1;
    });
    return true;
}

bool Compiler::split_node(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& xv = g_.value(n.input(0));
    const bool f16 = opts_.fp16 && xv.dtype == num::DType::F32;
    if (!f16 && !is_q8(xv.dtype)) return false;
    if (xv.shape.size() != 4 || xv.shape[0] != 1) unsupported("Split of a tensor that is not [1,C,H,W]");
    int64_t axis = ir::attr_int(n.attrs, "axis", 0);
    if (axis < 0) axis += 4;
    if (axis != 1) unsupported(fmt::format("Split along axis {} (only channel views are lowered)", axis));
    DeviceTensor& in = f16 ? dev_f16(n.input(0)) : dev_q(n.input(0));
    const std::string x = n.input(0);
    if (std::find(g_.inputs().begin(), g_.inputs().end(), x) != g_.inputs().end()) unsupported("Split of a graph input");
    int c_off = 0;
    // Parts of whole atoms are views; a part starting inside an atom (ShuffleNet's halves of 58 or
    // 24 channels) is a 1x1 selection convolution as Slice's (exact: one 0/1 product per output).
    std::vector<std::pair<std::string, int>> parts, selected;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
        const std::string& o = n.outputs[k];
        if (o.empty()) continue;
        if (std::find(g_.outputs().begin(), g_.outputs().end(), o) != g_.outputs().end())
            unsupported("Split output is a graph output");
        DeviceTensor& t = f16 ? dev_f16(o) : dev_q(o);
        if (!f16 && (t.scale != in.scale || t.zp != in.zp)) unsupported("Split changes the quantization");
        const bool view = c_off % in.c2 == 0 && (t.c % in.c2 == 0 || c_off + t.c == in.c);
        (view ? parts : selected).push_back({o, c_off});
        c_off += t.c;
    }
    if (c_off != in.c) unsupported("Split parts do not add up to the input channels");
    for (const auto& [o, off] : parts) {
        m_.tensors.at(o).alias_of = x;
        slice_off_[o] = off;
    }
    Layer L = base_layer(i, "Split", selected.empty() ? Unit::View : Unit::Npu);
    if (selected.empty()) {
        L.note = fmt::format("{} channel views of '{}' (C2-aligned, in place)", parts.size(), x);
        pending_.push_back({std::move(L), nullptr, false, cur_unit_});
        return true;
    }
    L.note = fmt::format("{} channel views of '{}', {} parts from inside an atom as 1x1 selection convolutions",
                         parts.size(), x, selected.size());
    for (const auto& [o, off] : selected)
        init_estimate_ += static_cast<uint64_t>(m_.tensors.at(o).c) * (static_cast<uint64_t>(in.c) + 64) + 4096;
    push_npu(
        std::move(L),
        [this, x, selected, name = n.name]() {
            std::vector<TaskBody> all;
            const DeviceTensor& src = m_.tensors.at(x);
            for (const auto& [o, off] : selected) {
                const DeviceTensor& dst = m_.tensors.at(o);
                ConvOp op;
                op.name = name + "/" + o;
                op.in_c = src.c, op.out_c = dst.c;
                op.fp16 = src.fp16;
                op.w_scales = {1.f};
                op.in_scale = src.scale, op.out_scale = dst.scale, op.in_zp = src.zp, op.out_zp = dst.zp;
                if (!opts_.timing_only && op.fp16) {
                    op.weights_f.assign(static_cast<size_t>(op.out_c) * static_cast<size_t>(op.in_c), 0.f);
                    for (int k = 0; k < op.out_c; ++k)
                        op.weights_f[static_cast<size_t>(k) * static_cast<size_t>(op.in_c) + static_cast<size_t>(off + k)] = 1.f;
                } else if (!opts_.timing_only) {
                    op.weights.assign(static_cast<size_t>(op.out_c) * static_cast<size_t>(op.in_c), 0);
                    for (int k = 0; k < op.out_c; ++k)
                        op.weights[static_cast<size_t>(k) * static_cast<size_t>(op.in_c) + static_cast<size_t>(off + k)] = 1;
                }
                for (TaskBody& b : lower_conv_op(op, src, dst, arena_, soc_, m_.cores)) all.push_back(std::move(b));
            }
            return all;
        },
        true);
    return true;
}

bool Compiler::resize_node(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& xv = g_.value(n.input(0));
    const ir::Value& yv = g_.value(n.outputs.at(0));
    // uint8 and int8 of the same device quantization (zero points z and z - 128) are the same bytes:
    // a QDQ unit with a uint8/int8 mismatch (onnxruntime's x86 int8 rule) folds (model_compiler_units).
    // The fp16 path (issue 14): a float Resize copies fp16 elements.
    const bool f16 = opts_.fp16 && xv.dtype == num::DType::F32 && yv.dtype == num::DType::F32;
    if (!f16 && (!is_q8(xv.dtype) || !is_q8(yv.dtype))) return false;
    const std::string mode = ir::attr_string(n.attrs, "mode", "nearest");
    if (mode != "nearest" && mode != "linear") unsupported("Resize mode other than nearest / linear");
    if (xv.shape.size() != 4 || yv.shape.size() != 4 || xv.shape[0] != 1 || yv.shape[0] != 1 || xv.shape[1] != yv.shape[1])
        unsupported("Resize that is not a spatial [1,C,H,W] resize");
    const int64_t H = xv.shape[2], W = xv.shape[3];
    if (yv.shape[2] % H != 0 || yv.shape[3] % W != 0) unsupported("Resize by a non-integer factor");
    const int64_t sh = yv.shape[2] / H, sw = yv.shape[3] / W;
    if (sh < 1 || sw < 1 || sh * sw == 1) unsupported("Resize that is not an upsampling by integer factors");
    // Resize-10 has no attribute and maps asymmetrically; 11+ default to half_pixel.
    const std::string ctm =
        ir::attr_string(n.attrs, "coordinate_transformation_mode", g_.opset() < 11 ? "asymmetric" : "half_pixel");
    if (mode == "linear") return resize_bilinear_node(i, ctm, sh, sw);
    const std::string nm = ir::attr_string(n.attrs, "nearest_mode", "round_prefer_floor");
    for (const auto& [s, len] : {std::pair{sh, H}, std::pair{sw, W}})
        for (int64_t o = 0; o < s * len; ++o)
            if (nearest_src(ctm, nm, o, s, len) != o / s)
                unsupported(fmt::format("Resize {} / {} does not pick input o / {} for output {}", ctm, nm, s, o));
    DeviceTensor& in = f16 ? dev_f16(n.input(0)) : dev_q(n.input(0));
    DeviceTensor& out = f16 ? dev_f16(n.outputs[0]) : dev_q(n.outputs[0]);
    if (!f16 && (in.scale != out.scale || in.zp != out.zp)) unsupported("Resize changes the quantization");
    Layer L = base_layer(i, "Resize", Unit::Npu);
    L.note = fmt::format("{}nearest x{}x{} as DPU copies (row notch)", f16 ? "fp16; " : "", sh, sw);
    const std::string x = n.input(0), y = n.outputs[0];
    const int core = m_.cores.front();
    // The width pass's scratch (c x h x w*sw): an activation buffer live during this layer only.
    std::string scratch;
    if (const uint64_t bytes = resize_scratch_bytes(in, static_cast<int>(sh), static_cast<int>(sw))) {
        scratch = y + "/npusim_resize_scratch";
        DeviceTensor t = in;
        t.name = scratch;
        t.ir_shape = {1, in.c, in.h, in.w * sw};
        t.w = in.w * static_cast<int>(sw);
        t.line_stride = static_cast<uint32_t>(t.w * t.c2 * (t.fp16 ? 2 : 1));
        t.surf_stride = static_cast<uint32_t>(align_up(static_cast<uint64_t>(t.line_stride) * static_cast<uint64_t>(t.h), 16));
        t.bytes = bytes;
        t.alias_of.clear();
        m_.tensors[scratch] = t;
        scratch_[scratch] = cur_unit_;
    }
    push_npu(
        std::move(L),
        [this, x, y, sh, sw, core, scratch, name = n.name]() {
            const DeviceTensor &src = m_.tensors.at(x), &dst = m_.tensors.at(y);
            const uint64_t off = scratch.empty() ? 0 : m_.tensors.at(scratch).offset;
            return lower_resize_nearest_op(name, src, dst, static_cast<int>(sh), static_cast<int>(sw), off, soc_, core);
        },
        false);
    return true;
}

bool Compiler::pad_node(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& xv = g_.value(n.input(0));
    const ir::Value& yv = g_.value(n.outputs.at(0));
    // The fp16 path (issue 14): a float Pad moves fp16 elements, the border a copy of the value's fp16.
    const bool f16 = opts_.fp16 && xv.dtype == num::DType::F32 && yv.dtype == num::DType::F32;
    if (!f16 && (!is_q8(xv.dtype) || !is_q8(yv.dtype))) return false;
    // Modes (issue 15): constant (border fills), reflect / edge (border copies, lower_pad_copy_op).
    const std::string mode = ir::attr_string(n.attrs, "mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge") unsupported(fmt::format("Pad mode {}", mode));
    if (xv.shape.size() != 4 || yv.shape.size() != 4) unsupported("Pad of a tensor that is not 4-D");
    if (n.inputs.size() > 3 && !n.input(3).empty()) unsupported("Pad with axes");
    const num::Tensor* pads = n.has_input(1) ? const_of(g_, n, 1) : nullptr;
    if (!pads || pads->numel() != 8) unsupported("Pad without 8 constant pads");
    const std::vector<int64_t> p = int64s(*pads);
    if (p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0) unsupported("Pad of the batch or channel axis");
    for (int64_t v : p)
        if (v < 0) unsupported("negative Pad (a crop)");
    DeviceTensor& in = f16 ? dev_f16(n.input(0)) : dev_q(n.input(0));
    DeviceTensor& out = f16 ? dev_f16(n.outputs[0]) : dev_q(n.outputs[0]);
    if (!f16 && (in.scale != out.scale || in.zp != out.zp)) unsupported("Pad changes the quantization");
    if (mode != "constant") {
        if (mode == "reflect" &&
            (p[2] >= xv.shape[2] || p[6] >= xv.shape[2] || p[3] >= xv.shape[3] || p[7] >= xv.shape[3]))
            unsupported("reflect Pad not below the dimension (ONNX requires pad < dim)");
        Layer L = base_layer(i, "Pad", Unit::Npu);
        L.note = fmt::format("{}{}: a notched DPU copy of the input, border columns by PPU column reads + DPU copies, "
                             "border rows by DPU row copies",
                             f16 ? "fp16; " : "", mode);
        const std::string x = n.input(0), y = n.outputs[0];
        const int top = static_cast<int>(p[2]), left = static_cast<int>(p[3]), core = m_.cores.front();
        const std::string col =
            p[3] + p[7] > 0 ? scratch_like(in, y + "/npusim_pad_column", in.c, in.h, 1) : std::string();
        const bool reflect = mode == "reflect";
        push_npu(
            std::move(L),
            [this, x, y, top, left, reflect, col, core, name = n.name]() {
                const DeviceTensor& src = m_.tensors.at(x);
                return lower_pad_copy_op(name, src, m_.tensors.at(y), top, left, reflect,
                                         col.empty() ? src : m_.tensors.at(col), arena_, soc_, core);
            },
            false);
        return true;
    }
    float cv = 0.f;
    if (n.has_input(2)) {
        const num::Tensor* c = const_of(g_, n, 2);
        if (!c || c->numel() != 1) unsupported("Pad constant_value is not a constant scalar");
        cv = c->dtype() == num::DType::F32 ? floats_of(*c)[0] : static_cast<float>(ints_of(*c)[0]);
    }
    if (f16 && !std::isfinite(cv)) unsupported("Pad constant_value is not finite");
    // int8: the pad value's code in the tensor's quantization (QuantizeLinear's rounding: half to even);
    // fp16: its fp16 bits (round to nearest even, as every fp16 value of the path).
    const int32_t code = f16 ? static_cast<int32_t>(num::fp32_to_fp16(cv))
                             : std::clamp(static_cast<int32_t>(std::nearbyint(cv / in.scale)) + in.zp, int32_t{-128},
                                          int32_t{127});
    Layer L = base_layer(i, "Pad", Unit::Npu);
    L.note = f16 ? fmt::format("fp16; constant {}: DPU copies of a constant image into the border, a notched DPU copy "
                               "of the input",
                               cv)
                 : fmt::format("constant {} (code {}): DPU fills of the border, a notched DPU copy of the input", cv, code);
    const std::string x = n.input(0), y = n.outputs[0];
    const int top = static_cast<int>(p[2]), left = static_cast<int>(p[3]), core = m_.cores.front();
    push_npu(
        std::move(L),
        [this, x, y, top, left, code, core, name = n.name]() {
            return lower_pad_op(name, m_.tensors.at(x), m_.tensors.at(y), top, left, code, soc_, core, &arena_);
        },
        false);
    return true;
}

bool Compiler::resize_bilinear_node(size_t i, const std::string& ctm, int64_t sh, int64_t sw) {
    const ir::Node& n = g_.nodes()[i];
    // half_pixel and pytorch_half_pixel (the same for outputs longer than 1) sample the source at
    // (o + 0.5) / f - 0.5, clamped to the edges: the fixed-kernel form of lower_resize.cpp.
    if (ctm != "half_pixel" && ctm != "pytorch_half_pixel")
        unsupported(fmt::format("bilinear Resize with coordinate mode {} (the fixed kernel is half_pixel's)", ctm));
    const ir::Value& xv = g_.value(n.input(0));
    const bool f16 = opts_.fp16 && xv.dtype == num::DType::F32;  // the fp16 path: copies and conv in fp16
    const DeviceTensor& in = f16 ? dev_f16(n.input(0)) : dev_q(n.input(0));
    f16 ? dev_f16(n.outputs[0]) : dev_q(n.outputs[0]);
    Layer L = base_layer(i, "Resize", Unit::Npu);
    int dh = 1, dw = 1;
    const size_t th = bilinear_taps(static_cast<int>(sh), dh).size(), tw = bilinear_taps(static_cast<int>(sw), dw).size();
    L.note = fmt::format("{}bilinear x{}x{}: replicate pad + nearest upsampling (DPU/PPU copies), {}x{} depthwise conv "
                         "with integer taps / {}",
                         f16 ? "fp16; " : "", sh, sw, th, tw, dh * dw);
    L.macs = static_cast<uint64_t>(in.c) * static_cast<uint64_t>(in.h * sh * in.w * sw) * th * tw;
    const std::string x = n.input(0), y = n.outputs[0];
    std::vector<std::string> names;
    int k = 0;
    for (const auto& [h, w] : resize_bilinear_scratch(in, static_cast<int>(sh), static_cast<int>(sw))) {
        DeviceTensor t = in;
        t.name = fmt::format("{}/npusim_bilinear_scratch{}", y, k++);
        t.ir_shape = {1, in.c, h, w};
        t.h = h, t.w = w;
        t.line_stride = static_cast<uint32_t>(t.w * t.c2 * t.elem_bytes());
        t.surf_stride = static_cast<uint32_t>(align_up(static_cast<uint64_t>(t.line_stride) * static_cast<uint64_t>(h), 16));
        t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((in.c + in.c2 - 1) / in.c2);
        t.alias_of.clear();
        m_.tensors[t.name] = t;
        scratch_[t.name] = cur_unit_;
        names.push_back(t.name);
    }
    const int core = m_.cores.front();
    push_npu(
        std::move(L),
        [this, x, y, sh, sw, core, names, name = n.name]() {
            std::vector<DeviceTensor> s;
            for (const auto& nm : names) s.push_back(m_.tensors.at(nm));
            return lower_resize_bilinear_op(name, m_.tensors.at(x), m_.tensors.at(y), static_cast<int>(sh),
                                            static_cast<int>(sw), s, arena_, soc_, core);
        },
        false);
    return true;
}

bool Compiler::concat_spatial(size_t i, int64_t axis) {
    const ir::Node& n = g_.nodes()[i];
    const std::string y = n.outputs.at(0);
    // The fp16 path (issue 14, concat_f16): a float Concat, every input a plain DPU copy of fp16
    // elements (no quantization to change); QLinearConcat's inputs are (x, scale, zero point) triples.
    const bool f16 = n.op_type == "Concat";
    const std::string what = f16 ? "Concat" : "QLinearConcat";
    if (!f16 && ((n.inputs.size() - 2) % 3 != 0 || n.inputs.size() < 5)) unsupported("QLinearConcat input count");
    const DeviceTensor& out = f16 ? dev_f16(y) : dev(y, scalar_scale(g_, n, 0), scalar_zp(g_, n, 1));
    struct Part {
        std::string name;
        int off;
        std::string requant;  ///< along W, an input of another quantization: its requantized copy
    };
    std::vector<Part> parts;
    int off = 0, nreq = 0;
    const size_t k = f16 ? n.inputs.size() : (n.inputs.size() - 2) / 3;
    for (size_t j = 0; j < k; ++j) {
        const std::string x = n.input(f16 ? j : 2 + 3 * j);
        if (g_.value(x).is_constant()) unsupported(what + " with a constant input");
        const DeviceTensor& t = f16 ? dev_f16(x) : dev(x, scalar_scale(g_, n, 3 + 3 * j), scalar_zp(g_, n, 4 + 3 * j));
        if (t.c != out.c || (axis == 2 ? t.w != out.w : t.h != out.h))
            unsupported(what + " inputs differ outside the concat axis");
        parts.push_back({x, off, ""});
        off += axis == 2 ? t.h : t.w;
    }
    if (off != (axis == 2 ? out.h : out.w)) unsupported(what + " sizes do not add up to the output");
    // Along W the rows of a part are notched into the output's, which the plain DPU copy does but
    // the requantizing affine task (compact rows) does not: an input of another quantization is
    // first requantized into a layer scratch of its own shape in the output's quantization (the
    // one rounding, as along H), and that scratch is then copied into its columns.
    if (axis == 3 && !f16)
        for (size_t j = 0; j < parts.size(); ++j) {
            const DeviceTensor& t = m_.tensors.at(parts[j].name);
            if (t.scale == out.scale && t.zp == out.zp) continue;
            const std::string nm = scratch_like(t, fmt::format("{}/npusim_concat_requant{}", y, j), t.c, t.h, t.w);
            DeviceTensor& sc = m_.tensors.at(nm);
            sc.scale = out.scale, sc.zp = out.zp;
            parts[j].requant = nm;
            ++nreq;
        }
    Layer L = base_layer(i, "Concat", Unit::Npu);
    L.note = fmt::format("{}along {}: one DPU copy per input into its {} range", f16 ? "fp16; " : "",
                         axis == 2 ? "height" : "width", axis == 2 ? "row" : "column");
    if (nreq)
        L.note += fmt::format(" ({} of {} inputs requantized into a scratch first)", nreq, parts.size());
    const int core = m_.cores.front();
    push_npu(
        std::move(L),
        [this, parts, y, axis, core, f16, name = n.name]() {
            const DeviceTensor& o = m_.tensors.at(y);
            std::vector<TaskBody> all;
            for (const Part& p : parts) {
                std::vector<TaskBody> t;
                if (!p.requant.empty()) {
                    std::vector<TaskBody> rq = lower_affine_op(
                        name, "concat requantize", m_.tensors.at(p.name), m_.tensors.at(p.requant),
                        {static_cast<double>(m_.tensors.at(p.name).scale) / o.scale}, {0.0}, arena_, soc_, core);
                    for (TaskBody& b : rq) {
                        b.meta.intermediate = true;
                        all.push_back(std::move(b));
                    }
                }
                const DeviceTensor& src = m_.tensors.at(p.requant.empty() ? p.name : p.requant);
                if (axis == 2 && !f16) {  // rows [off, off + h): a compact-row view with the output's surfaces
                    DeviceTensor dst = rows_of(o, p.off, src.h);
                    dst.name = o.name + fmt::format("[rows {}:{}]", p.off, p.off + src.h);
                    t = lower_affine_op(name, "concat rows", src, dst, {static_cast<double>(src.scale) / o.scale}, {0.0},
                                        arena_, soc_, core);
                } else {
                    // Columns [off, off + w) (rows notched o.w - w atoms), or in fp16 rows [off, off + h)
                    // too (a plain copy: the output's rows, no notch). All channels in one task when both
                    // surface strides are 16-byte expressible, else one task per C1 surface.
                    const uint64_t eb = static_cast<uint64_t>(src.elem_bytes());
                    const uint64_t compact = static_cast<uint64_t>(src.w) * static_cast<uint64_t>(src.h * src.c2) * eb;
                    const bool whole = (src.surf_stride - compact) % 16 == 0 && o.surf_stride % 16 == 0;
                    const uint64_t at = axis == 2 ? static_cast<uint64_t>(p.off) * o.line_stride
                                                  : static_cast<uint64_t>(p.off * o.c2) * eb;
                    for (int c0 = 0; c0 < src.c; c0 += whole ? src.c : src.c2) {
                        const int c = whole ? src.c : std::min(src.c2, src.c - c0);
                        t.push_back(lower_dpu_copy(axis == 2 ? fmt::format("concat rows {}-{}", p.off, p.off + src.h - 1)
                                                             : fmt::format("concat columns {}-{}", p.off, p.off + src.w - 1),
                                                   src.offset + static_cast<uint64_t>(c0 / src.c2) * src.surf_stride,
                                                   src.surf_stride,
                                                   o.offset + static_cast<uint64_t>(c0 / o.c2) * o.surf_stride + at,
                                                   o.surf_stride, src.w, src.h, c, o.w - src.w, o.c2, core, false, f16));
                        t.back().meta.out_window = {c0, c0 + c, 0, src.h, 0, src.w};
                    }
                }
                for (TaskBody& b : t) {
                    NpuTask::Window& w = b.meta.out_window;
                    b.meta.in_window = w;
                    if (axis == 2) w.y0 += p.off, w.y1 += p.off;
                    else w.x0 += p.off, w.x1 += p.off;
                    all.push_back(std::move(b));
                }
            }
            return all;
        },
        false);
    return true;
}

bool Compiler::global_maxpool_node(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& x = g_.value(n.input(0));
    const bool f16 = opts_.fp16 && x.dtype == num::DType::F32;  // the fp16 path: the PPU in fp16
    if (!f16 && !is_q8(x.dtype)) return false;
    if (x.shape.size() != 4) unsupported("GlobalMaxPool input is not 4-D");
    const DeviceTensor& in = f16 ? dev_f16(n.input(0)) : dev_q(n.input(0));
    const DeviceTensor& out = f16 ? dev_f16(n.outputs.at(0)) : dev_q(n.outputs.at(0));
    if (!f16 && (in.scale != out.scale || in.zp != out.zp)) unsupported("GlobalMaxPool changes the quantization");
    // The PPU max pool with one H x W window (the seed keeps H and W in (0, 7]; the kernel
    // fields hold 16).
    PoolOp op;
    op.name = n.name;
    op.kernel_h = in.h, op.kernel_w = in.w;
    Layer L = base_layer(i, "GlobalMaxPool", Unit::Npu);
    L.note = std::string(f16 ? "fp16; " : "") + "PPU max pool with one H x W window";
    const std::string a = n.input(0), y = n.outputs[0];
    const int core = m_.cores.front();
    push_npu(
        std::move(L), [this, op, a, y, core]() { return lower_maxpool_op(op, m_.tensors.at(a), m_.tensors.at(y), arena_, soc_, core); },
        false);
    return true;
}

ConvOp Compiler::avgpool_op(const ir::Node& n) {
    if (ir::attr_int(n.attrs, "channels_last", 0) != 0) unsupported("channels_last AveragePool");
    if (ir::attr_string(n.attrs, "auto_pad", "NOTSET") != "NOTSET") unsupported("auto_pad is not lowered");
    const ir::Value& x = g_.value(n.input(0));
    const ir::Value& yv = g_.value(n.outputs.at(0));
    if (x.shape.size() != 4 || yv.shape.size() != 4) unsupported("AveragePool input is not 4-D");
    const auto k = ir::attr_ints(n.attrs, "kernel_shape", {});
    const auto st = ir::attr_ints(n.attrs, "strides", {1, 1});
    const auto pd = ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
    if (k.size() != 2 || st.size() != 2 || pd.size() != 4) unsupported("AveragePool attribute ranks");
    const bool any_pad = pd[0] || pd[1] || pd[2] || pd[3];
    // A border window that covers padding divides by its real element count unless
    // count_include_pad: one kernel scale for every window needs no padding or count_include_pad.
    if (any_pad && ir::attr_int(n.attrs, "count_include_pad", 0) == 0)
        unsupported("AveragePool with padding excluded from the count (per-window divisors)");
    for (int a = 0; a < 2; ++a) {
        const int64_t in = x.shape[2 + static_cast<size_t>(a)];
        const int64_t full = (in + pd[static_cast<size_t>(a)] + pd[static_cast<size_t>(a) + 2] - k[static_cast<size_t>(a)]) /
                                 st[static_cast<size_t>(a)] + 1;
        if (yv.shape[2 + static_cast<size_t>(a)] != full) unsupported("AveragePool ceil_mode window past the padding");
    }
    ConvOp op;
    op.name = n.name;
    op.in_c = op.out_c = static_cast<int>(x.shape[1]);
    op.kernel_h = static_cast<int>(k[0]), op.kernel_w = static_cast<int>(k[1]);
    op.stride_h = static_cast<int>(st[0]), op.stride_w = static_cast<int>(st[1]);
    op.pad_top = static_cast<int>(pd[0]), op.pad_left = static_cast<int>(pd[1]);
    op.pad_bottom = static_cast<int>(pd[2]), op.pad_right = static_cast<int>(pd[3]);
    op.depthwise = true;
    return op;
}

bool Compiler::avgpool_node(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& yv = g_.value(n.outputs.at(0));
    ConvOp op = avgpool_op(n);
    const int64_t kh = op.kernel_h, kw = op.kernel_w;
    op.w_scales = {1.f / static_cast<float>(kh * kw)};
    const float xs = scalar_scale(g_, n, 1), ys = scalar_scale(g_, n, 3);
    const DeviceTensor& in = dev(n.input(0), xs, scalar_zp(g_, n, 2));
    const DeviceTensor& out = dev(n.outputs[0], ys, scalar_zp(g_, n, 4));
    op.in_scale = xs, op.out_scale = ys, op.in_zp = in.zp, op.out_zp = out.zp;
    Layer L = base_layer(i, "AveragePool", Unit::Npu);
    L.macs = static_cast<uint64_t>(op.out_c) * static_cast<uint64_t>(yv.shape[2] * yv.shape[3]) *
             static_cast<uint64_t>(kh * kw);
    L.note = "depthwise conv with an all-ones kernel (padding reads the zero point), scale 1/(kh*kw)";
    const size_t taps = static_cast<size_t>(kh * kw);
    push_conv(std::move(L), std::move(op), n.input(0), n.outputs[0],
              [taps](ConvOp& o) { o.weights.assign(static_cast<size_t>(o.out_c) * taps, 1); });
    return true;
}

std::string Compiler::scratch_like(const DeviceTensor& like, const std::string& name, int c, int h, int w) {
    DeviceTensor t = like;
    t.name = name;
    t.ir_shape = {1, c, h, w};
    t.c = c, t.h = h, t.w = w;
    t.line_stride = static_cast<uint32_t>(w * t.c2 * t.elem_bytes());
    t.surf_stride = static_cast<uint32_t>(align_up(static_cast<uint64_t>(t.line_stride) * static_cast<uint64_t>(h), 16));
    t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((c + t.c2 - 1) / t.c2);
    t.alias_of.clear();
    t.row_major = false;
    m_.tensors[name] = t;
    scratch_[name] = cur_unit_;
    return name;
}

std::vector<TaskBody> Compiler::tile_tasks(const std::string& name, const std::string& x, const std::string& y,
                                           const std::string& chan, int core, bool intermediate) {
    const DeviceTensor &src = m_.tensors.at(x), &dst = m_.tensors.at(y);
    std::vector<TaskBody> all;
    const DeviceTensor* from = &src;
    if (src.c != dst.c) {
        // Output channel k = input channel k % C (Expand's broadcast of one channel: k % 1 = 0): a 1x1
        // convolution with one weight 1 per kernel, w_scale 1 and equal in/out quantization (one
        // product per output: exact), as Slice's channel selection.
        const DeviceTensor& mid = chan.empty() ? dst : m_.tensors.at(chan);
        ConvOp op;
        op.name = name + "/channels";
        op.in_c = src.c, op.out_c = dst.c;
        op.fp16 = src.fp16;
        op.w_scales = {1.f};
        op.in_scale = src.scale, op.out_scale = mid.scale, op.in_zp = src.zp, op.out_zp = mid.zp;
        const size_t ic = static_cast<size_t>(op.in_c);
        if (!opts_.timing_only && op.fp16) {
            op.weights_f.assign(static_cast<size_t>(op.out_c) * ic, 0.f);
            for (size_t k = 0; k < static_cast<size_t>(op.out_c); ++k) op.weights_f[k * ic + k % ic] = 1.f;
        } else if (!opts_.timing_only) {
            op.weights.assign(static_cast<size_t>(op.out_c) * ic, 0);
            for (size_t k = 0; k < static_cast<size_t>(op.out_c); ++k) op.weights[k * ic + k % ic] = 1;
        }
        for (TaskBody& b : lower_conv_op(op, src, mid, arena_, soc_, {core})) {
            b.meta.intermediate = b.meta.intermediate || intermediate || !chan.empty();
            all.push_back(std::move(b));
        }
        if (chan.empty()) return all;
        from = &mid;
    }
    for (TaskBody& b : lower_tile_op(name, *from, dst, soc_, core)) {
        b.meta.intermediate = intermediate;
        all.push_back(std::move(b));
    }
    return all;
}

bool Compiler::tile_node(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& xv = g_.value(n.input(0));
    const ir::Value& yv = g_.value(n.outputs.at(0));
    const bool f16 = opts_.fp16 && xv.dtype == num::DType::F32 && yv.dtype == num::DType::F32;
    if (!f16 && (!is_q8(xv.dtype) || !is_q8(yv.dtype))) return false;
    const std::string& op = n.op_type;
    if (xv.shape.size() != 4 || yv.shape.size() != 4 || xv.shape[0] != 1 || yv.shape[0] != 1)
        unsupported(op + " of a tensor that is not [1,C,H,W] (one image per device tensor)");
    int64_t rep[4] = {1, 1, 1, 1};
    if (op == "Tile") {
        const std::vector<int64_t> r = int64s(required(g_, n, 1));
        if (r.size() != 4) unsupported("Tile repeats are not 4 values");
        for (size_t a = 0; a < 4; ++a) rep[a] = r[a];
    } else {  // Expand: numpy broadcast of the input's dimensions of 1
        for (size_t a = 0; a < 4; ++a)
            if (xv.shape[a] != yv.shape[a]) rep[a] = xv.shape[a] == 1 ? yv.shape[a] : 0;
    }
    for (size_t a = 0; a < 4; ++a)
        if (rep[a] < 1 || xv.shape[a] * rep[a] != yv.shape[a])
            unsupported(fmt::format("{} output {} is not the input {} repeated", op, yv.shape_str(), xv.shape_str()));
    DeviceTensor& in = f16 ? dev_f16(n.input(0)) : dev_q(n.input(0));
    DeviceTensor& out = f16 ? dev_f16(n.outputs[0]) : dev_q(n.outputs[0]);
    if (!f16 && (in.scale != out.scale || in.zp != out.zp)) unsupported(op + " changes the quantization");
    const std::string x = n.input(0), y = n.outputs[0];
    Layer L = base_layer(i, op, Unit::Npu);
    const bool spatial = rep[2] > 1 || rep[3] > 1;
    L.note = fmt::format("{}x{}x{} times ({}, {}, {}){}: {}{}", in.c, in.h, in.w, rep[1], rep[2], rep[3],
                         f16 ? ", fp16" : "", rep[1] > 1 ? "channels by a 1x1 selection conv, " : "",
                         spatial || rep[1] == 1 ? "DPU copies (rows / columns doubled in place)" : "");
    if (rep[1] > 1) {
        const uint64_t kin = (static_cast<uint64_t>(in.c) + static_cast<uint64_t>(in.c2) - 1) /
                             static_cast<uint64_t>(in.c2) * static_cast<uint64_t>(in.c2);
        init_estimate_ += static_cast<uint64_t>(out.c) * (kin + 64) + 4096;
        L.macs = static_cast<uint64_t>(out.c) * static_cast<uint64_t>(in.c) * static_cast<uint64_t>(in.h * in.w);
    }
    const std::string chan = rep[1] > 1 && spatial ? scratch_like(in, y + "/npusim_tile_channels", out.c, in.h, in.w) : "";
    const int core = m_.cores.front();
    push_npu(
        std::move(L), [this, x, y, chan, core, name = n.name]() { return tile_tasks(name, x, y, chan, core, false); },
        false);
    return true;
}

}  // namespace drv::rknpu::compiler_detail
