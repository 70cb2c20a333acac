// SPDX-License-Identifier: MIT
#include "rtl/engine.h"

#include <algorithm>
#include <systemc>

#include "npu/rknpu/conv_engine.h"
#include "npu/tlm/time.h"

namespace npu::rtl {

using rknpu::Cube;

std::vector<std::vector<uint8_t>> RtlEngine::execute(const rknpu::TaskPlan& plan,
                                                     std::vector<std::vector<uint8_t>>&& reads,
                                                     const tlm_models::TaskRecord& rec) {
    if (!plan.conv && !plan.dpu) return rknpu::execute_task(plan, std::move(reads));  // PPU-only: no RTL block
    cur_ = RtlTaskRecord{};
    cur_.core = core_;
    cur_.index = rec.index;
    cur_.start_ps = rec.start_ps;
    cur_.kind = plan.kind;
    cur_.model_core = plan.core_cycles;
    cur_.model_dpu = plan.dpu_cycles;
    time_ps_ = tlm_models::to_ps(sc_core::sc_time_stamp());
    std::vector<std::vector<uint8_t>> copy = reads;
    std::vector<std::vector<uint8_t>> out = rknpu::execute_task(plan, std::move(reads), this);
    const std::vector<std::vector<uint8_t>> ref = rknpu::execute_task(plan, std::move(copy));
    for (size_t i = 0; i < out.size() && i < ref.size(); ++i) {
        cur_.bytes += out[i].size();
        const size_t n = std::min(out[i].size(), ref[i].size());
        for (size_t k = 0; k < n; ++k) cur_.bytes_differ += out[i][k] != ref[i][k];
        cur_.bytes_differ += std::max(out[i].size(), ref[i].size()) - n;
    }
    if (out.size() != ref.size()) cur_.bytes_differ += 1;
    records_.push_back(cur_);
    return out;
}

void RtlEngine::note_fallback(const char* block, const std::string& why) {
    if (!cur_.fallback.empty()) cur_.fallback += "; ";
    cur_.fallback += std::string(block) + ": " + why;
}

bool RtlEngine::conv_dpu(const rknpu::ConvConfig& c, const rknpu::ConvOperands& ops, const rknpu::DpuOperands& dpu_ops,
                         Cube& out) {
    const rknpu::DpuConfig d = rknpu::conv_dpu_config(c);
    bool use_core = opts_.core, use_dpu = opts_.dpu;
    if (use_core) {
        const std::string why = core_unsupported(c);
        if (!why.empty()) note_fallback("core", why), use_core = false;
    }
    if (use_dpu) {
        const std::string why = dpu_unsupported(d);
        if (!why.empty()) note_fallback("dpu", why), use_dpu = false;
    }
    if (!use_core && !use_dpu) return false;
    if (!use_core) {  // C++ accumulators into the RTL DPU
        cur_.rtl = "dpu";
        run_dpu_rtl(d, rknpu::conv_accumulate(c, ops), dpu_ops, out);
        cur_.model_cycles = cur_.model_dpu;
        return true;
    }
    CoreSequencer seq(c, ops, dw_);
    DatapathJob j;
    j.core = &seq;
    j.core_outputs = seq.expected_outputs();
    if (!use_dpu) {  // the RTL CORE's accumulators into the C++ DPU
        cur_.rtl = "core";
        Cube acc = Cube::make(c.out_w, c.out_h, c.out_c, false);
        const size_t P = static_cast<size_t>(c.out_w) * c.out_h;
        j.on_core = [&](const CoreOut& o) {
            for (uint32_t l = 0; l < kLanes; ++l) {
                const uint32_t ch = o.cgrp * kLanes + l;
                if (ch < c.out_c) acc.i[ch * P + o.pix] = o.v[l];
            }
        };
        const DatapathStats st = dp_.run(j, time_ps_);
        cur_.rtl_cycles = st.cycles;
        cur_.rtl_core_last = st.core_last;
        cur_.model_cycles = cur_.model_core;
        out = rknpu::run_dpu(d, acc, dpu_ops);
        return true;
    }
    // CORE streaming into the DPU (flying mode).
    cur_.rtl = "core+dpu";
    const DpuPorts ports = dpu_ports(d);
    Cube ew;
    if (ports.ew_en && ports.ew_op_en && ports.ew_op_mem)
        ew = rknpu::unpack_cube(dpu_ops.ew, d.w, d.h, d.c, d.ew_prec(), d.atom);
    out = Cube::make(d.w, d.h, d.c, false);
    j.dpu = &ports;
    j.flying = true;
    j.dpu_groups = (d.c + kLanes - 1) / kLanes;
    j.operands = [&](uint32_t g) { return dpu_group_operands(d, dpu_ops, g); };
    j.ew = &ew;
    j.dpu_outputs = static_cast<uint64_t>(d.w) * d.h * j.dpu_groups;
    j.on_dpu = [&](const DpuOut& o) { store_dpu_out(o, out); };
    const DatapathStats st = dp_.run(j, time_ps_);
    cur_.rtl_cycles = st.cycles;
    cur_.rtl_core_last = st.core_last;
    cur_.model_cycles = std::max(cur_.model_core, cur_.model_dpu);
    return true;
}

bool RtlEngine::dpu(const rknpu::DpuConfig& d, const Cube& in, const rknpu::DpuOperands& ops, Cube& out) {
    if (!opts_.dpu) return false;
    const std::string why = dpu_unsupported(d);
    if (!why.empty()) {
        note_fallback("dpu", why);
        return false;
    }
    cur_.rtl = "dpu";
    run_dpu_rtl(d, in, ops, out);
    cur_.model_cycles = cur_.model_dpu;
    return true;
}

void RtlEngine::run_dpu_rtl(const rknpu::DpuConfig& d, const Cube& in, const rknpu::DpuOperands& ops, Cube& out) {
    const DpuPorts ports = dpu_ports(d);
    Cube ew;
    if (ports.ew_en && ports.ew_op_en && ports.ew_op_mem)
        ew = rknpu::unpack_cube(ops.ew, d.w, d.h, d.c, d.ew_prec(), d.atom);
    out = Cube::make(d.w, d.h, d.c, false);
    CubeBeats beats(in);
    DatapathJob j;
    j.dpu = &ports;
    j.dpu_in = &beats;
    j.dpu_groups = (d.c + kLanes - 1) / kLanes;
    j.operands = [&](uint32_t g) { return dpu_group_operands(d, ops, g); };
    j.ew = &ew;
    j.dpu_outputs = beats.count();
    j.on_dpu = [&](const DpuOut& o) { store_dpu_out(o, out); };
    const DatapathStats st = dp_.run(j, time_ps_);
    cur_.rtl_cycles = st.cycles;
}

}  // namespace npu::rtl
