// SPDX-License-Identifier: MIT
// Types of the generated register tables (hw/rknpu_regs.h): register, field, enum and block records.
#pragma once
#include <cstdint>

namespace hw {

enum class Access : uint8_t { RW, RO, W1C };

/// A bit field [low, high] of a 32-bit register. `unit`: the field counts units of that many bytes
/// (regdb unit attribute; 1 when it is not a byte quantity); `minus_one`: it holds a count - 1.
struct Field {
    uint8_t low;
    uint8_t high;
    uint16_t unit = 1;
    bool minus_one = false;
    constexpr uint32_t width() const { return static_cast<uint32_t>(high - low + 1); }
    constexpr uint32_t max() const { return width() >= 32 ? 0xffffffffu : ((1u << width()) - 1u); }
    constexpr uint32_t mask() const { return max() << low; }
    constexpr bool fits(uint64_t v) const { return v <= max(); }
    /// Place v in the field; bits that do not fit are dropped (call fits() first to diagnose).
    constexpr uint32_t put(uint32_t v) const { return (v & max()) << low; }
    constexpr uint32_t get(uint32_t reg) const { return (reg >> low) & max(); }
    /// The field of `reg` in bytes (value x unit).
    constexpr uint64_t bytes(uint32_t reg) const { return static_cast<uint64_t>(get(reg)) * unit; }
    /// The count the field encodes (value + 1 for minus-one fields).
    constexpr uint64_t count(uint32_t reg) const { return static_cast<uint64_t>(get(reg)) + (minus_one ? 1 : 0); }
};

struct EnumValueInfo {
    const char* name;
    uint32_t value;
    bool verified;  ///< false: the value's meaning is a documented assumption
};

struct EnumInfo {
    const char* name;
    const char* source;
    const EnumValueInfo* values;
    uint8_t count;
    /// The name of value v, or nullptr when the enum does not list it.
    constexpr const EnumValueInfo* find(uint32_t v) const {
        for (int i = 0; i < count; ++i)
            if (values[i].value == v) return &values[i];
        return nullptr;
    }
};

struct FieldInfo {
    const char* name;
    uint8_t low;
    uint8_t high;
    bool reserved;
    uint16_t unit;     ///< bytes per unit (1: not a byte quantity or plain bytes)
    bool minus_one;    ///< holds a count - 1
    int8_t enum_index; ///< index into kEnums, -1 = none
    bool verified;     ///< false: meaning is a documented assumption (UNVERIFIED)
    const char* note;  ///< mode-dependent units, assumptions (empty = none)
    constexpr Field field() const { return Field{low, high, unit, minus_one}; }
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
    const char* note;
    /// Bits covered by no field, or by a field marked reserved.
    constexpr uint32_t reserved_mask() const {
        uint32_t used = 0;
        for (int i = 0; i < field_count; ++i)
            if (!fields[i].reserved) used |= fields[i].field().mask();
        return ~used;
    }
};

}  // namespace hw
