// SPDX-License-Identifier: MIT
// Model compiler: Softmax on the fp16 path (issue 15, assumption A-SOFTMAX-F16 in COMPILER.md
// "Sequence operators"). Softmax along W (axis 3 of a [1,C,H,W] tensor; the seed's RK3588 rule
// allows axis 1 or 3 of a 4-D int8 / float16 input, §3.2.56) as one row of H at a time, each row a
// [C,1,W] cube whose softmax rows are its channels, so the per-row scalars (max, sum) are
// per-channel operands the ERDMA broadcasts along W:
//   1. m = max over W: PPU max pool with one window over the row (W <= 16), or over the row seen as
//      an a x b grid (W = a b, a, b <= 16: the same bytes, the row's pixels are consecutive);
//   2. d = x - m: DPU EW ALU minus, m the ERDMA per-channel operand (A-EWALU);
//   3. e = exp(d): DPU float-path LUT of exp(min(d, 0)) (fp16_lut.cpp; d <= 0, e in (0, 1]);
//   4. s = sum over W: depthwise convolution with one kernel of ones over the same grid, fp32
//      accumulation;
//   5. y = e / s: DPU EW ALU div by the ERDMA per-channel operand.
// Softmax along C (axis 1) has no per-channel trick: the channel maximum is a tree of exact steps,
// each halving the channels (out channel k = max(x[k], x[h + k]), h = ceil(n / 2); the halves are
// channel views where they are whole atoms, else 1x1 selection convolutions with 0/1 weights, exact
// in fp16), the EW ALU max of the halves; the [1,1,H,W] maximum goes back to every channel by a 1x1
// convolution of ones (tile_tasks), then the same minus / exp / sum (a 1x1 convolution of ones to one
// channel) / broadcast / div.
// Shift invariance makes step 1 what keeps exp inside fp16 for any input (the row maximum gives
// e = 1). The error is the LUT's (interpolation + fp16 entries) plus fp16 roundings of d, e and y:
// measured per layer against the reference Softmax (kFp16LayerRtol) by `npusim run`.
#include <cmath>

#include "compiler_internal.h"
#include "hw/rknpu_regs.h"

