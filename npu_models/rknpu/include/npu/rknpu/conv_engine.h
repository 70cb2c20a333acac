// SPDX-License-Identifier: MIT
// Functional model of the convolution path: CNA reads the NC1HWC2 feature cube and packed weights
// (padding, stride, dilation; normal or depthwise), CORE accumulates (int8 -> int32 wrapping,
// fp16 -> fp32), and the accumulators stream into the DPU engine on the fly (dpu_engine.h: bias,
// BN, EW, LUT, output convert), whose WDMA writes NC1HWC2. No time here (SG-8.4).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "npu/rknpu/conv_config.h"
#include "npu/rknpu/cube.h"

namespace npu::rknpu {

/// Byte images the DMA engines fetched for one task.
struct ConvOperands {
    std::vector<uint8_t> feature;  ///< input_bytes() from feature_addr with the programmed strides
    std::vector<uint8_t> weights;  ///< weight_bytes from weight_addr
    std::vector<uint8_t> bias;     ///< bias_bytes() from bias_addr: the DPU BS operands (int32 LE per channel, ...)
    /// `weights` are the image as read, in the CNA's block layout (ConvConfig::wblocks, `raw_kernels`
    /// = WEIGHT_KERNELS kernels), not canonical: set only where conv_takes_raw_weights() holds, for
    /// run_conv_surfaces to pack them without the canonical copy.
    bool weights_raw = false;
    uint32_t raw_kernels = 0;
    /// With weights_raw: the weight image shared by the DMA (an immutable image it may hand out
    /// again, execute_task's SharedReads) instead of `weights` (then empty). The blocked path
    /// finds its panels for the same image by its identity, without comparing the bytes.
    std::shared_ptr<const std::vector<uint8_t>> weights_shared{};
    /// The weight image: `*weights_shared` when set, else `weights`.
    const std::vector<uint8_t>& weight_image() const { return weights_shared ? *weights_shared : weights; }
};

/// Weight packing the model reads (UNVERIFIED against silicon captures): kernel after kernel,
/// each kernel laid out [kh][kw][C] with C padded to the C2 atomic (16 int8 / 8 fp16 values);
/// fp16 weights take 2 bytes each. Depthwise (CORE_MISC_CFG.DW_EN): one [kh][kw][C] block, the
/// weight of channel ch at weight_index(c, 0, kh, kw, ch) (UNVERIFIED).
inline uint64_t weight_index(const ConvConfig& c, uint32_t k, uint32_t kh, uint32_t kw, uint32_t ch) {
    return (static_cast<uint64_t>(k) * c.kernel_h * c.kernel_w + kh * c.kernel_w + kw) * c.in_c + ch;
}

/// Address offset of the int8 element (c, h, w) in an NC1HWC2 cube with `c2` channels per atom.
inline uint64_t nc1hwc2_offset(uint32_t c, uint32_t h, uint32_t w, uint32_t line_stride, uint64_t surf_stride,
                               uint32_t c2 = 16) {
    return (c / c2) * surf_stride + static_cast<uint64_t>(h) * line_stride + w * c2 + (c % c2);
}

/// CNA + CORE: the accumulator cube (out_w x out_h x out_c): int32 values (wrapping) for int8,
/// fp32 for fp16. int8 runs the fast path (im2col gathered atom by atom from the NC1HWC2 bytes
/// into num::qgemm, depthwise as a direct loop over the atom's channels) whenever its exact int32
/// sums equal the reference's wrapped ones (K <= 32768); otherwise, and for int16/fp16, the
/// reference loop.
Cube conv_accumulate(const ConvConfig& c, const ConvOperands& ops);

/// The per-element reference loop (the oracle the fast paths are tested against).
Cube conv_accumulate_reference(const ConvConfig& c, const ConvOperands& ops);

/// Force the reference engines (conv accumulate, DPU) everywhere, for equivalence tests and the
/// before/after benchmark. Process-wide; not meant to be toggled while tasks run.
void set_reference_engines(bool on);
bool reference_engines();

/// The DPU configuration of a conv task: c.dpu with the cube size taken from the CORE output.
DpuConfig conv_dpu_config(const ConvConfig& c);

/// CNA + CORE + DPU: the DPU output cube in its value domain (before packing).
/// `bn` / `ew`: the DPU BN operands and EW cube when those stages read memory.
Cube conv_dpu_cube(const ConvConfig& c, const ConvOperands& ops, const std::vector<uint8_t>& bn = {},
                   const std::vector<uint8_t>& ew = {});

/// Compute the output cube for a validated config, compacted (surface after surface, each
/// out_w*out_h*atom bytes); the WDMA scatters surfaces to dst_addr + c1 * dst_surf_stride.
std::vector<uint8_t> run_conv(const ConvConfig& c, const ConvOperands& ops, const std::vector<uint8_t>& bn = {},
                              const std::vector<uint8_t>& ew = {});

/// run_conv by output surfaces (one vector per C1, out_w*out_h*atom bytes each): what the WDMA
/// writes region by region, without the copy of one image into regions.
std::vector<std::vector<uint8_t>> run_conv_surfaces(const ConvConfig& c, const ConvOperands& ops,
                                                    const std::vector<uint8_t>& bn = {},
                                                    const std::vector<uint8_t>& ew = {});

/// run_conv_surfaces takes the weight image as read (ConvOperands::weights_raw) for `c`: the fast
/// int8 path with the VNNI GEMM packs its panels straight from the CNA's blocks (normal conv, every
/// input channel real, blocks of 16-kernel multiples and 4-channel multiples, every element inside
/// `raw_bytes` and WEIGHT_BYTES). `c` as decoded (kernels = WEIGHT_KERNELS).
bool conv_takes_raw_weights(const ConvConfig& c, uint64_t raw_bytes);

/// Layout helpers for the feature image the DMA gathers: the engine expects the feature cube
/// compacted to line_stride = in_w*atom and surf_stride = in_h*in_w*atom (the DMA does the gather).
/// Byte offset of the element (its first byte for fp16).
uint64_t compact_feature_offset(const ConvConfig& c, uint32_t ch, uint32_t h, uint32_t w);

}  // namespace npu::rknpu
