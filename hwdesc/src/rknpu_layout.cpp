// SPDX-License-Identifier: MIT
#include "hw/rknpu_layout.h"

#include <algorithm>
#include <vector>

namespace hw::rknpu {

namespace {
/// field_of for this file's string literals, remembered by their addresses (the decoders ask for
/// the same few fields for every task; a literal's address names its text for the whole run).
hw::Field cna(Generation g, const char* reg, const char* field) {
    struct Entry {
        Generation g;
        const char *reg, *field;
        hw::Field f;
    };
    thread_local std::vector<Entry> seen;
    for (const Entry& e : seen)
        if (e.g == g && e.reg == reg && e.field == field) return e.f;
    const hw::Field f = field_of(g, reg, field);
    seen.push_back({g, reg, field, f});
    return f;
}
constexpr uint32_t kFourRows = 4;  ///< A-SURF: the surface step counts from four rows on
}  // namespace

std::optional<uint32_t> encode_line_stride(uint64_t row_bytes, Generation g) {
    const hw::Field f = cna(g, "CNA.DMA_CON1", "LINE_STRIDE");
    if (row_bytes % f.unit || !f.fits(row_bytes / f.unit)) return std::nullopt;
    return static_cast<uint32_t>(row_bytes / f.unit);
}

uint64_t decode_line_stride(uint32_t field, Generation g) {
    return static_cast<uint64_t>(field) * cna(g, "CNA.DMA_CON1", "LINE_STRIDE").unit;
}

std::optional<uint32_t> encode_surf_stride(uint64_t surf_bytes, uint64_t row_bytes, Generation g) {
    const hw::Field f = cna(g, "CNA.DMA_CON2", "SURF_STRIDE");
    const int64_t rest = static_cast<int64_t>(surf_bytes) - static_cast<int64_t>(kFourRows * row_bytes);
    if (rest % f.unit) return std::nullopt;
    const int64_t v = rest / static_cast<int64_t>(f.unit);
    const int64_t half = int64_t{1} << (f.width() - 1);
    if (v < -half || v >= half) return std::nullopt;
    return static_cast<uint32_t>(v) & f.max();
}

uint64_t decode_surf_stride(uint32_t field, uint64_t row_bytes, Generation g) {
    const hw::Field f = cna(g, "CNA.DMA_CON2", "SURF_STRIDE");
    const uint32_t v = field & f.max();
    const int64_t s = (v & (1u << (f.width() - 1))) ? static_cast<int64_t>(v) - (int64_t{1} << f.width()) : v;
    const int64_t bytes = s * static_cast<int64_t>(f.unit) + static_cast<int64_t>(kFourRows * row_bytes);
    return bytes < 0 ? 0 : static_cast<uint64_t>(bytes);
}

uint32_t data_entries(uint64_t row_bytes, Generation g) {
    const uint32_t unit = cna(g, "CNA.CBUF_CON1", "DATA_ENTRIES").unit;
    return static_cast<uint32_t>((row_bytes + unit - 1) / unit);
}

WeightBlocks weight_blocks(const hw::SocProfile& soc, uint32_t elem_bits, bool depthwise) {
    const auto& n = soc.npu;
    WeightBlocks b;
    b.depthwise = depthwise;
    const bool wide = elem_bits > 8;
    b.kernel_group = static_cast<uint32_t>(wide ? n.weight_kernel_group_fp16.value : n.weight_kernel_group_int8.value);
    uint32_t cg = static_cast<uint32_t>(
        depthwise ? (wide ? n.depthwise_channel_group_fp16.value : n.depthwise_channel_group_int8.value)
                  : (wide ? n.weight_channel_group_fp16.value : n.weight_channel_group_int8.value));
    if (elem_bits == 4) cg *= 2;  // int4: the same block bytes hold twice the channels (UNVERIFIED)
    b.channel_group = cg;
    return b;
}

uint64_t weight_element(const WeightBlocks& b, uint32_t kernels, uint32_t taps, uint32_t channels, uint32_t k,
                        uint32_t t, uint32_t c) {
    const uint64_t CG = b.channel_group;
    const uint64_t cg = c / CG, cin = c % CG;
    const uint64_t nc = std::min<uint64_t>(CG, channels - cg * CG);
    if (b.depthwise) return cg * CG * taps + static_cast<uint64_t>(t) * nc + cin;
    const uint64_t KG = b.kernel_group;
    const uint64_t kg = k / KG, kin = k % KG;
    const uint64_t nk = std::min<uint64_t>(KG, kernels - kg * KG);
    return kg * KG * taps * channels + nk * taps * cg * CG + static_cast<uint64_t>(t) * nk * nc + kin * nc + cin;
}

}  // namespace hw::rknpu
