// SPDX-License-Identifier: MIT
// libFuzzer target: a regcmd buffer (raw little-endian 64-bit entries, as regcmdN.bin captures and
// `npusim run --dump-regcmd` write them; a trailing partial entry is dropped) through what `npusim
// decode`, `lint` and `replay` do with it, without SystemC (it cannot restart in one process):
// the disassembler, the lint rules, and the PC interpreter (npu/rknpu/pc.h: fetch, apply, plan,
// execute through the block engines) running one kick per chain as replay derives them, over a
// bounded memory around the buffer (accesses outside it are DMA errors, as on a bus). Even-sized
// buffers run on rk3588, odd-sized ones on rk3568 (the other register generation). A clean outcome
// is findings, faults and status bits, or a std::runtime_error / std::invalid_argument; anything
// else escaping aborts. Seeds: corpus/regcmd (regcmd_seed_gen: compiled rk3588 models).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "app/lint.h"
#include "app/regcmd_file.h"
#include "hw/profile.h"
#include "hw/regdb.h"
#include "hw/rknpu_regs.h"
#include "npu/rknpu/pc.h"
#include "npu/rknpu/reg_file.h"
#include "numerics/limits.h"
#include "trace/regcmd_disasm.h"

namespace {

/// Bytes of memory the kick may reach on each side of the buffer (operands, weights, outputs).
constexpr uint64_t kWindow = 1u << 20;
/// Chains run per input (a buffer may hold one per core).
constexpr size_t kMaxKicks = 3;

const hw::SocProfile& soc_for(size_t words) {
    static const hw::SocProfile a = [] {
        num::set_max_memory(uint64_t{256} << 20);
        return hw::load_named_profile("rk3588");
    }();
    static const hw::SocProfile b = hw::load_named_profile("rk3568");
    return words % 2 == 0 ? a : b;
}

struct Window : npu::rknpu::DmaPort {
    uint64_t lo = 0;
    std::vector<uint8_t> mem;
    bool span(uint64_t addr, uint64_t n, uint64_t& off) const {
        if (addr < lo) return false;
        off = addr - lo;
        return off <= mem.size() && n <= mem.size() - off;
    }
    bool read(uint64_t addr, uint8_t* dst, uint64_t n) override {
        uint64_t off = 0;
        if (!span(addr, n, off)) return false;
        if (n) std::memcpy(dst, mem.data() + off, n);
        return true;
    }
    bool write(uint64_t addr, const uint8_t* src, uint64_t n) override {
        uint64_t off = 0;
        if (!span(addr, n, off)) return false;
        if (n) std::memcpy(mem.data() + off, src, n);
        return true;
    }
};

[[noreturn]] void finding(const char* stage, const std::exception& e) {
    std::fprintf(stderr, "fuzz finding: %s threw %s: %s\n", stage, typeid(e).name(), e.what());
    std::abort();
}

void run_kicks(const std::vector<uint64_t>& words, const hw::SocProfile& soc) {
    using namespace hw::rknpu;
    const std::vector<sim::TaskSpan> spans = sim::split_tasks(words);
    const uint64_t base = sim::infer_base(words, spans).value_or(soc.mem.iova_base.value);
    const std::vector<sim::Chain> chains = sim::find_chains(words, spans, base);
    // One window for the process: assign() on its kept capacity zeroes it in place, where a fresh
    // 2 MiB vector per input was an mmap, 512 page faults and an munmap under ASan (the largest
    // cost of an input, by perf). Every input still starts from zeroed memory.
    static Window port;
    port.lo = base > kWindow ? base - kWindow : 0;
    port.mem.assign(static_cast<size_t>(base - port.lo + words.size() * 8 + kWindow), 0);
    for (size_t i = 0; i < words.size(); ++i)
        for (int b = 0; b < 8; ++b) port.mem[base - port.lo + i * 8 + static_cast<size_t>(b)] = static_cast<uint8_t>(words[i] >> (8 * b));
    const auto scale = static_cast<uint64_t>(soc.npu.pc_data_amount_scale.value);
    const uint32_t max_tasks = (1u << soc.npu.pc_task_number_bits.value) - 1u;
    const hw::Field number = field_of(soc_generation(soc), "PC.TASK_CON", "TASK_NUMBER");
    npu::rknpu::CoreState st;
    for (size_t k = 0; k < chains.size() && k < kMaxKicks; ++k) {
        const sim::TaskSpan& first = spans[chains[k].tasks.front()];
        npu::rknpu::RegFile rf;
        rf.write(PC_BASE_ADDRESS::kOffset, static_cast<uint32_t>(base + 8 * first.begin));
        rf.write(PC_REGISTER_AMOUNTS::kOffset, static_cast<uint32_t>((first.end - first.begin + scale - 1) / scale - 1));
        rf.write(PC_TASK_CON::kOffset,
                 number.put(static_cast<uint32_t>(std::min<size_t>(chains[k].tasks.size(), max_tasks))));
        const npu::rknpu::KickResult r = npu::rknpu::run_kick(rf, st, soc, port);
        if (r.tasks_done > r.tasks.size()) std::abort();  // a task completes only after it was fetched
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<uint64_t> words(size / 8);
    for (size_t i = 0; i < words.size(); ++i)
        for (int b = 7; b >= 0; --b) words[i] = (words[i] << 8) | data[i * 8 + static_cast<size_t>(b)];
    const hw::SocProfile& soc = soc_for(words.size());
    const auto gen = hw::rknpu::soc_generation(soc);
    try {
        const trace::DisasmStats s = trace::disasm_stats(words, gen);
        if (s.entries != words.size()) std::abort();
        (void)trace::disasm_buffer(words, gen);
    } catch (const std::runtime_error&) {
    } catch (const std::exception& e) {
        finding("decode", e);
    }
    try {
        for (const sim::LintFinding& f : sim::lint_regcmd(words, soc))
            if (f.entry >= static_cast<long>(words.size())) std::abort();  // a finding names an entry of the buffer
    } catch (const std::runtime_error&) {
    } catch (const std::invalid_argument&) {
    } catch (const std::exception& e) {
        finding("lint", e);
    }
    try {
        run_kicks(words, soc);
    } catch (const std::runtime_error&) {
    } catch (const std::invalid_argument&) {
    } catch (const std::exception& e) {
        finding("run_kick", e);
    }
    return 0;
}
