// SPDX-License-Identifier: MIT
// Standalone platform for the ISS (used by rviss and the unit tests): RAM/flash regions from the core
// preset plus two MMIO devices compatible with QEMU virt, so the same ELF runs on both:
//   console  (16550-style: write THR at +0 prints a byte, LSR at +5 reads "transmitter empty")
//   finisher (SiFive test device: 0x5555 = exit 0, code<<16 | 0x3333 = exit code)
#pragma once
#include <cstdint>
#include <vector>

#include "riscv_iss/core_preset.h"
#include "riscv_iss/memory_port.h"

namespace iss {

class Hart;

class Bus : public MemoryPort {
   public:
    explicit Bus(const CorePreset& preset);
    ~Bus() override;
    Bus(const Bus&) = delete;
    Bus& operator=(const Bus&) = delete;
    /// The hart that receives console output and exit requests from the MMIO devices.
    void attach(Hart* hart) { hart_ = hart; }
    /// Host pointer for [addr, addr+len) if it lies inside one memory region (ELF loader), else nullptr.
    uint8_t* host_ptr(uint32_t addr, uint32_t len);
    const std::vector<RegionConfig>& regions() const { return regions_; }

    bool get_dmi(uint32_t addr, DmiRegion& region) override;
    bool read(uint32_t addr, uint32_t len, uint8_t* data, uint64_t now_cycles, uint64_t& wait_cycles) override;
    bool write(uint32_t addr, uint32_t len, const uint8_t* data, uint64_t now_cycles, uint64_t& wait_cycles) override;

   private:
    std::vector<RegionConfig> regions_;
    std::vector<uint8_t*> host_;
    DeviceMap devices_;
    Hart* hart_ = nullptr;
};

}  // namespace iss
