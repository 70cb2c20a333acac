// SPDX-License-Identifier: MIT
// How RKNPU registers encode memory layouts, as silicon producers program them
// (docs/rknpu-register-semantics.md §7-8): the CNA's row and surface strides and CBUF entries, the
// weight blocks the CNA reads. One place for the model's decode, lint and the driver's emitters;
// the units come from the regdb field attributes of the profile's register-map generation.
#pragma once
#include <cstdint>
#include <optional>

#include "hw/profile.h"
#include "hw/regdb.h"

namespace hw::rknpu {

/// CNA_DMA_CON1.LINE_STRIDE for a feature row of `row_bytes` (Mesa width x 16 / 4, mtx512
/// width x 4: the field counts 4-byte units); nullopt when not a whole number of units.
std::optional<uint32_t> encode_line_stride(uint64_t row_bytes, Generation g);
uint64_t decode_line_stride(uint32_t field, Generation g);

/// CNA_DMA_CON2.SURF_STRIDE for a surface step of `surf_bytes` after rows of `row_bytes`.
/// Assumption A-SURF (exact for every Mesa, mtx512 and vendor value, docs §8): surface step =
/// SURF_STRIDE x unit + 4 x row bytes, the field a 28-bit two's complement (mtx512 programs -3
/// for one 16-byte row). nullopt when the step is not representable.
std::optional<uint32_t> encode_surf_stride(uint64_t surf_bytes, uint64_t row_bytes, Generation g);
uint64_t decode_surf_stride(uint32_t field, uint64_t row_bytes, Generation g);

/// CNA_CBUF_CON1.DATA_ENTRIES of a feature row: ceil(row bytes / 64) (Mesa rkt_task.c, mtx512).
uint32_t data_entries(uint64_t row_bytes, Generation g);

/// The weight blocks the CNA reads (Mesa rkt_coefs.c, mtx512 weight_int8/weight_fp16): per
/// kernel group of `kernel_group` kernels and channel group of `channel_group` input channels,
/// for every tap (kernel row, then column), `kernels in group` x `channels in group` elements,
/// kernel-major; the last groups hold what is left (Mesa writes only ALIGN(OC, 2) kernels and
/// 16 channels of a half group). Depthwise: per channel group, per tap, the group's channels.
struct WeightBlocks {
    uint32_t kernel_group = 32, channel_group = 32;
    bool depthwise = false;
};
/// The profile's blocks for an element of `elem_bits` bits (4: int4, 8: int8, 16: int16/fp16).
WeightBlocks weight_blocks(const hw::SocProfile& soc, uint32_t elem_bits, bool depthwise);
/// Element index of weight (kernel k, tap t, input channel c) in a block layout of `kernels`
/// kernels, `taps` taps and `channels` (padded) input channels. Depthwise: k is ignored.
uint64_t weight_element(const WeightBlocks& b, uint32_t kernels, uint32_t taps, uint32_t channels, uint32_t k,
                        uint32_t t, uint32_t c);

}  // namespace hw::rknpu
