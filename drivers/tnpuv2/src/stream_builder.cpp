// SPDX-License-Identifier: MIT
#include "stream_builder.h"

#include <fmt/format.h>

#include <stdexcept>

namespace drv::tnpuv2 {

namespace T = hw::tnpuv2::TENSOR;
using hw::tnpuv2::set_field;

void StreamBuilder::put(const hw::tnpuv2::Command& c,
                        std::initializer_list<std::pair<hw::tnpuv2::Field, hw::tnpuv2::Field>> addrs) {
    const uint32_t base = static_cast<uint32_t>(body_.size()) + 1;  // first payload word
    for (const auto& [lo, hi] : addrs) relocs_.emplace_back(base + lo.word, base + hi.word);
    hw::tnpuv2::append(body_, c);
}

void StreamBuilder::tensor(uint32_t slot, const Desc& d) {
    hw::tnpuv2::Command c = hw::tnpuv2::make_command(hw::tnpuv2::op::TENSOR);
    set_field(c, T::SLOT, slot);
    set_field(c, T::FORMAT, d.format);
    set_field(c, T::RANK, d.rank);
    set_field(c, T::BITS, d.format == hw::tnpuv2::enums::FORMAT::F32 ? 0 : d.bits);
    set_field(c, T::ZERO_POINT, d.zp);
    hw::tnpuv2::set_addr(c, T::ADDR_LO, T::ADDR_HI, d.offset);
    const hw::tnpuv2::Field dims[6] = {T::DIM0, T::DIM1, T::DIM2, T::DIM3, T::DIM4, T::DIM5};
    const hw::tnpuv2::Field strides[6] = {T::STRIDE0, T::STRIDE1, T::STRIDE2, T::STRIDE3, T::STRIDE4, T::STRIDE5};
    for (size_t i = 0; i < 6; ++i) {
        if (d.dims[i] < 1 || d.dims[i] >= (int64_t{1} << 24))
            throw std::invalid_argument(
                fmt::format("tensor dim {} = {} outside the descriptor's 24-bit range", i, d.dims[i]));
        set_field(c, dims[i], d.dims[i]);
        set_field(c, strides[i], d.strides[i]);
    }
    put(c, {{T::ADDR_LO, T::ADDR_HI}});
}

uint32_t StreamBuilder::engine(const hw::tnpuv2::Command& c,
                               std::initializer_list<std::pair<hw::tnpuv2::Field, hw::tnpuv2::Field>> addrs) {
    put(c, addrs);
    return ops_++;
}

std::vector<uint32_t> StreamBuilder::finish(std::vector<std::pair<uint32_t, uint32_t>>& relocs) const {
    const uint32_t total = hw::tnpuv2::kHeaderWords + static_cast<uint32_t>(body_.size()) + 1;
    std::vector<uint32_t> w = hw::tnpuv2::stream_header(total);
    w.insert(w.end(), body_.begin(), body_.end());
    w.push_back(hw::tnpuv2::header_word(hw::tnpuv2::op::END, 0));
    relocs.clear();
    for (const auto& [lo, hi] : relocs_)
        relocs.emplace_back(lo + hw::tnpuv2::kHeaderWords, hi + hw::tnpuv2::kHeaderWords);
    return w;
}

}  // namespace drv::tnpuv2
