// SPDX-License-Identifier: MIT
// Command dispatch to the tnpuv2 engines, descriptor slots, and the planned DMA runs.
#include <algorithm>

#include "engine_internal.h"

namespace npu::tnpuv2 {

namespace detail {

void add_reads(OpPlan& p, const TensorDesc& t) {
    for (const Run& r : tensor_runs(t)) p.reads.push_back(r);
}

void add_writes(OpPlan& p, const TensorDesc& t, const Command& c) {
    bool overlap = false;
    for (const Run& r : tensor_runs(t, &overlap)) p.writes.push_back(r);
    if (overlap && !p.fault)
        p.fault = make_fault(
            fault::BAD_DESCRIPTOR, 2,
            fmt::format("{}: OFM {} strides make elements share bytes (writes would overlap)", c.def->name, t.text()));
}

}  // namespace detail

using namespace detail;

Fault apply_tensor(const Command& c, State& s) {
    const TensorDesc t = decode_tensor(c);
    if (const std::string why = check_tensor(t); !why.empty())
        return make_fault(fault::BAD_DESCRIPTOR, static_cast<uint32_t>(tensor_slot(c)), "TENSOR: " + why);
    s.slot[static_cast<size_t>(tensor_slot(c))] = t;
    return {};
}

namespace {

Fault check_fields(const Command& c) {
    for (uint16_t i = 0; i < c.def->n_fields; ++i)
        if (const std::string why = hw::tnpuv2::check_field(c, c.def->fields[i]); !why.empty())
            return make_fault(fault::FIELD_RANGE, i, fmt::format("{}.{}: {}", c.def->name, c.def->fields[i].name, why));
    return {};
}

}  // namespace

OpPlan plan_command(const Command& c, const State& s, const hw::tnpuv2::Profile& p, MemView* indirect) {
    OpPlan pl;
    if ((pl.fault = check_fields(c))) {
        pl.fault.pc = c.pc;
        return pl;
    }
    namespace op = hw::tnpuv2::op;
    switch (c.opcode) {
        case op::CONV:
            pl = plan_conv(c, s, p);
            break;
        case op::ELTWISE:
            pl = plan_eltwise(c, s, p);
            break;
        case op::LUT:
            pl = plan_lut(c, s, p);
            break;
        case op::VECTOR:
            pl = plan_vector(c, s, p);
            break;
        case op::POOL:
            pl = plan_pool(c, s, p);
            break;
        case op::MOVE:
            pl = plan_move(c, s, p);
            break;
        case op::GENBOX:
            pl = plan_genbox(c, s, p, indirect);
            break;
        default:
            pl.fault =
                make_fault(fault::UNKNOWN_OPCODE, c.opcode, fmt::format("{} is not an engine command", c.def->name));
    }
    // DMA sees each byte once per direction.
    auto merge = [](std::vector<Run>& runs) {
        std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.addr < b.addr; });
        std::vector<Run> out;
        for (const Run& r : runs) {
            if (!out.empty() && r.addr <= out.back().addr + out.back().bytes)
                out.back().bytes = std::max(out.back().bytes, r.addr + r.bytes - out.back().addr);
            else
                out.push_back(r);
        }
        runs = std::move(out);
    };
    merge(pl.reads);
    merge(pl.writes);
    pl.fault.pc = c.pc;
    return pl;
}

Fault execute_command(const Command& c, const State& s, const hw::tnpuv2::Profile& p, MemView& m) {
    namespace op = hw::tnpuv2::op;
    Fault f;
    switch (c.opcode) {
        case op::CONV:
            f = exec_conv(c, s, p, m);
            break;
        case op::ELTWISE:
            f = exec_eltwise(c, s, m);
            break;
        case op::LUT:
            f = exec_lut(c, s, m);
            break;
        case op::VECTOR:
            f = exec_vector(c, s, m);
            break;
        case op::POOL:
            f = exec_pool(c, s, m);
            break;
        case op::MOVE:
            f = exec_move(c, s, m);
            break;
        case op::GENBOX:
            f = exec_genbox(c, s, m);
            break;
        default:
            f = make_fault(fault::UNKNOWN_OPCODE, c.opcode, "not an engine command");
    }
    f.pc = c.pc;
    return f;
}

}  // namespace npu::tnpuv2
