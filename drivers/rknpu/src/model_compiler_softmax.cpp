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
    // Opset < 13 flattens the dims from `axis` on; for the last axis both definitions agree.
    if (axis != 3)
        unsupported(fmt::format("Softmax along axis {} (the fp16 lowering reduces along W, axis 3; along channels "
                                "the NPU has no channel maximum yet)",
                                axis));
    if (xv.shape[0] != 1) unsupported("Softmax of a batch > 1");
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
    // Built in timing-only compiles too (`npusim check`): the LUT task's registers hold the table.
    const Fp16Lut exp_lut = make_fp16_lut(kExpRange, [](const std::vector<float>& xs) {
        std::vector<float> r;
        for (float v : xs) r.push_back(std::exp(std::min(v, 0.f)));
        return r;
    });
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
                Fp16DpuOp sub;
                sub.kind = Fp16DpuOp::Kind::Add;
                sub.alu_algo = static_cast<uint32_t>(Algo::MINUS);
                sub.what = "softmax x - max";
                add(lower_fp16_dpu_op(name, sub, xr, &m, d, arena_, soc_, core), row, true);
                Fp16DpuOp ex;
                ex.kind = Fp16DpuOp::Kind::Lut;
                ex.lut = exp_lut;
                ex.what = "softmax exp";
                add(lower_fp16_dpu_op(name, ex, d, nullptr, e, arena_, soc_, core), row, true);
                sum(e, s, row);
                Fp16DpuOp div;
                div.kind = Fp16DpuOp::Kind::Add;
                div.alu_algo = static_cast<uint32_t>(Algo::DIV);
                div.what = "softmax exp / sum";
                add(lower_fp16_dpu_op(name, div, e, &s, yr, arena_, soc_, core), row, false);
            }
            return all;
        },
        false);
    return true;
}

}  // namespace drv::rknpu::compiler_detail
