// SPDX-License-Identifier: MIT
// CSR numbers, mstatus fields and trap causes (RISC-V Privileged Architecture 20211203, tables 2.2-2.5, 3.6).
#pragma once
#include <cstdint>

namespace iss::csr {

constexpr uint32_t kFflags = 0x001, kFrm = 0x002, kFcsr = 0x003;
constexpr uint32_t kCycle = 0xc00, kTime = 0xc01, kInstret = 0xc02, kHpmcounter3 = 0xc03, kHpmcounter31 = 0xc1f;
constexpr uint32_t kCycleh = 0xc80, kTimeh = 0xc81, kInstreth = 0xc82, kHpmcounter3h = 0xc83, kHpmcounter31h = 0xc9f;
constexpr uint32_t kMvendorid = 0xf11, kMarchid = 0xf12, kMimpid = 0xf13, kMhartid = 0xf14, kMconfigptr = 0xf15;
constexpr uint32_t kMstatus = 0x300, kMisa = 0x301, kMie = 0x304, kMtvec = 0x305, kMcounteren = 0x306;
constexpr uint32_t kMenvcfg = 0x30a, kMstatush = 0x310, kMenvcfgh = 0x31a, kMcountinhibit = 0x320;
constexpr uint32_t kMhpmevent3 = 0x323, kMhpmevent31 = 0x33f;
constexpr uint32_t kMscratch = 0x340, kMepc = 0x341, kMcause = 0x342, kMtval = 0x343, kMip = 0x344;
constexpr uint32_t kPmpcfg0 = 0x3a0, kPmpcfg3 = 0x3a3, kPmpaddr0 = 0x3b0, kPmpaddr15 = 0x3bf;
constexpr uint32_t kMcycle = 0xb00, kMinstret = 0xb02, kMhpmcounter3 = 0xb03, kMhpmcounter31 = 0xb1f;
constexpr uint32_t kMcycleh = 0xb80, kMinstreth = 0xb82, kMhpmcounter3h = 0xb83, kMhpmcounter31h = 0xb9f;
// Sdtrig trigger CSRs (RISC-V Debug Specification 0.13.2 section 5.2; Sdtrig 1.0)
constexpr uint32_t kTselect = 0x7a0, kTdata1 = 0x7a1, kTdata2 = 0x7a2, kTdata3 = 0x7a3, kTinfo = 0x7a4;
// tdata1 as mcontrol (type 2) on RV32: type[31:28] dmode[27] maskmax[26:21] hit[20] select[19] timing[18]
// sizelo[17:16] action[15:12] chain[11] match[10:7] m[6] s[4] u[3] execute[2] store[1] load[0]
constexpr uint32_t kMcontrolType = 2u << 28, kMcontrolDmode = 1u << 27;
constexpr uint32_t kMcontrolActionShift = 12, kMcontrolActionMask = 0xfu << 12;
constexpr uint32_t kMcontrolMatchShift = 7, kMcontrolMatchMask = 0xfu << 7;
constexpr uint32_t kMcontrolM = 1u << 6, kMcontrolU = 1u << 3;
constexpr uint32_t kMcontrolExecute = 1u << 2, kMcontrolStore = 1u << 1, kMcontrolLoad = 1u << 0;

// mstatus bits (RV32)
constexpr uint32_t kMstatusMie = 1u << 3, kMstatusMpie = 1u << 7;
constexpr uint32_t kMstatusMppShift = 11, kMstatusMpp = 3u << 11;
constexpr uint32_t kMstatusFsShift = 13, kMstatusFs = 3u << 13;
constexpr uint32_t kMstatusMprv = 1u << 17, kMstatusTw = 1u << 21, kMstatusSd = 1u << 31;

// mip/mie bits; 16..31 are platform ("local") interrupts of our interrupt controller.
constexpr uint32_t kMsip = 1u << 3, kMtip = 1u << 7, kMeip = 1u << 11;
constexpr uint32_t kLocalIrqMask = 0xffff0000u;

}  // namespace iss::csr

namespace iss::cause {
constexpr uint32_t kInsnMisaligned = 0, kInsnAccessFault = 1, kIllegalInsn = 2, kBreakpoint = 3;
constexpr uint32_t kLoadMisaligned = 4, kLoadAccessFault = 5, kStoreMisaligned = 6, kStoreAccessFault = 7;
constexpr uint32_t kEcallU = 8, kEcallM = 11;
constexpr uint32_t kInterrupt = 0x80000000u;
constexpr uint32_t kMachineSoftIrq = 3, kMachineTimerIrq = 7, kMachineExtIrq = 11;
}  // namespace iss::cause
