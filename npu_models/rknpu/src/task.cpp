// SPDX-License-Identifier: MIT
// Task planning and execution: dispatch on the enabled blocks to the block engines.
#include "npu/rknpu/task.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "npu/rknpu/conv_engine.h"
#include "npu/rknpu/conv_timing.h"

namespace npu::rknpu {

uint64_t TaskPlan::pipeline_cycles() const { return std::max({core_cycles, dpu_cycles, ppu_cycles}); }

namespace {

void plan_conv(const RegFile& rf, const hw::SocProfile& soc, TaskPlan& p) {
    ConvConfig c = decode_conv(rf, p.enable_mask);
    p.faults = validate_conv(c, soc);
    if (!p.faults.empty()) return;
    p.kind = c.bs_relu_bypass ? "conv" : "conv+relu";
    const ConvCost cost = conv_cost(c, soc);
    p.core_cycles = cost.compute_cycles;
    p.macs = cost.macs;
    p.macs_padded = cost.macs_padded;
    p.reads.push_back({c.weight_addr, c.weight_bytes, "weights", "CNA"});
    if (c.bias_bytes()) p.reads.push_back({c.bias_addr, c.bias_bytes(), "bias", "DPU_RDMA"});
    const uint32_t c1s = (c.in_c + 15) / 16;
    const uint64_t line = static_cast<uint64_t>(c.in_w) * 16;
    const bool contiguous = c.line_stride_bytes == line && (c1s == 1 || c.surf_stride_bytes == line * c.in_h);
    if (contiguous) {
        p.reads.push_back({c.feature_addr, c.input_bytes(), "feature", "CNA"});
    } else {
        for (uint32_t c1 = 0; c1 < c1s; ++c1)
            for (uint32_t h = 0; h < c.in_h; ++h)
                p.reads.push_back({c.feature_addr + c1 * static_cast<uint64_t>(c.surf_stride_bytes) +
                                       static_cast<uint64_t>(h) * c.line_stride_bytes,
                                   line, "feature line", "CNA"});
    }
    const uint64_t surf = static_cast<uint64_t>(c.out_w) * c.out_h * 16;
    for (uint64_t c1 = 0; c1 * 16 < c.out_c; ++c1)
        p.writes.push_back({c.dst_addr + c1 * c.dst_surf_stride_bytes, surf, "output", "DPU"});
    p.conv = c;
}

}  // namespace

TaskPlan plan_task(const RegFile& rf, uint32_t enable_mask, const hw::SocProfile& soc) {
    TaskPlan p;
    p.enable_mask = enable_mask;
    if (enable_mask & enable::CNA) {
        plan_conv(rf, soc, p);
        return p;
    }
    p.faults.push_back({"PC", "OPERATION_ENABLE", "OP_EN", enable_mask,
                        fmt::format("block combination 0x{:02x} is not modelled (tasks need CNA|CORE|DPU)", enable_mask)});
    return p;
}

std::vector<std::vector<uint8_t>> execute_task(const TaskPlan& plan, const std::vector<std::vector<uint8_t>>& reads) {
    if (!plan.faults.empty()) throw std::logic_error("execute_task: plan has faults");
    if (reads.size() != plan.reads.size()) throw std::logic_error("execute_task: read count mismatch");
    std::vector<std::vector<uint8_t>> out;
    if (plan.conv) {
        const ConvConfig& c = *plan.conv;
        ConvOperands ops;
        size_t i = 0;
        ops.weights = reads[i++];
        if (c.bias_bytes()) ops.bias = reads[i++];
        ops.feature.reserve(c.input_bytes());
        for (; i < reads.size(); ++i) ops.feature.insert(ops.feature.end(), reads[i].begin(), reads[i].end());
        const std::vector<uint8_t> img = run_conv(c, ops);
        const uint64_t surf = static_cast<uint64_t>(c.out_w) * c.out_h * 16;
        for (size_t w = 0; w < plan.writes.size(); ++w)
            out.emplace_back(img.begin() + static_cast<std::ptrdiff_t>(w * surf),
                             img.begin() + static_cast<std::ptrdiff_t>((w + 1) * surf));
    }
    return out;
}

}  // namespace npu::rknpu
