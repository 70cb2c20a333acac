// SPDX-License-Identifier: MIT
#include "app/replay.h"

#include <algorithm>
#include <map>
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

uint32_t fold_status(uint32_t status) {
    uint32_t out = 0;
    for (int pair = 0; pair < 6; ++pair)
        if (status & (3u << (2 * pair))) out |= 3u << (2 * pair);
    return out;
}

void kick_pc(SimHal& hal, const hw::SocProfile& soc, const RawKick& k) {
    const int bits = soc.npu.pc_task_number_bits.value;
    hal.reg_write32(k.core, PC_BASE_ADDRESS::kOffset, 1);  // slave mode while programming
    if (soc.npu.core_count.value > 1) {
        const uint32_t ptr = 0xE + 0x10000000u * static_cast<uint32_t>(k.core);
        hal.reg_write32(k.core, CNA_S_POINTER::kOffset, ptr);
        hal.reg_write32(k.core, CORE_S_POINTER::kOffset, ptr);
    }
    hal.reg_write32(k.core, PC_BASE_ADDRESS::kOffset, static_cast<uint32_t>(k.addr));
    hal.reg_write32(k.core, PC_REGISTER_AMOUNTS::kOffset, k.amount);
    hal.reg_write32(k.core, PC_INTERRUPT_MASK::kOffset, k.int_mask);
    hal.reg_write32(k.core, PC_INTERRUPT_CLEAR::kOffset, k.int_clear);
    hal.reg_write32(k.core, PC_TASK_CON::kOffset,
                    ((0x6u | (k.pingpong ? 1u : 0u)) << bits) | (k.task_number & ((1u << bits) - 1u)));
    hal.reg_write32(k.core, PC_TASK_DMA_BASE_ADDR::kOffset, 0);
    hal.reg_write32(k.core, PC_OPERATION_ENABLE::kOffset, 1);
    hal.reg_write32(k.core, PC_OPERATION_ENABLE::kOffset, 0);
}

