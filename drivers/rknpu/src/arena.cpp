// SPDX-License-Identifier: MIT
// ArenaBuilder and BodyBuilder (lower.h): the arena a compiled model is laid out in, and the
// regcmd builder that remembers which entries carry arena offsets (relocations).
#include <fmt/format.h>

#include <stdexcept>

#include "drv/rknpu/lower.h"

namespace drv::rknpu {

namespace {
uint64_t align_up(uint64_t v, uint64_t a) {
    if (a == 0) throw std::invalid_argument("arena: alignment must be positive");
    return (v + a - 1) / a * a;
}
}  // namespace

uint64_t ArenaBuilder::add_init(const std::vector<uint8_t>& bytes, uint64_t align) {
    // Initialised bytes must precede every reservation: the arena image is init_ then zeros.
    if (size_ != init_.size()) throw std::logic_error("arena: initialised bytes added after activations were reserved");
    const uint64_t off = align_up(init_.size(), align);
    init_.resize(off, 0);
    init_.insert(init_.end(), bytes.begin(), bytes.end());
    size_ = init_.size();
    return off;
}

uint64_t ArenaBuilder::reserve(uint64_t bytes, uint64_t align) {
    const uint64_t off = align_up(size_, align);
    size_ = off + bytes;
    return off;
}

void BodyBuilder::write_addr(const std::string& reg, uint64_t arena_offset) {
    // Address registers are 32 bits; relocate() adds the base to the 32-bit value field.
    if (arena_offset > 0xffffffffull)
        throw std::invalid_argument(
            fmt::format("{}: arena offset 0x{:x} does not fit a 32-bit address", reg, arena_offset));
    addr_words.push_back(b.size());
    b.write(reg, static_cast<uint32_t>(arena_offset));
}

TaskBody BodyBuilder::finish(const NpuTask& meta) const {
    TaskBody t;
    t.words = b.words();
    t.addr_words = addr_words;
    t.meta = meta;
    t.meta.regcfg_amount = static_cast<uint32_t>(t.words.size());
    return t;
}

}  // namespace drv::rknpu
