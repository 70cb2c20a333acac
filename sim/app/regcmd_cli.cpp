// SPDX-License-Identifier: MIT
// decode, lint and replay (regcmd_cli.h).
#include "app/regcmd_cli.h"

#include <cstdlib>
#include <malloc.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <systemc>
#include "app/cli_vocab.h"
#include "app/conv_example.h"
#include "exec/exec_cli.h"
#include "app/lint.h"
#include "app/model_run.h"
#include "app/mcu_cli.h"
#include "app/quantize_cli.h"
#include "app/regcmd_file.h"
#include "app/replay.h"
#include "app/task_list.h"
#include "trace/regcmd_disasm.h"
#include "hw/regdb.h"
#include "app/report.h"
#include "compiler/rknpu/check_placement.h"
#include "checker/cli.h"
#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "mcu/mcu_run.h"
#include "mcu/mcu_train.h"
#include "mcu/mcu_target.h"
#include "hw/profile.h"
#include "numerics/limits.h"
#include "riscv_iss/cli_options.h"
#include "rtl/cosim.h"
#include "sweep/cli.h"
#include "sweep/compare.h"
#include "tnpuv2/run.h"

namespace sim::cli {

int fail(const std::string& msg) {
    std::cerr << "npusim: error: " << msg << "\n";
    return kExitBadInput;
}

RtlChoice rtl_choice(const std::string& blocks, const std::string& vcd, const std::string& mode) {
    RtlChoice c;
    if (blocks.empty()) {
        if (!vcd.empty()) c.error = "--rtl-vcd needs --rtl (the VCD holds the RTL's signals)";
        return c;
    }
    try {
        c.opts = npu::rtl::parse_rtl_blocks(blocks);
    } catch (const std::invalid_argument& e) {
        c.error = e.what();
        return c;
    }
    if (mode != "full") c.error = "--rtl needs --mode full (the RTL computes the tasks' bytes)";
    c.opts->vcd = vcd;
    return c;
}

namespace {
/// An unsigned number (decimal or 0x..) within [0, max]; throws std::invalid_argument with the
/// one-line error text (no silent truncation to a register width).
uint64_t parse_u64(const std::string& text, const std::string& what, uint64_t max, const std::string& limit,
                   const char* cmd = "replay") {
    size_t pos = 0;
    uint64_t v = 0;
    bool ok = !text.empty() && text.find('-') == std::string::npos;
    if (ok) {
        try {
            v = std::stoull(text, &pos, 0);
        } catch (const std::exception&) {
            ok = false;
        }
    }
    if (!ok || pos != text.size()) throw std::invalid_argument(fmt::format("{} '{}' is not a number, {}", what, text, cmd));
    if (v > max) throw std::invalid_argument(fmt::format("{} {}: out of range, {} ({})", what, text, cmd, limit));
    return v;
}
}  // namespace


int cmd_decode(const RegcmdArgs& a) {
    if (hw::tnpuv2::is_platform_name(a.target.platform)) {
        if (!a.target.profile_file.empty() || !a.target.params.empty())
            return fail("--profile/--param do not apply to decode --platform tnpuv2 (the stream header names its format)");
        return sim::tnpuv2::decode_cli(a.file, std::cout, std::cerr);
    }
    try {
        const hw::SocProfile soc = a.target.load();
        const auto gen = hw::rknpu::soc_generation(soc);
        const std::vector<uint64_t> words = sim::read_regcmd_file(a.file);
        const trace::DisasmStats st = trace::disasm_stats(words, gen);
        std::cout << fmt::format("{}: {} entries, {} task(s), register map {} ({}), {} unknown register(s), {} "
                                 "write(s) to registers whose meaning is not public or inferred (*: assumed meaning)\n",
                                 a.file, words.size(), sim::split_tasks(words).size(), soc.name,
                                 hw::rknpu::generation_name(gen), st.unknown, st.unverified)
                  << trace::disasm_buffer(words, gen);
        // The documented assumptions (docs/rknpu-register-semantics.md §14) the tasks rely on,
        // as the PC interpreter plans them (lint's notes).
        for (const sim::LintFinding& f : sim::lint_regcmd(words, soc))
            if (f.severity == sim::LintFinding::Severity::Note && f.code == "N-assumption")
                std::cout << fmt::format("task {}: assumption {}\n", f.task, f.message);
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    return 0;
}

int cmd_lint(const RegcmdArgs& a) {
    if (hw::tnpuv2::is_platform_name(a.target.platform)) {
        if (!a.target.profile_file.empty()) return fail("--profile does not apply to lint --platform tnpuv2 (use --param)");
        if (!a.base.empty()) return fail("--base does not apply to lint --platform tnpuv2 (RKNPU regcmd buffers only)");
        return sim::tnpuv2::lint_cli(a.file, a.target.params, std::cout, std::cerr);
    }
    std::vector<sim::LintFinding> found;
    try {
        const hw::SocProfile soc = a.target.load();
        sim::LintOptions opt;
        if (!a.base.empty()) opt.base_addr = parse_u64(a.base, "--base", 0xffffffffu, "regcmd addresses are 32-bit", "lint");
        found = sim::lint_regcmd(sim::read_regcmd_file(a.file), soc, opt);
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    int errors = 0, warnings = 0, notes = 0;
    for (const auto& f : found) {
        std::cout << f.text() << "\n";
        errors += f.severity == sim::LintFinding::Severity::Error;
        warnings += f.severity == sim::LintFinding::Severity::Warning;
        notes += f.severity == sim::LintFinding::Severity::Note;
    }
    std::cout << fmt::format("{}: {} error(s), {} warning(s), {} note(s) (assumptions used)\n", a.file, errors, warnings,
                             notes);
    return errors ? kExitProblem : 0;
}


namespace {
/// RKNN core-mask names (cli.md): auto, 0, 1, 2, 0_1, 0_2, 1_2, 0_1_2, all.
uint32_t parse_core_mask(const std::string& s, int cores) {
    if (s == "auto") return 0;
    if (s == "all") return (1u << cores) - 1u;
    uint32_t m = 0;
    for (size_t pos = 0; pos <= s.size();) {
        const size_t next = std::min(s.find('_', pos), s.size());
        const std::string item = s.substr(pos, next - pos);
        if (item.size() != 1 || item[0] < '0' || item[0] > '9' || (m >> (item[0] - '0')) & 1u)
            throw std::invalid_argument(fmt::format("--core-mask '{}': expected auto, all or cores like 0_1_2, replay", s));
        const int c = item[0] - '0';
        if (c >= cores)
            throw std::invalid_argument(fmt::format("--core-mask '{}': core {} does not exist, replay (cores 0..{})", s, c,
                                                    cores - 1));
        m |= 1u << c;
        pos = next + 1;
    }
    return m;
}
}  // namespace

namespace {
/// Whether [addr, addr + n) is memory the NPU can address on this SoC (the IOMMU domain, or DDR and
/// NBUF for physical addresses).
bool npu_addressable(const hw::SocProfile& soc, uint64_t addr, uint64_t n) {
    const auto in = [&](uint64_t b, uint64_t size) { return addr >= b && n <= size && addr - b <= size - n; };
    if (soc.mem.npu_iommu.value) return in(soc.mem.iova_base.value, soc.mem.iova_bytes.value);
    return in(soc.mem.ddr_base.value, soc.mem.ddr_size_bytes.value) ||
           (soc.mem.nbuf_bytes.value && in(soc.mem.nbuf_base.value, soc.mem.nbuf_bytes.value));
}
}  // namespace

namespace {
std::string space(const hw::SocProfile& soc) {
    return soc.mem.npu_iommu.value ? fmt::format("IOMMU domain [0x{:x}, 0x{:x})", soc.mem.iova_base.value,
                                                 soc.mem.iova_base.value + soc.mem.iova_bytes.value)
                                   : fmt::format("DDR [0x{:x}, 0x{:x})", soc.mem.ddr_base.value,
                                                 soc.mem.ddr_base.value + soc.mem.ddr_size_bytes.value);
}
}  // namespace

namespace {
/// The last task of a chain raises the interrupt the driver waits for: the PPU pair when the PPU
/// writes the output, else the DPU pair (docs/rknpu-register-semantics.md §4).
uint32_t wait_mask(uint32_t enable_mask) {
    using namespace hw::rknpu;
    return (enable_mask & 0x20u) ? PC_INTERRUPT_MASK::PPU_0.mask() | PC_INTERRUPT_MASK::PPU_1.mask()
                                 : PC_INTERRUPT_MASK::DPU_0.mask() | PC_INTERRUPT_MASK::DPU_1.mask();
}
}  // namespace

int cmd_replay(const ReplayArgs& a) {
    if (hw::tnpuv2::is_platform_name(a.target.platform))
        return fail("replay runs RKNPU regcmd buffers; for tnpuv2 streams use `npusim decode|lint --platform tnpuv2` and "
                    "`npusim run --platform tnpuv2 MODEL`");
    const RtlChoice rtl = rtl_choice(a.rtl, a.rtl_vcd, a.mode);
    if (!rtl.error.empty()) return fail(rtl.error);
    sim::RawJob job;
    hw::SocProfile soc;
    std::vector<std::pair<uint64_t, std::string>> dump_files;
    try {
        soc = a.target.load();
        job.words = sim::read_regcmd_file(a.file);
        const int cores = soc.npu.core_count.value;
        const uint64_t addr_max = (uint64_t{1} << soc.npu.dma_address_bits.value) - 1;
        const int core = static_cast<int>(parse_u64(a.core, "--core", static_cast<uint64_t>(cores - 1),
                                                    fmt::format("{} has cores 0..{}", soc.name, cores - 1)));
        job.core = core;
        if (!a.base.empty()) {
            job.addr = parse_u64(a.base, "--base", 0xffffffffu, "regcmd addresses are 32-bit");
            if (!npu_addressable(soc, *job.addr, job.words.size() * 8))
                throw std::invalid_argument(fmt::format("--base {}: the {}-byte buffer lies outside the {}, replay",
                                                        a.base, job.words.size() * 8, space(soc)));
        }
        for (const std::string& l : a.loads) {
            const size_t at = l.rfind('@');
            if (at == std::string::npos || at == 0)
                throw std::invalid_argument(fmt::format("--load '{}': expected FILE@ADDR, replay", l));
            const std::string path = l.substr(0, at);
            const uint64_t addr = parse_u64(l.substr(at + 1), "--load address", addr_max,
                                            fmt::format("{}-bit NPU addresses", soc.npu.dma_address_bits.value));
            std::error_code ec;
            if (!std::filesystem::exists(path, ec))
                throw std::runtime_error(fmt::format("cannot open --load file '{}' (no such file)", path));
            const std::vector<char> chars = num::read_input_file(path);
            std::vector<uint8_t> bytes(chars.begin(), chars.end());
            if (!npu_addressable(soc, addr, bytes.size()))
                throw std::invalid_argument(fmt::format("--load {}: {} bytes at 0x{:x} lie outside the {}, replay", l,
                                                        bytes.size(), addr, space(soc)));
            job.preload.emplace_back(addr, std::move(bytes));
        }
        for (const std::string& d : a.dumps) {
            const size_t colon = d.find(':'), eq = d.find('=');
            if (colon == std::string::npos || eq == std::string::npos || eq < colon || eq + 1 == d.size())
                throw std::invalid_argument(fmt::format("--dump '{}': expected ADDR:LEN=FILE, replay", d));
            const uint64_t addr = parse_u64(d.substr(0, colon), "--dump address", addr_max,
                                            fmt::format("{}-bit NPU addresses", soc.npu.dma_address_bits.value));
            const uint64_t len = parse_u64(d.substr(colon + 1, eq - colon - 1), "--dump length", 1u << 30, "at most 1 GiB");
            const std::string path = d.substr(eq + 1);
            if (path == a.file) throw std::invalid_argument(fmt::format("--dump {}: the output would overwrite the input", d));
            for (const std::string& l : a.loads)
                if (l.substr(0, l.rfind('@')) == path)
                    throw std::invalid_argument(fmt::format("--dump {}: the output would overwrite a --load file", d));
            if (!npu_addressable(soc, addr, len))
                throw std::invalid_argument(
                    fmt::format("--dump {}: the range lies outside the {}, replay", d, space(soc)));
            job.readback.emplace_back(addr, static_cast<size_t>(len));
            dump_files.emplace_back(len, path);
        }
        const uint32_t max_tasks = (1u << soc.npu.pc_task_number_bits.value) - 1u;
        const std::vector<sim::TaskSpan> spans = sim::split_tasks(job.words);
        const uint64_t base = job.addr ? *job.addr : sim::infer_base(job.words, spans).value_or(0);
        if (!job.addr && base) job.addr = base;
        uint32_t mask = a.core_mask.empty() ? 0u : parse_core_mask(a.core_mask, cores);
        if (!a.task_list.empty()) {
            if (!a.tasks.empty() || !a.amount.empty())
                throw std::invalid_argument("--tasks and --amount do not apply with --task-list (the list gives them), replay");
            const sim::TaskList tl = sim::read_task_list(a.task_list);
            if (a.core_mask.empty()) mask = tl.submit && tl.submit->core_mask ? tl.submit->core_mask : (1u << core);
            if (mask >> cores)
                throw std::invalid_argument(fmt::format("--task-list: core_mask 0x{:x} names cores {} does not have, replay",
                                                        mask, soc.name));
            if (tl.submit && tl.submit->task_base_addr)
                std::cerr << "npusim: warning: TASK_DMA_BASE_ADDR (submit task_base_addr) is not modelled; using 0\n";
            job.kicks = sim::kicks_of(tl, mask, soc, job.words, base);
        } else if (!a.tasks.empty() || !a.amount.empty()) {
            if (!a.core_mask.empty()) throw std::invalid_argument("--core-mask does not apply with --tasks/--amount (one kick on --core), replay");
            if (!a.tasks.empty())
                job.task_number = static_cast<uint32_t>(parse_u64(
                    a.tasks, "--tasks", max_tasks,
                    fmt::format("TASK_CON.TASK_NUMBER on {} holds 0..{}", soc.name, max_tasks)));
            if (!a.amount.empty())
                job.amount = static_cast<uint32_t>(
                    parse_u64(a.amount, "--amount", 0xffff, "PC_REGISTER_AMOUNTS.PC_DATA_AMOUNT holds 0..65535"));
        } else {
            // One kick per chain of the buffer (docs §2: several independent chains may share it),
            // dealt to the cores of --core-mask (default: --core).
            std::vector<int> use;
            for (int c = 0; c < cores; ++c)
                if ((mask ? mask : 1u << core) & (1u << c)) use.push_back(c);
            const auto scale = static_cast<size_t>(soc.npu.pc_data_amount_scale.value);
            const std::vector<sim::Chain> chains = sim::find_chains(job.words, spans, base);
            for (size_t k = 0; k < chains.size(); ++k) {
                const sim::TaskSpan& first = spans[chains[k].tasks.front()];
                sim::RawKick kick;
                kick.core = use[k % use.size()];
                kick.addr = base + 8 * first.begin;
                kick.amount = static_cast<uint32_t>((first.end - first.begin + scale - 1) / scale - 1);
                kick.task_number = static_cast<uint32_t>(std::min<size_t>(chains[k].tasks.size(), max_tasks));
                kick.int_mask = wait_mask(sim::task_tail(job.words, spans[chains[k].tasks.back()]).enable_mask);
                kick.int_clear = 0x1ffff;
                job.kicks.push_back(kick);
            }
            if (!job.addr && !job.kicks.empty()) job.kicks.clear();  // no address known: the legacy single kick
        }
    } catch (const std::invalid_argument& e) {
        return fail(e.what());
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    if (rtl.opts && !npu::rtl::soc_unsupported(soc).empty()) return fail(npu::rtl::soc_unsupported(soc));
    trace::TraceWriter tw;
    const auto mode = a.mode == "full" ? npu::tlm_models::SimMode::Full : npu::tlm_models::SimMode::Timing;
    std::vector<npu::rtl::RtlTaskRecord> rtl_recs;
    sim::RawResult r;
    try {
        r = sim::run_raw_jobs(soc, {job}, mode, a.trace_path.empty() && a.vcd_path.empty() ? nullptr : &tw, 500'000'000,
                              rtl.opts ? &*rtl.opts : nullptr, &rtl_recs)
                .front();
    } catch (const std::invalid_argument& e) {
        return fail(e.what());
    }
    fmt::print("{}: replayed on {} ({} mode): {} kick(s)\n", a.file, soc.name, a.mode, r.kicks.size());
    bool ok = r.errors.empty();
    for (size_t k = 0; k < r.kicks.size(); ++k) {
        const sim::RawKickResult& kr = r.kicks[k];
        const bool all = kr.task_status == kr.kick.task_number;
        ok &= kr.status_ok && all;
        fmt::print("kick {}: core {}, 0x{:x}: {} task(s) completed of {} in {} ns; interrupt {}; INTERRUPT_RAW_STATUS "
                   "0x{:x}, INTERRUPT_STATUS 0x{:x} (waits for 0x{:x}: {})\n",
                   k, kr.kick.core, kr.kick.addr, kr.task_status, kr.kick.task_number, kr.elapsed_ns,
                   kr.irq ? "raised" : "NOT raised (timeout)", kr.raw_status, kr.int_status, kr.kick.int_mask,
                   kr.status_ok ? "ok" : "no match");
        for (const auto& t : kr.tasks) {
            fmt::print("  task {}: {} ({} entries), {:.3f} us, {} MACs, {} B read, {} B written\n", t.index,
                       t.kind.empty() ? "-" : t.kind, t.regcmd_entries, (t.end_ps - t.start_ps) / 1e6, t.macs,
                       t.bytes_read, t.bytes_written);
            for (const auto& as : t.assumptions) fmt::print("    assumption {}\n", as);
        }
        for (const auto& d : kr.diagnostics) fmt::print("fault: {}\n", d);
    }
    for (const auto& e : r.errors) fmt::print("memory: {}\n", e);
    for (size_t i = 0; i < dump_files.size() && i < r.readback.size(); ++i) {
        std::ofstream f(dump_files[i].second, std::ios::binary);
        f.write(reinterpret_cast<const char*>(r.readback[i].data()), static_cast<std::streamsize>(r.readback[i].size()));
        if (!f) return fail(fmt::format("cannot write --dump file '{}'", dump_files[i].second));
    }
    std::string rtl_mismatch;
    if (rtl.opts) {
        fmt::print("{}", npu::rtl::report_text(rtl_recs, *rtl.opts));
        rtl_mismatch = npu::rtl::mismatch_error(rtl_recs);
        if (!rtl_mismatch.empty()) std::cerr << "npusim: error: " << rtl_mismatch << "\n";
    }
    if (!a.trace_path.empty() && !tw.write_file(a.trace_path))
        return fail(fmt::format("cannot write trace '{}'", a.trace_path));
    if (!a.vcd_path.empty() && !tw.write_vcd(a.vcd_path)) return fail(fmt::format("cannot write VCD '{}'", a.vcd_path));
    return ok && rtl_mismatch.empty() ? 0 : kExitProblem;
}

}  // namespace sim::cli