namespace {

/// Places bytes at NPU addresses: through the IOMMU (demand-paged for replays) or physical.
bool npu_access(Platform& plat, uint64_t addr, void* data, size_t n, bool write, std::string& why) {
    return plat.iommu().host_access(addr, data, n, write, &why);
}

/// The derived single kick of a job without explicit kicks: its buffer's first chain.
RawKick derived_kick(const hw::SocProfile& soc, const RawJob& job, uint64_t addr) {
    RawKick k;
    k.core = job.core;
    k.addr = addr;
    k.int_mask = job.int_mask;
    const std::vector<TaskSpan> spans = split_tasks(job.words);
    const auto scale = static_cast<size_t>(soc.npu.pc_data_amount_scale.value);
    k.amount = job.amount ? *job.amount
                          : (spans.empty() ? 0u : static_cast<uint32_t>((spans[0].end + scale - 1) / scale - 1));
    if (job.task_number) {
        k.task_number = *job.task_number;
    } else {
        const std::vector<Chain> chains = find_chains(job.words, spans, addr);
        k.task_number = chains.empty() ? 0u : static_cast<uint32_t>(chains.front().tasks.size());
    }
    return k;
}

RawResult run_one(SimHal& hal, Platform& plat, const hw::SocProfile& soc, const RawJob& job, uint64_t timeout_ns) {
    RawResult res;
    std::string why;
    uint64_t addr = 0;
    if (job.addr) {
        addr = *job.addr;
    } else {
        const drv::DmaBuffer bo = hal.bo_create(std::max<size_t>(8, job.words.size() * 8), 64);
        addr = bo.dma_addr;
    }
    for (const auto& [a, bytes] : job.preload) {
        std::vector<uint8_t> b = bytes;
        if (!npu_access(plat, a, b.data(), b.size(), true, why))
            res.errors.push_back(fmt::format("load of {} bytes at 0x{:x}: {}", b.size(), a, why));
    }
    if (!job.words.empty()) {
        std::vector<uint8_t> bytes(job.words.size() * 8);
        for (size_t i = 0; i < job.words.size(); ++i)
            for (int b = 0; b < 8; ++b) bytes[i * 8 + static_cast<size_t>(b)] = static_cast<uint8_t>(job.words[i] >> (8 * b));
        // Outside the memory map the buffer is not placed: the PC's fetch then faults.
        (void)npu_access(plat, addr, bytes.data(), bytes.size(), true, why);
    }
    std::vector<RawKick> kicks = job.kicks;
    if (kicks.empty()) kicks.push_back(derived_kick(soc, job, addr));
    // Waves: at most one kick per core, run concurrently; a core's later kicks in later waves.
    std::vector<bool> done(kicks.size(), false);
    for (size_t left = kicks.size(); left > 0;) {
        std::vector<size_t> wave;
        std::vector<bool> busy(static_cast<size_t>(soc.npu.core_count.value), false);
        for (size_t i = 0; i < kicks.size(); ++i) {
            const auto c = static_cast<size_t>(kicks[i].core);
            if (done[i] || busy[c]) continue;
            busy[c] = true;
            wave.push_back(i);
        }
        std::vector<size_t> diag0, task0;
        std::vector<uint64_t> t0;
        for (size_t i : wave) {
            npu::tlm_models::RknpuCore& core = plat.core(kicks[i].core);
            diag0.push_back(core.diagnostics().size());
            task0.push_back(core.tasks().size());
            t0.push_back(hal.now_ns());
            kick_pc(hal, soc, kicks[i]);
        }
        for (size_t w = 0; w < wave.size(); ++w) {
            const RawKick& k = kicks[wave[w]];
            npu::tlm_models::RknpuCore& core = plat.core(k.core);
            RawKickResult r;
            r.kick = k;
            r.irq = hal.wait_irq(k.core, timeout_ns) == drv::WaitResult::Irq;
            r.elapsed_ns = hal.now_ns() - t0[w];
            r.raw_status = hal.reg_read32(k.core, PC_INTERRUPT_RAW_STATUS::kOffset);
            r.int_status = hal.reg_read32(k.core, PC_INTERRUPT_STATUS::kOffset);
            r.task_status = hal.reg_read32(k.core, soc.npu.pc_task_status_offset.value) &
                            ((1u << soc.npu.pc_task_number_bits.value) - 1u);
            r.status_ok = r.irq && (r.raw_status & 0x7000u) == 0 && fold_status(r.int_status) == fold_status(k.int_mask);
            r.diagnostics.assign(core.diagnostics().begin() + static_cast<std::ptrdiff_t>(diag0[w]), core.diagnostics().end());
            r.tasks.assign(core.tasks().begin() + static_cast<std::ptrdiff_t>(task0[w]), core.tasks().end());
            // The kernel's IRQ handler: OP_EN off, clear everything; a core that timed out is reset.
            hal.reg_write32(k.core, PC_OPERATION_ENABLE::kOffset, 0);
            hal.reg_write32(k.core, PC_INTERRUPT_CLEAR::kOffset, 0x1ffff);
            if (!r.irq) hal.reset(k.core);
            res.kicks.push_back(std::move(r));
            done[wave[w]] = true;
            --left;
        }
    }
    res.irq = true;
    for (const RawKickResult& r : res.kicks) {
        res.irq &= r.irq;
        res.raw_status |= r.raw_status;
        res.int_status |= r.int_status;
        res.task_status += r.task_status;
        res.elapsed_ns += r.elapsed_ns;
        res.diagnostics.insert(res.diagnostics.end(), r.diagnostics.begin(), r.diagnostics.end());
        res.tasks.insert(res.tasks.end(), r.tasks.begin(), r.tasks.end());
    }
    for (const auto& [a, n] : job.readback) {
        res.readback.emplace_back(n);
        if (!npu_access(plat, a, res.readback.back().data(), n, false, why))
            res.errors.push_back(fmt::format("read-back of {} bytes at 0x{:x}: {}", n, a, why));
    }
    for (int c = 0; c < soc.npu.core_count.value; ++c) hal.reset(c);
    return res;
}

}  // namespace

std::vector<RawResult> run_raw_jobs(const hw::SocProfile& soc, const std::vector<RawJob>& jobs,
                                    npu::tlm_models::SimMode mode, trace::TraceWriter* tw, uint64_t timeout_ns,
                                    const npu::rtl::RtlOptions* rtl, std::vector<npu::rtl::RtlTaskRecord>* rtl_records) {
    for (const RawJob& j : jobs) {
        if (j.core < 0 || j.core >= soc.npu.core_count.value)
            throw std::invalid_argument(fmt::format("core {} does not exist on {}", j.core, soc.name));
        for (const RawKick& k : j.kicks)
            if (k.core < 0 || k.core >= soc.npu.core_count.value)
                throw std::invalid_argument(fmt::format("core {} does not exist on {}", k.core, soc.name));
    }
    Platform plat("soc", soc, mode, tw);
    // A capture's buffers were mapped by the process that ran it: every page of the IOMMU domain is
    // backed on first touch, from the upper half of DDR (the HAL's pool is in the lower part).
    const uint64_t half = soc.mem.ddr_size_bytes.value / 2;
    plat.iommu().enable_demand_paging(soc.mem.ddr_base.value + half, half);
    std::unique_ptr<npu::rtl::RtlSession> rtl_session;
    if (rtl) rtl_session = std::make_unique<npu::rtl::RtlSession>(*rtl, soc, plat.cores());
    std::vector<RawResult> out;
    plat.set_host_program([&]() {
        SimHal hal(plat, soc.mem.ddr_base.value + (16u << 20), std::min<uint64_t>(256u << 20, half / 2));
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