namespace drv::rknpu::compiler_detail {

namespace {
constexpr int kPpuWindow = 16;  // PPU_POOLING_KERNEL_CFG.KERNEL_WIDTH / _HEIGHT (4 bits, minus one)
/// exp's table range: LO (steps of 1/16) on [-8, 8], relative interpolation error <= 2^-11 (h^2 / 8),
/// most of which the division by the sum cancels; LE (steps of 1) on [-32, 32] for d < -8, where
/// exp(d) < 3.4e-4; below -32 the secant over [-64, -32] gives ~0. Range 16 (LO steps of 1/32 on
/// [-4, 4], LE steps of 1/2) measured worse: 2^-9.2 against 2^-10.3 of max |y| on softmax_test's
/// sm_c, from its coarse LE steps on [-16, -4].
constexpr float kExpRange = 32.f;
/// Softmax rows the lowering unrolls (five tasks each).
constexpr int kMaxRows = 64;
/// Channels of a Softmax along C (a max tree of 13 levels).
constexpr int kMaxChannels = 8192;

/// W as a grid a x b (a rows of b pixels) with a, b <= the PPU window, b as large as it can be;
/// false when W has no such factorisation.
bool grid_of(int w, int& a, int& b) {
    for (b = std::min(w, kPpuWindow); b >= 1; --b)
        if (w % b == 0 && w / b <= kPpuWindow) {
            a = w / b;
            return true;
        }
    return false;
}

/// exp(min(d, 0)) on the float-path LUT. Built in timing-only compiles too (`npusim check`): the
/// LUT task's registers hold the table.
Fp16Lut exp_table() {
    return make_fp16_lut(kExpRange, [](const std::vector<float>& xs) {
        std::vector<float> r;
        for (float v : xs) r.push_back(std::exp(std::min(v, 0.f)));
        return r;
    });
}

/// The EW ALU task of x against the ERDMA operand (alu: regdb AluAlgo) and the exp table task.
Fp16DpuOp ew_alu(hw::rknpu::enums::AluAlgo alu, const char* what) {
    Fp16DpuOp op;
    op.kind = Fp16DpuOp::Kind::Add;
    op.alu_algo = static_cast<uint32_t>(alu);
    op.what = what;
    return op;
}
Fp16DpuOp exp_task(const Fp16Lut& t) {
    Fp16DpuOp op;
    op.kind = Fp16DpuOp::Kind::Lut;
    op.lut = t;
    op.what = "softmax exp";
    return op;
}

/// A one-row cube [C,1,a*b] seen as [C,a,b]: the same bytes (compact rows of b atoms).
DeviceTensor as_grid(const DeviceTensor& t, int a, int b) {
    DeviceTensor g = t;
    g.h = a, g.w = b;
    g.ir_shape = {1, t.c, a, b};
    g.line_stride = static_cast<uint32_t>(b * t.c2 * t.elem_bytes());
    return g;
}
}  // namespace

bool Compiler::softmax_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& xv = g_.value(n.input(0));
    const ir::Value& yv = g_.value(n.outputs.at(0));
    if (xv.shape.size() != 4 || yv.shape != xv.shape) unsupported("Softmax of a tensor that is not 4-D");
    const int64_t rank = 4;
    const int64_t opset = g_.opset("");
    int64_t axis = ir::attr_int(n.attrs, "axis", opset >= 13 ? -1 : 1);
    if (axis < 0) axis += rank;
    if (axis != 3 && axis != 1)
        unsupported(fmt::format("Softmax along axis {} (the seed's rule and the lowering: channels or W)", axis));
    if (xv.shape[0] != 1) unsupported("Softmax of a batch > 1");
    // Opset < 13 flattens the dims from `axis` on: for the last axis both definitions agree, from
    // axis 1 the softmax runs over C x H x W together (the same as along C only when H = W = 1).
    if (opset < 13 && axis == 1 && xv.shape[2] * xv.shape[3] > 1)
        unsupported("Softmax before opset 13 along axis 1 normalises C x H x W together (not lowered)");
    if (axis == 1) return softmax_channels_f16(i);
    const int C = static_cast<int>(xv.shape[1]), H = static_cast<int>(xv.shape[2]), W = static_cast<int>(xv.shape[3]);
    int ga = 1, gb = W;
    if (W > kPpuWindow && !grid_of(W, ga, gb))
        unsupported(fmt::format("Softmax along a width of {}: not a product of two PPU windows (<= {} each)", W, kPpuWindow));
    if (H > kMaxRows) unsupported(fmt::format("Softmax of {} rows (the lowering unrolls up to {})", H, kMaxRows));
    const std::string x = n.input(0), y = n.outputs[0];
    const DeviceTensor& dx = dev_f16(x);
    dev_f16(y);
    // Layer-internal tensors, one row's worth (the rows run one after the other on one core).
    const std::string base = y + "/npusim_softmax_";
    const std::string t_m = scratch_like(dx, base + "max", C, 1, 1);
    const std::string t_d = scratch_like(dx, base + "diff", C, 1, W);
    const std::string t_e = scratch_like(dx, base + "exp", C, 1, W);
    const std::string t_s = scratch_like(dx, base + "sum", C, 1, 1);

