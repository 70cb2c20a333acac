// SPDX-License-Identifier: MIT
#include "drv/rknpu/driver.h"

#include <fmt/format.h>

#include "hw/rknpu_regs.h"

namespace drv::rknpu {

using namespace hw::rknpu;

uint32_t fuzz_status(uint32_t status) {
    uint32_t out = 0;
    for (int pair = 0; pair < 7; ++pair) {
        const uint32_t m = 3u << (2 * pair);
        if (status & m) out |= m;
    }
    return out;
}

SubmitResult Driver::submit(int core, const std::vector<Task>& tasks, uint64_t timeout_ns) {
    SubmitResult r;
    if (kick(core, tasks, r)) wait(core, tasks, timeout_ns, r);
    return r;
}

bool Driver::kick(int core, const std::vector<Task>& tasks, SubmitResult& r) {
    if (tasks.empty()) {
        r.error = "submit: empty task list";
        return false;
    }
    const uint32_t max_tasks = (1u << cfg_.pc_task_number_bits) - 1;
    if (tasks.size() > max_tasks) {
        r.error = fmt::format("submit: {} tasks exceed the {} a kick can carry", tasks.size(), max_tasks);
        return false;
    }
    if (core < 0 || core >= hal_.core_count()) {
        r.error = fmt::format("submit: core {} does not exist ({} cores)", core, hal_.core_count());
        return false;
    }
    const Task& first = tasks.front();
    const Task& last = tasks.back();
    if (cfg_.core_count > 1) {
        // Vendor: S_POINTER of CNA and CORE = PP_EN|EXEC_PP_EN|PP_MODE plus the core index in bits 28+.
        const uint32_t ptr = 0xE + 0x10000000u * static_cast<uint32_t>(core);
        hal_.reg_write32(core, CNA_S_POINTER::kOffset, ptr);
        hal_.reg_write32(core, CORE_S_POINTER::kOffset, ptr);
    }
    const uint32_t amount_units =
        (first.regcfg_amount + 4 + static_cast<uint32_t>(cfg_.pc_data_amount_scale) - 1) /
        static_cast<uint32_t>(cfg_.pc_data_amount_scale);
    hal_.reg_write32(core, PC_BASE_ADDRESS::kOffset, static_cast<uint32_t>(first.regcmd_addr));
    hal_.reg_write32(core, PC_REGISTER_AMOUNTS::kOffset, amount_units - 1);
    hal_.reg_write32(core, PC_INTERRUPT_MASK::kOffset, last.int_mask);
    hal_.reg_write32(core, PC_INTERRUPT_CLEAR::kOffset, first.int_mask);
    const uint32_t pingpong = 1;
    hal_.reg_write32(core, PC_TASK_CON::kOffset,
                     ((0x6u | pingpong) << cfg_.pc_task_number_bits) | static_cast<uint32_t>(tasks.size()));
    hal_.reg_write32(core, PC_TASK_DMA_BASE_ADDR::kOffset, 0);
    kick_time_ns_.at(static_cast<size_t>(core)) = hal_.now_ns();
    hal_.reg_write32(core, PC_OPERATION_ENABLE::kOffset, 1);
    hal_.reg_write32(core, PC_OPERATION_ENABLE::kOffset, 0);
    return true;
}

void Driver::wait(int core, const std::vector<Task>& tasks, uint64_t timeout_ns, SubmitResult& r) {
    const Task& last = tasks.back();
    const WaitResult w = hal_.wait_irq(core, timeout_ns);
    r.hw_elapse_ns = hal_.now_ns() - kick_time_ns_.at(static_cast<size_t>(core));
    r.int_status = hal_.reg_read32(core, PC_INTERRUPT_STATUS::kOffset);
    r.raw_status = hal_.reg_read32(core, PC_INTERRUPT_RAW_STATUS::kOffset);
    const uint32_t task_mask = (1u << cfg_.pc_task_number_bits) - 1;
    r.task_status = hal_.reg_read32(core, cfg_.pc_task_status_offset) & task_mask;
    if (w == WaitResult::Timeout) {
        r.error = fmt::format("core {}: job timed out after {} ms ({} of {} tasks done); core reset", core,
                              timeout_ns / 1'000'000, r.task_status, tasks.size());
        hal_.reset(core);
        return;
    }
    hal_.reg_write32(core, PC_OPERATION_ENABLE::kOffset, 0);
    hal_.reg_write32(core, PC_INTERRUPT_CLEAR::kOffset, 0x1ffff);
    const uint32_t errors = r.raw_status & (PC_INTERRUPT_RAW_STATUS::DMA_READ_ERROR.mask() |
                                            PC_INTERRUPT_RAW_STATUS::DMA_WRITE_ERROR.mask());
    if (errors) {
        r.error = fmt::format("core {}: DMA {} error (raw status 0x{:x}) after {} of {} tasks; core reset", core,
                              (errors & PC_INTERRUPT_RAW_STATUS::DMA_READ_ERROR.mask()) ? "read" : "write",
                              r.raw_status, r.task_status, tasks.size());
        hal_.reset(core);
        return;
    }
    if (fuzz_status(r.int_status) != fuzz_status(last.int_mask)) {
        r.error = fmt::format("core {}: interrupt status 0x{:x} does not match the expected 0x{:x}", core,
                              r.int_status, last.int_mask);
        hal_.reset(core);
        return;
    }
    r.ok = true;
}

}  // namespace drv::rknpu
