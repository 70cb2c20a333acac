// SPDX-License-Identifier: MIT
// Model compiler, phase 1b for the sequence operators (issue 15): int8 Gather with constant
// indices (the QDQ unit DQ -> Gather -> Q with one quantization, which onnxruntime runs on the
// quantized tensor). Along channels every output channel is one 0/1 product of a 1x1 selection
// convolution (as a Slice from inside an atom); along H (or along W of a one-row tensor, the
// [1,C,1,T] sequence layout) every run of consecutive indices is one PPU window copy into its rows
// (columns) of the output. Both exact; the block mapping is an assumption (COMPILER.md "Sequence
// operators", A-GATHER).
#include "compiler_internal.h"
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

bool Compiler::gather_node(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& xv = g_.value(n.input(0));
    const ir::Value& yv = g_.value(n.outputs.at(0));
    if (!is_q8(xv.dtype) || !is_q8(yv.dtype)) return false;
    if (xv.shape.size() != 4 || yv.shape.size() != 4 || xv.shape[0] != 1)
        unsupported("Gather of a tensor that is not [1,C,H,W] (or with indices of another rank)");
    int64_t axis = ir::attr_int(n.attrs, "axis", 0);
    if (axis < 0) axis += 4;
    const num::Tensor* it = const_of(g_, n, 1);
    if (!it) unsupported("Gather indices are not constant");
    if (axis < 1 || axis > 3) unsupported("Gather along the batch axis");
    const std::vector<int64_t> idx = gather_indices(*it, xv.shape[static_cast<size_t>(axis)]);
    DeviceTensor& in = dev_q(n.input(0));
    DeviceTensor& out = dev_q(n.outputs[0]);
    if (in.scale != out.scale || in.zp != out.zp) unsupported("Gather changes the quantization");
    if (in.row_major) unsupported("Gather of a row-major tensor");
    const std::string x = n.input(0), y = n.outputs[0];
    if (axis == 1) {
        // out channel k = in channel idx[k]: a 1x1 convolution with one weight 1 per kernel,
        // w_scale 1 and equal in/out quantization (one product per output, exact).
        ConvOp op;
        op.name = n.name;
        op.in_c = in.c, op.out_c = out.c;
        op.w_scales = {1.f};
        op.in_scale = in.scale, op.out_scale = out.scale, op.in_zp = in.zp, op.out_zp = out.zp;
        Layer L = base_layer(i, "Gather", Unit::Npu);
        L.note = fmt::format("{} channels picked by a 1x1 selection convolution (0/1 weights, exact)", out.c);
        push_conv(std::move(L), std::move(op), x, y, [idx](ConvOp& o) {
            o.weights.assign(static_cast<size_t>(o.out_c) * static_cast<size_t>(o.in_c), 0);
            for (size_t k = 0; k < idx.size(); ++k)
                o.weights[k * static_cast<size_t>(o.in_c) + static_cast<size_t>(idx[k])] = 1;
        });
        return true;
    }
    // H: the PPU writes compact rows, so a run of rows is a window of the output; W: only when the
    // rows are one row (the PPU's destination has no line stride).
    if (axis == 3 && in.h != 1) unsupported("Gather along W of a tensor with more than one row (PPU output rows are compact)");
    const auto runs = index_runs(idx);
    Layer L = base_layer(i, "Gather", Unit::Npu);
    L.note = fmt::format("{} runs of consecutive {} as PPU window copies (1x1 max pool, exact)", runs.size(),
                         axis == 2 ? "rows" : "columns");
    const int core = m_.cores.front();
    const bool rows = axis == 2;
    push_npu(
        std::move(L),
        [this, x, y, runs, rows, core, name = n.name]() {
            const DeviceTensor &src = m_.tensors.at(x), &dst = m_.tensors.at(y);
            std::vector<TaskBody> all;
            for (const auto& [o0, s0, len] : runs) {
                DeviceTensor win = src, part = dst;
                const uint64_t s_off = rows ? static_cast<uint64_t>(s0) * src.line_stride
                                            : static_cast<uint64_t>(s0) * static_cast<uint64_t>(src.c2);
                const uint64_t d_off = rows ? static_cast<uint64_t>(o0) * dst.line_stride
                                            : static_cast<uint64_t>(o0) * static_cast<uint64_t>(dst.c2);
                win.offset += s_off, part.offset += d_off;
                (rows ? win.h : win.w) = len;
                (rows ? part.h : part.w) = len;
                part.line_stride = static_cast<uint32_t>(part.w * part.c2);
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

}  // namespace drv::rknpu::compiler_detail