    Layer L = base_layer(i, "Softmax", Unit::Npu);
    L.macs = static_cast<uint64_t>(C) * static_cast<uint64_t>(H) * static_cast<uint64_t>(W);  // the sum's
    L.note = fmt::format("fp16; along W per row ({}x{} windows): PPU max, EW minus, exp LUT, depthwise sum of "
                         "ones, EW div (A-SOFTMAX-F16)",
                         ga, gb);
    const Fp16Lut exp_lut = exp_table();
    const int core = m_.cores.front();
    using Algo = hw::rknpu::enums::AluAlgo;
    push_npu(
        std::move(L),
        [this, x, y, C, H, W, ga, gb, t_m, t_d, t_e, t_s, exp_lut, core, name = n.name]() {
            std::vector<TaskBody> all;
            const auto add = [&](std::vector<TaskBody> bodies, int row, bool intermediate) {
                for (TaskBody& b : bodies) {
                    b.meta.intermediate = intermediate;
                    for (NpuTask::Window* w : {&b.meta.out_window, &b.meta.in_window}) w->y0 += row, w->y1 += row;
                    if (!intermediate) b.meta.in_window = {0, C, row, row + 1, 0, W};
                    b.meta.what += fmt::format(" row {}", row);
                    all.push_back(std::move(b));
                }
            };
            // One window over the whole row seen as its grid: the output is the [C,1,1] scalar.
            const auto pool = [&](const DeviceTensor& in, const DeviceTensor& out, int row) {
                PoolOp p;
                p.name = name + "/max";
                p.kernel_h = p.stride_h = ga;
                p.kernel_w = p.stride_w = gb;
                add(lower_maxpool_op(p, as_grid(in, ga, gb), out, arena_, soc_, core), row, true);
            };
            const auto sum = [&](const DeviceTensor& in, const DeviceTensor& out, int row) {
                ConvOp op;
                op.name = name + "/sum";
                op.fp16 = true;
                op.depthwise = true;
                op.in_c = op.out_c = C;
                op.kernel_h = ga, op.kernel_w = gb;
                if (!opts_.timing_only) op.weights_f.assign(static_cast<size_t>(C) * static_cast<size_t>(W), 1.f);
                add(lower_conv_op(op, as_grid(in, ga, gb), out, arena_, soc_, {core}), row, true);
            };
            const DeviceTensor& X = m_.tensors.at(x);
            const DeviceTensor& Y = m_.tensors.at(y);
            const DeviceTensor &m = m_.tensors.at(t_m), &d = m_.tensors.at(t_d), &e = m_.tensors.at(t_e),
                               &s = m_.tensors.at(t_s);
            for (int row = 0; row < H; ++row) {
                const DeviceTensor xr = rows_of(X, row, 1), yr = rows_of(Y, row, 1);
                pool(xr, m, row);
                add(lower_fp16_dpu_op(name, ew_alu(Algo::MINUS, "softmax x - max"), xr, &m, d, arena_, soc_, core), row, true);
                add(lower_fp16_dpu_op(name, exp_task(exp_lut), d, nullptr, e, arena_, soc_, core), row, true);
                sum(e, s, row);
                add(lower_fp16_dpu_op(name, ew_alu(Algo::DIV, "softmax exp / sum"), e, &s, yr, arena_, soc_, core), row, false);
            }
            return all;
        },
        false);
    return true;
}

