// SPDX-License-Identifier: MIT
// Model compiler, phase 1b for the sequence operators (issue 15): int8 Gather with constant
// indices (the QDQ unit DQ -> Gather -> Q with one quantization, which onnxruntime runs on the
// quantized tensor). Along channels every output channel is one 0/1 product of a 1x1 selection
// convolution (as a Slice from inside an atom); along H (or along W of a one-row tensor, the
// [1,C,1,T] sequence layout) every run of consecutive indices is one PPU window copy into its rows
// (columns) of the output. Both exact; the block mapping is an assumption (COMPILER.md "Sequence
// operators", A-GATHER). MatMul of two activations in the seed's exMatMul form: one layer, the
// CNA reading the first operand as run-time weights (lower_matmul.cpp, A-EXMM).
#include "compiler_internal.h"
#include "lower_matmul.h"
#include "lower_move.h"

#include <array>

namespace drv::rknpu::compiler_detail {

namespace {

/// Constant rank-1 indices, negative ones taken from the end of `dim`.
std::vector<int64_t> gather_indices(const num::Tensor& t, int64_t dim) {
    if (t.rank() != 1) unsupported("Gather indices are not rank 1");
    std::vector<int64_t> v(t.numel());
    for (size_t k = 0; k < v.size(); ++k) {
        int64_t x = 0;
        if (t.dtype() == num::DType::I64) x = t.data<int64_t>()[k];
        else if (t.dtype() == num::DType::I32) x = t.data<int32_t>()[k];
        else unsupported("Gather indices are not int32/int64");
        if (x < 0) x += dim;
        if (x < 0 || x >= dim) unsupported(fmt::format("Gather index {} outside [0, {})", x, dim));
        v[k] = x;
    }
    return v;
}

/// Runs of consecutive indices: (first output position, first source index, length).
std::vector<std::array<int, 3>> index_runs(const std::vector<int64_t>& idx) {
    std::vector<std::array<int, 3>> runs;
    for (size_t k = 0; k < idx.size(); ++k) {
        if (!runs.empty() && idx[k] == idx[k - 1] + 1) ++runs.back()[2];
        else runs.push_back({static_cast<int>(k), static_cast<int>(idx[k]), 1});
    }
    return runs;
}

}  // namespace

void Compiler::push_selection_conv(Layer L, const std::string& name, const std::string& x, const std::string& y,
                                   const std::vector<int64_t>& idx, bool f16) {
    const DeviceTensor &in = m_.tensors.at(x), &out = m_.tensors.at(y);
    // out channel k = in channel idx[k]: a 1x1 convolution with one weight 1 per kernel, w_scale 1
    // and equal in/out quantization (one product per output, exact; fp16: 1.0 weights).
    ConvOp op;
    op.name = name;
    op.in_c = in.c, op.out_c = out.c;
    op.w_scales = {1.f};
    op.in_scale = in.scale, op.out_scale = out.scale, op.in_zp = in.zp, op.out_zp = out.zp;
    if (f16) {
        op.fp16 = true;
        push_conv_f16(std::move(L), std::move(op), x, y, [idx](ConvOp& o) {
            o.weights_f.assign(static_cast<size_t>(o.out_c) * static_cast<size_t>(o.in_c), 0.f);
            for (size_t k = 0; k < idx.size(); ++k) o.weights_f[k * static_cast<size_t>(o.in_c) + static_cast<size_t>(idx[k])] = 1.f;
        });
        return;
    }
    push_conv(std::move(L), std::move(op), x, y, [idx](ConvOp& o) {
        o.weights.assign(static_cast<size_t>(o.out_c) * static_cast<size_t>(o.in_c), 0);
        for (size_t k = 0; k < idx.size(); ++k) o.weights[k * static_cast<size_t>(o.in_c) + static_cast<size_t>(idx[k])] = 1;
    });
}

bool Compiler::gather_node(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& xv = g_.value(n.input(0));
    const ir::Value& yv = g_.value(n.outputs.at(0));
    // The fp16 path (issue 14): a float Gather moves fp16 elements (the selection conv in fp16: 1.0
    // weights, one product per output, exact; the PPU copies in 16-bit elements).
    const bool f16 = opts_.fp16 && xv.dtype == num::DType::F32 && yv.dtype == num::DType::F32;
    if (!f16 && (!is_q8(xv.dtype) || !is_q8(yv.dtype))) return false;
    if (xv.shape.size() != 4 || yv.shape.size() != 4 || xv.shape[0] != 1)
        unsupported("Gather of a tensor that is not [1,C,H,W] (or with indices of another rank)");
    int64_t axis = ir::attr_int(n.attrs, "axis", 0);
    if (axis < 0) axis += 4;
    const num::Tensor* it = const_of(g_, n, 1);
    if (!it) unsupported("Gather indices are not constant");
    if (axis < 1 || axis > 3) unsupported("Gather along the batch axis");
    const std::vector<int64_t> idx = gather_indices(*it, xv.shape[static_cast<size_t>(axis)]);
    DeviceTensor& in = f16 ? dev_f16(n.input(0)) : dev_q(n.input(0));
    DeviceTensor& out = f16 ? dev_f16(n.outputs[0]) : dev_q(n.outputs[0]);
    if (!f16 && (in.scale != out.scale || in.zp != out.zp)) unsupported("Gather changes the quantization");
    if (in.row_major) unsupported("Gather of a row-major tensor");
    const std::string x = n.input(0), y = n.outputs[0];
    if (axis == 1) {
        Layer L = base_layer(i, "Gather", Unit::Npu);
        L.note = fmt::format("{}{} channels picked by a 1x1 selection convolution (0/1 weights, exact)",
                             f16 ? "fp16; " : "", out.c);
        push_selection_conv(std::move(L), n.name, x, y, idx, f16);
        return true;
    }
    // H: the PPU writes compact rows, so a run of rows is a window of the output; W: only when the
    // rows are one row (the PPU's destination has no line stride).
    if (axis == 3 && in.h != 1) unsupported("Gather along W of a tensor with more than one row (PPU output rows are compact)");
    const auto runs = index_runs(idx);
    Layer L = base_layer(i, "Gather", Unit::Npu);
    L.note = fmt::format("{}{} runs of consecutive {} as PPU window copies (1x1 max pool, exact)", f16 ? "fp16; " : "",
                         runs.size(), axis == 2 ? "rows" : "columns");
    const int core = m_.cores.front();
    const bool rows = axis == 2;
    push_npu(
        std::move(L),
        [this, x, y, runs, rows, core, name = n.name]() {
            const DeviceTensor &src = m_.tensors.at(x), &dst = m_.tensors.at(y);
            std::vector<TaskBody> all;
            for (const auto& [o0, s0, len] : runs) {
                DeviceTensor win = src, part = dst;
                const uint64_t atom = static_cast<uint64_t>(src.c2 * src.elem_bytes());  // bytes per pixel
                const uint64_t s_off = rows ? static_cast<uint64_t>(s0) * src.line_stride : static_cast<uint64_t>(s0) * atom;
                const uint64_t d_off = rows ? static_cast<uint64_t>(o0) * dst.line_stride : static_cast<uint64_t>(o0) * atom;
                win.offset += s_off, part.offset += d_off;
                (rows ? win.h : win.w) = len;
                (rows ? part.h : part.w) = len;
                part.line_stride = static_cast<uint32_t>(part.w * part.c2 * part.elem_bytes());
                auto t = lower_window_copy_op(fmt::format("{}/{}", name, o0), win, part, 1, 1, arena_, soc_, core);
                for (TaskBody& b : t) {
                    b.meta.in_window = rows ? NpuTask::Window{0, src.c, s0, s0 + len, 0, src.w} : NpuTask::Window{0, src.c, 0, 1, s0, s0 + len};
                    b.meta.out_window = rows ? NpuTask::Window{0, dst.c, o0, o0 + len, 0, dst.w} : NpuTask::Window{0, dst.c, 0, 1, o0, o0 + len};
                    all.push_back(std::move(b));
                }
            }
            return all;
        },
        false);
    return true;
}

bool Compiler::channel_shuffle_node(size_t i) {
    const auto& nodes = g_.nodes();
    auto single = [&](const std::string& v) -> int {
        const auto c = g_.consumers(v);
        const bool out = std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
        return c.size() == 1 && !out ? static_cast<int>(c[0]) : -1;
    };
    const ir::Node& r1 = nodes[i];
    if (r1.outputs.size() != 1 || r1.inputs.empty()) return false;
    const auto s4 = g_.value(r1.input(0)).shape, s5 = g_.value(r1.outputs[0]).shape;
    if (s4.size() != 4 || s5.size() != 5 || s4[0] != 1 || s5[0] != 1 || s5[1] < 1 || s5[2] < 1 ||
        s5[1] * s5[2] != s4[1] || s5[3] != s4[2] || s5[4] != s4[3])
        return false;
    const int t = single(r1.outputs[0]);
    if (t < 0 || nodes[static_cast<size_t>(t)].op_type != "Transpose" || !nodes[static_cast<size_t>(t)].domain.empty() ||
        ir::attr_ints(nodes[static_cast<size_t>(t)].attrs, "perm", {}) != std::vector<int64_t>{0, 2, 1, 3, 4})
        return false;
    const int r2 = single(nodes[static_cast<size_t>(t)].outputs.at(0));
    if (r2 < 0 || nodes[static_cast<size_t>(r2)].op_type != "Reshape" || !nodes[static_cast<size_t>(r2)].domain.empty() ||
        nodes[static_cast<size_t>(r2)].outputs.size() != 1 || g_.value(nodes[static_cast<size_t>(r2)].outputs[0]).shape != s4)
        return false;
    for (const int k : {static_cast<int>(i), t, r2}) {
        const ir::Node& n = nodes[static_cast<size_t>(k)];
        if (forced_cpu(n) || checker_cpu_.count(n.name) || (k != static_cast<int>(i) && consumed_.count(static_cast<size_t>(k))))
            return false;
    }
    const std::string x = r1.input(0), y = nodes[static_cast<size_t>(r2)].outputs[0];
    // The fp16 path moves fp16 elements (1.0 weights: one product per output, exact).
    const bool f16 = opts_.fp16 && g_.value(x).dtype == num::DType::F32 && g_.value(y).dtype == num::DType::F32;
    if (!f16 && (!is_q8(g_.value(x).dtype) || !is_q8(g_.value(y).dtype))) return false;
    DeviceTensor& in = f16 ? dev_f16(x) : dev_q(x);
    if (in.row_major) return false;
    DeviceTensor& out = f16 ? dev_f16(y) : dev_q(y);
    if (!f16 && (in.scale != out.scale || in.zp != out.zp)) unsupported("the channel shuffle changes the quantization");
    // Output channel j = c * g + k (c < C/g, k < g) is input channel k * (C/g) + c.
    const int64_t g = s5[1], cg = s5[2];
    std::vector<int64_t> idx(static_cast<size_t>(g * cg));
    for (int64_t j = 0; j < g * cg; ++j) idx[static_cast<size_t>(j)] = (j % g) * cg + j / g;
    Layer L = base_layer(static_cast<size_t>(r2), "ChannelShuffle", Unit::Npu);
    L.inputs = {x};
    L.in_shape = shape_of(x);
    std::vector<size_t> ir;
    for (const int k : {static_cast<int>(i), t, r2})
        for (size_t m : g_.members(static_cast<size_t>(k))) ir.push_back(m);
    std::sort(ir.begin(), ir.end());
    L.ir_nodes = ir;
    L.note = fmt::format("{}channel shuffle of {} groups: a {}-channel permutation by a 1x1 selection convolution "
                         "(0/1 weights, exact; A-SHUFFLE)", f16 ? "fp16; " : "", g, out.c);
    for (const int k : {t, r2}) consumed_.insert(static_cast<size_t>(k));
    push_selection_conv(std::move(L), nodes[static_cast<size_t>(r2)].name, x, y, idx, f16);
    return true;
}

bool Compiler::exmatmul_node(size_t i) {
    const auto& nodes = g_.nodes();
    auto single = [&](const std::string& v) -> int {
        const auto c = g_.consumers(v);
        const bool out = std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
        return c.size() == 1 && !out ? static_cast<int>(c[0]) : -1;
    };
    auto shape = [&](const std::string& v) { return g_.value(v).shape; };
    auto reshape_4d = [&](int r, int reader) {  // Reshape [1,C,1,W] -> [1,C,W] read only by `reader`
        if (r < 0 || nodes[static_cast<size_t>(r)].op_type != "Reshape") return false;
        const ir::Node& n = nodes[static_cast<size_t>(r)];
        const auto s4 = shape(n.input(0)), s3 = shape(n.outputs.at(0));
        return single(n.outputs[0]) == reader && s4.size() == 4 && s3.size() == 3 && s4[0] == 1 && s4[2] == 1 &&
               s3[0] == 1 && s3[1] == s4[1] && s3[2] == s4[3];
    };
    const ir::Node& r = nodes[i];
    if (r.outputs.size() != 1) return false;
    int mm = single(r.outputs[0]);
    if (mm >= 0 && nodes[static_cast<size_t>(mm)].op_type == "Transpose") mm = single(nodes[static_cast<size_t>(mm)].outputs.at(0));
    if (mm < 0) return false;
    const ir::Node& m = nodes[static_cast<size_t>(mm)];
    // int8: QLinearMatMul (B is input 3); fp16 path: a float MatMul (B is input 1).
    const bool f16 = opts_.fp16 && m.op_type == "MatMul" && m.inputs.size() == 2 && g_.value(m.input(0)).dtype == num::DType::F32 &&
                     g_.value(m.input(1)).dtype == num::DType::F32;
    const size_t bi = f16 ? 1 : 3;
    if (!f16 && (m.op_type != "QLinearMatMul" || m.inputs.size() < 8)) return false;
    if (!m.domain.empty() || const_of(g_, m, bi)) return false;
    const int tr = g_.producer(m.input(0));
    if (tr < 0 || nodes[static_cast<size_t>(tr)].op_type != "Transpose" || single(m.input(0)) != mm ||
        ir::attr_ints(nodes[static_cast<size_t>(tr)].attrs, "perm", {}) != std::vector<int64_t>{0, 2, 1})
        return false;
    const int ra = g_.producer(nodes[static_cast<size_t>(tr)].input(0)), rb = g_.producer(m.input(bi));
    if (!reshape_4d(ra, tr) || !reshape_4d(rb, mm) || static_cast<size_t>(std::min(ra, rb)) != i) return false;
    const std::string a4 = nodes[static_cast<size_t>(ra)].input(0), b4 = nodes[static_cast<size_t>(rb)].input(0),
                      y = m.outputs.at(0);
    if (g_.producer(b4) > static_cast<int>(i) || g_.producer(a4) > static_cast<int>(i)) return false;
    for (int k : {ra, tr, rb, mm}) {
        const ir::Node& n = nodes[static_cast<size_t>(k)];
        if (forced_cpu(n) || checker_cpu_.count(n.name) || consumed_.count(static_cast<size_t>(k))) return false;
    }
    const auto ys = shape(y);
    const int K = static_cast<int>(shape(a4)[1]), N = static_cast<int>(shape(a4)[3]), M = static_cast<int>(shape(b4)[3]);
    if (ys.size() != 3 || ys[1] != N || ys[2] != M || shape(b4)[1] != K) unsupported("exMatMul shapes do not agree");
    // The IR quantization of each operand is its 4-D source's (Reshape / Transpose keep it).
    const int dims[3] = {N, 1, M};
    const DeviceTensor& A = f16 ? dev_f16(a4) : dev(a4, scalar_scale(g_, m, 1), scalar_zp(g_, m, 2));
    const DeviceTensor& B = f16 ? dev_f16(b4) : dev(b4, scalar_scale(g_, m, 4), scalar_zp(g_, m, 5));
    if (f16)
        dev_f16(y, dims);
    else
        dev(y, scalar_scale(g_, m, 6), scalar_zp(g_, m, 7), dims);
    Layer L = base_layer(static_cast<size_t>(mm), "exMatMul", Unit::Npu);
    L.inputs = {a4, b4};
    L.in_shape = shape_of(a4);
    std::vector<size_t> ir;
    for (int k : {ra, tr, rb, mm})
        for (size_t x : g_.members(static_cast<size_t>(k))) ir.push_back(x);
    std::sort(ir.begin(), ir.end());
    L.ir_nodes = ir;
    L.macs = static_cast<uint64_t>(K) * static_cast<uint64_t>(N) * static_cast<uint64_t>(M);
    const int taps = f16 ? 1 : B.zp == -128 ? 9 : 6;
    L.note = f16 ? fmt::format("A^T B over {} channels, fp16: A copied channel-last into the CNA's weights by DPU "
                               "tasks, a 1x1 conv over B (A-EXMM)", K)
                 : fmt::format("A^T B over {} channels: A's thirds written as the CNA's weights by DPU tasks, "
                               "a {}x1 kernel over B (zero points as padding taps, A-EXMM)", K, taps);
    for (int k : {tr, rb, mm}) consumed_.insert(static_cast<size_t>(k));
    const std::string scratch = y + "/npusim_exmatmul_thirds";
    DeviceTensor t = A;
    t.name = scratch, t.alias_of.clear(), t.zp = 0;
    t.bytes = exmatmul_scratch_bytes(A, B);
    m_.tensors[scratch] = t;
    if (journal_on_) journal_new_.push_back(scratch);
    scratch_[scratch] = cur_unit_;
    init_estimate_ += static_cast<uint64_t>(N) * static_cast<uint64_t>(taps * K + 64) + 4096;
    const int core = m_.cores.front();
    push_npu(
        std::move(L),
        [this, a4, b4, y, scratch, core, name = m.name]() {
            return lower_exmatmul_op(name, m_.tensors.at(a4), m_.tensors.at(b4), m_.tensors.at(y),
                                     m_.tensors.at(scratch).offset, arena_, soc_, core);
        },
        false);
    return true;
}

}  // namespace drv::rknpu::compiler_detail
