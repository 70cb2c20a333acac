// SPDX-License-Identifier: MIT
// The PC (program controller): fetches each task's regcmd entries over the bus, applies them to
// the register file, and follows the task-ending chain entries (hardware-facts.md Part I §1.2-1.3).
#include <fmt/format.h>

#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "npu/tlm/rknpu_core.h"
#include "npu/tlm/time.h"

namespace npu::tlm_models {

using namespace hw::rknpu;

namespace {
constexpr uint32_t kFault = PC_INTERRUPT_RAW_STATUS::SIM_PROGRAMMING_FAULT.mask();
constexpr uint32_t kReadError = PC_INTERRUPT_RAW_STATUS::DMA_READ_ERROR.mask();

struct ParsedTask {
    bool has_op_en = false;
    bool has_sync = false;
    uint32_t enable_mask = 0;
    uint32_t next_addr = 0, next_amount = 0;
    size_t entries_used = 0;
};
}  // namespace

void RknpuCore::run_kick() {
    const int bits = soc_.npu.pc_task_number_bits.value;
    const uint32_t task_con = rf_.read(PC_TASK_CON::kOffset);
    const uint32_t ntasks = task_con & ((1u << bits) - 1u);
    if ((task_con >> (bits + 1)) & 1u) task_status_ = 0;  // TASK_COUNT_CLEAR
    uint64_t addr = PC_BASE_ADDRESS::PC_SOURCE_ADDR.get(rf_.read(PC_BASE_ADDRESS::kOffset)) << 4;
    uint32_t amount = PC_REGISTER_AMOUNTS::PC_DATA_AMOUNT.get(rf_.read(PC_REGISTER_AMOUNTS::kOffset));
    const uint64_t scale = static_cast<uint64_t>(soc_.npu.pc_data_amount_scale.value);
    if (ntasks == 0) {
        TaskRecord rec;
        rec.core = index_;
        rec.faults.push_back({"PC", "TASK_CON", "TASK_NUMBER", 0, "kick with zero tasks"});
        raise_fault(rec, kFault);
        return;
    }
    for (uint32_t t = 0; t < ntasks; ++t) {
        TaskRecord rec;
        rec.core = index_;
        rec.index = static_cast<int>(t);
        rec.start_ps = to_ps(sc_core::sc_time_stamp());
        const uint64_t entries = (static_cast<uint64_t>(amount) + 1) * scale;
        std::vector<std::vector<uint8_t>> fetched;
        sc_core::sc_time fetch_done;
        size_t bad = 0;
        if (!dma_move({{addr, entries * 8, "regcmd", "PC"}}, false, fetched, sc_core::sc_time_stamp(), fetch_done, bad)) {
            rec.faults.push_back({"PC", "BASE_ADDRESS", "PC_SOURCE_ADDR", addr,
                                  fmt::format("regcmd fetch of {} entries failed (address outside memory)", entries)});
            raise_fault(rec, kReadError);
            return;
        }
        const std::vector<uint8_t>& buf = fetched.front();
        ParsedTask pt;
        for (size_t i = 0; i < entries && !pt.has_op_en; ++i) {
            uint64_t w = 0;
            for (int b = 7; b >= 0; --b) w = (w << 8) | buf[i * 8 + static_cast<size_t>(b)];
            const RegCmd c = RegCmd::decode(w);
            pt.entries_used = i + 1;
            if (c.is_nop()) continue;
            if (c.target() == 0 && c.is_op_enable()) {
                pt.has_op_en = true;
                pt.enable_mask = c.value;
                break;
            }
            if (c.target() == 0 && c.is_sync()) {
                pt.has_sync = true;
                continue;
            }
            const hw::BlockInfo* blk = block_of_target(c.target());
            const hw::BlockInfo* owner = block_at(c.offset);
            const RegInfo* reg = find_reg(c.offset);
            std::string why;
            if (!c.is_write())
                why = fmt::format("entry {} (op 0x{:04x}) has no write flag", i, c.op);
            else if (!blk)
                why = fmt::format("entry {}: op 0x{:04x} names no block", i, c.op);
            else if (!reg)
                why = fmt::format("entry {}: no register at offset 0x{:04x} in {}", i, c.offset,
                                  owner ? owner->name : "any block");
            else if (blk != owner)
                why = fmt::format("entry {}: target {} but offset 0x{:04x} is a {} register", i, blk->name, c.offset,
                                  owner ? owner->name : "?");
            if (!why.empty()) {
                rec.faults.push_back({blk ? blk->name : "PC", reg ? reg->name : "regcmd", "target/offset", w, why});
                raise_fault(rec, kFault);
                return;
            }
            if (c.offset == PC_BASE_ADDRESS::kOffset)
                pt.next_addr = c.value;
            else if (c.offset == PC_REGISTER_AMOUNTS::kOffset)
                pt.next_amount = c.value;
            else
                rf_.write(c.offset, c.value);
        }
        rec.regcmd_entries = pt.entries_used;
        const uint64_t decode_ps = pt.entries_used * static_cast<uint64_t>(soc_.npu.pc_cycles_per_regcmd.value) * clock_ps_;
        rec.fetch_ps = to_ps(fetch_done) - rec.start_ps + decode_ps;
        rec.bytes_read += entries * 8;
        if (tw_)
            tw_->complete(tr_.pc, fmt::format("fetch task {}", t), rec.start_ps, rec.fetch_ps,
                          {trace::arg("entries", pt.entries_used), trace::arg("addr", fmt_hex(addr))});
        sc_core::wait(from_ps(rec.start_ps + rec.fetch_ps) - sc_core::sc_time_stamp());
        if (!pt.has_op_en) {
            rec.faults.push_back({"PC", "REGISTER_AMOUNTS", "PC_DATA_AMOUNT", amount,
                                  fmt::format("no op-enable entry in the {} fetched entries: broken chaining or amount "
                                              "too small",
                                              entries)});
            raise_fault(rec, kFault);
            return;
        }
        if (!pt.has_sync) {
            rec.faults.push_back({"PC", "OPERATION_ENABLE", "OP_EN", pt.enable_mask,
                                  "op-enable entry without the preceding 0x0041 entry the TRM requires"});
            raise_fault(rec, kFault);
            return;
        }
        exec_task(rec, pt.enable_mask, to_ps(sc_core::sc_time_stamp()));
        rec.end_ps = to_ps(sc_core::sc_time_stamp());
        const bool failed = !rec.faults.empty();
        records_.push_back(rec);
        if (failed) return;
        // Ping-pong register groups: even tasks complete in group 0, odd ones in group 1.
        raw_status_ |= (t % 2 == 0) ? PC_INTERRUPT_RAW_STATUS::DPU_0.mask() : PC_INTERRUPT_RAW_STATUS::DPU_1.mask();
        ++task_status_;
        if (t + 1 < ntasks) {
            if (pt.next_addr == 0) {
                TaskRecord chain;
                chain.core = index_;
                chain.index = static_cast<int>(t);
                chain.faults.push_back({"PC", "BASE_ADDRESS", "PC_SOURCE_ADDR", 0,
                                        fmt::format("chain ends after {} of {} tasks (TASK_CON.TASK_NUMBER)", t + 1, ntasks)});
                raise_fault(chain, kFault);
                return;
            }
            addr = pt.next_addr & ~0xfu;
            amount = PC_REGISTER_AMOUNTS::PC_DATA_AMOUNT.get(pt.next_amount);
        }
    }
}

}  // namespace npu::tlm_models
