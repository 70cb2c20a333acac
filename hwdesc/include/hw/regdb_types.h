// SPDX-License-Identifier: MIT
// Types of the generated register tables (hw/rknpu_regs.h): register, field and block records.
#pragma once
#include <cstdint>

namespace hw {

enum class Access : uint8_t { RW, RO, W1C };

/// A bit field [low, high] of a 32-bit register.
struct Field {
    uint8_t low;
    uint8_t high;
    constexpr uint32_t width() const { return static_cast<uint32_t>(high - low + 1); }
    constexpr uint32_t max() const { return width() >= 32 ? 0xffffffffu : ((1u << width()) - 1u); }
    constexpr uint32_t mask() const { return max() << low; }
    constexpr bool fits(uint64_t v) const { return v <= max(); }
    /// Place v in the field; bits that do not fit are dropped (call fits() first to diagnose).
    constexpr uint32_t put(uint32_t v) const { return (v & max()) << low; }
    constexpr uint32_t get(uint32_t reg) const { return (reg >> low) & max(); }
};

struct FieldInfo {
    const char* name;
    uint8_t low;
    uint8_t high;
    bool reserved;
    constexpr Field field() const { return Field{low, high}; }
};

struct BlockInfo {
    const char* name;
    uint16_t base;
    uint16_t size;
    uint32_t target;  ///< one-hot regcmd target id
};

template <typename BlockT>
struct RegInfoT {
    uint16_t offset;
    BlockT block;
    const char* block_name;
    const char* name;
    Access access;
    const FieldInfo* fields;
    uint8_t field_count;
    bool verified;  ///< false: position public, semantics inferred (UNVERIFIED)
    /// Bits covered by no field, or by a field marked reserved.
    constexpr uint32_t reserved_mask() const {
        uint32_t used = 0;
        for (int i = 0; i < field_count; ++i)
            if (!fields[i].reserved) used |= fields[i].field().mask();
        return ~used;
    }
};

}  // namespace hw
