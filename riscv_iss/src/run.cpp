// SPDX-License-Identifier: MIT
// `rviss` / `npusim iss`: preset + Bus + Hart + ELF + semihosting/HTIF/console, run to completion and map
// the outcome to an exit code. Host wall-clock time is used only for the --stats MIPS figure.
#include "riscv_iss/run.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>

#include "riscv_iss/bus.h"
#include "riscv_iss/commit_log.h"
#include "riscv_iss/elf_image.h"
#include "riscv_iss/gdb_stub.h"
#include "riscv_iss/hart.h"
#include "riscv_iss/semihost.h"

namespace iss {
namespace {

int error(int code, const std::string& msg) {
    std::fflush(stdout);
    std::fprintf(stderr, "rviss: error: %s\n", msg.c_str());
    return code;
}

int fatal_code(FatalKind k) {
    switch (k) {
        case FatalKind::kIllegalInsn: return kExitIllegalInsn;
        case FatalKind::kWildJump: return kExitWildJump;
        case FatalKind::kAccessFault: return kExitAccessFault;
        default: return kExitUnhandledTrap;
    }
}

/// Opens "-" as stderr or a file; returns nullptr on failure.
std::ostream* open_out(const std::string& name, std::unique_ptr<std::ofstream>& holder) {
    if (name == "-") return &std::cerr;
    holder = std::make_unique<std::ofstream>(name);
    return *holder ? holder.get() : nullptr;
}

int run_loaded(Hart& hart, const RunOptions& opt) {
    const uint64_t limit = opt.max_insns ? opt.max_insns : ~0ull;
    const uint64_t start = hart.instret_;
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    StopReason r = StopReason::kNone;
    for (;;) {
        const uint64_t done = hart.instret_ - start;
        if (done >= limit) break;
        r = hart.run(std::min<uint64_t>(limit - done, 1ull << 26));
        if (r != StopReason::kInsnLimit) break;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu_secs = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    std::fflush(stdout);
    const uint64_t insns = hart.instret_ - start;
    if (opt.stats)
        std::fprintf(stderr, "rviss: %llu instructions, %llu cycles, %.3f s wall, %.3f s cpu, %.1f MIPS (cpu)\n",
                     static_cast<unsigned long long>(insns), static_cast<unsigned long long>(hart.cycles_), secs,
                     cpu_secs, cpu_secs > 0 ? static_cast<double>(insns) / cpu_secs / 1e6 : 0.0);
    switch (r) {
        case StopReason::kExit: {
            const int code = hart.exit_code();
            if (code < 0 || code >= kExitGuestCodeTooLarge) {
                return error(kExitGuestCodeTooLarge, fmt::format("guest exit code {} is out of range", code));
            }
            return code;
        }
        case StopReason::kFatal: return error(fatal_code(hart.fatal_kind()), hart.stop_message());
        case StopReason::kWfi:
            return error(kExitDeadlock,
                         fmt::format("deadlock: WFI at pc 0x{:08x} with no enabled interrupt source", hart.pc_ - 4));
        default:
            return error(kExitInsnLimit, fmt::format("instruction limit of {} reached at pc 0x{:08x} (runaway loop?)",
                                                     opt.max_insns, hart.pc_));
    }
}

}  // namespace

int run_cli(const RunOptions& opt) {
    try {
        const CorePreset preset = load_preset(opt.core, opt.preset_dir.empty() ? default_preset_dir() : opt.preset_dir);
        Bus bus(preset);
        ElfImage img;
        try {
            img = load_elf(opt.elf, bus);
        } catch (const std::exception& e) {
            return error(kExitLoadError, e.what());
        }
        IsaConfig isa = preset.isa;
        isa.reset_pc = img.entry;
        Hart hart(isa, preset.cycles, bus, preset.devices);
        bus.attach(&hart);
        Semihost semihost(opt.elf, preset.cycles.clock_hz);
        hart.set_semihost(&semihost);
        hart.set_tohost(img.tohost, img.fromhost);
        const bool gdb_stdio = opt.gdb == "stdio";
        hart.console_out = [gdb_stdio](const char* s, size_t n) { std::fwrite(s, 1, n, gdb_stdio ? stderr : stdout); };
        std::unique_ptr<std::ofstream> trace_file, profile_file;
        std::ostream* trace_out = nullptr;
        std::ostream* profile_out = nullptr;
        if (!opt.trace.empty() && (trace_out = open_out(opt.trace, trace_file)) == nullptr)
            return error(kExitUsage, "cannot open trace file " + opt.trace);
        if (!opt.profile.empty() && (profile_out = open_out(opt.profile, profile_file)) == nullptr)
            return error(kExitUsage, "cannot open profile file " + opt.profile);
        std::unique_ptr<CommitLog> log = trace_out ? std::make_unique<CommitLog>(*trace_out) : nullptr;
        std::unique_ptr<Profiler> prof = profile_out ? std::make_unique<Profiler>(img.functions) : nullptr;
        if (log || prof) {
            hart.on_commit = [&log, &prof](const Hart& h, uint32_t pc, const DecodedInsn& d) {
                if (log) log->on_commit(h, pc, d);
                if (prof) prof->on_commit(h, pc);
            };
        }
        int rc;
        if (!opt.gdb.empty()) {
            GdbStub stub(hart);
            rc = stub.serve(opt.gdb);
            if (rc < 0) return error(kExitUsage, stub.error());
        } else {
            rc = run_loaded(hart, opt);
        }
        if (prof) prof->write(*profile_out);
        return rc;
    } catch (const std::exception& e) {
        return error(kExitLoadError, e.what());
    }
}

}  // namespace iss