bool Compiler::softmax_channels_f16(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const auto& sh = g_.value(n.input(0)).shape;
    const int C = static_cast<int>(sh[1]), H = static_cast<int>(sh[2]), W = static_cast<int>(sh[3]);
    if (C > kMaxChannels) unsupported(fmt::format("Softmax over {} channels (the max tree is built up to {})", C, kMaxChannels));
    const std::string x = n.input(0), y = n.outputs[0];
    const DeviceTensor& dx = dev_f16(x);
    dev_f16(y);
    const std::string base = y + "/npusim_softmax_";
    // The max tree's levels: channels n -> h = ceil(n / 2); the halves A (channels [0, h)) and B
    // (channels [h, n), then channel n - 1 again when n is odd: a repeat does not change a max) are views of the
    // level's input where they are whole atoms of it, else selection-conv scratches.
    struct Level {
        int n, h;
        std::string in, a, b, out;  // a / b empty: a channel view of `in`
    };
    std::vector<Level> levels;
    std::string cur = x;
    for (int c = C, k = 0; c > 1; c = (c + 1) / 2, ++k) {
        Level l;
        l.n = c, l.h = (c + 1) / 2, l.in = cur;
        const int c2 = dx.c2;
        if (l.h % c2 != 0) l.a = scratch_like(dx, fmt::format("{}a{}", base, k), l.h, H, W);
        if (l.h % c2 != 0 || c % 2 != 0) l.b = scratch_like(dx, fmt::format("{}b{}", base, k), l.h, H, W);
        l.out = scratch_like(dx, fmt::format("{}max{}", base, k), l.h, H, W);
        cur = l.out;
        levels.push_back(l);
    }
    const std::string t_m = cur;  // [1,H,W] (C = 1: x itself)
    const std::string t_mb = scratch_like(dx, base + "max_all", C, H, W);
    const std::string t_d = scratch_like(dx, base + "diff", C, H, W);
    const std::string t_e = scratch_like(dx, base + "exp", C, H, W);
    const std::string t_s = scratch_like(dx, base + "sum", 1, H, W);
    const std::string t_sb = scratch_like(dx, base + "sum_all", C, H, W);
    Layer L = base_layer(i, "Softmax", Unit::Npu);
    L.macs = 2 * static_cast<uint64_t>(C) * static_cast<uint64_t>(H) * static_cast<uint64_t>(W);  // sum + broadcasts
    L.note = fmt::format("fp16; along C: a {}-level max tree (EW max of channel halves), 1x1 broadcast convs, EW minus, "
                         "exp LUT, 1x1 sum conv, EW div (A-SOFTMAX-F16)",
                         levels.size());
    const Fp16Lut exp_lut = exp_table();
    const int core = m_.cores.front();
    using Algo = hw::rknpu::enums::AluAlgo;
    push_npu(
        std::move(L),
        [this, x, y, C, H, W, levels, t_m, t_mb, t_d, t_e, t_s, t_sb, exp_lut, core, name = n.name]() {
            std::vector<TaskBody> all;
            const auto add = [&](std::vector<TaskBody> bodies, bool intermediate) {
                for (TaskBody& b : bodies) {
                    b.meta.intermediate = intermediate;
                    if (!intermediate) b.meta.in_window = {0, C, 0, H, 0, W};
                    all.push_back(std::move(b));
                }
            };
            // out channel k = in channel src(k): a 1x1 conv with one weight 1 per kernel (exact).
            const auto select = [&](const DeviceTensor& in, const DeviceTensor& out, const std::function<int(int)>& src) {
                ConvOp op;
                op.name = name + "/select";
                op.fp16 = true;
                op.in_c = in.c, op.out_c = out.c;
                if (!opts_.timing_only) {
                    op.weights_f.assign(static_cast<size_t>(out.c) * static_cast<size_t>(in.c), 0.f);
                    for (int k = 0; k < out.c; ++k)
                        op.weights_f[static_cast<size_t>(k) * static_cast<size_t>(in.c) + static_cast<size_t>(src(k))] = 1.f;
                }
                add(lower_conv_op(op, in, out, arena_, soc_, {core}), true);
            };
            for (const Level& l : levels) {
                const DeviceTensor& in = m_.tensors.at(l.in);
                DeviceTensor a = l.a.empty() ? slice(in, 0, l.h) : m_.tensors.at(l.a);
                DeviceTensor b = l.b.empty() ? slice(in, l.h, l.h) : m_.tensors.at(l.b);
                if (!l.a.empty()) select(in, a, [](int k) { return k; });
                if (!l.b.empty()) select(in, b, [&l](int k) { return std::min(l.h + k, l.n - 1); });
                add(lower_fp16_dpu_op(name, ew_alu(Algo::MAX, "softmax channel max"), a, &b, m_.tensors.at(l.out), arena_,
                                      soc_, core),
                    true);
            }
            for (TaskBody& b : tile_tasks(name + "/max", t_m, t_mb, "", core, true)) all.push_back(std::move(b));
            const DeviceTensor &d = m_.tensors.at(t_d), &e = m_.tensors.at(t_e);
            add(lower_fp16_dpu_op(name, ew_alu(Algo::MINUS, "softmax x - max"), m_.tensors.at(x), &m_.tensors.at(t_mb), d,
                                  arena_, soc_, core),
                true);
            add(lower_fp16_dpu_op(name, exp_task(exp_lut), d, nullptr, e, arena_, soc_, core), true);
            {  // the sum over channels: a 1x1 conv of ones to one channel (fp32 accumulation)
                ConvOp op;
                op.name = name + "/sum";
                op.fp16 = true;
                op.in_c = C, op.out_c = 1;
                if (!opts_.timing_only) op.weights_f.assign(static_cast<size_t>(C), 1.f);
                add(lower_conv_op(op, e, m_.tensors.at(t_s), arena_, soc_, {core}), true);
            }
            for (TaskBody& b : tile_tasks(name + "/sum", t_s, t_sb, "", core, true)) all.push_back(std::move(b));
            add(lower_fp16_dpu_op(name, ew_alu(Algo::DIV, "softmax exp / sum"), e, &m_.tensors.at(t_sb), m_.tensors.at(y),
                                  arena_, soc_, core),
                false);
            return all;
        },
        false);
    return true;
}

}  // namespace drv::rknpu::compiler_detail
