// SPDX-License-Identifier: MIT
// Test fixture: a hart on a 64 KiB RAM at 0x80000000 (cv32e40p-like cycle table), programs given as
// hand-assembled instruction words (each derivation is in the test's comment).
#pragma once
#include <cstring>
#include <memory>
#include <vector>

#include "riscv_iss/bus.h"
#include "riscv_iss/hart.h"

namespace iss::test {

constexpr uint32_t kRamBase = 0x80000000u;

inline CorePreset test_preset(bool misaligned_trap = true) {
    CorePreset p;
    p.name = "test";
    p.isa.misaligned_trap = misaligned_trap;
    p.isa.reset_pc = kRamBase;
    p.memory.push_back({"ram", kRamBase, 0x10000, true, 0, 0, 0});
    return p;
}

struct Platform {
    explicit Platform(const CorePreset& p = test_preset())
        : preset(p), bus(preset), hart(preset.isa, preset.cycles, bus, preset.devices) {
        bus.attach(&hart);
        hart.console_out = [this](const char* s, size_t n) { console.append(s, n); };
    }
    /// Writes 32-bit words from kRamBase (or `at`) on.
    void load(const std::vector<uint32_t>& words, uint32_t at = kRamBase) {
        uint8_t* p = bus.host_ptr(at, static_cast<uint32_t>(words.size() * 4));
        std::memcpy(p, words.data(), words.size() * 4);
        hart.flush_decode_cache();
    }
    void load16(const std::vector<uint16_t>& halves, uint32_t at = kRamBase) {
        uint8_t* p = bus.host_ptr(at, static_cast<uint32_t>(halves.size() * 2));
        std::memcpy(p, halves.data(), halves.size() * 2);
        hart.flush_decode_cache();
    }
    uint32_t word(uint32_t addr) {
        uint32_t v;
        std::memcpy(&v, bus.host_ptr(addr, 4), 4);
        return v;
    }
    CorePreset preset;
    Bus bus;
    Hart hart;
    std::string console;
};

}  // namespace iss::test
