// SPDX-License-Identifier: MIT
// The tnpuv2 core's engines as plain C++ (SG-8.4): for each command, plan() decodes and validates
// it against the descriptor slots and the profile (faults as the hardware raises them), lists
// the memory it reads and writes and its cost in cycles; execute() computes the bytes through a
// MemView. The TLM wrapper (npu/tnpuv2/tlm) moves the planned bytes over the bus, the direct
// executor through a flat memory. Numerics: npu_models/numerics (requantization, rounding).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hw/tnpuv2/codec.h"
#include "hw/tnpuv2/profile.h"
#include "npu/tnpuv2/tensor.h"

namespace npu::tnpuv2 {

using hw::tnpuv2::Command;

/// A fault as the core reports it (FAULT_CODE, FAULT_INFO, FAULT_ADDR, CMD_PC) and its words.
struct Fault {
    uint32_t code = 0;  ///< hw::tnpuv2::fault
    uint32_t info = 0;
    uint64_t addr = 0;
    uint32_t pc = 0;
    std::string message;
    explicit operator bool() const { return code != 0; }
};

/// The four descriptor slots (IFM, IFM2, OFM, AUX) as the last TENSOR commands set them.
struct State {
    std::array<TensorDesc, 4> slot;
};

struct OpPlan {
    std::string engine;              ///< conv, vector, pool, move, genbox
    std::string kind;                ///< "conv 3x3/1 s8xs8->s8", "eltwise add", ... (reports, traces)
    std::vector<Run> reads, writes;  ///< merged byte runs (DMA)
    uint64_t compute_cycles = 0;     ///< engine busy time, without DMA and overhead
    uint64_t macs = 0, macs_padded = 0;
    uint64_t sram_bytes = 0;  ///< on-chip buffer the command needs
    /// CONV: the weights (WEIGHT_REUSE skips their load when the SRAM still holds them).
    uint64_t weight_addr = 0, weight_bytes = 0;
    bool weight_reuse = false;
    Fault fault;
};

/// Decode + validate + cost one engine command (CONV, ELTWISE, LUT, VECTOR, POOL, MOVE, GENBOX).
/// `indirect`: memory for parameter blocks an engine reads before its data (GENBOX's head list);
/// without it those reads are not planned (static lint).
OpPlan plan_command(const Command& c, const State& s, const hw::tnpuv2::Profile& p, MemView* indirect = nullptr);
/// Compute its outputs; a fault (DMA address outside memory, gather index out of range) stops it.
Fault execute_command(const Command& c, const State& s, const hw::tnpuv2::Profile& p, MemView& m);

/// Applies a TENSOR command to the slots; a fault for an invalid descriptor.
Fault apply_tensor(const Command& c, State& s);

/// Byte runs of a table or weight blob.
inline std::vector<Run> blob_runs(uint64_t addr, uint64_t bytes) {
    if (!bytes) return {};
    return {Run{addr, bytes}};
}

/// One requantization record (CONV QTABLE, ELTWISE AFFINE table): 16 bytes.
struct QRecord {
    int64_t bias = 0;
    int32_t mult = 0;  ///< multiplier, or the float scale's bits in FP32 output mode
    int32_t shift = 0;
};
using hw::tnpuv2::kGenboxHeadWords;
using hw::tnpuv2::kPoolRecordBytes;
using hw::tnpuv2::kQRecordBytes;

}  // namespace npu::tnpuv2
