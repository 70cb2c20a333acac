// SPDX-License-Identifier: MIT
// `rviss` / `npusim iss`: options checked first (exit 2), then preset + Bus + Hart + ELF + semihosting/HTIF/
// console, run to completion, memory dumps and the compliance signature written, and the outcome mapped
// to an exit code (run.h, shared docs cli.md). Host wall-clock time is used only for the --stats figure.
#include "riscv_iss/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>

#include "riscv_iss/bus.h"
#include "riscv_iss/commit_log.h"
#include "riscv_iss/elf_image.h"
#include "riscv_iss/gdb_stub.h"
#include "riscv_iss/hart.h"
#include "riscv_iss/semihost.h"

namespace iss {
namespace {

struct Reporter {
    std::string tool;
    int error(int code, const std::string& msg) const {
        std::fflush(stdout);
        std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), msg.c_str());
        return code;
    }
};

int fatal_code(FatalKind k) {
    switch (k) {
        case FatalKind::kIllegalInsn:
            return kExitIllegalInsn;
        case FatalKind::kWildJump:
            return kExitWildJump;
        case FatalKind::kAccessFault:
            return kExitAccessFault;
        default:
            return kExitUnhandledTrap;
    }
}

/// Decimal or 0x-hex unsigned number, nothing else (no sign, no spaces, no suffix).
bool parse_number(const std::string& s, uint64_t max, uint64_t& out) {
    if (s.empty()) return false;
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    uint64_t v = 0;
    for (std::size_t i = hex ? 2 : 0; i < s.size(); ++i) {
        const char c = s[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = static_cast<unsigned>(c - '0');
        else if (hex && c >= 'a' && c <= 'f')
            d = static_cast<unsigned>(c - 'a' + 10);
        else if (hex && c >= 'A' && c <= 'F')
            d = static_cast<unsigned>(c - 'A' + 10);
        else
            return false;
        const uint64_t base = hex ? 16 : 10;
        if (v > (max - d) / base) return false;
        v = v * base + d;
    }
    out = v;
    return true;
}

struct Dump {
    std::string spec, file;
    uint32_t addr = 0, len = 0;
};

/// "ADDR:LEN=FILE" (cli.md); empty string on success, else why not.
std::string parse_dump(const std::string& spec, Dump& d) {
    d.spec = spec;
    const auto colon = spec.find(':'), eq = spec.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon)
        return fmt::format("--dump '{}' is not ADDR:LEN=FILE (e.g. 0x80002000:256=sig.bin)", spec);
    uint64_t addr = 0, len = 0;
    if (!parse_number(spec.substr(0, colon), 0xffffffffull, addr))
        return fmt::format("--dump '{}': address '{}' is not a 32-bit number", spec, spec.substr(0, colon));
    if (!parse_number(spec.substr(colon + 1, eq - colon - 1), 0xffffffffull, len) || len == 0)
        return fmt::format("--dump '{}': length '{}' is not a number of bytes >= 1", spec,
                           spec.substr(colon + 1, eq - colon - 1));
    if (addr + len > (1ull << 32))
        return fmt::format("--dump '{}': the range passes the end of the 32-bit space", spec);
    d.file = spec.substr(eq + 1);
    if (d.file.empty()) return fmt::format("--dump '{}': no output file after '='", spec);
    d.addr = static_cast<uint32_t>(addr);
    d.len = static_cast<uint32_t>(len);
    return "";
}

std::string canonical(const std::string& path) {
    std::error_code ec;
    const auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
    return ec ? path : p.string();
}

std::ostream* open_out(const std::string& name, std::unique_ptr<std::ofstream>& holder) {
    if (name == "-") return &std::cerr;
    holder = std::make_unique<std::ofstream>(name);
    return *holder ? holder.get() : nullptr;
}

