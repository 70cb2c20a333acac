// SPDX-License-Identifier: MIT
// Execution of one convolution task: DMA loads (issued together, as the CNA keeps several bursts
// in flight), the MAC array in parallel with the loads, then the DPU write-back. Functional bytes
// come from npu::rknpu::run_conv, cycles from conv_cost and the DDR model.
#include <algorithm>

#include <fmt/format.h>

#include "hw/regdb.h"
#include "npu/rknpu/conv_engine.h"
#include "npu/rknpu/conv_timing.h"
#include "npu/tlm/rknpu_core.h"
#include "npu/tlm/time.h"

namespace npu::tlm_models {

using namespace hw::rknpu;

namespace {
constexpr uint32_t kFault = PC_INTERRUPT_RAW_STATUS::SIM_PROGRAMMING_FAULT.mask();
constexpr uint32_t kReadError = PC_INTERRUPT_RAW_STATUS::DMA_READ_ERROR.mask();
constexpr uint32_t kWriteError = PC_INTERRUPT_RAW_STATUS::DMA_WRITE_ERROR.mask();
}  // namespace

void RknpuCore::exec_conv(TaskRecord& rec, uint32_t enable_mask, uint64_t t0_ps) {
    const rknpu::ConvConfig c = rknpu::decode_conv(rf_, enable_mask);
    rec.faults = rknpu::validate_conv(c, soc_);
    if (!rec.faults.empty()) {
        raise_fault(rec, kFault);
        return;
    }
    const rknpu::ConvCost cost = rknpu::conv_cost(c, soc_);
    rec.macs = cost.macs;
    rec.macs_padded = cost.macs_padded;

    // Loads: everything is requested at t0; the DDR channel serialises the data phases.
    rknpu::ConvOperands ops;
    sc_core::sc_time rd_done = sc_core::SC_ZERO_TIME;
    bool ok = true;
    auto load = [&](uint64_t addr, uint64_t bytes, std::vector<uint8_t>& dst, size_t dst_off, const char* what) {
        std::vector<uint8_t> tmp;
        sc_core::sc_time t = sc_core::SC_ZERO_TIME;
        if (!fetch(addr, bytes, tmp, t, what)) return false;
        std::copy(tmp.begin(), tmp.end(), dst.begin() + static_cast<std::ptrdiff_t>(dst_off));
        rd_done = std::max(rd_done, t);
        rec.bytes_read += bytes;
        return true;
    };
    ops.weights.resize(c.weight_bytes);
    ok = ok && load(c.weight_addr, c.weight_bytes, ops.weights, 0, "weights");
    ops.bias.resize(c.bias_bytes());
    if (ok && c.bias_bytes()) ok = load(c.bias_addr, c.bias_bytes(), ops.bias, 0, "bias");
    const uint32_t c1s = (c.in_c + 15) / 16;
    const uint64_t line = static_cast<uint64_t>(c.in_w) * 16;
    ops.feature.resize(c.input_bytes());
    const bool contiguous = c.line_stride_bytes == line && (c1s == 1 || c.surf_stride_bytes == line * c.in_h);
    if (ok && contiguous) {
        ok = load(c.feature_addr, c.input_bytes(), ops.feature, 0, "feature");
    } else {
        for (uint32_t c1 = 0; ok && c1 < c1s; ++c1)
            for (uint32_t h = 0; ok && h < c.in_h; ++h)
                ok = load(c.feature_addr + c1 * static_cast<uint64_t>(c.surf_stride_bytes) + h * c.line_stride_bytes, line,
                          ops.feature, (static_cast<size_t>(c1) * c.in_h + h) * line, "feature line");
    }
    if (!ok) {
        rec.faults.push_back({"CNA", "FEATURE_DATA_ADDR/DCOMP_ADDR0", "address", c.feature_addr,
                              "input, weight or bias load outside memory"});
        raise_fault(rec, kReadError);
        return;
    }
    const uint64_t compute_ps = cost.compute_cycles * clock_ps_;
    const sc_core::sc_time cna_end = std::max(rd_done, from_ps(compute_ps));

    std::vector<uint8_t> out;
    if (mode_ == SimMode::Full)
        out = rknpu::run_conv(c, ops);
    else
        out.assign(c.output_bytes(), 0);  // timing mode: no data computed
    const uint64_t surf = static_cast<uint64_t>(c.out_w) * c.out_h * 16;
    sc_core::sc_time wr_done = cna_end;
    for (uint64_t c1 = 0; ok && c1 * 16 < c.out_c; ++c1) {
        sc_core::sc_time t = cna_end;
        ok = store(c.dst_addr + c1 * c.dst_surf_stride_bytes, out.data() + c1 * surf, surf, t, "output");
        wr_done = std::max(wr_done, t);
        rec.bytes_written += surf;
    }
    if (!ok) {
        rec.faults.push_back({"DPU", "DST_BASE_ADDR", "DST_BASE_ADDR", c.dst_addr, "output write outside memory"});
        raise_fault(rec, kWriteError);
        return;
    }
    rec.dma_read_ps = to_ps(rd_done);
    rec.compute_ps = compute_ps;
    rec.write_ps = to_ps(wr_done - cna_end);
    rec.overhead_ps = static_cast<uint64_t>(soc_.npu.task_overhead_cycles.value) * clock_ps_;
    if (tw_) {
        const std::string task = fmt::format("task {}", rec.index);
        tw_->complete(tr_.cna, task + " load", t0_ps, to_ps(rd_done),
                      {trace::arg("bytes", static_cast<uint64_t>(ops.feature.size() + ops.weights.size()))});
        tw_->complete(tr_.core, task + " conv", t0_ps, compute_ps,
                      {trace::arg("macs", cost.macs_padded), trace::arg("cycles", cost.compute_cycles)});
        tw_->complete(tr_.dpu, task + " bias/relu/cvt + WDMA", t0_ps + to_ps(cna_end), to_ps(wr_done - cna_end),
                      {trace::arg("bytes", static_cast<uint64_t>(out.size()))});
    }
    sc_core::wait(wr_done + from_ps(rec.overhead_ps));
}

}  // namespace npu::tlm_models
