// SPDX-License-Identifier: MIT
// exMatMul of two int8 activations (issue 15): the weight operand is written into the CNA's weight
// blocks by DPU tasks of the same layer, then one convolution reads it (lower_matmul.h).
// ASSUMPTION (A-EXMM, not public): how RKNN's exMatMul feeds an activation to the CNA. npusim
// uses only what its models implement: the DPU affine (BS multiply, BN add, output convert, as
// lower_affine_op), the WDMA's channel-last write (A-TP), the CNA's line stride and padding.
#include "lower_matmul.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "hw/rknpu_layout.h"
#include "lower_move.h"

namespace drv::rknpu {

namespace {

[[noreturn]] void bad(const std::string& name, const std::string& why) {
    throw std::invalid_argument(fmt::format("exMatMul '{}': {}", name, why));
}

}  // namespace

DeviceTensor exmatmul_rows(const DeviceTensor& x, uint64_t offset) {
    DeviceTensor t = x;
    t.h = 3, t.zp = 0, t.offset = offset;
    t.alias_of.clear();
    t.line_stride = static_cast<uint32_t>(t.w * t.c2);
    t.surf_stride = static_cast<uint32_t>((uint64_t{3} * t.line_stride + 15) / 16 * 16);
    t.bytes = uint64_t{t.surf_stride} * static_cast<uint64_t>((t.c + t.c2 - 1) / t.c2);
    return t;
}

namespace {

uint64_t align64(uint64_t v) { return (v + 63) / 64 * 64; }
int taps_of(const DeviceTensor& b) { return b.zp == -128 ? 9 : 6; }
/// K padded to the atom: the conv's channel count in its weight blocks (lower_conv's cpad).
uint64_t k_padded(const DeviceTensor& a) { return static_cast<uint64_t>((a.c + a.c2 - 1) / a.c2 * a.c2); }
/// Scratch layout: B3, the weight image (64-byte aligned), then one thirds image T [K,3,nk] per
/// kernel block (bounded by T of the whole row plus 16 bytes of surface rounding per block of at
/// least one atom of kernels).
uint64_t weights_at(const DeviceTensor& b) { return align64(exmatmul_rows(b, 0).bytes); }
uint64_t thirds_at(const DeviceTensor& a, const DeviceTensor& b) {
    return align64(weights_at(b) + static_cast<uint64_t>(a.w) * static_cast<uint64_t>(taps_of(b)) * k_padded(a));
}

}  // namespace

uint64_t exmatmul_scratch_bytes(const DeviceTensor& a, const DeviceTensor& b) {
    if (a.fp16) return align64(static_cast<uint64_t>(a.w) * k_padded(a) * 2);  // the weight image only
    const uint64_t c1 = static_cast<uint64_t>((a.c + a.c2 - 1) / a.c2), blocks = static_cast<uint64_t>((a.w + a.c2 - 1) / a.c2);
    return thirds_at(a, b) + c1 * (3 * static_cast<uint64_t>(a.w) * static_cast<uint64_t>(a.c2) + 16 * blocks);
}

namespace {

/// fp16: no zero points and A's values are fp16 weights as they are, so A is copied channel-last
/// straight into the fp16 weight blocks (kernel n = pixel n) and a 1x1 fp16 conv reads B.
std::vector<TaskBody> exmatmul_f16(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                   const DeviceTensor& y, uint64_t scratch_off, ArenaBuilder& arena,
                                   const hw::SocProfile& soc, int core) {
    const int K = a.c, N = a.w, c2 = a.c2, Kp = static_cast<int>(k_padded(a));
    ConvOp op;
    op.fp16 = true;
    op.name = name;
    op.in_c = K, op.out_c = N;
    RuntimeWeights rw;
    rw.offset = scratch_off;
    op.runtime_weights = &rw;
    std::vector<TaskBody> conv = lower_conv_op(op, b, y, arena, soc, {core});
    if (rw.cpad != Kp || rw.taps != 1) bad(name, "unexpected fp16 weight layout");
    const hw::rknpu::WeightBlocks blocks = hw::rknpu::weight_blocks(soc, 16, false);
    const int KG = static_cast<int>(blocks.kernel_group), CG = static_cast<int>(blocks.channel_group);
    std::vector<TaskBody> tasks;
    for (int k0 = 0; k0 < N; k0 += rw.kg) {
        const int kn = std::min(rw.kg, N - k0);
        for (int kb = 0; kb < kn; kb += KG) {
            const int nk = std::min(KG, kn - kb), n0 = k0 + kb;
            // Whole atoms, as the int8 path: A's padding lanes (zeros as the DPU writes them) are
            // the padding channels' weights.
            for (int cb = 0; cb < Kp; cb += CG) {
                const int nc = std::min(CG, Kp - cb), nv = std::min(nc, K - cb);
                const uint64_t src = a.offset + static_cast<uint64_t>(cb / c2) * a.surf_stride +
                                     static_cast<uint64_t>(n0) * static_cast<uint64_t>(c2) * 2;
                const uint64_t dst = rw.offset + static_cast<uint64_t>(k0) * rw.per_kernel +
                                     2 * hw::rknpu::weight_element(blocks, static_cast<uint32_t>(kn), 1,
                                                                   static_cast<uint32_t>(rw.cpad), static_cast<uint32_t>(kb),
                                                                   0, static_cast<uint32_t>(cb));
                TaskBody t = lower_dpu_copy(fmt::format("exMatMul fp16 weights k{}-{} c{}-{}", n0, n0 + nk - 1, cb, cb + nc - 1),
                                            src, a.surf_stride, dst, 0, nk, 1, nc, 0, c2, core, true, true);
                t.meta.intermediate = true;
                t.meta.in_window = {cb, cb + nv, 0, 1, n0, n0 + nk};
                t.meta.out_window = {n0, n0 + nk, 0, 1, 0, 0};  // A's window
                tasks.push_back(std::move(t));
            }
        }
    }
    if (scratch_off + uint64_t{static_cast<uint64_t>(N)} * rw.per_kernel > scratch_off + exmatmul_scratch_bytes(a, b))
        bad(name, "internal: fp16 weights beyond the scratch");
    for (TaskBody& t : conv) tasks.push_back(std::move(t));
    return tasks;
}

}  // namespace

std::vector<TaskBody> lower_exmatmul_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                        const DeviceTensor& y, uint64_t scratch_off, ArenaBuilder& arena,
                                        const hw::SocProfile& soc, int core) {
    const int K = a.c, N = a.w, M = b.w, c2 = a.c2;
    if (a.h != 1 || b.h != 1 || y.h != 1 || b.c != K || y.c != N || y.w != M)
        bad(name, fmt::format("shapes A {}x{}x{}, B {}x{}x{}, Y {}x{}x{} are not [K,1,N] [K,1,M] [N,1,M]", a.c, a.h, a.w,
                              b.c, b.h, b.w, y.c, y.h, y.w));
    const int Kp = static_cast<int>(k_padded(a));  // K in whole atoms
    if (a.row_major || b.row_major || y.row_major) bad(name, "NC1HWC2 tensors only");
    if (a.fp16 && b.fp16 && y.fp16) return exmatmul_f16(name, a, b, y, scratch_off, arena, soc, core);
    if (a.fp16 || b.fp16 || y.fp16) bad(name, "mixed int8 / fp16 operands");
    DeviceTensor B3 = exmatmul_rows(b, scratch_off);
    B3.zp = b.zp, B3.scale = b.scale;
    // The convolution (weights at their place in the scratch, filled by the tasks below).
    const bool zb_min = b.zp == -128;
    const int P = taps_of(b) - 3;
    ConvOp op;
    op.name = name;
    op.in_c = K, op.out_c = N;
    op.kernel_h = P + 3, op.pad_top = P;
    op.w_scales = {a.scale};
    op.in_scale = b.scale, op.out_scale = y.scale;
    op.in_zp = zb_min ? 64 : -b.zp;  // PAD_VALUE
    op.out_zp = y.zp;
    RuntimeWeights rw;
    rw.offset = scratch_off + weights_at(b);
    op.runtime_weights = &rw;
    std::vector<TaskBody> conv = lower_conv_op(op, B3, y, arena, soc, {core});
    if (rw.cpad != Kp || rw.taps != P + 3) bad(name, "unexpected weight layout");
    std::vector<TaskBody> tasks;
    auto add = [&](TaskBody t, const NpuTask::Window& in, const NpuTask::Window& out) {
        t.meta.intermediate = true;
        t.meta.in_window = in, t.meta.out_window = out;
        tasks.push_back(std::move(t));
    };
    for (int r = 0; r < 3; ++r)
        add(lower_dpu_copy(fmt::format("exMatMul operand row {}", r), b.offset, b.surf_stride,
                           B3.offset + static_cast<uint64_t>(r) * B3.line_stride, B3.surf_stride, M, 1, K, 0, c2, core),
            {0, K, 0, 1, 0, M}, {0, K, r, r + 1, 0, M});
    // Per kernel block (the conv's kernel groups cut into the weight blocks' kernel groups): the
    // thirds of its pixels of A' = A - a.zp, W_j = floor((A' + j) / 3) = round(A' / 3 + (j - 1) / 3)
    // (fractions 0, 1/3, 2/3 only: 1/6 away from a tie, far above the 16-bit multiplier's error),
    // as rows j of T [K,3,nk]; then channel-last copies of T into the blocks, one per three taps
    // (T's rows are three consecutive tap blocks: kernel n, channel k = W_j[k, n]).
    const hw::rknpu::WeightBlocks blocks = hw::rknpu::weight_blocks(soc, 8, false);
    const int KG = static_cast<int>(blocks.kernel_group), CG = static_cast<int>(blocks.channel_group);
    uint64_t cursor = scratch_off + thirds_at(a, b);
    for (int k0 = 0; k0 < N; k0 += rw.kg) {
        const int kn = std::min(rw.kg, N - k0);
        for (int kb = 0; kb < kn; kb += KG) {
            const int nk = std::min(KG, kn - kb), n0 = k0 + kb;
            DeviceTensor part = a;  // A's pixels [n0, n0 + nk)
            part.offset = a.offset + static_cast<uint64_t>(n0) * static_cast<uint64_t>(c2), part.w = nk;
            part.line_stride = static_cast<uint32_t>(nk * c2);  // one row: its length
            const DeviceTensor T = exmatmul_rows(part, cursor);
            cursor += T.bytes;
            for (int j = 0; j < 3; ++j) {
                DeviceTensor row = T;
                row.name = fmt::format("{}/third{}", name, j);
                row.h = 1, row.offset = T.offset + static_cast<uint64_t>(j) * T.line_stride;
                for (TaskBody& t : lower_affine_op(row.name, "exMatMul weight third", part, row, {1.0 / 3.0},
                                                   {(j - 1) / 3.0}, arena, soc, core))
                    add(std::move(t), {0, K, 0, 1, n0, n0 + nk}, {0, K, j, j + 1, 0, nk});
            }
            // K not whole atoms: the copies write whole atoms, so the weight blocks' padding
            // channels K..Kp-1 get T's padding lanes, which the DPU writes as zeros (the affine
            // above has K channels): zero weights, so B3's padding lanes and the PAD_VALUE taps
            // add nothing there.
            for (int cb = 0; cb < Kp; cb += CG) {
                const int nc = std::min(CG, Kp - cb), nv = std::min(nc, K - cb);
                for (int t = 0; t < rw.taps; t += 3) {
                    const uint64_t src = T.offset + static_cast<uint64_t>(cb / c2) * T.surf_stride;
                    const uint64_t dst = rw.offset + static_cast<uint64_t>(k0) * rw.per_kernel +
                                         hw::rknpu::weight_element(blocks, static_cast<uint32_t>(kn),
                                                                   static_cast<uint32_t>(rw.taps),
                                                                   static_cast<uint32_t>(rw.cpad), static_cast<uint32_t>(kb),
                                                                   static_cast<uint32_t>(t), static_cast<uint32_t>(cb));
                    add(lower_dpu_copy(fmt::format("exMatMul weights k{}-{} c{}-{} taps {}-{}", n0, n0 + nk - 1, cb,
                                                   cb + nc - 1, t, t + 2),
                                       src, T.surf_stride, dst, 0, nk, 3, nc, 0, c2, core, true),
                        {cb, cb + nv, 0, 1, n0, n0 + nk}, {n0, n0 + nk, 0, 1, 0, 0});  // A's window
                }
            }
        }
    }
    if (cursor > scratch_off + exmatmul_scratch_bytes(a, b)) bad(name, "internal: thirds beyond the scratch");
    for (TaskBody& t : conv) {
        t.meta.in_window.y0 = 0, t.meta.in_window.y1 = 1;  // the three rows of B3 are B's one row
        tasks.push_back(std::move(t));
    }
    return tasks;
}

}  // namespace drv::rknpu
