// SPDX-License-Identifier: MIT
// Integer instruction semantics shared by both execution engines (the per-instruction exec functions of
// src/exec_*.cpp and the block engine of src/block_engine.cpp), so each rule exists once: shifts use the
// low five bits (ISA manual Vol. I 2.4), division by zero and overflow follow table 7.1, and the divider's
// operand-dependent latency follows CV32E40P (openhwgroup/cv32e40p:docs/source/pipeline.rst: 3..35 cycles,
// 35 for a zero divisor).
#pragma once
#include <cstdint>

#include "riscv_iss/core_preset.h"

namespace iss::sem {

inline int32_t sx(uint32_t v) { return static_cast<int32_t>(v); }
inline uint32_t sll(uint32_t a, uint32_t b) { return a << (b & 31); }
inline uint32_t srl(uint32_t a, uint32_t b) { return a >> (b & 31); }
inline uint32_t sra(uint32_t a, uint32_t b) { return static_cast<uint32_t>(sx(a) >> (b & 31)); }
inline uint32_t slt(uint32_t a, uint32_t b) { return sx(a) < sx(b) ? 1u : 0u; }
inline uint32_t sltu(uint32_t a, uint32_t b) { return a < b ? 1u : 0u; }

inline uint32_t mulh(uint32_t a, uint32_t b) {
    const int64_t p = static_cast<int64_t>(sx(a)) * sx(b);
    return static_cast<uint32_t>(static_cast<uint64_t>(p) >> 32);
}
inline uint32_t mulhsu(uint32_t a, uint32_t b) {
    const int64_t p = static_cast<int64_t>(sx(a)) * static_cast<int64_t>(b);
    return static_cast<uint32_t>(static_cast<uint64_t>(p) >> 32);
}
inline uint32_t mulhu(uint32_t a, uint32_t b) { return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32); }
inline uint32_t div(uint32_t a, uint32_t b) {
    if (b == 0) return ~0u;
    if (a == 0x80000000u && b == ~0u) return a;
    return static_cast<uint32_t>(sx(a) / sx(b));
}
inline uint32_t divu(uint32_t a, uint32_t b) { return b == 0 ? ~0u : a / b; }
inline uint32_t rem(uint32_t a, uint32_t b) {
    if (b == 0) return a;
    if (a == 0x80000000u && b == ~0u) return 0;
    return static_cast<uint32_t>(sx(a) % sx(b));
}
inline uint32_t remu(uint32_t a, uint32_t b) { return b == 0 ? a : a % b; }
inline uint32_t abs_u(uint32_t v) { return sx(v) < 0 ? 0u - v : v; }

/// Cycles a division takes beyond cm.div_min. CV32E40P's serial divider iterates over the significant bits
/// of the dividend; UNVERIFIED(cv32e40p-div): linear interpolation between div_min and div_max by
/// significant bits. Signed divisions pass |dividend|.
inline uint32_t div_extra_cycles(const CycleModel& cm, uint32_t dividend, uint32_t divisor) {
    if (divisor == 0) return cm.div_by_zero - cm.div_min;
    const uint32_t bits = dividend == 0 ? 0 : 32 - static_cast<uint32_t>(__builtin_clz(dividend));
    return (cm.div_max - cm.div_min) * bits / 32;
}
/// The most div_extra_cycles() can return (the block engine's worst-case cost bound).
inline uint32_t div_extra_max(const CycleModel& cm) {
    const uint32_t a = cm.div_max - cm.div_min, b = cm.div_by_zero - cm.div_min;
    return a > b ? a : b;
}

/// Sign or zero extension of a loaded value to 32 bits, by the C type of the access.
template <typename T>
inline uint32_t extend(T v) {
    if constexpr (static_cast<T>(-1) < 0) {
        return static_cast<uint32_t>(static_cast<int32_t>(v));
    } else {
        return static_cast<uint32_t>(v);
    }
}

}  // namespace iss::sem
