// SPDX-License-Identifier: MIT
// Fuzz target (issue 23): the ELF loader on arbitrary bytes, and past it: whatever loads is run on both
// ISS engines for up to 10000 attempted instructions (arbitrary code: decoder, traps, CSRs, MMIO,
// semihosting, self-modifying stores), checking that they end in the same state. A loader error must be
// a std::runtime_error; a crash, a sanitizer report, another exception, a hang or the engines disagreeing
// (abort) is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "common.h"
#include "riscv_iss/bus.h"
#include "riscv_iss/elf_image.h"
#include "riscv_iss/hart.h"
#include "riscv_iss/semihost.h"

namespace {

struct Machine {
    explicit Machine(const iss::CorePreset& preset) : bus(preset), semihost("fuzz.elf", preset.cycles.clock_hz) {}
    iss::Bus bus;
    iss::Semihost semihost;
    std::unique_ptr<iss::Hart> hart;
};

bool load(Machine& m, const iss::CorePreset& preset, const uint8_t* data, size_t size, iss::Engine engine) {
    std::vector<char> bytes(data, data + size);
    iss::ElfImage img;
    try {
        img = iss::load_elf_image(bytes.data(), bytes.size(), "fuzz.elf", m.bus);
    } catch (const std::runtime_error&) {
        return false;
    }
    iss::IsaConfig isa = preset.isa;
    isa.reset_pc = img.entry;
    m.hart = std::make_unique<iss::Hart>(isa, preset.cycles, m.bus, preset.devices);
    m.hart->set_engine(engine);
    m.bus.attach(m.hart.get());
    m.hart->set_semihost(&m.semihost);
    m.hart->set_tohost(img.tohost, img.fromhost);
    m.hart->console_out = [](const char*, size_t) {};
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const iss::CorePreset preset = iss::fuzz::small_core();
    Machine a(preset), b(preset);
    if (!load(a, preset, data, size, iss::Engine::kStep)) return 0;
    if (!load(b, preset, data, size, iss::Engine::kBlocks)) std::abort();  // same bytes, same outcome
    uint64_t left = 10000, chunk = 1;
    while (left > 0) {
        const uint64_t n = std::min(left, chunk);
        const iss::StopReason ra = a.hart->run(n), rb = b.hart->run(n);
        if (ra != rb || a.hart->pc_ != b.hart->pc_ || a.hart->instret_ != b.hart->instret_ ||
            a.hart->cycles_ != b.hart->cycles_ || std::memcmp(a.hart->x_, b.hart->x_, sizeof a.hart->x_) != 0 ||
            std::memcmp(a.hart->f_, b.hart->f_, sizeof a.hart->f_) != 0 || a.hart->mcause_ != b.hart->mcause_)
            std::abort();  // the engines disagree
        if (ra != iss::StopReason::kInsnLimit) break;
        left -= n;
        chunk = chunk * 3 + 1;  // 1, 4, 13, 40, ... mixes short runs (inside blocks) with long ones
    }
    return 0;
}
