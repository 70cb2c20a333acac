// SPDX-License-Identifier: MIT
#include "app/replay.h"

#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "app/regcmd_file.h"
#include "hal_sim/sim_hal.h"
#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "platform/platform.h"

namespace sim {

using namespace hw::rknpu;

namespace {

RawResult run_one(SimHal& hal, Platform& plat, const hw::SocProfile& soc, const RawJob& job, uint64_t timeout_ns) {
    RawResult res;
    npu::tlm_models::RknpuCore& core = plat.core(job.core);
    const size_t diag0 = core.diagnostics().size(), task0 = core.tasks().size();
    uint64_t addr = 0;
    if (job.addr) {
        addr = *job.addr;
    } else {
        const drv::DmaBuffer bo = hal.bo_create(std::max<size_t>(8, job.words.size() * 8), 64);
        addr = bo.dma_addr;
    }
    for (const auto& [a, bytes] : job.preload) {
        const drv::DmaBuffer view{0, a, bytes.size()};
        hal.bo_write(view, 0, bytes.data(), bytes.size());
    }
    if (!job.words.empty()) {
        std::vector<uint8_t> bytes(job.words.size() * 8);
        for (size_t i = 0; i < job.words.size(); ++i)
            for (int b = 0; b < 8; ++b) bytes[i * 8 + static_cast<size_t>(b)] = static_cast<uint8_t>(job.words[i] >> (8 * b));
        try {
            hal.bo_write(drv::DmaBuffer{0, addr, bytes.size()}, 0, bytes.data(), bytes.size());
        } catch (const std::runtime_error&) {
            // The buffer address lies outside DDR: nothing to place; the PC's fetch will fault.
        }
    }
    const std::vector<TaskSpan> spans = split_tasks(job.words);
    const int scale = soc.npu.pc_data_amount_scale.value;
    const uint32_t amount = job.amount ? *job.amount
                                       : (spans.empty() ? 0u
                                                        : static_cast<uint32_t>((spans[0].end + static_cast<size_t>(scale) - 1) /
                                                                                    static_cast<size_t>(scale) -
                                                                                1));
    const uint32_t ntasks = job.task_number ? *job.task_number : static_cast<uint32_t>(spans.size());
    const int bits = soc.npu.pc_task_number_bits.value;
    // The vendor PC-mode kick (hardware-facts.md Part I §1.3), with the values given.
    hal.reg_write32(job.core, PC_BASE_ADDRESS::kOffset, static_cast<uint32_t>(addr));
    hal.reg_write32(job.core, PC_REGISTER_AMOUNTS::kOffset, amount);
    hal.reg_write32(job.core, PC_INTERRUPT_MASK::kOffset, job.int_mask);
    hal.reg_write32(job.core, PC_INTERRUPT_CLEAR::kOffset, 0x1ffff);
    hal.reg_write32(job.core, PC_TASK_CON::kOffset, (0x7u << bits) | (ntasks & ((1u << bits) - 1u)));
    const uint64_t t0 = hal.now_ns();
    hal.reg_write32(job.core, PC_OPERATION_ENABLE::kOffset, 1);
    hal.reg_write32(job.core, PC_OPERATION_ENABLE::kOffset, 0);
    res.irq = hal.wait_irq(job.core, timeout_ns) == drv::WaitResult::Irq;
    res.elapsed_ns = hal.now_ns() - t0;
    res.raw_status = hal.reg_read32(job.core, PC_INTERRUPT_RAW_STATUS::kOffset);
    res.int_status = hal.reg_read32(job.core, PC_INTERRUPT_STATUS::kOffset);
    res.task_status = hal.reg_read32(job.core, soc.npu.pc_task_status_offset.value);
    res.diagnostics.assign(core.diagnostics().begin() + static_cast<std::ptrdiff_t>(diag0), core.diagnostics().end());
    res.tasks.assign(core.tasks().begin() + static_cast<std::ptrdiff_t>(task0), core.tasks().end());
    for (const auto& [a, n] : job.readback) {
        res.readback.emplace_back(n);
        hal.bo_read(drv::DmaBuffer{0, a, n}, 0, res.readback.back().data(), n);
    }
    hal.reset(job.core);
    return res;
}

}  // namespace

std::vector<RawResult> run_raw_jobs(const hw::SocProfile& soc, const std::vector<RawJob>& jobs,
                                    npu::tlm_models::SimMode mode, trace::TraceWriter* tw, uint64_t timeout_ns,
                                    const npu::rtl::RtlOptions* rtl, std::vector<npu::rtl::RtlTaskRecord>* rtl_records) {
    for (const RawJob& j : jobs)
        if (j.core < 0 || j.core >= soc.npu.core_count.value)
            throw std::invalid_argument(fmt::format("core {} does not exist on {}", j.core, soc.name));
    Platform plat("soc", soc, mode, tw);
    std::unique_ptr<npu::rtl::RtlSession> rtl_session;
    if (rtl) rtl_session = std::make_unique<npu::rtl::RtlSession>(*rtl, soc, plat.cores());
    std::vector<RawResult> out;
    plat.set_host_program([&]() {
        SimHal hal(plat, soc.mem.ddr_base.value + (16u << 20), 256u << 20);
        for (const RawJob& j : jobs) out.push_back(run_one(hal, plat, soc, j, timeout_ns));
    });
    sc_core::sc_start();
    if (rtl_session) {
        rtl_session->finish();
        if (rtl_records) *rtl_records = rtl_session->records();
    }
    return out;
}

}  // namespace sim
