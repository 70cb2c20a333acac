// SPDX-License-Identifier: MIT
// Execution of one task on the bus: the planned loads are issued together (the DMA engines keep
// several bursts in flight; the DDR channel serialises their data phases), the block pipeline
// runs in parallel with the loads, then the write-back. Bytes and cycles come from
// npu::rknpu::plan_task / execute_task.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "hw/regdb.h"
#include "npu/rknpu/buffer_pool.h"
#include "npu/rknpu/pc.h"
#include "npu/rknpu/task.h"
#include "npu/tlm/rknpu_core.h"
#include "npu/tlm/time.h"

namespace npu::tlm_models {

using namespace hw::rknpu;

namespace {
uint32_t kFault() { return rknpu::status::programming_fault(); }
uint32_t kReadError() { return rknpu::status::dma_read_error(); }
uint32_t kWriteError() { return rknpu::status::dma_write_error(); }
}  // namespace

void RknpuCore::exec_task(TaskRecord& rec, const rknpu::TaskEntries& entries, uint64_t t0_ps) {
    const uint32_t enable_mask = entries.enable_mask;
    const rknpu::TaskStep step = rknpu::plan_step(entries, rf_, soc_, state_);
    if (!step.faults.empty()) {
        rec.faults = step.faults;
        raise_fault(rec, step.fault_bits);
        return;
    }
    const rknpu::TaskPlan& plan = step.plan;
    rec.assumptions = plan.assumptions;
    rec.kind = plan.kind;
    rec.macs = plan.macs;
    rec.macs_padded = plan.macs_padded;
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    std::vector<std::vector<uint8_t>> in;
    // Weight images read before, and same-kind runs in one buffer (dma_move): for the C++ engines
    // only (the co-simulation takes one owned buffer per region).
    rknpu::SharedReads shared;
    sc_core::sc_time rd_done;
    size_t bad = 0;
    if (!dma_move(plan.reads, false, in, t0, rd_done, bad, mode_ == SimMode::Full && !executor_ ? &shared : nullptr)) {
        const rknpu::DmaRegion& r = plan.reads[bad];
        rec.faults.push_back({r.block, r.what, "address", r.addr,
                              fmt::format("{} load of {} bytes at 0x{:x} outside memory", r.what, r.bytes, r.addr)});
        raise_fault(rec, kReadError());
        return;
    }
    const auto in_nbuf = [&](uint64_t a) {
        return soc_.mem.nbuf_bytes.value && a >= soc_.mem.nbuf_base.value &&
               a < soc_.mem.nbuf_base.value + soc_.mem.nbuf_bytes.value;
    };
    for (const auto& r : plan.reads)
        if (!r.cbuf_resident) (in_nbuf(r.addr) ? rec.sram_bytes_read : rec.bytes_read) += r.bytes;
    const uint64_t pipe_ps = plan.pipeline_cycles() * clock_ps_;
    // The pipeline starts once the part of the loads it cannot overlap (the CBUF fill) has landed:
    // npu.load_compute_overlap = 1 hides every load under the pipeline, 0 serialises them.
    const double hidden = soc_.npu.load_compute_overlap.value;
    const auto fill_ps = static_cast<uint64_t>(std::llround((1.0 - hidden) * static_cast<double>(to_ps(rd_done - t0))));
    const sc_core::sc_time cna_end = std::max(rd_done, t0 + from_ps(fill_ps + pipe_ps));

    std::vector<std::vector<uint8_t>> out;
    if (mode_ == SimMode::Full) {
        try {
            // The loads are not used afterwards.
            out = executor_ ? executor_->execute(plan, std::move(in), rec) : rknpu::execute_task(plan, std::move(in), shared);
        } catch (const std::exception& e) {
            rec.faults.push_back({"PC", "OPERATION_ENABLE", "OP_EN", enable_mask,
                                  fmt::format("the task's programming cannot be executed: {}", e.what())});
            raise_fault(rec, kFault());
            return;
        }
    } else {
        out.resize(plan.writes.size());  // timing mode: no data computed or moved
    }
    // The DPU's write DMA streams the output while the pipeline runs (NVDLA SDP WDMA): the writes
    // are issued from the pipeline's start and share the DDR with the loads (a memory-bound task
    // waits for both; a compute-bound one hides them). The task ends when the last write has landed
    // and, at the earliest, one DMA burst (npu.dma_burst_bytes) after the pipeline ends.
    const sc_core::sc_time pipe_start = t0 + from_ps(fill_ps);
    if (pipe_start > sc_core::sc_time_stamp()) sc_core::wait(pipe_start - sc_core::sc_time_stamp());
    sc_core::sc_time wr_done;
    if (!dma_move(plan.writes, true, out, sc_core::sc_time_stamp(), wr_done, bad)) {
        const rknpu::DmaRegion& w = plan.writes[bad];
        rec.faults.push_back({w.block, w.what, "address", w.addr,
                              fmt::format("{} write of {} bytes at 0x{:x} outside memory", w.what, w.bytes, w.addr)});
        raise_fault(rec, kWriteError());
        return;
    }
    for (const auto& w : plan.writes) (in_nbuf(w.addr) ? rec.sram_bytes_written : rec.bytes_written) += w.bytes;
    rknpu::recycle_buffers(out);  // in memory now: the next task's engines reuse the buffers
    rec.dma_read_ps = to_ps(rd_done - t0);
    rec.compute_ps = pipe_ps;
    rec.compute_cycles = plan.pipeline_cycles();
    uint64_t wr_bytes = 0;
    for (const auto& w : plan.writes) wr_bytes += w.bytes;
    const double bw = soc_.mem.ddr_peak_bytes_per_s.value * soc_.mem.ddr_efficiency.value;
    const auto tail_ps = static_cast<uint64_t>(std::llround(
        static_cast<double>(std::min<uint64_t>(wr_bytes, static_cast<uint64_t>(soc_.npu.dma_burst_bytes.value))) *
        1e12 / bw));
    const sc_core::sc_time task_end = std::max(wr_done, cna_end + from_ps(tail_ps));
    rec.write_ps = to_ps(task_end - cna_end);
    rec.overhead_ps = static_cast<uint64_t>(soc_.npu.task_overhead_cycles.value) * clock_ps_;
    if (tw_) trace_task(rec, plan, t0_ps, to_ps(rd_done - t0), to_ps(task_end) - t0_ps);
    sc_core::wait(task_end + from_ps(rec.overhead_ps) - sc_core::sc_time_stamp());
    rknpu::complete_task(step, rf_, state_);
    raw_status_ |= step.done_bits;
}

void RknpuCore::trace_task(const TaskRecord& rec, const rknpu::TaskPlan& plan, uint64_t t0_ps, uint64_t load_ps,
                           uint64_t task_ps) {
    // Register-level details of the task (the fields the blocks decoded at op-enable).
    const std::string task = fmt::format("task {}", rec.index);
    std::vector<trace::Arg> regs{trace::arg("task", static_cast<uint64_t>(rec.index)),
                                 trace::arg("enable_mask", fmt_hex(plan.enable_mask)),
                                 trace::arg("regcmd_entries", rec.regcmd_entries)};
    uint64_t data_bytes = 0, weight_bytes = 0;
    if (plan.conv) {
        const rknpu::ConvConfig& c = *plan.conv;
        const uint64_t bank = soc_.npu.cbuf_bank_bytes.value;
        data_bytes = uint64_t{c.data_banks} * bank;
        weight_bytes = uint64_t{c.weight_banks} * bank;
        regs.push_back(trace::arg("CNA.CBUF_CON0.DATA_BANK", uint64_t{c.data_banks}));
        regs.push_back(trace::arg("CNA.CBUF_CON0.WEIGHT_BANK", uint64_t{c.weight_banks}));
        regs.push_back(trace::arg("CNA.CBUF_CON0.WEIGHT_REUSE", uint64_t{c.weight_reuse}));
        regs.push_back(trace::arg("input", fmt::format("{}x{}x{} @0x{:x}", c.in_c, c.in_h, c.in_w, c.feature_addr)));
        regs.push_back(trace::arg("kernel", fmt::format("{}x{}x{} /{} @0x{:x}", c.kernels, c.kernel_h, c.kernel_w,
                                                        c.stride_x, c.weight_addr)));
        regs.push_back(trace::arg("output", fmt::format("{}x{}x{} @0x{:x}", c.out_c, c.out_h, c.out_w, c.dst_addr)));
        regs.push_back(trace::arg("DPU.OUT_CVT", fmt::format("scale {} shift {} offset {}", c.out_cvt_scale,
                                                            c.out_cvt_shift, c.out_cvt_offset)));
    }
    auto with = [&](std::vector<trace::Arg> a) {
        a.insert(a.end(), regs.begin(), regs.end());
        return a;
    };
    if (plan.enable_mask & rknpu::enable::CNA)
        tw_->complete(tr_.cna, task + " load", t0_ps, load_ps, with({trace::arg("bytes", rec.bytes_read)}));
    if (plan.core_cycles)
        tw_->complete(tr_.core, task + " " + plan.kind, t0_ps, plan.core_cycles * clock_ps_,
                      with({trace::arg("macs", plan.macs_padded), trace::arg("cycles", plan.core_cycles)}));
    if (plan.enable_mask & rknpu::enable::DPU)
        tw_->complete(tr_.dpu, task + " post-process + WDMA", t0_ps, task_ps,
                      with({trace::arg("bytes", rec.bytes_written), trace::arg("cycles", plan.dpu_cycles)}));
    // CBUF occupancy: the banks the task's CBUF_CON0 claims, for the task's duration.
    if (plan.conv) {
        tw_->counter(name(), "CBUF occupancy (bytes)", t0_ps,
                     {{"data", static_cast<double>(data_bytes)}, {"weights", static_cast<double>(weight_bytes)}});
        tw_->counter(name(), "CBUF occupancy (bytes)", t0_ps + task_ps, {{"data", 0.0}, {"weights", 0.0}});
    }
}

}  // namespace npu::tlm_models
