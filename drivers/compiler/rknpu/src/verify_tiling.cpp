// SPDX-License-Identifier: MIT
// verify_tiling (model.h): independent checks of a compiled model's task windows, from the task
// metadata and the IR geometry only (not from the lowering's own arithmetic):
//   - every NPU layer's task output windows lie inside its output tensor and cover it exactly once
//     (with the channel slices other layers write in place: concat by addressing);
//   - every task's input window holds all input rows (and channels) its output window needs, from
//     the node's kernel, stride, dilation and padding (element-wise layers: the same rows);
//   - CBUF: data + weight banks within the profile, and the input rows fit the data banks.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "compiler/rknpu/model.h"

namespace drv::rknpu {

namespace {

using Window = NpuTask::Window;

std::string win_str(const Window& w) {
    return fmt::format("c {}-{} y {}-{} x {}-{}", w.c0, w.c1 - 1, w.y0, w.y1 - 1, w.x0, w.x1 - 1);
}

int64_t volume(const Window& w) {
    return int64_t{std::max(0, w.c1 - w.c0)} * std::max(0, w.y1 - w.y0) * std::max(0, w.x1 - w.x0);
}

bool overlap(const Window& a, const Window& b) {
    return a.c0 < b.c1 && b.c0 < a.c1 && a.y0 < b.y1 && b.y0 < a.y1 && a.x0 < b.x1 && b.x0 < a.x1;
}

Window intersection(const Window& a, const Window& b) {
    return {std::max(a.c0, b.c0), std::min(a.c1, b.c1), std::max(a.y0, b.y0),
            std::min(a.y1, b.y1), std::max(a.x0, b.x0), std::min(a.x1, b.x1)};
}

/// Row geometry of the node that a layer starts with: output row y needs input rows
/// [y*stride - pad_top, y*stride - pad_top + eff) (clipped to the input).
struct RowGeom {
    enum Kind { Same, Kernel, All, Gather, Bilinear, Transposed, Modulo } kind = Same;
    int stride = 1, pad_top = 0, eff = 1;
    std::vector<int64_t> rows;  ///< Gather: the input row of each output row
    int factor = 1;  ///< Bilinear: the row upsampling factor (output row y reads rows near (y + 0.5) / f - 0.5)
    bool all_channels = false;  ///< a full (non-depthwise) convolution reads every input channel
};

int64_t ints_at(const num::Attributes& a, const std::string& name, size_t i, int64_t dflt) {
    const std::vector<int64_t> v = ir::attr_ints(a, name, {});
    return i < v.size() ? v[i] : dflt;
}

/// Element k of an int64/int32 constant (Slice starts/axes/steps).
int64_t int_at(const num::Tensor& t, size_t k) {
    if (t.dtype() == num::DType::I64) return t.data<int64_t>()[k];
    if (t.dtype() == num::DType::I32) return t.data<int32_t>()[k];
    return 0;
}

bool is_qdq(const ir::Node& n) {
    return (n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear") &&
           (n.domain.empty() || n.domain == "com.microsoft");
}

/// The node whose geometry the layer's rows follow: its first IR node that is not a Q/DQ. A QDQ unit
/// the compiler fused (DequantizeLinear inputs -> Conv -> [Relu] -> QuantizeLinear, as onnxruntime
/// leaves int8-activation units in float) lists its members in graph order, the input's
/// DequantizeLinear first; that one is element-wise and says nothing about the kernel.
const ir::Node* geometry_node(const CompiledModel& m, const Layer& L) {
    const ir::Node* first = nullptr;
    for (size_t ni : L.ir_nodes) {
        if (ni >= m.graph.nodes().size()) return nullptr;
        const ir::Node& n = m.graph.nodes()[ni];
        if (!first) first = &n;
        if (!is_qdq(n)) return &n;
    }
    return first;
}

/// Shape of a Conv's weight: the constant's, or (a QDQ unit's float Conv reads a DequantizeLinear
/// output, which may carry no inferred shape) the quantized constant's behind the DequantizeLinear.
const std::vector<int64_t>* weight_shape(const CompiledModel& m, const std::string& name) {
    const ir::Value* w = m.graph.find_value(name);
    if (w && w->shape.size() == 4) return &w->shape;
    const int p = m.graph.producer(name);
    if (p < 0) return nullptr;
    const ir::Node& dq = m.graph.nodes()[static_cast<size_t>(p)];
    if (!is_qdq(dq) || !dq.has_input(0)) return nullptr;
    const ir::Value* q = m.graph.find_value(dq.input(0));
    return q && q->shape.size() == 4 ? &q->shape : nullptr;
}

RowGeom row_geometry(const CompiledModel& m, const Layer& L, int in_h, int out_h) {
    RowGeom g;
    const ir::Node* np = geometry_node(m, L);
    if (!np) return g;
    const ir::Node& n = *np;
    const std::string& op = n.op_type;
    // Transpose to channel-last (a row-major output): every output element may come from any row.
    if (op == "QLinearGlobalAveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "Transpose") {
        g.kind = RowGeom::All;
        return g;
    }
    if (op == "Tile" || op == "Expand") {  // output row y reads input row y % in_h (a broadcast row: 0)
        g.kind = RowGeom::Modulo;
        return g;
    }
    if (op == "Gather") {  // along H: output row y reads input row indices[y]; other axes row y
        const ir::Value* x = n.has_input(0) ? m.graph.find_value(n.input(0)) : nullptr;
        const ir::Value* ix = n.has_input(1) ? m.graph.find_value(n.input(1)) : nullptr;
        int64_t axis = ir::attr_int(n.attrs, "axis", 0);
        if (!x || x->shape.size() != 4 || !ix || !ix->is_constant()) return g;
        if (axis < 0) axis += 4;
        if (axis != 2) return g;
        g.kind = RowGeom::Gather;
        for (size_t k = 0; k < ix->data->numel(); ++k) {
            const int64_t r = int_at(*ix->data, k);
            g.rows.push_back(r < 0 ? r + x->shape[2] : r);
        }
        return g;
    }
    // A bilinear (half_pixel) Resize by an integer row factor: output row y interpolates input rows
    // floor((y + 0.5) / f - 0.5) and the next, clamped to the edges.
    if (op == "Resize" && ir::attr_string(n.attrs, "mode", "nearest") == "linear" && in_h > 0 && out_h % in_h == 0) {
        g.kind = RowGeom::Bilinear;
        g.factor = out_h / in_h;
        return g;
    }
    if (op == "Slice") {  // output row y reads input row start + y * step (height axis 2 only)
        const ir::Value* x = n.has_input(0) ? m.graph.find_value(n.input(0)) : nullptr;
        const ir::Value* st = n.has_input(1) ? m.graph.find_value(n.input(1)) : nullptr;
        const ir::Value* ax = n.has_input(3) ? m.graph.find_value(n.input(3)) : nullptr;
        const ir::Value* sp = n.has_input(4) ? m.graph.find_value(n.input(4)) : nullptr;
        if (!x || !st || !st->is_constant() || x->shape.size() != 4) return g;
        const int64_t rank = static_cast<int64_t>(x->shape.size());
        for (size_t k = 0; k < st->data->numel(); ++k) {
            int64_t a = ax && ax->is_constant() ? int_at(*ax->data, k) : static_cast<int64_t>(k);
            if (a < 0) a += rank;
            if (a != 2) continue;
            int64_t start = int_at(*st->data, k);
            if (start < 0) start += x->shape[2];
            g.kind = RowGeom::Kernel;
            g.stride = static_cast<int>(sp && sp->is_constant() ? int_at(*sp->data, k) : 1);
            g.pad_top = -static_cast<int>(std::clamp<int64_t>(start, 0, x->shape[2]));
            g.eff = 1;
        }
        return g;
    }
    int64_t kh = 0;
    // ConvTranspose: input row x reaches output rows x * stride - pad_top + k (k < eff), so output row y
    // reads input rows ceil((y + pad_top - eff + 1) / stride) .. floor((y + pad_top) / stride).
    if (op == "ConvTranspose") {
        const std::vector<int64_t>* ws = n.has_input(1) ? weight_shape(m, n.input(1)) : nullptr;
        kh = ints_at(n.attrs, "kernel_shape", 0, ws ? (*ws)[2] : 0);
        if (kh <= 0) return g;
        g.kind = RowGeom::Transposed;
        g.stride = static_cast<int>(ints_at(n.attrs, "strides", 0, 1));
        g.eff = static_cast<int>((kh - 1) * ints_at(n.attrs, "dilations", 0, 1) + 1);
        g.pad_top = static_cast<int>(ints_at(n.attrs, "pads", 0, 0));
        g.all_channels = ir::attr_int(n.attrs, "group", 1) == 1;
        return g;
    }
    if (op == "QLinearConv" || op == "Conv" || op == "ConvInteger") {
        const size_t wi = op == "QLinearConv" ? 3 : 1;
        kh = ints_at(n.attrs, "kernel_shape", 0, 0);
        if (kh <= 0) {
            const std::vector<int64_t>* ws = n.has_input(wi) ? weight_shape(m, n.input(wi)) : nullptr;
            kh = ws ? (*ws)[2] : 0;
        }
        const int64_t group = ir::attr_int(n.attrs, "group", 1);
        g.all_channels = group == 1;
    } else if (op == "MaxPool" || op == "AveragePool" || op == "QLinearAveragePool" || op == "LpPool") {
        kh = ints_at(n.attrs, "kernel_shape", 0, 0);
    }
    if (kh <= 0) return g;  // element-wise: output row y reads input row y
    g.kind = RowGeom::Kernel;
    g.stride = static_cast<int>(ints_at(n.attrs, "strides", 0, 1));
    const int dil = static_cast<int>(ints_at(n.attrs, "dilations", 0, 1));
    g.eff = static_cast<int>((kh - 1) * dil + 1);
    const std::string auto_pad = ir::attr_string(n.attrs, "auto_pad", "NOTSET");
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        const int total = std::max(0, (out_h - 1) * g.stride + g.eff - in_h);
        g.pad_top = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
        g.pad_top = static_cast<int>(ints_at(n.attrs, "pads", 0, 0));
    }
    return g;
}

}  // namespace

std::vector<std::string> verify_tiling(const CompiledModel& m, const hw::SocProfile& soc) {
    std::vector<std::string> problems;
    const int banks = soc.npu.cbuf_banks.value;
    const int64_t entry = soc.npu.cbuf_entry_bytes.value, bank = soc.npu.cbuf_bank_bytes.value;
    const int c2 = soc.npu.c2_int8.value;
    std::set<std::string> written;  // tensors a non-view layer writes (its outputs)
    for (const Layer& L : m.layers)
        if (L.unit != Unit::View) written.insert(L.outputs.begin(), L.outputs.end());
    for (const Layer& L : m.layers) {
        if (L.unit != Unit::Npu) continue;
        auto bad = [&](const std::string& task, const std::string& what) {
            problems.push_back(task.empty() ? fmt::format("layer '{}': {}", L.name, what)
                                            : fmt::format("layer '{}' task '{}': {}", L.name, task, what));
        };
        if (L.tasks.empty()) {
            bad("", "NPU layer without tasks");
            continue;
        }
        if (L.outputs.empty() || !m.tensors.count(L.outputs[0])) {
            bad("", fmt::format("output '{}' has no device tensor", L.outputs.empty() ? "" : L.outputs[0]));
            continue;
        }
        const DeviceTensor& out = m.tensors.at(L.outputs[0]);
        const DeviceTensor* in = nullptr;
        if (!L.inputs.empty() && m.tensors.count(L.inputs[0])) in = &m.tensors.at(L.inputs[0]);
        const RowGeom geo = row_geometry(m, L, in ? in->h : 0, out.h);
        const Window whole{0, out.c, 0, out.h, 0, out.w};

        std::vector<const NpuTask*> tasks;
        for (size_t ti : L.tasks) {
            if (ti >= m.tasks.size()) {
                bad("", fmt::format("task index {} out of range", ti));
                continue;
            }
            tasks.push_back(&m.tasks[ti]);
        }
        // Output coverage: inside the tensor, pairwise disjoint, the union equal to the tensor.
        // Channel slices that other layers write in place (concat by addressing: a tensor aliasing
        // this output, produced by a non-view layer) count as windows too. A layer's own further
        // outputs that alias its first (TensorRT-style: one QuantizeLinear per consumer, the same
        // quantization) are other names for the bytes its tasks write, not slices.
        std::vector<std::pair<std::string, Window>> wins;
        for (const NpuTask* t : tasks) {
            if (t->intermediate) continue;  // writes a layer-internal scratch (nearest Resize's first pass)
            const Window& w = t->out_window;
            // A strided window (every y_step-th row / x_step-th column) as its rows or columns.
            if (w.y_step > 1 || w.x_step > 1) {
                for (int y = w.y0; y < w.y1; y += w.y_step > 1 ? w.y_step : w.y1 - w.y0)
                    for (int x = w.x0; x < w.x1; x += w.x_step > 1 ? w.x_step : w.x1 - w.x0)
                        wins.push_back({t->what, Window{w.c0, w.c1, y, w.y_step > 1 ? y + 1 : w.y1, x,
                                                        w.x_step > 1 ? x + 1 : w.x1}});
                continue;
            }
            wins.push_back({t->what, w});
        }
        for (const auto& [name, t] : m.tensors) {
            const bool aliases = !t.alias_of.empty() && (t.alias_of == out.name || t.alias_of == L.outputs[0]);
            const bool own = std::find(L.outputs.begin(), L.outputs.end(), name) != L.outputs.end();
            if (!aliases || own || !written.count(name) || out.surf_stride == 0 || t.offset < out.offset) continue;
            const int c_off = static_cast<int>((t.offset - out.offset) / out.surf_stride) * out.c2;
            wins.push_back({fmt::format("'{}' written in place", name), Window{c_off, c_off + t.c, 0, t.h, 0, t.w}});
        }
        int64_t covered = 0;
        for (size_t i = 0; i < wins.size(); ++i) {
            const Window& w = wins[i].second;
            const std::string& what = wins[i].first;
            if (volume(w) == 0) bad(what, fmt::format("empty output window ({})", win_str(w)));
            if (w.c0 < 0 || w.y0 < 0 || w.x0 < 0 || w.c1 > out.c || w.y1 > out.h || w.x1 > out.w)
                bad(what, fmt::format("output window {} outside the {}x{}x{} output", win_str(w), out.c, out.h, out.w));
            // Values covered: inside the tensor, counting an overlap once (exact unless three
            // windows overlap, which is reported anyway).
            const Window wc = intersection(w, whole);
            covered += volume(wc);
            for (size_t j = 0; j < i; ++j)
                if (overlap(w, wins[j].second)) {
                    bad(what, fmt::format("output window {} overlaps '{}' ({})", win_str(w), wins[j].first,
                                          win_str(wins[j].second)));
                    covered -= volume(intersection(wc, wins[j].second));
                }
        }
        if (covered < volume(whole))
            bad("", fmt::format("tasks cover {} of the {} output values (gap)", covered, volume(whole)));

        // Input windows and CBUF.
        for (const NpuTask* tp : tasks) {
            const NpuTask& t = *tp;
            if (t.cbuf_data_banks < 0 || t.cbuf_weight_banks < 0 || t.cbuf_data_banks + t.cbuf_weight_banks > banks)
                bad(t.what, fmt::format("{} data + {} weight CBUF banks exceed the {} of {}", t.cbuf_data_banks,
                                        t.cbuf_weight_banks, banks, soc.name));
            const Window& iw = t.in_window;
            if (t.cbuf_data_banks > 0 && entry > 0) {
                const int64_t cpad = (std::max(0, iw.c1 - iw.c0) + c2 - 1) / c2 * c2;
                const int64_t per_row = (int64_t{std::max(0, iw.x1 - iw.x0)} * cpad + entry - 1) / entry;
                // A 1x1 kernel with a row stride only needs every stride-th row of its window
                // (the lowering may load just those: a line stride of several lines).
                const int span = std::max(0, iw.y1 - iw.y0);
                const bool skips = geo.kind == RowGeom::Kernel && geo.eff == 1 && geo.stride > 1;
                const int64_t need = per_row * (skips ? (span + geo.stride - 1) / geo.stride : span);
                if (need > t.cbuf_data_banks * (bank / entry))
                    bad(t.what, fmt::format("input window {} needs {} CBUF entries, {} data bank(s) hold {}",
                                            win_str(iw), need, t.cbuf_data_banks, t.cbuf_data_banks * (bank / entry)));
            }
            if (!in) continue;  // no device input (constant-only layer): nothing to check
            // A task writing a layer-internal scratch (a dilated conv's row phase) reads in its own
            // geometry; the layer's rows are checked on the tasks that write the output.
            if (t.intermediate) continue;
            const Window& ow = t.out_window;
            int need0 = ow.y0, need1 = ow.y1;
            if (geo.kind == RowGeom::All) {
                need0 = 0, need1 = in->h;
            } else if (geo.kind == RowGeom::Kernel) {
                need0 = ow.y0 * geo.stride - geo.pad_top;
                need1 = (ow.y1 - 1) * geo.stride - geo.pad_top + geo.eff;
            } else if (geo.kind == RowGeom::Transposed) {
                auto fdiv = [](int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
                need0 = -fdiv(-(ow.y0 + geo.pad_top - geo.eff + 1), geo.stride);  // ceil
                need1 = fdiv(ow.y1 - 1 + geo.pad_top, geo.stride) + 1;
            } else if (geo.kind == RowGeom::Gather && ow.y0 < ow.y1 && static_cast<size_t>(ow.y1) <= geo.rows.size()) {
                const auto [lo, hi] = std::minmax_element(geo.rows.begin() + ow.y0, geo.rows.begin() + ow.y1);
                need0 = static_cast<int>(*lo), need1 = static_cast<int>(*hi) + 1;
            } else if (geo.kind == RowGeom::Modulo && in->h > 0 && ow.y0 < ow.y1) {
                const int r0 = ow.y0 % in->h, r1 = (ow.y1 - 1) % in->h;
                const bool wraps = ow.y1 - ow.y0 >= in->h || r0 > r1;
                need0 = wraps ? 0 : r0, need1 = wraps ? in->h : r1 + 1;
            } else if (geo.kind == RowGeom::Bilinear) {
                const int f2 = 2 * geo.factor;  // floor((2y + 1 - f) / 2f), exact in integers
                auto src = [&](int y) { return static_cast<int>(std::floor(static_cast<double>(2 * y + 1 - geo.factor) / f2)); };
                need0 = src(ow.y0), need1 = src(ow.y1 - 1) + 2;
            }
            need0 = std::max(0, need0), need1 = std::min(in->h, need1);
            if (need0 < need1 && (iw.y0 > need0 || iw.y1 < need1))
                bad(t.what, fmt::format("input rows {}-{} do not include rows {}-{} that output rows {}-{} need", iw.y0,
                                        iw.y1 - 1, need0, need1 - 1, ow.y0, ow.y1 - 1));
            if (iw.y0 < 0 || iw.y1 > in->h)
                bad(t.what, fmt::format("input rows {}-{} outside the input's {} rows", iw.y0, iw.y1 - 1, in->h));
            const int cneed0 = geo.all_channels ? 0 : ow.c0, cneed1 = geo.all_channels ? in->c : std::min(ow.c1, in->c);
            if ((geo.kind == RowGeom::Kernel || geo.kind == RowGeom::Transposed) && cneed0 < cneed1 && (iw.c0 > cneed0 || iw.c1 < cneed1))
                bad(t.what, fmt::format("input channels {}-{} do not include channels {}-{}", iw.c0, iw.c1 - 1, cneed0,
                                        cneed1 - 1));
        }
    }
    return problems;
}

}  // namespace drv::rknpu
