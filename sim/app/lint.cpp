// SPDX-License-Identifier: MIT
#include "app/lint.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "app/regcmd_file.h"
#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "npu/rknpu/conv_config.h"
#include "npu/rknpu/task.h"

namespace sim {

using namespace hw;
using namespace hw::rknpu;
using Sev = LintFinding::Severity;

std::string LintFinding::text() const {
    std::string where = fmt::format("task {}", task);
    if (entry >= 0) where += fmt::format(" [entry {}]", entry);
    std::string what = reg.empty() ? "" : (field.empty() ? reg : reg + "." + field) + fmt::format(" = 0x{:x}: ", value);
    return fmt::format("{}: {} {}: {}{}{}", severity == Sev::Error ? "error" : "warning", code, where, what, message,
                       hint.empty() ? "" : " (hint: " + hint + ")");
}

namespace {

struct Ctx {
    std::vector<LintFinding>& out;
    void add(Sev s, const char* code, int task, long entry, std::string reg, std::string field, uint64_t value,
             std::string msg, std::string hint = {}) {
        out.push_back(LintFinding{s, code, task, entry, std::move(reg), std::move(field), value, std::move(msg),
                                  std::move(hint)});
    }
};

/// Blocks whose registers a task wrote (by enable bit), for enabled-vs-programmed checks.
uint32_t enable_bit(Block b) {
    switch (b) {
        case Block::CNA: return npu::rknpu::enable::CNA;
        case Block::CORE: return npu::rknpu::enable::CORE;
        case Block::DPU: return npu::rknpu::enable::DPU;
        case Block::DPU_RDMA: return npu::rknpu::enable::DPU_RDMA;
        default: return 0;
    }
}

struct TaskState {
    uint32_t next_addr = 0, next_amount = 0;
    bool has_next_addr = false, has_next_amount = false, has_sync = false;
    uint32_t enable_mask = 0;
    uint32_t programmed = 0;
};

TaskState lint_entries(Ctx& c, const std::vector<uint64_t>& w, const TaskSpan& t, int ti, npu::rknpu::RegFile& rf) {
    TaskState st;
    std::map<uint16_t, std::pair<uint32_t, long>> written;
    for (size_t i = t.begin; i < t.end; ++i) {
        const RegCmd cmd = RegCmd::decode(w[i]);
        const long e = static_cast<long>(i);
        if (cmd.is_nop()) continue;
        if (cmd.target() == 0 && cmd.is_op_enable()) {
            st.enable_mask = cmd.value;
            if (!st.has_sync)
                c.add(Sev::Error, "E-sync", ti, e, "PC.OPERATION_ENABLE", "", cmd.value,
                      "op-enable entry without the preceding 0x0041 entry", "emit 0x0041000000000000 just before it");
            continue;
        }
        if (cmd.target() == 0 && cmd.is_sync()) {
            st.has_sync = true;
            continue;
        }
        const RegInfo* r = find_reg(cmd.offset);
        const BlockInfo* tb = block_of_target(cmd.target());
        if (!r) {
            c.add(Sev::Error, "E-noreg", ti, e, "", "", cmd.offset,
                  fmt::format("no register at offset 0x{:04x} (target 0x{:04x})", cmd.offset, cmd.op),
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
        auto prev = written.find(cmd.offset);
        if (prev != written.end() && prev->second.first != cmd.value)
            c.add(Sev::Warning, "W-rewrite", ti, e, rn, "", cmd.value,
                  fmt::format("written twice in one task (entry {} wrote 0x{:x}); the last value wins",
                              prev->second.second, prev->second.first));
        written[cmd.offset] = {cmd.value, e};
        if (cmd.offset == PC_BASE_ADDRESS::kOffset) {
            st.next_addr = cmd.value;
            st.has_next_addr = true;
        } else if (cmd.offset == PC_REGISTER_AMOUNTS::kOffset) {
            st.next_amount = cmd.value;
            st.has_next_amount = true;
        } else {
            rf.write(cmd.offset, cmd.value);
            st.programmed |= enable_bit(r->block);
        }
    }
    return st;
}

void lint_task(Ctx& c, const TaskSpan& t, const TaskState& st, int ti, const npu::rknpu::RegFile& rf,
               const SocProfile& soc) {
    if (!t.has_op_enable) {
        c.add(Sev::Error, "E-noopen", ti, -1, "", "", 0,
              fmt::format("entries {}..{} end without the 0x0081 op-enable entry (truncated task)", t.begin, t.end - 1),
              "end every task with PC_BASE_ADDRESS, PC_REGISTER_AMOUNTS, 0x0041.., 0x0081..");
        return;
    }
    if (!st.has_next_addr || !st.has_next_amount)
        c.add(Sev::Warning, "W-tail", ti, -1, "PC.BASE_ADDRESS", "", 0,
              "task does not end with the PC_BASE_ADDRESS / PC_REGISTER_AMOUNTS chain entries",
              "emit both (0 for the last task) before the 0x0041 entry");
    static const std::pair<uint32_t, const char*> blocks[] = {{npu::rknpu::enable::CNA, "CNA"},
                                                             {npu::rknpu::enable::CORE, "CORE"},
                                                             {npu::rknpu::enable::DPU, "DPU"},
                                                             {npu::rknpu::enable::DPU_RDMA, "DPU_RDMA"}};
    for (const auto& [bit, name] : blocks) {
        if ((st.programmed & bit) && !(st.enable_mask & bit))
            c.add(Sev::Warning, "W-notenabled", ti, -1, "PC.OPERATION_ENABLE", "", st.enable_mask,
                  fmt::format("{} registers are programmed but {} is not enabled", name, name),
                  fmt::format("set bit 0x{:x} in the op-enable value", bit));
        if (!(st.programmed & bit) && (st.enable_mask & bit))
            c.add(Sev::Warning, "W-unprogrammed", ti, -1, "PC.OPERATION_ENABLE", "", st.enable_mask,
                  fmt::format("{} is enabled but this task writes none of its registers (previous values are used)", name));
    }
    if (!(st.enable_mask & npu::rknpu::enable::CNA)) return;
    const npu::rknpu::ConvConfig cfg = npu::rknpu::decode_conv(rf, st.enable_mask, npu::rknpu::atom_bytes(soc));
    // Fix hints per register the conv checks name (the message already carries the limit).
    static const std::map<std::string, std::string> hints = {
        {"CBUF_CON0", "allocate at most the profile's CBUF banks; tile the input along H or split the kernels"},
        {"CONV_CON1", "program PROC_PRECISION for the task's data type"},
        {"CONV_CON3", "strides are 1..7"},
        {"DATA_SIZE0", "program the input width and height"},
        {"DATA_SIZE1", "pad the input channels to the C2 atomic"},
        {"WEIGHT_SIZE0", "WEIGHT_BYTES = WEIGHT_BYTES_PER_KERNEL x WEIGHT_KERNELS"},
        {"WEIGHT_SIZE1", "WEIGHT_BYTES_PER_KERNEL = kernel_w x kernel_h x channels"},
        {"WEIGHT_SIZE2", "kernel width and height are 1..31"},
        {"DATAOUT_SIZE_0", "output size = (input + padding - dilated kernel) / stride + 1, minus one in the register"},
        {"DATAOUT_SIZE_1", "DATAOUT_CHANNEL = kernels - 1"},
        {"DMA_CON1", "line stride >= width x C2 bytes"},
        {"DMA_CON2", "surface stride >= line stride x height"},
        {"DST_SURF_STRIDE", "output surface stride >= width x height x C2 bytes"},
        {"OPERATION_ENABLE", "a conv task enables CNA, CORE and DPU (0x0d, 0x1d with DPU_RDMA)"},
        {"MISC_CFG", "lower depthwise convolutions as grouped tasks until DW_EN is modelled"},
    };
    for (const npu::rknpu::Fault& f : npu::rknpu::validate_conv(cfg, soc)) {
        auto h = hints.find(f.reg);
        c.add(Sev::Error, "E-conv", ti, -1, f.block + "." + f.reg, f.field, f.value, f.message,
              h == hints.end() ? "" : h->second);
    }
    const uint32_t entries_per_bank = soc.npu.cbuf_bank_bytes.value / soc.npu.cbuf_entry_bytes.value;
    if (static_cast<uint64_t>(cfg.data_entries) * cfg.in_h > static_cast<uint64_t>(cfg.data_banks) * entries_per_bank)
        c.add(Sev::Error, "E-entries", ti, -1, "CNA.CBUF_CON1", "DATA_ENTRIES", cfg.data_entries,
              fmt::format("DatainEntries overflow: {} entries x {} rows need more than the {} data banks hold ({} entries)",
                          cfg.data_entries, cfg.in_h, cfg.data_banks, cfg.data_banks * entries_per_bank),
              "tile the input along H or give it more data banks");
    if (cfg.weight_bytes > static_cast<uint64_t>(cfg.weight_banks) * soc.npu.cbuf_bank_bytes.value)
        c.add(Sev::Error, "E-wbanks", ti, -1, "CNA.CBUF_CON0", "WEIGHT_BANK", cfg.weight_banks,
              fmt::format("{} weight bytes do not fit {} banks of {} bytes", cfg.weight_bytes, cfg.weight_banks,
                          soc.npu.cbuf_bank_bytes.value),
              "split the output channels over several tasks");
}

void lint_chain(Ctx& c, const std::vector<TaskSpan>& spans, const std::vector<TaskState>& st, const SocProfile& soc,
                const LintOptions& opt) {
    std::optional<uint64_t> base = opt.base_addr;
    if (!base && spans.size() > 1 && st[0].next_addr >= 8 * spans[1].begin) base = st[0].next_addr - 8 * spans[1].begin;
    const uint64_t scale = static_cast<uint64_t>(soc.npu.pc_data_amount_scale.value);
    for (size_t i = 0; i + 1 < spans.size(); ++i) {
        const int ti = static_cast<int>(i);
        if (st[i].next_addr == 0) {
            c.add(Sev::Error, "E-chain", ti, -1, "PC.BASE_ADDRESS", "PC_SOURCE_ADDR", 0,
                  fmt::format("chain ends here but the buffer holds {} tasks", spans.size()),
                  "point PC_BASE_ADDRESS at the next task's regcmd");
            continue;
        }
        if (!base) continue;
        const uint64_t first = *base + 8 * spans[i].end, want = *base + 8 * spans[i + 1].begin;
        if (st[i].next_addr < first || st[i].next_addr > want) {
            c.add(Sev::Error, "E-chain", ti, -1, "PC.BASE_ADDRESS", "PC_SOURCE_ADDR", st[i].next_addr,
                  fmt::format("next task pointer does not reach task {} (at 0x{:x})", i + 1, want),
                  fmt::format("set 0x{:x}", want));
            continue;
        }
        const uint64_t fetched = (static_cast<uint64_t>(st[i].next_amount & 0xffff) + 1) * scale;
        const uint64_t needed = spans[i + 1].end - (st[i].next_addr - *base) / 8;
        if (fetched < needed)
            c.add(Sev::Error, "E-amount", ti, -1, "PC.REGISTER_AMOUNTS", "PC_DATA_AMOUNT", st[i].next_amount,
                  fmt::format("fetches {} entries but task {} needs {} to reach its op-enable entry", fetched, i + 1, needed),
                  fmt::format("set {}", (needed + scale - 1) / scale - 1));
    }
    if (!spans.empty() && st.back().next_addr != 0)
        c.add(Sev::Warning, "W-lastchain", static_cast<int>(spans.size() - 1), -1, "PC.BASE_ADDRESS", "",
              st.back().next_addr, "the last task chains onward; the PC stops only because TASK_NUMBER is reached",
              "write 0 for the last task");
}

}  // namespace

std::vector<LintFinding> lint_regcmd(const std::vector<uint64_t>& words, const SocProfile& soc, const LintOptions& opt) {
    std::vector<LintFinding> out;
    Ctx c{out};
    const std::vector<TaskSpan> spans = split_tasks(words);
    if (spans.empty()) {
        c.add(Sev::Error, "E-empty", -1, -1, "", "", 0, "no regcmd entries (only NOPs)");
        return out;
    }
    npu::rknpu::RegFile rf;  // register state persists across tasks, as on the hardware
    std::vector<TaskState> states;
    for (size_t i = 0; i < spans.size(); ++i) {
        states.push_back(lint_entries(c, words, spans[i], static_cast<int>(i), rf));
        lint_task(c, spans[i], states.back(), static_cast<int>(i), rf, soc);
    }
    lint_chain(c, spans, states, soc, opt);
    return out;
}

}  // namespace sim
