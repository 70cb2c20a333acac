// SPDX-License-Identifier: MIT
// exMatMul of two int8 activations (lower_matmul.cpp, issue 15): the second operand's bytes become
// the CNA's weights at run time. Internal to the model compiler; the block mapping is an assumption
// (COMPILER.md, "Sequence operators", A-EXMM).
#pragma once
#include <string>
#include <vector>

#include "compiler/rknpu/lower.h"

namespace drv::rknpu {

/// Y[n, m] = sat(round(a.scale * b.scale / y.scale * sum_k (A[k, n] - a.zp) (B[k, m] - b.zp)) + y.zp)
/// (onnxruntime's QLinearMatMul of A^T and B) for A [1,K,1,N], B [1,K,1,M], Y [1,N,1,M] in NC1HWC2,
/// K padded to the atom (zero weights in the padding channels). Tasks, on one core in this order (scratch: B3, the weights, the thirds):
///  - three DPU copies writing B into the rows of B3 [K, 3, M];
///  - per kernel block (the conv's kernel groups cut into the weight blocks' kernel groups, nk
///    kernels): three DPU affine tasks writing the thirds W_j = floor((A - a.zp + j) / 3), j = 0..2,
///    of its nk pixels of A as rows j of T [K, 3, nk] (zero point 0; sum_j W_j = A - a.zp, each in
///    [-85, 85], so int8 weights), then per channel group one DPU copy per three taps writing T
///    channel-last (TP_EN) into the conv's weight blocks (kernel n = pixel n; T's rows are three
///    consecutive tap blocks, tap t holding W_(t mod 3));
///  - the convolution over B3 under P rows of padding with PAD_VALUE p (P = 3, p = -b.zp; b.zp =
///    -128: P = 6, p = 64) with a (P + 3) x 1 kernel: the data taps give sum_k (A - a.zp) B, the
///    padding taps (P / 3) p sum_k (A - a.zp) = -b.zp sum_k (A - a.zp); bias 0, requantized as a
///    conv (exact integer sum; 1 LSB at the requantization's ties).
/// fp16 (a, b, y fp16): the same shapes, no zero points: per (kernel block, channel group) one
/// channel-last DPU copy of A into the fp16 weight blocks, then a 1x1 fp16 conv over B (scratch: the
/// weight image only).
/// Throws std::invalid_argument when the shapes or a register field do not fit.
std::vector<TaskBody> lower_exmatmul_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                        const DeviceTensor& y, uint64_t scratch_off, ArenaBuilder& arena,
                                        const hw::SocProfile& soc, int core);

/// x [K, 1, W] as the three-row scratch image [K, 3, W] at `offset` (zero point 0): T and B3.
DeviceTensor exmatmul_rows(const DeviceTensor& x, uint64_t offset);
/// Bytes of lower_exmatmul_op's scratch: B3, the weight image and the thirds (activation memory:
/// the tasks write it at run time).
uint64_t exmatmul_scratch_bytes(const DeviceTensor& a, const DeviceTensor& b);

}  // namespace drv::rknpu
