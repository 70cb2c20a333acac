// SPDX-License-Identifier: MIT
// ArenaBuilder and BodyBuilder (lower.h): the arena a compiled model is laid out in, and the
// regcmd builder that remembers which entries carry arena offsets (relocations).
#include <fmt/format.h>
#include <sys/mman.h>

#include <stdexcept>

#include "compiler/rknpu/lower.h"

namespace drv::rknpu {

namespace {
uint64_t align_up(uint64_t v, uint64_t a) {
    if (a == 0) throw std::invalid_argument("arena: alignment must be positive");
    return (v + a - 1) / a * a;
}
}  // namespace

/// Aligns the end of the initialised part for `bytes` more and returns their offset; in placeholder
/// mode the bytes are laid out but not kept, otherwise the caller appends them to init_.
uint64_t ArenaBuilder::place(uint64_t bytes, uint64_t align) {
    // Initialised bytes must precede every reservation: the arena image is init_ then zeros.
    if (size_ != init_end()) throw std::logic_error("arena: initialised bytes added after activations were reserved");
    const uint64_t off = align_up(init_end(), align);
    if (placeholders_) {
        if (!init_.empty()) throw std::logic_error("arena: placeholder bytes after kept initialised bytes");
        base_ = off + bytes;  // nothing kept: the kept image starts after this
        size_ = base_;
    } else {
        init_.resize(off - base_, 0);
        size_ = off + bytes;
    }
    return off;
}

uint64_t ArenaBuilder::add_init(const std::vector<uint8_t>& bytes, uint64_t align) {
    const uint64_t off = place(bytes.size(), align);
    if (!placeholders_) init_.insert(init_.end(), bytes.begin(), bytes.end());
    return off;
}

uint64_t ArenaBuilder::add_placeholder(uint64_t bytes, uint64_t align) {
    const uint64_t off = place(bytes, align);
    if (!placeholders_) init_.resize(init_.size() + bytes, 0);
    return off;
}

void ArenaBuilder::reserve_init(uint64_t bytes) {
    init_.reserve(static_cast<size_t>(bytes));
    // Advise the 2 MiB-aligned interior of the still untouched buffer (a hint: ignored where THP
    // is off; bytes and addresses are unaffected).
    constexpr uintptr_t kHuge = uintptr_t{2} << 20;
    const auto b = reinterpret_cast<uintptr_t>(init_.data());
    const uintptr_t lo = (b + kHuge - 1) & ~(kHuge - 1), hi = (b + init_.capacity()) & ~(kHuge - 1);
    if (hi > lo) (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
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
