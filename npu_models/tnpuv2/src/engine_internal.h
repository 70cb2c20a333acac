// SPDX-License-Identifier: MIT
// Helpers shared by the tnpuv2 engine files (not part of the public API).
#pragma once
#include <fmt/format.h>

#include <cstring>
#include <string>

#include "hw/tnpuv2_cmds.h"
#include "npu/tnpuv2/engine.h"
#include "numerics/requant.h"

namespace npu::tnpuv2::detail {

using hw::tnpuv2::field;
using hw::tnpuv2::field_addr;
using hw::tnpuv2::field_f32;
namespace fault = hw::tnpuv2::fault;
namespace E = hw::tnpuv2::enums;

inline Fault make_fault(uint32_t code, uint32_t info, const std::string& msg, uint64_t addr = 0) {
    Fault f;
    f.code = code;
    f.info = info;
    f.addr = addr;
    f.message = msg;
    return f;
}

/// FIELD_RANGE fault for a field (FAULT_INFO = its index in the command).
inline Fault field_fault(const Command& c, const hw::tnpuv2::Field& f, const std::string& why) {
    return make_fault(fault::FIELD_RANGE, f.index,
                      fmt::format("{}.{} = {}: {}", c.def->name, c.def->fields[f.index].name, field(c, f), why));
}

/// The slot must hold a descriptor (BAD_DESCRIPTOR naming the slot otherwise).
inline Fault need_slot(const Command& c, const State& s, int slot) {
    static const char* names[4] = {"IFM", "IFM2", "OFM", "AUX"};
    if (!s.slot[static_cast<size_t>(slot)].valid)
        return make_fault(
            fault::BAD_DESCRIPTOR, static_cast<uint32_t>(slot),
            fmt::format("{} reads the {} slot, which no TENSOR command has set", c.def->name, names[slot]));
    return {};
}

inline Fault desc_fault(const Command& c, int slot, const std::string& why) {
    static const char* names[4] = {"IFM", "IFM2", "OFM", "AUX"};
    return make_fault(fault::BAD_DESCRIPTOR, static_cast<uint32_t>(slot),
                      fmt::format("{}: {} {}", c.def->name, names[slot], why));
}

inline const TensorDesc& ifm(const State& s) { return s.slot[0]; }
inline const TensorDesc& ifm2(const State& s) { return s.slot[1]; }
inline const TensorDesc& ofm(const State& s) { return s.slot[2]; }
inline const TensorDesc& aux(const State& s) { return s.slot[3]; }

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }

/// Requantization of a wide sum, as every integer engine does it: (acc * mult) >> shift with round
/// half to even in a 128-bit product (numerics mul_shift), then + zero point, then the clamps.
inline int64_t requant(int64_t acc, int64_t mult, int shift, int32_t zp, int64_t lo, int64_t hi) {
    const int64_t v = num::mul_shift_wide(acc, mult, shift, num::Rounding::HalfToEven) + zp;
    return v < lo ? lo : (v > hi ? hi : v);
}

/// Reads a little-endian blob through the view.
inline bool read_blob(MemView& m, uint64_t addr, uint64_t bytes, std::vector<uint8_t>& out, uint64_t* bad) {
    out.resize(bytes);
    if (bytes && !m.read(addr, out.data(), bytes)) {
        *bad = addr;
        return false;
    }
    return true;
}

inline QRecord qrecord_at(const std::vector<uint8_t>& t, size_t i) {
    QRecord r;
    std::memcpy(&r.bias, t.data() + i * kQRecordBytes, 8);
    std::memcpy(&r.mult, t.data() + i * kQRecordBytes + 8, 4);
    std::memcpy(&r.shift, t.data() + i * kQRecordBytes + 12, 4);
    return r;
}

inline float f32_of_bits(int32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

inline Fault dma_read_fault(const Command& c, uint64_t addr) {
    return make_fault(fault::DMA_READ, 0, fmt::format("{}: read at {:#x} outside memory", c.def->name, addr), addr);
}
inline Fault dma_write_fault(const Command& c, uint64_t addr) {
    return make_fault(fault::DMA_WRITE, 0, fmt::format("{}: write at {:#x} outside memory", c.def->name, addr), addr);
}

/// Engine entry points (one file each).
OpPlan plan_conv(const Command& c, const State& s, const hw::tnpuv2::Profile& p);
Fault exec_conv(const Command& c, const State& s, const hw::tnpuv2::Profile& p, MemView& m);
OpPlan plan_eltwise(const Command& c, const State& s, const hw::tnpuv2::Profile& p);
Fault exec_eltwise(const Command& c, const State& s, MemView& m);
OpPlan plan_lut(const Command& c, const State& s, const hw::tnpuv2::Profile& p);
Fault exec_lut(const Command& c, const State& s, MemView& m);
OpPlan plan_vector(const Command& c, const State& s, const hw::tnpuv2::Profile& p);
Fault exec_vector(const Command& c, const State& s, MemView& m);
OpPlan plan_pool(const Command& c, const State& s, const hw::tnpuv2::Profile& p);
Fault exec_pool(const Command& c, const State& s, MemView& m);
OpPlan plan_move(const Command& c, const State& s, const hw::tnpuv2::Profile& p);
Fault exec_move(const Command& c, const State& s, MemView& m);
OpPlan plan_genbox(const Command& c, const State& s, const hw::tnpuv2::Profile& p, MemView* indirect);
Fault exec_genbox(const Command& c, const State& s, MemView& m);

/// Runs of the slots a command reads / writes, appended to the plan.
void add_reads(OpPlan& p, const TensorDesc& t);
void add_writes(OpPlan& p, const TensorDesc& t, const Command& c);

}  // namespace npu::tnpuv2::detail
