// SPDX-License-Identifier: MIT
// Model compiler, phase 1b (continued): views and concatenation - Flatten/Reshape/Identity/
// Squeeze/Unsqueeze as aliases of their input, Concat by addressing (each input written in place
// into the output's channel range) or by requantizing copies (concat_gather), and the
// DeviceTensor views (row bands, channel slices) and per-core row splits the lowerings share.
#include "compiler_internal.h"
#include "lower_move.h"

namespace drv::rknpu::compiler_detail {

bool Compiler::view(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& x = g_.value(n.input(0));
    const ir::Value& y = g_.value(n.outputs.at(0));
    const bool f16 = opts_.fp16 && x.dtype == num::DType::F32;  // the fp16 path: an fp16 view
    if (f16 ? y.dtype != num::DType::F32 : !(is_q8(x.dtype) && is_q8(y.dtype))) return false;  // uint8/int8: same bytes
    int c0 = 0, h0 = 0, w0 = 0, c1, h1, w1;
    bool x_dims = device_dims(x.shape, c0, h0, w0);
    // A flat fp16 image (a recurrent layer's Y / Y_h, model_compiler_rnn.cpp): row-major bytes, the
    // layout of a [1, numel] or [1, numel, 1, 1] reshape of it.
    const auto flat = m_.tensors.find(n.input(0));
    const bool is_flat = f16 && flat != m_.tensors.end() && flat->second.fp16 && flat->second.h == 1 &&
                         flat->second.w == 1 && !flat->second.row_major;
    if (is_flat) c0 = flat->second.c, h0 = w0 = 1, x_dims = true;
    if (!x_dims || !device_dims(y.shape, c1, h1, w1))
        unsupported("reshape between shapes without a common device layout");
    if (!(c0 == c1 && h0 == h1 && w0 == w1))
        unsupported("reshape changes the device layout (only [1,C,1,1] <-> [1,C] is a view)");
    DeviceTensor& in = is_flat ? flat->second : f16 ? dev_f16(n.input(0)) : dev_q(n.input(0));
    DeviceTensor& out = f16 ? dev_f16(n.outputs[0]) : dev_q(n.outputs[0]);
    if (!f16 && (in.scale != out.scale || in.zp != out.zp)) unsupported("reshape changes the quantization");
    out.alias_of = in.name;
    Layer L = base_layer(i, n.op_type, Unit::View);
    L.note = fmt::format("same bytes as '{}'", in.name);
    pending_.push_back({std::move(L), nullptr, false, cur_unit_});
    return true;
}

std::vector<Compiler::ConcatPart> Compiler::concat_parts(const ir::Node& n, const DeviceTensor& out) {
    std::vector<ConcatPart> parts;
    int c_off = 0;
    const size_t k = (n.inputs.size() - 2) / 3;
    for (size_t j = 0; j < k; ++j) {
        const std::string x = n.input(2 + 3 * j);
        if (g_.value(x).is_constant()) unsupported("QLinearConcat with a constant input");
        const DeviceTensor& t = dev(x, scalar_scale(g_, n, 3 + 3 * j), scalar_zp(g_, n, 4 + 3 * j));
        if (t.h != out.h || t.w != out.w) unsupported("QLinearConcat inputs differ in H/W");
        bool ok = t.scale == out.scale && t.zp == out.zp && c_off % t.c2 == 0 && (j + 1 == k || t.c % t.c2 == 0) &&
                  g_.producer(x) >= 0 && !aliased_.count(x) && t.alias_of.empty() &&
                  std::find(g_.outputs().begin(), g_.outputs().end(), x) == g_.outputs().end();
        for (const auto& [nm, dt] : m_.tensors) ok &= dt.alias_of != x;
        for (const auto& p : parts) ok &= p.name != x;
        parts.push_back({x, c_off, ok});
        c_off += t.c;
    }
    if (c_off != out.c) unsupported("QLinearConcat channel sum differs from the output");
    return parts;
}

size_t Compiler::alias_in_place(const std::vector<ConcatPart>& parts, const std::string& y) {
    size_t copies = 0;
    for (const auto& p : parts) {
        if (!p.in_place) {
            ++copies;
            continue;
        }
        m_.tensors.at(p.name).alias_of = y;
        aliased_.insert(p.name);
        slice_off_[p.name] = p.c_off;
    }
    return copies;
}

bool Compiler::concat(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const std::string y = n.outputs.at(0);
    const int64_t axis = ir::attr_int(n.attrs, "axis", 1);
    if (g_.value(y).shape.size() == 4 && (axis == 2 || axis == 3 || axis == -2 || axis == -1))
        return concat_spatial(i, axis < 0 ? axis + 4 : axis);  // model_compiler_move.cpp
    if (g_.value(y).shape.size() != 4 || (axis != 1 && axis != -3))
        unsupported("QLinearConcat not along channels of a 4-D tensor");
    if ((n.inputs.size() - 2) % 3 != 0 || n.inputs.size() < 5) unsupported("QLinearConcat input count");
    const DeviceTensor& out = dev(y, scalar_scale(g_, n, 0), scalar_zp(g_, n, 1));
    const std::vector<ConcatPart> parts = concat_parts(n, out);
    for (const auto& p : parts)
        if (p.c_off % out.c2 != 0) return concat_gather(i, parts, y);
    const size_t copies = alias_in_place(parts, y);
    const size_t k = parts.size();
    Layer L = base_layer(i, "Concat", copies ? Unit::Npu : Unit::View);
    L.note = copies ? fmt::format("{} of {} inputs written in place, {} requantizing copies", k - copies, k, copies)
                    : fmt::format("concat by addressing: all {} inputs written in place", k);
    if (!copies) {
        pending_.push_back({std::move(L), nullptr, false, cur_unit_});
        return true;
    }
    push_npu(
        std::move(L), [this, parts, y, name = n.name]() { return lower_concat_copies(name, parts, y); }, true);
    return true;
}

bool Compiler::concat_gather(size_t i, const std::vector<ConcatPart>& parts, const std::string& y) {
    const ir::Node& n = g_.nodes()[i];
    const DeviceTensor& out = m_.tensors.at(y);
    const int c2 = out.c2;
    std::vector<int> at;  // each input's channel offset in the scratch: C2-aligned
    int tc = 0;
    for (const auto& p : parts) {
        at.push_back(tc);
        tc += (m_.tensors.at(p.name).c + c2 - 1) / c2 * c2;
    }
    DeviceTensor t = out;
    t.name = y + "/npusim_concat_gather";
    t.c = tc;
    t.ir_shape = {1, tc, out.h, out.w};
    t.line_stride = static_cast<uint32_t>(out.w * c2);
    t.surf_stride = static_cast<uint32_t>(align_up(static_cast<uint64_t>(t.line_stride) * static_cast<uint64_t>(out.h), 16));
    t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>(tc / c2);
    t.alias_of.clear();
    m_.tensors[t.name] = t;
    scratch_[t.name] = cur_unit_;
    ConvOp op;
    op.name = n.name;
    op.in_c = tc, op.out_c = out.c;
    op.w_scales = {1.f};
    op.in_scale = out.scale, op.out_scale = out.scale, op.in_zp = out.zp, op.out_zp = out.zp;
    init_estimate_ += static_cast<uint64_t>(out.c) * (static_cast<uint64_t>(tc) + 64) + 4096 * (parts.size() + 1);
    Layer L = base_layer(i, "Concat", Unit::Npu);
    L.note = fmt::format("{} inputs, one starting inside an atom: requantizing copies to C2-aligned slices of a "
                         "scratch, then a 1x1 selection convolution",
                         parts.size());
    push_npu(
        std::move(L),
        [this, parts, at, y, s = t.name, op = std::move(op), name = n.name]() mutable {
            std::vector<TaskBody> tasks;
            const DeviceTensor& scratch = m_.tensors.at(s);
            for (size_t j = 0; j < parts.size(); ++j) {
                const DeviceTensor& src = m_.tensors.at(parts[j].name);
                const DeviceTensor dst = slice(scratch, at[j], src.c);
                auto copies = across_cores(dst.h, [&](int y0, int rows, int core) {
                    return lower_affine_op(name, "concat gather copy", rows_of(src, y0, rows), rows_of(dst, y0, rows),
                                           {static_cast<double>(src.scale) / scratch.scale}, {0.0}, arena_, soc_, core);
                });
                for (auto& b : copies) {
                    b.meta.intermediate = true;  // writes the scratch (verify_tiling)
                    tasks.push_back(std::move(b));
                }
            }
            if (!opts_.timing_only) {
                const size_t C = static_cast<size_t>(op.in_c);
                op.weights.assign(static_cast<size_t>(op.out_c) * C, 0);
                for (size_t j = 0; j < parts.size(); ++j)
                    for (int k = 0; k < m_.tensors.at(parts[j].name).c; ++k)
                        op.weights[static_cast<size_t>(parts[j].c_off + k) * C + static_cast<size_t>(at[j] + k)] = 1;
            }
            for (auto& b : lower_conv_op(op, scratch, m_.tensors.at(y), arena_, soc_, m_.cores)) tasks.push_back(std::move(b));
            return tasks;
        },
        true);
    return true;
}

std::vector<TaskBody> Compiler::lower_concat_copies(const std::string& name, const std::vector<ConcatPart>& parts,
                                          const std::string& y) {
    std::vector<TaskBody> out_tasks;
    const DeviceTensor& parent = m_.tensors.at(y);
    for (const auto& p : parts) {
        if (p.in_place) continue;
        const DeviceTensor& src = m_.tensors.at(p.name);
        const DeviceTensor dst = slice(parent, p.c_off, src.c);
        auto t = across_cores(dst.h, [&](int y0, int rows, int core) {
            return lower_affine_op(name, "concat copy", rows_of(src, y0, rows), rows_of(dst, y0, rows),
                                   {static_cast<double>(src.scale) / parent.scale}, {0.0}, arena_, soc_, core);
        });
        for (auto& b : t) {
            // Windows are in the layer output's coordinates (model.h): shift to the slice.
            b.meta.out_window.c0 += p.c_off, b.meta.out_window.c1 += p.c_off;
            out_tasks.push_back(std::move(b));
        }
    }
    return out_tasks;
}

DeviceTensor Compiler::rows_of(const DeviceTensor& t, int y0, int n) {
    DeviceTensor r = t;
    r.offset = t.offset + static_cast<uint64_t>(y0) * t.line_stride;
    r.h = n;
    return r;
}

std::vector<TaskBody> Compiler::across_cores(int h, const std::function<std::vector<TaskBody>(int, int, int)>& f) {
    const int n = static_cast<int>(m_.cores.size());
    if (n < 2 || h < n) return f(0, h, m_.cores.front());
    const int per = (h + n - 1) / n;
    std::vector<TaskBody> out;
    for (int k = 0; k < n && k * per < h; ++k) {
        const int y0 = k * per, rows = std::min(per, h - y0);
        for (auto& b : f(y0, rows, m_.cores[static_cast<size_t>(k)])) {
            for (NpuTask::Window* w : {&b.meta.out_window, &b.meta.in_window}) w->y0 += y0, w->y1 += y0;
            b.meta.what += fmt::format(" rows {}-{}", y0, y0 + rows - 1);
            out.push_back(std::move(b));
        }
    }
    return out;
}

DeviceTensor Compiler::slice(const DeviceTensor& parent, int c_off, int c) {
    if (c_off % parent.c2 != 0)
        throw std::invalid_argument(
            fmt::format("concat slice at channel {} of '{}' is not C2-aligned", c_off, parent.name));
    DeviceTensor t = parent;
    t.name = parent.name + "[" + std::to_string(c_off) + ":" + std::to_string(c_off + c) + "]";
    t.c = c;
    t.offset = parent.offset + static_cast<uint64_t>(c_off / parent.c2) * parent.surf_stride;
    t.bytes = static_cast<uint64_t>(parent.surf_stride) * static_cast<uint64_t>((c + t.c2 - 1) / t.c2);
    t.alias_of = parent.name;
    return t;
}

}  // namespace drv::rknpu::compiler_detail
