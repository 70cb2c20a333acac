// SPDX-License-Identifier: MIT
// The PC interpreter: kick, entries, chain, per-task plan and status bits (npu/rknpu/pc.h).
#include "npu/rknpu/pc.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "hw/regcmd.h"

namespace npu::rknpu {

using namespace hw::rknpu;

namespace status {
uint32_t programming_fault() { return PC_INTERRUPT_RAW_STATUS::SIM_PROGRAMMING_FAULT.mask(); }
uint32_t dma_read_error() { return PC_INTERRUPT_RAW_STATUS::DMA_READ_ERROR.mask(); }
uint32_t dma_write_error() { return PC_INTERRUPT_RAW_STATUS::DMA_WRITE_ERROR.mask(); }
uint32_t error_bits() { return programming_fault() | dma_read_error() | dma_write_error(); }
}  // namespace status

std::string fault_text(const Fault& f) {
    return fmt::format("{}.{}.{} = {} (0x{:x}): {}", f.block, f.reg, f.field, f.value, f.value, f.message);
}

Kick read_kick(const RegFile& rf, const hw::SocProfile& soc) {
    const Generation g = soc_generation(soc);
    const uint32_t con = rf.read(PC_TASK_CON::kOffset);
    Kick k;
    k.addr = PC_BASE_ADDRESS::PC_SOURCE_ADDR.bytes(rf.read(PC_BASE_ADDRESS::kOffset));
    k.amount = PC_REGISTER_AMOUNTS::PC_DATA_AMOUNT.get(rf.read(PC_REGISTER_AMOUNTS::kOffset));
    k.tasks = field_of(g, "PC.TASK_CON", "TASK_NUMBER").get(con);
    k.count_clear = field_of(g, "PC.TASK_CON", "TASK_COUNT_CLEAR").get(con) != 0;
    k.pingpong = field_of(g, "PC.TASK_CON", "TASK_PP_EN").get(con) != 0;
    return k;
}

uint64_t fetch_entries(uint32_t amount, const hw::SocProfile& soc) {
    return (static_cast<uint64_t>(amount) + 1) * static_cast<uint64_t>(soc.npu.pc_data_amount_scale.value);
}

TaskEntries apply_entries(const uint64_t* words, uint64_t n, RegFile& rf, Generation g) {
    TaskEntries e;
    for (uint64_t i = 0; i < n; ++i) {
        const RegCmd c = RegCmd::decode(words[i]);
        e.used = i + 1;
        if (c.is_nop()) continue;
        if (c.target() == 0 && c.is_op_enable()) {
            e.has_op_en = true;
            e.enable_mask = c.value;
            return e;
        }
        if (c.target() == 0 && c.is_sync()) {
            e.has_sync = true;
            continue;
        }
        const hw::BlockInfo* blk = block_of_target(c.target());
        const hw::BlockInfo* owner = block_at(c.offset);
        const RegInfo* reg = find_reg(c.offset, g);
        std::string why;
        if (!c.is_write())
            why = fmt::format("entry {} (op 0x{:04x}) has no write flag", i, c.op);
        else if (!blk)
            why = fmt::format("entry {}: op 0x{:04x} names no block", i, c.op);
        else if (!reg)
            why = fmt::format("entry {}: no register at offset 0x{:04x} in {} on the {} register map", i, c.offset,
                              owner ? owner->name : "any block", generation_name(g));
        else if (blk != owner)
            why = fmt::format("entry {}: target {} but offset 0x{:04x} is a {} register", i, blk->name, c.offset,
                              owner ? owner->name : "?");
        if (!why.empty()) {
            e.faults.push_back({blk ? blk->name : "PC", reg ? reg->name : "regcmd", "target/offset", words[i], why});
            return e;
        }
        if (c.offset == PC_BASE_ADDRESS::kOffset)
            e.next_addr = c.value;
        else if (c.offset == PC_REGISTER_AMOUNTS::kOffset)
            e.next_amount = c.value;
        else
            rf.write(c.offset, c.value);
    }
    return e;
}

namespace {

struct GroupBlock {
    uint32_t enable;     ///< op-enable bit of the block
    uint16_t s_pointer;  ///< its S_POINTER register
    uint32_t bits0;      ///< its group-0 status bits (group 1: shifted left by one)
};

const GroupBlock* group_blocks() {
    static const GroupBlock b[] = {
        {enable::CNA, CNA_S_POINTER::kOffset,
         PC_INTERRUPT_RAW_STATUS::CNA_FEATURE_0.mask() | PC_INTERRUPT_RAW_STATUS::CNA_WEIGHT_0.mask() |
             PC_INTERRUPT_RAW_STATUS::CNA_CSC_0.mask()},
        {enable::CORE, CORE_S_POINTER::kOffset, PC_INTERRUPT_RAW_STATUS::CORE_0.mask()},
        {enable::DPU, DPU_S_POINTER::kOffset, PC_INTERRUPT_RAW_STATUS::DPU_0.mask()},
        {enable::PPU, PPU_S_POINTER::kOffset, PC_INTERRUPT_RAW_STATUS::PPU_0.mask()},
    };
    return b;
}
constexpr int kGroupBlocks = 4;

}  // namespace

TaskStep plan_step(const TaskEntries& e, const RegFile& rf, const hw::SocProfile& soc, const CoreState& st) {
    TaskStep s;
    const uint32_t fault = status::programming_fault();
    if (!e.faults.empty()) {
        s.faults = e.faults;
        s.fault_bits = fault;
        return s;
    }
    if (!e.has_sync) {
        s.faults.push_back({"PC", "OPERATION_ENABLE", "OP_EN", e.enable_mask,
                            "op-enable entry without the preceding 0x0041 entry the TRM requires"});
        s.fault_bits = fault;
        return s;
    }
    try {
        s.plan = plan_task(rf, e.enable_mask, soc);
    } catch (const std::exception& ex) {
        // An engine that cannot make sense of the registers must not end the simulation (SG-8.8).
        s.plan.faults.push_back({"PC", "OPERATION_ENABLE", "OP_EN", e.enable_mask,
                                 fmt::format("the task's programming cannot be executed: {}", ex.what())});
    }
    if (!s.plan.faults.empty()) {
        s.faults = s.plan.faults;
        s.fault_bits = fault;
        return s;
    }
    if (s.plan.conv) {
        // WEIGHT_REUSE skips the weight load: the CBUF must still hold exactly these weights from
        // the last conv task on this core that loaded them.
        const ConvConfig& c = *s.plan.conv;
        const auto& w = st.cbuf_weights;
        if (c.weight_reuse && !(w.valid && w.addr == c.weight_addr && w.bytes == c.weight_bytes)) {
            s.faults.push_back({"CNA", "CBUF_CON0", "WEIGHT_REUSE", 1,
                                w.valid ? fmt::format("WEIGHT_REUSE set but the CBUF holds {} weight bytes from 0x{:x}, "
                                                      "the task's are {} bytes at 0x{:x}",
                                                      w.bytes, w.addr, c.weight_bytes, c.weight_addr)
                                        : std::string("WEIGHT_REUSE set but no weights were loaded into the CBUF since "
                                                      "reset")});
            s.fault_bits = fault;
            return s;
        }
    }
    for (int i = 0; i < kGroupBlocks; ++i) {
        const GroupBlock& b = group_blocks()[i];
        if (!(s.plan.enable_mask & b.enable)) continue;
        s.done_bits |= (st.exec_group >> i) & 1u ? b.bits0 << 1 : b.bits0;
    }
    return s;
}

void complete_task(const TaskStep& s, const RegFile& rf, CoreState& st) {
    if (s.plan.conv) st.cbuf_weights = {true, s.plan.conv->weight_addr, s.plan.conv->weight_bytes};
    for (int i = 0; i < kGroupBlocks; ++i) {
        const GroupBlock& b = group_blocks()[i];
        if (!(s.plan.enable_mask & b.enable)) continue;
        if (CNA_S_POINTER::EXECUTER_PP_EN.get(rf.read(b.s_pointer))) st.exec_group ^= 1u << i;
    }
}

std::optional<Fault> ChainWalker::advance(const TaskEntries& e) {
    ++index_;
    if (done()) return std::nullopt;
    const uint32_t next = e.next_addr.value_or(0);
    if (PC_BASE_ADDRESS::PC_SOURCE_ADDR.get(next) == 0)
        return Fault{"PC", "BASE_ADDRESS", "PC_SOURCE_ADDR", next,
                     fmt::format("chain ends after {} of {} tasks (TASK_CON.TASK_NUMBER)", index_, k_.tasks)};
    addr_ = PC_BASE_ADDRESS::PC_SOURCE_ADDR.bytes(next);
    amount_ = PC_REGISTER_AMOUNTS::PC_DATA_AMOUNT.get(e.next_amount.value_or(0));
    return std::nullopt;
}

namespace {

/// Fetch and apply one task's entries, with the A-PC-FETCH grace fetch. false: fetch error.
bool fetch_task(DmaPort& mem, uint64_t addr, uint64_t entries, RegFile& rf, Generation g, TaskEntries& e) {
    std::vector<uint64_t> w(entries + kTaskEndEntries);
    auto load = [&](uint64_t first, uint64_t n) {
        std::vector<uint8_t> b(n * 8);
        if (!mem.read(addr + 8 * first, b.data(), b.size())) return false;
        for (uint64_t i = 0; i < n; ++i)
            for (int k = 7; k >= 0; --k) w[first + i] = (w[first + i] << 8) | b[i * 8 + static_cast<uint64_t>(k)];
        return true;
    };
    if (!load(0, entries)) return false;
    e = apply_entries(w.data(), entries, rf, g);
    if (!e.has_op_en && e.faults.empty()) {
        if (!load(entries, kTaskEndEntries)) return false;
        const TaskEntries more = apply_entries(w.data() + entries, kTaskEndEntries, rf, g);
        e.used += more.used;
        e.has_op_en = more.has_op_en;
        e.has_sync |= more.has_sync;
        e.enable_mask = more.enable_mask;
        if (more.next_addr) e.next_addr = more.next_addr;
        if (more.next_amount) e.next_amount = more.next_amount;
        e.faults = more.faults;
    }
    return true;
}

}  // namespace

KickResult run_kick(RegFile& rf, CoreState& st, const hw::SocProfile& soc, DmaPort& mem, bool execute) {
    KickResult r;
    const Generation g = soc_generation(soc);
    const Kick k = read_kick(rf, soc);
    auto fail = [&](KickTask& t, const std::vector<Fault>& f, uint32_t bits) {
        t.faults = f;
        for (const Fault& x : f) r.diagnostics.push_back(fmt::format("task {}: {}", t.index, fault_text(x)));
        r.raw_status |= bits;
        r.tasks.push_back(t);
        return r;
    };
    if (k.tasks == 0) {
        KickTask t;
        return fail(t, {{"PC", "TASK_CON", "TASK_NUMBER", 0, "kick with zero tasks"}}, status::programming_fault());
    }
    ChainWalker cw(k);
    while (!cw.done()) {
        KickTask t;
        t.index = cw.index();
        t.addr = cw.addr();
        const uint64_t n = fetch_entries(cw.amount(), soc);
        TaskEntries e;
        if (!fetch_task(mem, t.addr, n, rf, g, e))
            return fail(t,
                        {{"PC", "BASE_ADDRESS", "PC_SOURCE_ADDR", t.addr,
                          fmt::format("regcmd fetch of {} entries at 0x{:x} failed (address outside memory)", n, t.addr)}},
                        status::dma_read_error());
        t.entries = e.used;
        t.enable_mask = e.enable_mask;
        if (!e.has_op_en && e.faults.empty())
            e.faults.push_back({"PC", "REGISTER_AMOUNTS", "PC_DATA_AMOUNT", cw.amount(),
                                fmt::format("no op-enable entry in the {} fetched entries (+{} task-end entries): broken "
                                            "chaining or amount too small",
                                            n, kTaskEndEntries)});
        TaskStep s = plan_step(e, rf, soc, st);
        if (!s.faults.empty()) return fail(t, s.faults, s.fault_bits);
        t.kind = s.plan.kind;
        if (execute) {
            std::vector<std::vector<uint8_t>> reads(s.plan.reads.size());
            for (size_t i = 0; i < s.plan.reads.size(); ++i) {
                const DmaRegion& d = s.plan.reads[i];
                reads[i].resize(d.bytes);
                if (!mem.read(d.addr, reads[i].data(), d.bytes))
                    return fail(t,
                                {{d.block, d.what, "address", d.addr,
                                  fmt::format("{} load of {} bytes at 0x{:x} outside memory", d.what, d.bytes, d.addr)}},
                                status::dma_read_error());
            }
            std::vector<std::vector<uint8_t>> out;
            try {
                out = execute_task(s.plan, std::move(reads));
            } catch (const std::exception& ex) {
                return fail(t,
                            {{"PC", "OPERATION_ENABLE", "OP_EN", e.enable_mask,
                              fmt::format("the task's programming cannot be executed: {}", ex.what())}},
                            status::programming_fault());
            }
            for (size_t i = 0; i < out.size(); ++i) {
                const DmaRegion& d = s.plan.writes[i];
                if (!mem.write(d.addr, out[i].data(), out[i].size()))
                    return fail(t,
                                {{d.block, d.what, "address", d.addr,
                                  fmt::format("{} write of {} bytes at 0x{:x} outside memory", d.what, d.bytes, d.addr)}},
                                status::dma_write_error());
            }
        }
        complete_task(s, rf, st);
        r.raw_status |= s.done_bits;
        ++r.tasks_done;
        r.tasks.push_back(t);
        if (auto f = cw.advance(e)) {
            KickTask c;
            c.index = t.index;
            return fail(c, {*f}, status::programming_fault());
        }
    }
    return r;
}

}  // namespace npu::rknpu
