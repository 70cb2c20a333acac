// SPDX-License-Identifier: MIT
// npusim lint: the entry checks against the register map of the profile's generation, then every
// chain of the buffer run through the PC interpreter (npu/rknpu/pc.h) without data: the same rules
// the platform faults on (replay and lint share them), plus the checks a model does not need to run
// a task (chain pointers and amounts, enables vs programmed blocks, CBUF entries). Rules name their
// source: the public producer or document the convention comes from.
#include "app/lint.h"

#include <map>

#include <fmt/format.h>

#include "app/regcmd_file.h"
#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "npu/rknpu/conv_config.h"
#include "npu/rknpu/pc.h"
#include "npu/rknpu/task.h"

namespace sim {

using namespace hw;
using namespace hw::rknpu;
using Sev = LintFinding::Severity;

std::string LintFinding::text() const {
    std::string where = fmt::format("task {}", task);
    if (entry >= 0) where += fmt::format(" [entry {}]", entry);
    std::string what = reg.empty() ? "" : (field.empty() ? reg : reg + "." + field) + fmt::format(" = 0x{:x}: ", value);
    const char* sev = severity == Sev::Error ? "error" : (severity == Sev::Warning ? "warning" : "note");
    return fmt::format("{}: {} {}: {}{}{}{}", sev, code, where, what, message, hint.empty() ? "" : " (hint: " + hint + ")",
                       source.empty() ? "" : " [rule: " + source + "]");
}

namespace {

/// Where each rule comes from (docs/rknpu-register-semantics.md sections).
const std::map<std::string, std::string>& rule_sources() {
    static const std::map<std::string, std::string> m = {
        {"W-reserved", "TRM / Mesa registers.xml reserved fields, docs §8-10"},
        {"W-rewrite", "one value per register per task: producers rewrite only with the same value (Mesa, docs §2)"},
        {"W-tail", "task end: PC_BASE_ADDRESS (or a zero word), PC_REGISTER_AMOUNTS, 0x0041, 0x0081 (RKNPU_PC_DATA_EXTRA_AMOUNT, docs §2)"},
        {"W-notenabled", "producers enable every block they program (Mesa 0x1d, mtx512 0x0d, vendor 0x18, docs §1)"},
        {"W-unprogrammed", "producers program every block they enable (docs §1-2)"},
        {"W-chain-outside", "chain pointers reach a task of the same regcmd buffer (docs §2)"},
        {"W-entries-row", "DATA_ENTRIES >= ceil(row bytes / 64) for every Mesa / mtx512 / vendor value (docs §8)"},
        {"W-notpublic", "registers whose meaning is not public are written 0 by every producer (docs §14)"},
    };
    return m;
}

constexpr size_t kMaxPerCode = 50;  ///< findings kept per rule (bounded memory on big buffers)

struct Ctx {
    std::vector<LintFinding>& out;
    std::map<std::string, size_t> counts;
    void add(Sev s, const char* code, int task, long entry, std::string reg, std::string field, uint64_t value,
             std::string msg, std::string hint = {}) {
        if (++counts[code] > kMaxPerCode) return;
        auto it = rule_sources().find(code);
        out.push_back(LintFinding{s, code, task, entry, std::move(reg), std::move(field), value, std::move(msg),
                                  std::move(hint), it == rule_sources().end() ? "" : it->second});
    }
    void finish() {
        for (const auto& [code, n] : counts)
            if (n > kMaxPerCode)
                out.push_back(LintFinding{code[0] == 'E' ? Sev::Error : (code[0] == 'W' ? Sev::Warning : Sev::Note),
                                          code, -1, -1, "", "", 0,
                                          fmt::format("{} more finding(s) of this rule not listed", n - kMaxPerCode),
                                          "", ""});
    }
};

uint32_t enable_bit(Block b) {
    switch (b) {
        case Block::CNA: return npu::rknpu::enable::CNA;
        case Block::CORE: return npu::rknpu::enable::CORE;
        case Block::DPU: return npu::rknpu::enable::DPU;
        case Block::DPU_RDMA: return npu::rknpu::enable::DPU_RDMA;
        case Block::PPU: return npu::rknpu::enable::PPU;
        case Block::PPU_RDMA: return npu::rknpu::enable::PPU_RDMA;
        default: return 0;
    }
}

/// Entry-level checks of one task; returns the blocks whose registers it writes.
uint32_t lint_entries(Ctx& c, const std::vector<uint64_t>& w, const TaskSpan& t, int ti, Generation g) {
    uint32_t programmed = 0;
    std::map<uint16_t, std::pair<uint32_t, long>> written;
    bool has_sync = false;
    for (size_t i = t.begin; i < t.end; ++i) {
        const RegCmd cmd = RegCmd::decode(w[i]);
        const long e = static_cast<long>(i);
        if (cmd.is_nop()) continue;
        if (cmd.target() == 0 && cmd.is_op_enable()) {
            if (!has_sync)
                c.add(Sev::Error, "E-sync", ti, e, "PC.OPERATION_ENABLE", "", cmd.value,
                      "op-enable entry without the preceding 0x0041 entry", "emit 0x0041000000000000 just before it");
            continue;
        }
        if (cmd.target() == 0 && cmd.is_sync()) {
            has_sync = true;
            continue;
        }
        const RegInfo* r = find_reg(cmd.offset, g);
        const BlockInfo* tb = block_of_target(cmd.target());
        if (!r) {
            c.add(Sev::Error, "E-noreg", ti, e, "", "", cmd.offset,
                  fmt::format("no register at offset 0x{:04x} (target 0x{:04x}) on the {} register map", cmd.offset,
                              cmd.op, generation_name(g)),
                  "check the offset against the register map (npusim decode shows names)");
            continue;
        }
        const std::string rn = std::string(r->block_name) + "." + r->name;
        if (!cmd.is_write())
            c.add(Sev::Error, "E-op", ti, e, rn, "", cmd.op, "entry without the write flag (op bit 0)",
                  fmt::format("use op 0x{:04x}", block_info(r->block).target | 1));
        if (!tb || tb != &block_info(r->block))
            c.add(Sev::Error, "E-target", ti, e, rn, "", cmd.op,
                  fmt::format("target 0x{:04x} is not the register's block {}", cmd.target(), r->block_name),
                  fmt::format("use target 0x{:04x}", block_info(r->block).target | 1));
        if (r->access == Access::RO)
            c.add(Sev::Error, "E-readonly", ti, e, rn, "", cmd.value, "write to a read-only register", "drop the entry");
        const uint32_t rsv = cmd.value & r->reserved_mask();
        if (rsv)
            c.add(Sev::Warning, "W-reserved", ti, e, rn, "", cmd.value,
                  fmt::format("value sets reserved bits 0x{:x}", rsv), "clear the bits no field defines");
        if (!r->verified && cmd.value != 0)
            c.add(Sev::Warning, "W-notpublic", ti, e, rn, "", cmd.value,
                  "non-zero value in a register whose meaning is not public: the model does not interpret it");
        auto prev = written.find(cmd.offset);
        if (prev != written.end() && prev->second.first != cmd.value)
            c.add(Sev::Warning, "W-rewrite", ti, e, rn, "", cmd.value,
                  fmt::format("written twice in one task (entry {} wrote 0x{:x}); the last value wins",
                              prev->second.second, prev->second.first));
        written[cmd.offset] = {cmd.value, e};
        if (r->block != Block::PC) programmed |= enable_bit(r->block);
    }
    return programmed;
}

/// Semantic checks of one task after its entries reached `rf`: the interpreter's rules (the faults
/// the platform raises), enables vs programmed blocks, CBUF entries; notes for assumptions used.
void lint_task(Ctx& c, const std::vector<uint64_t>& w, const TaskSpan& t, int ti, uint32_t programmed,
               npu::rknpu::RegFile& rf, npu::rknpu::CoreState& st, const SocProfile& soc) {
    if (!t.has_op_enable) {
        c.add(Sev::Error, "E-noopen", ti, -1, "", "", 0,
              fmt::format("entries {}..{} end without the 0x0081 op-enable entry (truncated task)", t.begin, t.end - 1),
              "end every task with PC_BASE_ADDRESS, PC_REGISTER_AMOUNTS, 0x0041.., 0x0081..");
        return;
    }
    const npu::rknpu::TaskEntries e =
        npu::rknpu::apply_entries(w.data() + t.begin, t.end - t.begin, rf, soc_generation(soc));
    // Slot -4 may be a zero word (Mesa single-task ops, mtx512, the vendor's last task).
    const size_t n = t.end - t.begin;
    const bool slot4_nop = n >= 4 && RegCmd::decode(w[t.end - 4]).is_nop();
    if ((!e.next_addr && !slot4_nop) || !e.next_amount)
        c.add(Sev::Warning, "W-tail", ti, -1, "PC.BASE_ADDRESS", "", 0,
              "task does not end with the PC_BASE_ADDRESS (or zero word) / PC_REGISTER_AMOUNTS entries",
              "emit both (a zero word and amount 0 for the last task of a chain) before the 0x0041 entry");
    static const std::pair<uint32_t, const char*> blocks[] = {
        {npu::rknpu::enable::CNA, "CNA"},       {npu::rknpu::enable::CORE, "CORE"},
        {npu::rknpu::enable::DPU, "DPU"},       {npu::rknpu::enable::DPU_RDMA, "DPU_RDMA"},
        {npu::rknpu::enable::PPU, "PPU"},       {npu::rknpu::enable::PPU_RDMA, "PPU_RDMA"}};
    for (const auto& [bit, name] : blocks) {
        if ((programmed & bit) && !(e.enable_mask & bit))
            c.add(Sev::Warning, "W-notenabled", ti, -1, "PC.OPERATION_ENABLE", "", e.enable_mask,
                  fmt::format("{} registers are programmed but {} is not enabled", name, name),
                  fmt::format("set bit 0x{:x} in the op-enable value", bit));
        if (!(programmed & bit) && (e.enable_mask & bit))
            c.add(Sev::Warning, "W-unprogrammed", ti, -1, "PC.OPERATION_ENABLE", "", e.enable_mask,
                  fmt::format("{} is enabled but this task writes none of its registers (previous values are used)", name));
    }
    if (!e.faults.empty()) return;  // the entry checks named it
    const npu::rknpu::TaskStep s = npu::rknpu::plan_step(e, rf, soc, st);
    // The interpreter's faults are lint's errors: one rule set, one message (replay raises them).
    const bool conv = s.plan.conv || (e.enable_mask & npu::rknpu::enable::CNA);
    for (const npu::rknpu::Fault& f : s.faults) {
        const char* rule = f.field == "DATA_ENTRIES" ? "E-entries" : conv ? "E-conv" : "E-task";
        c.add(Sev::Error, rule, ti, -1, f.block + "." + f.reg, f.field, f.value, f.message);
    }
    for (const std::string& a : s.plan.assumptions) c.add(Sev::Note, "N-assumption", ti, -1, "", "", 0, a);
    if (s.faults.empty()) npu::rknpu::complete_task(s, rf, st);
    if (!s.plan.conv) return;
    const npu::rknpu::ConvConfig& cfg = *s.plan.conv;
    if (cfg.weight_bytes > static_cast<uint64_t>(cfg.weight_banks) * soc.npu.cbuf_bank_bytes.value)
        c.add(Sev::Note, "N-streamed", ti, -1, "CNA.CBUF_CON0", "WEIGHT_BANK", cfg.weight_banks,
              fmt::format("{} weight bytes exceed {} weight bank(s): streamed through them (Mesa's partial-weights tasks)",
                          cfg.weight_bytes, cfg.weight_banks));
    if (cfg.image) return;  // image mode: DATA_ENTRIES = width x height (Mesa), not a row count
    const uint64_t row = static_cast<uint64_t>(cfg.in_w) * cfg.in_c * cfg.elem();
    const uint64_t unit = CNA_CBUF_CON1::DATA_ENTRIES.unit;
    if (static_cast<uint64_t>(cfg.data_entries) * unit < row)
        c.add(Sev::Warning, "W-entries-row", ti, -1, "CNA.CBUF_CON1", "DATA_ENTRIES", cfg.data_entries,
              fmt::format("{} entries of {} bytes hold less than one {}-byte input row", cfg.data_entries, unit, row),
              fmt::format("set {}", (row + unit - 1) / unit));
}

/// Chain checks: every pointer reaches a task start of the buffer and fetches enough entries.
void lint_chains(Ctx& c, const std::vector<uint64_t>& w, const std::vector<TaskSpan>& spans,
                 const std::vector<Chain>& chains, uint64_t base, bool base_known, const SocProfile& soc) {
    const uint64_t scale = static_cast<uint64_t>(soc.npu.pc_data_amount_scale.value);
    for (const Chain& ch : chains) {
        for (size_t k = 0; k + 1 < ch.tasks.size(); ++k) {
            const size_t t = ch.tasks[k], next = ch.tasks[k + 1];
            const TaskTail tail = task_tail(w, spans[t]);
            const uint64_t fetched = (static_cast<uint64_t>(tail.next_amount.value_or(0) & 0xffffu) + 1) * scale;
            const uint64_t needed = spans[next].end - spans[next].begin;
            // Assumption A-PC-FETCH: the PC also fetches the 4-entry task end (Mesa's amounts).
            if (fetched + npu::rknpu::kTaskEndEntries < needed)
                c.add(Sev::Error, "E-amount", static_cast<int>(t), -1, "PC.REGISTER_AMOUNTS", "PC_DATA_AMOUNT",
                      tail.next_amount.value_or(0),
                      fmt::format("fetches {} entries (+{} task-end entries) but task {} needs {} to reach its op-enable "
                                  "entry",
                                  fetched, npu::rknpu::kTaskEndEntries, next, needed),
                      fmt::format("set {}", (needed + scale - 1) / scale - 1));
        }
        if (!ch.broken) continue;
        const size_t t = ch.tasks.back();
        const uint64_t lo = base, hi = base + 8 * w.size();
        if (base_known && (ch.broken_target < lo || ch.broken_target >= hi)) {
            c.add(Sev::Warning, "W-chain-outside", static_cast<int>(t), -1, "PC.BASE_ADDRESS", "PC_SOURCE_ADDR",
                  ch.broken_target,
                  fmt::format("next task at 0x{:x} lies outside this buffer [0x{:x}, 0x{:x})", ch.broken_target, lo, hi));
            continue;
        }
        // Inside the buffer but not at a task start (or a loop back): the PC would run entries
        // of the middle of a task.
        uint64_t want = 0;
        for (size_t i = t + 1; i < spans.size(); ++i) {
            want = base + 8 * spans[i].begin;
            break;
        }
        c.add(Sev::Error, "E-chain", static_cast<int>(t), -1, "PC.BASE_ADDRESS", "PC_SOURCE_ADDR", ch.broken_target,
              fmt::format("next task pointer 0x{:x} reaches no task start of the buffer", ch.broken_target),
              want ? fmt::format("set 0x{:x}", want) : std::string("end the chain with a zero word"));
    }
}

}  // namespace

std::vector<LintFinding> lint_regcmd(const std::vector<uint64_t>& words, const SocProfile& soc, const LintOptions& opt) {
    std::vector<LintFinding> out;
    Ctx c{out, {}};
    const Generation g = soc_generation(soc);
    const std::vector<TaskSpan> spans = split_tasks(words);
    if (spans.empty()) {
        c.add(Sev::Error, "E-empty", -1, -1, "", "", 0, "no regcmd entries (only NOPs)");
        return out;
    }
    const std::optional<uint64_t> inferred = infer_base(words, spans);
    const uint64_t base = opt.base_addr ? *opt.base_addr : inferred.value_or(0);
    const bool base_known = opt.base_addr.has_value() || inferred.has_value();
    std::vector<uint32_t> programmed(spans.size());
    for (size_t i = 0; i < spans.size(); ++i) programmed[i] = lint_entries(c, words, spans[i], static_cast<int>(i), g);
    // Each chain is kicked on its own (possibly another core): its register file starts empty.
    const std::vector<Chain> chains = find_chains(words, spans, base);
    for (const Chain& ch : chains) {
        npu::rknpu::RegFile rf;
        npu::rknpu::CoreState st;
        for (size_t t : ch.tasks) lint_task(c, words, spans[t], static_cast<int>(t), programmed[t], rf, st, soc);
    }
    lint_chains(c, words, spans, chains, base, base_known, soc);
    c.finish();
    return out;
}

}  // namespace sim
