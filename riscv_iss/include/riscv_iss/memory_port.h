// SPDX-License-Identifier: MIT
// The ISS's only door to memory (SG-8.2): a host-pointer fast path for RAM/flash and callbacks for MMIO.
#pragma once
#include <cstdint>

namespace iss {

/// A block of plain memory the hart may access through a host pointer (DMI). Wait states are in core
/// cycles and are added by the hart's cycle model per access.
struct DmiRegion {
    uint32_t base = 0;
    uint32_t size = 0;  ///< bytes, a multiple of 4; 0 = no region
    uint8_t* host = nullptr;
    bool writable = false;
    bool executable = true;
    uint8_t read_wait_cycles = 0;
    uint8_t write_wait_cycles = 0;
    uint8_t fetch_wait_cycles = 0;
};

/// Implemented by the platform (iss::Bus standalone, the TLM wrapper under SystemC); called by Hart.
class MemoryPort {
   public:
    virtual ~MemoryPort() = default;
    /// Fast path: if `addr` is plain memory, describe its whole region. The host pointer must stay
    /// valid until invalidate_dmi() is called on the hart.
    virtual bool get_dmi(uint32_t addr, DmiRegion& region) = 0;
    /// Slow path (MMIO). `now_cycles` is the hart's local cycle count; `wait_cycles` is added to it.
    /// Returns false for a bus error, which the hart turns into an access fault.
    virtual bool read(uint32_t addr, uint32_t len, uint8_t* data, uint64_t now_cycles, uint64_t& wait_cycles) = 0;
    virtual bool write(uint32_t addr, uint32_t len, const uint8_t* data, uint64_t now_cycles,
                       uint64_t& wait_cycles) = 0;
};

}  // namespace iss
