// SPDX-License-Identifier: MIT
// Lockstep differential run of the two ISS engines (issue 22): every ELF is loaded on two complete
// platforms, one hart on the step engine (the reference, today's per-instruction loop) and one on the block
// engine; both run the same pseudo-random sequence of run(N) calls (N = 1 .. 5000, seeded) and after each
// call the tool compares the stop reason, pc, all x/f registers, instret, cycles, the attempted-instruction
// count, the trap CSRs and the console output; at the end a digest of every memory region. Optionally it
// toggles the external and local interrupt lines of both harts at the same chunk boundaries, so interrupt
// delivery inside and between blocks is compared too. Prints one line per ELF; exit 1 on any divergence.
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "riscv_iss/bus.h"
#include "riscv_iss/csr_numbers.h"
#include "riscv_iss/elf_image.h"
#include "riscv_iss/hart.h"
#include "riscv_iss/semihost.h"

namespace {

struct Side {
    Side(const iss::CorePreset& preset, const std::string& elf, iss::Engine engine)
        : bus(preset), semihost(elf, preset.cycles.clock_hz) {
        img = iss::load_elf(elf, bus);
        iss::IsaConfig isa = preset.isa;
        isa.reset_pc = img.entry;
        hart = std::make_unique<iss::Hart>(isa, preset.cycles, bus, preset.devices);
        hart->set_engine(engine);
        bus.attach(hart.get());
        hart->set_semihost(&semihost);
        hart->set_tohost(img.tohost, img.fromhost);
        hart->console_out = [this](const char* s, size_t n) { console.append(s, n); };
    }
    iss::Bus bus;
    iss::Semihost semihost;
    iss::ElfImage img;
    std::unique_ptr<iss::Hart> hart;
    std::string console;
};

std::string state(iss::Hart& h) {
    std::string s;
    char buf[96];
    auto add = [&](const char* name, uint64_t v) {
        std::snprintf(buf, sizeof buf, "%s=%llx ", name, static_cast<unsigned long long>(v));
        s += buf;
    };
    add("pc", h.pc_);
    for (int i = 1; i < 32; ++i) add(("x" + std::to_string(i)).c_str(), h.x_[i]);
    for (int i = 0; i < 32; ++i) add(("f" + std::to_string(i)).c_str(), h.f_[i]);
    add("instret", h.instret_);
    add("cycles", h.cycles_);
    add("executed", h.executed_);
    const std::pair<const char*, uint32_t> csrs[] = {{"mstatus", iss::csr::kMstatus}, {"mie", iss::csr::kMie},
                                                     {"mip", iss::csr::kMip},         {"mepc", iss::csr::kMepc},
                                                     {"mcause", iss::csr::kMcause},   {"mtval", iss::csr::kMtval},
                                                     {"mtvec", iss::csr::kMtvec},     {"fcsr", iss::csr::kFcsr}};
    for (const auto& [name, num] : csrs) {
        uint32_t v = 0;
        if (h.csr_read(num, v, true)) add(name, v);
    }
    add("priv", static_cast<unsigned>(h.priv_));
    add("stop", static_cast<unsigned>(h.stop_reason()));
    add("exit", static_cast<unsigned>(h.exit_code()));
    return s;
}

uint64_t memory_digest(iss::Bus& bus) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over every byte of every region
    for (const iss::RegionConfig& r : bus.regions()) {
        const uint8_t* p = bus.host_ptr(r.base, r.size_bytes);
        for (uint32_t i = 0; i < r.size_bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

/// Returns "" when both engines agree, else the first difference.
std::string compare(const iss::CorePreset& preset, const std::string& elf, uint32_t seed, uint64_t max_insns,
                    unsigned irq_every, uint64_t& insns_out) {
    Side ref(preset, elf, iss::Engine::kStep), blk(preset, elf, iss::Engine::kBlocks);
    std::mt19937 rng(seed);
    uint64_t done = 0, chunk_no = 0;
    while (done < max_insns) {
        uint64_t n = 1 + rng() % 5000;
        if (rng() % 4 == 0) n = 1 + rng() % 8;  // short runs end inside blocks
        if (irq_every != 0 && ++chunk_no % irq_every == 0) {
            const unsigned line = (rng() % 2) ? iss::cause::kMachineExtIrq : 16 + rng() % 16;
            const bool level = rng() % 2;
            ref.hart->set_irq_line(line, level);
            blk.hart->set_irq_line(line, level);
        }
        const iss::StopReason a = ref.hart->run(n);
        const iss::StopReason b = blk.hart->run(n);
        const std::string sa = state(*ref.hart), sb = state(*blk.hart);
        if (a != b || sa != sb || ref.console != blk.console) {
            std::string why = "after " + std::to_string(done) + " + run(" + std::to_string(n) + "):";
            for (std::size_t i = 0, j = 0; i < sa.size() || j < sb.size();) {
                const std::size_t ei = sa.find(' ', i), ej = sb.find(' ', j);
                const std::string ta = sa.substr(i, ei - i), tb = sb.substr(j, ej - j);
                if (ta != tb) why += " step " + ta + " / block " + tb + ";";
                if (ei == std::string::npos || ej == std::string::npos) break;
                i = ei + 1;
                j = ej + 1;
            }
            if (ref.console != blk.console) why += " console differs;";
            return why;
        }
        done += n;
        if (a != iss::StopReason::kInsnLimit) {
            if (a != iss::StopReason::kWfi) break;
            // WFI with nothing enabled: raise a line on both so they wake up the same way.
            ref.hart->set_irq_line(iss::cause::kMachineExtIrq, true);
            blk.hart->set_irq_line(iss::cause::kMachineExtIrq, true);
        }
    }
    insns_out = ref.hart->instret_;
    if (memory_digest(ref.bus) != memory_digest(blk.bus)) return "memory differs at the end";
    return "";
}

}  // namespace

int main(int argc, char** argv) {
    std::string core = "cv32e40p";
    uint32_t seed = 1;
    uint64_t max_insns = 20000000;
    unsigned irq_every = 0;
    std::vector<std::string> elfs;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--core" && has_value) {
            core = argv[++i];
        } else if (a == "--seed" && has_value) {
            seed = static_cast<uint32_t>(std::stoul(argv[++i]));
        } else if (a == "--max-insns" && has_value) {
            max_insns = std::stoull(argv[++i]);
        } else if (a == "--irq-every" && has_value) {
            irq_every = static_cast<unsigned>(std::stoul(argv[++i]));
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr,
                         "usage: iss_engine_diff [--core PRESET] [--seed N] [--max-insns N] [--irq-every K] ELF...\n");
            return 2;
        } else {
            elfs.push_back(a);
        }
    }
    int bad = 0;
    try {
        const iss::CorePreset preset = iss::load_preset(core, iss::default_preset_dir());
        for (const std::string& elf : elfs) {
            uint64_t insns = 0;
            const std::string why = compare(preset, elf, seed, max_insns, irq_every, insns);
            std::printf("%s %s (%llu instructions, core %s, seed %u)%s%s\n", why.empty() ? "AGREE" : "DIFFER",
                        elf.c_str(), static_cast<unsigned long long>(insns), core.c_str(), seed,
                        why.empty() ? "" : ": ", why.c_str());
            bad += !why.empty();
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "iss_engine_diff: error: %s\n", e.what());
        return 2;
    }
    return bad ? 1 : 0;
}
