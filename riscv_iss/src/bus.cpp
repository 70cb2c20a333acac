// SPDX-License-Identifier: MIT
// Standalone memory map and the QEMU-virt-compatible console and test-finisher devices.
#include "riscv_iss/bus.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "riscv_iss/hart.h"

namespace iss {
namespace {
constexpr uint32_t kConsoleSize = 0x100, kConsoleThr = 0, kConsoleLsr = 5;
constexpr uint8_t kLsrTxEmpty = 0x60;  // 16550 LSR: THRE | TEMT
constexpr uint32_t kFinisherSize = 0x1000, kFinisherPass = 0x5555, kFinisherFail = 0x3333;
}  // namespace

Bus::Bus(const CorePreset& preset) : regions_(preset.memory), devices_(preset.devices) {
    for (const RegionConfig& r : regions_) {
        // calloc: the OS hands out zero pages lazily, so large regions cost nothing until touched.
        auto* p = static_cast<uint8_t*>(std::calloc(r.size_bytes, 1));
        if (p == nullptr) throw std::bad_alloc();
        host_.push_back(p);
    }
}

Bus::~Bus() {
    for (uint8_t* p : host_) std::free(p);
}

uint8_t* Bus::host_ptr(uint32_t addr, uint32_t len) {
    for (std::size_t i = 0; i < regions_.size(); ++i) {
        const RegionConfig& r = regions_[i];
        if (addr - r.base < r.size_bytes && len <= r.size_bytes - (addr - r.base)) return host_[i] + (addr - r.base);
    }
    return nullptr;
}

bool Bus::get_dmi(uint32_t addr, DmiRegion& out) {
    for (std::size_t i = 0; i < regions_.size(); ++i) {
        const RegionConfig& r = regions_[i];
        if (addr - r.base < r.size_bytes) {
            out.base = r.base;
            out.size = r.size_bytes;
            out.host = host_[i];
            out.writable = r.writable;
            out.executable = true;
            out.read_wait_cycles = r.read_wait_cycles;
            out.write_wait_cycles = r.write_wait_cycles;
            out.fetch_wait_cycles = r.fetch_wait_cycles;
            return true;
        }
    }
    return false;
}

bool Bus::read(uint32_t addr, uint32_t len, uint8_t* data, uint64_t, uint64_t& wait_cycles) {
    wait_cycles = 0;
    if (devices_.console_base != 0 && addr - devices_.console_base < kConsoleSize) {
        std::memset(data, 0, len);
        if (addr - devices_.console_base == kConsoleLsr) data[0] = kLsrTxEmpty;
        return true;
    }
    if (devices_.test_finisher_base != 0 && addr - devices_.test_finisher_base < kFinisherSize) {
        std::memset(data, 0, len);
        return true;
    }
    return false;
}

bool Bus::write(uint32_t addr, uint32_t len, const uint8_t* data, uint64_t, uint64_t& wait_cycles) {
    wait_cycles = 0;
    if (devices_.console_base != 0 && addr - devices_.console_base < kConsoleSize) {
        if (addr - devices_.console_base == kConsoleThr && hart_ != nullptr && hart_->console_out)
            hart_->console_out(reinterpret_cast<const char*>(data), 1);
        return true;
    }
    if (devices_.test_finisher_base != 0 && addr - devices_.test_finisher_base < kFinisherSize) {
        uint32_t v = 0;
        std::memcpy(&v, data, len < 4 ? len : 4);
        if (hart_ != nullptr && (v & 0xffff) == kFinisherPass) hart_->request_stop(StopReason::kExit, 0);
        if (hart_ != nullptr && (v & 0xffff) == kFinisherFail)
            hart_->request_stop(StopReason::kExit, static_cast<int>(v >> 16));
        return true;
    }
    return false;
}

}  // namespace iss