/// Writes `len` bytes from guest memory to `file`: raw bytes, or (signature) one 32-bit little-endian word
/// per line as 8 lowercase hex digits, the riscv-arch-test / Spike +signature-granularity=4 format.
std::string write_memory(Hart& hart, uint32_t addr, uint32_t len, const std::string& file, bool signature) {
    std::vector<uint8_t> buf((static_cast<std::size_t>(len) + 3) & ~std::size_t{3}, 0);
    if (!hart.debug_read(addr, len, buf.data()))
        return fmt::format("cannot read guest memory [0x{:08x}, 0x{:08x}) for '{}'", addr, uint64_t{addr} + len, file);
    std::ofstream out(file, std::ios::binary);
    if (signature) {
        for (std::size_t i = 0; i < buf.size(); i += 4)
            out << fmt::format("{:08x}\n", buf[i] | (buf[i + 1] << 8) | (buf[i + 2] << 16) |
                                               (static_cast<uint32_t>(buf[i + 3]) << 24));
    } else {
        out.write(reinterpret_cast<const char*>(buf.data()), len);
    }
    out.close();
    if (!out) return fmt::format("cannot write '{}'", file);
    return "";
}

int run_loaded(Hart& hart, uint64_t max_insns, const RunOptions& opt, const Reporter& rep) {
    const uint64_t limit = max_insns ? max_insns : ~0ull;
    const uint64_t start = hart.executed_, start_ret = hart.instret_;
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    StopReason r = StopReason::kNone;
    for (;;) {  // the budget counts attempted instructions, so a trap storm ends here too
        const uint64_t done = hart.executed_ - start;
        if (done >= limit) break;
        r = hart.run(std::min<uint64_t>(limit - done, 1ull << 26));
        if (r != StopReason::kInsnLimit) break;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu_secs = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    std::fflush(stdout);
    const uint64_t insns = hart.instret_ - start_ret;
    if (opt.stats)
        std::fprintf(stderr, "%s: %llu instructions, %llu cycles, %.3f s wall, %.3f s cpu, %.1f MIPS (cpu)\n",
                     rep.tool.c_str(), static_cast<unsigned long long>(insns),
                     static_cast<unsigned long long>(hart.cycles_), secs, cpu_secs,
                     cpu_secs > 0 ? static_cast<double>(insns) / cpu_secs / 1e6 : 0.0);
    switch (r) {
        case StopReason::kExit: {
            const int code = hart.exit_code();
            if (hart.exit_via_tohost() && code != 0) {
                // riscv-tests env/p/riscv_test.h RVTEST_FAIL: tohost = (TESTNUM << 1) | 1
                return rep.error(code > 0 && code < kExitGuestCodeTooLarge ? code : kExitGuestCodeTooLarge,
                                 fmt::format("tohost: test {} failed, at pc 0x{:08x}", code, hart.pc_));
            }
            if (code < 0 || code >= kExitGuestCodeTooLarge)
                return rep.error(kExitGuestCodeTooLarge,
                                 fmt::format("guest exit code {} is out of range, exit code {} instead (0..118 pass "
                                             "through)",
                                             code, static_cast<int>(kExitGuestCodeTooLarge)));
            return code;
        }
        case StopReason::kFatal:
            return rep.error(fatal_code(hart.fatal_kind()), hart.stop_message());
        case StopReason::kWfi:
            return rep.error(kExitDeadlock, fmt::format("deadlock: WFI at pc 0x{:08x} with no enabled interrupt source",
                                                        hart.pc_ - 4));
        default: {
            const uint64_t attempted = hart.executed_ - start, trapped = attempted - insns;
            const std::string why = trapped == 0 ? "a runaway loop?"
                                                 : fmt::format(
                                                       "{} of them trapped, the last with mcause {} at mepc 0x{:08x}: "
                                                       "a trap storm?",
                                                       trapped, hart.mcause_, hart.mepc_);
            return rep.error(kExitInsnLimit, fmt::format("instruction limit of {} reached at pc 0x{:08x} ({} raise "
                                                         "--max-insns if not)",
                                                         max_insns, hart.pc_, why));
        }
    }
}

}  // namespace

