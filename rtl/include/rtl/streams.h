// SPDX-License-Identifier: MIT
// The beats that cross the RTL datapath's stream ports (rtl/rknpu/npu_rknpu_dp.sv), as plain C++
// values, and the geometry the RTL is built with. No SystemC, no Verilator: the sequencers that
// produce the beats (the CNA/CSC and DPU_RDMA roles) are tested on their own.
#pragma once
#include <array>
#include <cstdint>

namespace npu::rtl {

/// Parameters of the verilated datapath (rtl/CMakeLists.txt passes the same values to Verilator).
inline constexpr uint32_t kLanes = 16;       ///< int8 lanes per atom (C2 of the RK3588 class)
inline constexpr uint32_t kKernels = 32;     ///< MAC cells per pixel group (atomic-K)
inline constexpr uint32_t kPixels = 2;       ///< pixel groups (feature atoms per beat)
inline constexpr uint32_t kEntries = 32;     ///< accumulator entries: a stripe is <= kEntries * kPixels pixels
inline constexpr uint32_t kWeightAtoms = 8;  ///< weight atoms per weight beat (one 128-byte CBUF entry)
inline constexpr uint32_t kGroups = 512;     ///< DPU per-channel operand RAM: channel groups of kLanes
inline constexpr uint32_t kKernelAtoms = kKernels / kLanes;
/// Feature atom slots per beat: kPixels pixels in normal mode (one slot each); in depthwise mode
/// one pixel of up to kFeatureSlots channel groups (64 channels on the RK3588 class).
inline constexpr uint32_t kFeatureSlots = kPixels * kKernelAtoms;
inline constexpr uint32_t kDwRateOne = 65536;  ///< cfg_dw_rate of one depthwise beat per cycle

/// The depthwise schedule the silicon's figures imply (rtl/README.md): output channels padded to
/// `cout_align` (a multiple of kLanes; the profile's npu.depthwise_cout_align, Mesa's padding), a
/// beat carrying min(cout_align / kLanes, kFeatureSlots) channel groups of one pixel, and beats
/// admitted at `rate_q16` / kDwRateOne per cycle (the lane utilisation of the profile's fitted
/// npu.depthwise_mac_efficiency). The defaults: one channel group per beat, one beat per cycle.
struct DwSchedule {
    uint32_t cout_align = kLanes;
    uint32_t rate_q16 = kDwRateOne;
};

/// One weight beat: up to kWeightAtoms atoms (kLanes int8 weights of one kernel each, `count`
/// of them valid); `last` closes the weight set.
struct WeightBeat {
    std::array<int8_t, kWeightAtoms * kLanes> w{};
    uint32_t count = 0;
    bool last = false;
};

/// One feature beat: kFeatureSlots atoms and the accumulator control (npu_core_mac.sv).
struct FeatureBeat {
    std::array<int8_t, kFeatureSlots * kLanes> f{};
    uint32_t pmask = 0;  ///< pixel slots that hold output pixels
    bool first = false, last = false, wlast = false;
    uint32_t entry = 0, pix = 0, cgrp = 0;
};

/// One accumulator atom leaving the CORE (kLanes int32 channels of one output pixel).
struct CoreOut {
    std::array<int32_t, kLanes> v{};
    uint32_t pix = 0, cgrp = 0;
};

/// One DPU input atom (CORE accumulators or MRDMA elements, sign-extended) with its tags.
struct DpuBeat {
    std::array<int32_t, kLanes> v{};
    uint32_t pix = 0, cgrp = 0;
};

/// One DPU output atom: int8 (sign-extended) or int16 results.
struct DpuOut {
    std::array<int16_t, kLanes> v{};
    uint32_t pix = 0, cgrp = 0;
};

/// Per-channel DPU operands of one lane (what the DPU_RDMA delivers for BS and BN).
struct ChannelOperands {
    int32_t bs_alu = 0, bn_alu = 0;
    int16_t bs_mul = 1, bn_mul = 1;
};

}  // namespace npu::rtl
