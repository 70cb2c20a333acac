// SPDX-License-Identifier: MIT
// The PC (program controller) on the bus: the interpreter's steps (npu/rknpu/pc.h) with the
// fetch and decode time of each task's regcmd entries.
#include <fmt/format.h>

#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "npu/rknpu/pc.h"
#include "npu/tlm/rknpu_core.h"
#include "npu/tlm/time.h"

namespace npu::tlm_models {

using namespace hw::rknpu;

bool RknpuCore::fetch_regcmd(uint64_t addr, uint64_t entries, std::vector<uint64_t>& words, sc_core::sc_time& done) {
    std::vector<std::vector<uint8_t>> fetched;
    size_t bad = 0;
    if (!dma_move({{addr, entries * 8, "regcmd", "PC"}}, false, fetched, sc_core::sc_time_stamp(), done, bad))
        return false;
    const std::vector<uint8_t>& buf = fetched.front();
    words.resize(entries);
    for (uint64_t i = 0; i < entries; ++i) {
        uint64_t w = 0;
        for (int b = 7; b >= 0; --b) w = (w << 8) | buf[i * 8 + static_cast<size_t>(b)];
        words[i] = w;
    }
    return true;
}

void RknpuCore::run_kick() {
    const rknpu::Kick k = rknpu::read_kick(rf_, soc_);
    if (k.count_clear) task_status_ = 0;
    if (k.tasks == 0) {
        TaskRecord rec;
        rec.core = index_;
        rec.faults.push_back({"PC", "TASK_CON", "TASK_NUMBER", 0, "kick with zero tasks"});
        raise_fault(rec, rknpu::status::programming_fault());
        return;
    }
    const Generation gen = soc_generation(soc_);
    rknpu::ChainWalker cw(k);
    while (!cw.done()) {
        TaskRecord rec;
        rec.core = index_;
        rec.index = static_cast<int>(cw.index());
        rec.start_ps = to_ps(sc_core::sc_time_stamp());
        const uint64_t addr = cw.addr();
        uint64_t entries = rknpu::fetch_entries(cw.amount(), soc_);
        std::vector<uint64_t> words;
        sc_core::sc_time fetch_done;
        if (!fetch_regcmd(addr, entries, words, fetch_done)) {
            rec.faults.push_back({"PC", "BASE_ADDRESS", "PC_SOURCE_ADDR", addr,
                                  fmt::format("regcmd fetch of {} entries at 0x{:x} failed (address outside memory)",
                                              entries, addr)});
            raise_fault(rec, rknpu::status::dma_read_error());
            return;
        }
        rknpu::TaskEntries e = rknpu::apply_entries(words.data(), entries, rf_, gen);
        if (!e.has_op_en && e.faults.empty()) {
            // Assumption A-PC-FETCH: the task end follows the amount (Mesa's chained amounts).
            std::vector<uint64_t> more;
            sc_core::sc_time more_done;
            if (!fetch_regcmd(addr + 8 * entries, rknpu::kTaskEndEntries, more, more_done)) {
                rec.faults.push_back({"PC", "BASE_ADDRESS", "PC_SOURCE_ADDR", addr,
                                      fmt::format("regcmd fetch of the task end at 0x{:x} failed (address outside "
                                                  "memory)",
                                                  addr + 8 * entries)});
                raise_fault(rec, rknpu::status::dma_read_error());
                return;
            }
            const rknpu::TaskEntries tail = rknpu::apply_entries(more.data(), more.size(), rf_, gen);
            e.used += tail.used;
            e.has_op_en = tail.has_op_en;
            e.has_sync |= tail.has_sync;
            e.enable_mask = tail.enable_mask;
            if (tail.next_addr) e.next_addr = tail.next_addr;
            if (tail.next_amount) e.next_amount = tail.next_amount;
            e.faults = tail.faults;
            fetch_done = std::max(fetch_done, more_done);
            entries += rknpu::kTaskEndEntries;
        }
        rec.regcmd_entries = e.used;
        const uint64_t decode_ps = e.used * static_cast<uint64_t>(soc_.npu.pc_cycles_per_regcmd.value) * clock_ps_;
        rec.fetch_ps = to_ps(fetch_done) - rec.start_ps + decode_ps;
        rec.bytes_read += entries * 8;
        if (tw_)
            tw_->complete(tr_.pc, fmt::format("fetch task {}", rec.index), rec.start_ps, rec.fetch_ps,
                          {trace::arg("entries", e.used), trace::arg("addr", fmt_hex(addr))});
        sc_core::wait(from_ps(rec.start_ps + rec.fetch_ps) - sc_core::sc_time_stamp());
        if (!e.has_op_en && e.faults.empty())
            e.faults.push_back({"PC", "REGISTER_AMOUNTS", "PC_DATA_AMOUNT", cw.amount(),
                                fmt::format("no op-enable entry in the {} fetched entries (+{} task-end entries): broken "
                                            "chaining or amount too small",
                                            entries - rknpu::kTaskEndEntries, rknpu::kTaskEndEntries)});
        exec_task(rec, e, to_ps(sc_core::sc_time_stamp()));
        rec.end_ps = to_ps(sc_core::sc_time_stamp());
        const bool failed = !rec.faults.empty();
        records_.push_back(rec);
        if (failed) return;
        ++task_status_;
        if (auto f = cw.advance(e)) {
            TaskRecord chain;
            chain.core = index_;
            chain.index = rec.index;
            chain.faults.push_back(*f);
            raise_fault(chain, rknpu::status::programming_fault());
            return;
        }
    }
}

}  // namespace npu::tlm_models