int run_cli(const RunOptions& opt) {
    const Reporter rep{opt.tool};
    // ---- options (exit 2) --------------------------------------------------------------------------------
    if (!opt.profile_misused.empty())
        return rep.error(kExitUsage,
                         "--profile does not apply to iss (it names a SoC profile JSON; the per-function "
                         "cycle profile is --func-profile FILE)");
    std::string core = opt.core;
    if (!opt.platform.empty()) {
        static const char* const kMcus[] = {"ws63", "3066h"};
        std::string p = opt.platform;
        for (char& ch : p) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (std::find(std::begin(kMcus), std::end(kMcus), p) == std::end(kMcus))
            return rep.error(kExitUsage, fmt::format("--platform '{}' has no RISC-V MCU core for iss (ws63, 3066h; a "
                                                     "bare core: --core-preset cv32e40p)",
                                                     opt.platform));
        if (opt.core != "cv32e40p" && opt.core != p)
            return rep.error(kExitUsage, fmt::format("--platform {} and --core-preset {} name different cores (give "
                                                     "one)",
                                                     opt.platform, opt.core));
        core = p;
    }
    uint64_t max_insns = opt.max_insns;
    if (!opt.max_insns_text.empty() && !parse_number(opt.max_insns_text, kMaxInsnsLimit, max_insns))
        return rep.error(kExitUsage, fmt::format("--max-insns '{}' is not a count of instructions (0 .. {}, 0 = no "
                                                 "limit)",
                                                 opt.max_insns_text, kMaxInsnsLimit));
    if (max_insns > kMaxInsnsLimit)
        return rep.error(kExitUsage,
                         fmt::format("--max-insns {} is too large (at most {})", max_insns, kMaxInsnsLimit));
    if (!opt.engine.empty() && opt.engine != "blocks" && opt.engine != "step")
        return rep.error(kExitUsage, fmt::format("--engine '{}' is not an engine (blocks, step)", opt.engine));
    std::vector<Dump> dumps(opt.dumps.size());
    for (std::size_t i = 0; i < opt.dumps.size(); ++i) {
        const std::string why = parse_dump(opt.dumps[i], dumps[i]);
        if (!why.empty()) return rep.error(kExitUsage, why);
    }
    {
        // Outputs never overwrite an input or each other.
        std::set<std::string> seen = {canonical(opt.elf)};
        std::vector<std::pair<std::string, std::string>> outs;
        for (const Dump& d : dumps) outs.push_back({"--dump " + d.spec, d.file});
        if (!opt.signature.empty()) outs.push_back({"--signature", opt.signature});
        if (!opt.trace.empty() && opt.trace != "-") outs.push_back({"--trace", opt.trace});
        if (!opt.profile.empty() && opt.profile != "-") outs.push_back({"--func-profile", opt.profile});
        for (const auto& [what, file] : outs)
            if (!seen.insert(canonical(file)).second)
                return rep.error(kExitUsage, fmt::format("{}: output '{}' is the program or another output (refusing "
                                                         "to overwrite it)",
                                                         what, file));
    }
    {
        // A missing or unreadable program is bad input (exit 2, cli.md); 120 is for a file that is
        // there but is not a loadable ELF.
        std::error_code ec;
        if (!std::filesystem::is_regular_file(opt.elf, ec) || !std::ifstream(opt.elf, std::ios::binary))
            return rep.error(kExitUsage, fmt::format("cannot read program '{}' ({})", opt.elf,
                                                     std::filesystem::exists(opt.elf, ec) ? "not a readable file"
                                                                                          : "no such file"));
    }
    try {
        const CorePreset preset = load_preset(core, opt.preset_dir.empty() ? default_preset_dir() : opt.preset_dir);
        Bus bus(preset);
        ElfImage img;
        try {
            img = load_elf(opt.elf, bus);
        } catch (const std::exception& e) {
            return rep.error(kExitLoadError, e.what());
        }
        for (const Dump& d : dumps)
            if (bus.host_ptr(d.addr, d.len) == nullptr)
                return rep.error(kExitUsage,
                                 fmt::format("--dump {}: [0x{:08x}, 0x{:08x}) is not inside one memory region "
                                             "of core '{}'",
                                             d.spec, d.addr, uint64_t{d.addr} + d.len, preset.name));
        if (!opt.signature.empty()) {
            if (!img.has_signature)
                return rep.error(kExitUsage,
                                 fmt::format("--signature: '{}' has no begin_signature/end_signature symbols "
                                             "(riscv-arch-test model_test.h RVMODEL_DATA_BEGIN/END)",
                                             opt.elf));
            if (img.end_signature < img.begin_signature ||
                bus.host_ptr(img.begin_signature, img.end_signature - img.begin_signature + 1) == nullptr)
                return rep.error(kExitUsage,
                                 fmt::format("--signature: [begin_signature 0x{:08x}, end_signature 0x{:08x}) "
                                             "is not a memory range of core '{}'",
                                             img.begin_signature, img.end_signature, preset.name));
        }
        IsaConfig isa = preset.isa;
        isa.reset_pc = img.entry;
        Hart hart(isa, preset.cycles, bus, preset.devices);
        if (opt.engine == "step") hart.set_engine(Engine::kStep);
        if (opt.engine == "blocks") hart.set_engine(Engine::kBlocks);
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
            return rep.error(kExitUsage, fmt::format("--trace: cannot open '{}' for writing", opt.trace));
        if (!opt.profile.empty() && (profile_out = open_out(opt.profile, profile_file)) == nullptr)
            return rep.error(kExitUsage, fmt::format("--func-profile: cannot open '{}' for writing", opt.profile));
        std::unique_ptr<CommitLog> log = trace_out ? std::make_unique<CommitLog>(*trace_out) : nullptr;
        std::unique_ptr<Profiler> prof = profile_out ? std::make_unique<Profiler>(img.functions) : nullptr;
        if (log || prof) {
            hart.on_commit = [&log, &prof](const Hart& h, uint32_t pc, const DecodedInsn& d) {
                if (log) log->on_commit(h, pc, d);
                if (prof) prof->on_commit(h, pc);
            };
        }
        if (log) hart.on_trap = [&log](uint32_t c, uint32_t epc, uint32_t tval) { log->on_trap(c, epc, tval); };
        int rc;
        if (!opt.gdb.empty()) {
            GdbStub stub(hart);
            stub.set_tool_name(opt.tool);
            stub.set_max_insns(max_insns);
            rc = stub.serve(opt.gdb);
            if (rc == GdbStub::kDetachedRun) {  // D: the program runs on, within what is left of the budget
                const uint64_t used = hart.executed_;
                if (max_insns != 0 && used >= max_insns)
                    rc = rep.error(kExitInsnLimit,
                                   fmt::format("instruction limit of {} reached while debugging", max_insns));
                else
                    rc = run_loaded(hart, max_insns == 0 ? 0 : max_insns - used, opt, rep);
            } else if (rc < 0) {
                return rep.error(kExitUsage, stub.error());
            }
        } else {
            rc = run_loaded(hart, max_insns, opt, rep);
        }
        if (prof) prof->write(*profile_out);
        // Dumps and the signature are written however the run ended (a failing compliance test's
        // signature is what shows where it went wrong).
        for (const Dump& d : dumps) {
            const std::string why = write_memory(hart, d.addr, d.len, d.file, false);
            if (!why.empty()) return rep.error(rc != 0 ? rc : kExitUsage, "--dump " + d.spec + ": " + why);
        }
        if (!opt.signature.empty()) {
            const std::string why =
                write_memory(hart, img.begin_signature, img.end_signature - img.begin_signature, opt.signature, true);
            if (!why.empty()) return rep.error(rc != 0 ? rc : kExitUsage, "--signature: " + why);
        }
        return rc;
    } catch (const std::exception& e) {
        return rep.error(kExitLoadError, e.what());
    }
}

}  // namespace iss
