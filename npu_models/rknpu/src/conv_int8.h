// SPDX-License-Identifier: MIT
// The fast int8 CNA + CORE path (internal to npu_rknpu) in the DPU's orientation: the GEMM runs
// with the output pixels as rows and the kernels as columns, so that its int32 accumulators come
// out pixel-major in blocks of 16 channels (dpu_blocked.h) and the DPU reads them without a
// transposition. The feature side is the NC1HWC2 input padded once (no planar image, no im2col:
// the kernel reads every tap at a fixed offset from the pixel), the weights are packed once per
// task into 16-kernel VNNI panels. Exact int32 sums (conv_engine.cpp's kMaxFastK bound), so the results are
// bit-identical to conv_accumulate_reference (tests/unit/rknpu/engine_equivalence_test.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "npu/rknpu/conv_engine.h"

namespace npu::rknpu::detail {

/// The blocked path applies to a conv that conv_engine.cpp's fast_int8_ok admits, with an atom of
/// 8 or 16. ConvBlocked's `used` = the input channels that meet non-zero weights (channels from
/// DATAIN_CHANNEL_REAL up whose weights are all zero add 0): at most 4 (8 with C2 16) leaves the
/// C2 padding of a 3-channel stem out of the sums.
bool conv_blocked_ok(const ConvConfig& c, uint32_t used);

/// ConvBlocked packs ConvOperands::weights_raw images (the VNNI GEMM, weight blocks of 16-kernel
/// and 4-channel multiples).
bool conv_packs_raw_weights(const ConvConfig& c);

/// A task's weight panels and per-kernel weight sums (ConvBlocked's packing), shared with the
/// engine cache (engine_cache.h).
struct PackedWeights {
    std::vector<int8_t> b;   ///< panels [panel][K / 4][16][4]
    std::vector<int32_t> s;  ///< per kernel: the sum of its weights
};

/// A depthwise conv's padded input for its quad path (conv_int8.cpp depthwise16_quads): per atom
/// group Hp rows of row_bytes, nq quads per kernel row.
struct DwQuadsView {
    const uint8_t* base = nullptr;
    uint64_t row_bytes = 0, plane_bytes = 0;
    uint32_t nq = 1;
    /// The weight quads, once per task: [group][kernel row][quad][channel][4 taps] (s8, taps past
    /// kernel_w zero), and per channel -128 x the sum of its weights (the accumulators' start).
    std::vector<int8_t> wq;
    std::vector<int32_t> corr;
};

/// One task's accumulators, pixel range by pixel range.
class ConvBlocked {
public:
    ConvBlocked(const ConvConfig& c, const ConvOperands& ops, uint32_t used);
    /// Output pixels [p0, p0 + n) into acc (blocks of 16 channels, block stride n * 16 int32;
    /// ceil(out_c / 16) blocks), CORE_CLIP_TRUNCATE applied.
    void run(uint64_t p0, uint64_t n, int32_t* acc) const { run(p0, n, acc, 0, blocks_); }
    /// run for the blocks [b0, b1) only (a GEMM or the depthwise tap quads; the other depthwise
    /// paths run all of them, see by_blocks): acc keeps the whole layout, block b at acc + b * n * 16.
    void run(uint64_t p0, uint64_t n, int32_t* acc, uint32_t b0, uint32_t b1) const;
    /// run(.., b0, b1) computes the blocks [b0, b1) alone.
    bool by_blocks() const { return !c_.depthwise || quads_ != nullptr; }
    uint64_t pixels() const { return P_; }
    uint32_t blocks() const { return blocks_; }

private:
    const ConvConfig& c_;
    const ConvOperands& ops_;
    uint64_t P_ = 0, K_ = 0;
    uint32_t blocks_ = 0, bw_ = 16;
    const uint8_t* a_ = nullptr;  ///< the padded input, [c1][Hp][Wp][bw] bytes, top bit flipped (u8)
    bool flip_ = false;           ///< a_ is the input itself (not flipped): the VNNI GEMM flips as it reads
    std::vector<uint64_t> koff_;  ///< per k block (tap, c1): its offset in a_
    uint64_t row_step_ = 0, col_step_ = 0;  ///< a_ offset per output row / column
    std::shared_ptr<const PackedWeights> packed_;  ///< from the engine cache or packed for this task
    const int8_t* b_ = nullptr;   ///< weight panels [panel][K / 4][16][4]
    const int32_t* wsum_ = nullptr;  ///< per kernel: sum of its weights (the +128 correction)
    std::shared_ptr<const DwQuadsView> quads_;  ///< depthwise: the quad image (its AVX-512 path), or null
};

}  // namespace npu::rknpu::detail
