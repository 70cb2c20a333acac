// SPDX-License-Identifier: MIT
// Instruction class -> base cycles (openhwgroup/cv32e40p:docs/source/pipeline.rst "Instruction Latency").
#include "cycle_cost.h"

#include "riscv_iss/csr_numbers.h"
#include "riscv_iss/hart.h"
#include "riscv_iss_isa_table.inc"

namespace iss {

uint32_t base_cycles(Op op, uint32_t csr_number, const CycleModel& cm) {
    switch (op) {
        case Op::kJal: return cm.jal;
        case Op::kJalr: return cm.jalr;
        case Op::kBeq:
        case Op::kBne:
        case Op::kBlt:
        case Op::kBge:
        case Op::kBltu:
        case Op::kBgeu: return cm.branch_not_taken;  // + (taken - not_taken) when taken, added by the exec function
        case Op::kLb:
        case Op::kLh:
        case Op::kLw:
        case Op::kLbu:
        case Op::kLhu:
        case Op::kFlw: return cm.load;
        case Op::kSb:
        case Op::kSh:
        case Op::kSw:
        case Op::kFsw: return cm.store;
        case Op::kMul: return cm.mul;
        case Op::kMulh:
        case Op::kMulhsu:
        case Op::kMulhu: return cm.mulh;
        case Op::kDiv:
        case Op::kDivu:
        case Op::kRem:
        case Op::kRemu: return cm.div_min;  // + operand-dependent
        case Op::kFence: return cm.fence;
        case Op::kFenceI: return cm.fence_i;
        case Op::kEcall:
        case Op::kEbreak:
        case Op::kMret: return cm.system;
        case Op::kWfi: return 0;  // cm.wfi is added by do_wfi
        case Op::kCsrrw:
        case Op::kCsrrs:
        case Op::kCsrrc:
        case Op::kCsrrwi:
        case Op::kCsrrsi:
        case Op::kCsrrci: {
            // CV32E40P: CSR accesses to mstatus/mepc/mtvec/mcause and the counters take 4 cycles.
            const bool slow = csr_number == csr::kMstatus || csr_number == csr::kMepc || csr_number == csr::kMtvec ||
                              csr_number == csr::kMcause || (csr_number & 0xf7f) == 0xb00 ||
                              (csr_number & 0xf7f) == 0xb02 || (csr_number & 0xf7c) == 0xc00;
            return slow ? cm.csr_slow : cm.csr;
        }
        case Op::kLrW:
        case Op::kScW:
        case Op::kAmoswapW:
        case Op::kAmoaddW:
        case Op::kAmoxorW:
        case Op::kAmoandW:
        case Op::kAmoorW:
        case Op::kAmominW:
        case Op::kAmomaxW:
        case Op::kAmominuW:
        case Op::kAmomaxuW: return cm.load;  // + cm.amo for the write half, added by the exec function
        case Op::kFaddS:
        case Op::kFsubS: return cm.fp_add;
        case Op::kFmulS: return cm.fp_mul;
        case Op::kFmaddS:
        case Op::kFmsubS:
        case Op::kFnmsubS:
        case Op::kFnmaddS: return cm.fp_fma;
        case Op::kFdivS: return cm.fp_div;
        case Op::kFsqrtS: return cm.fp_sqrt;
        case Op::kFcvtWS:
        case Op::kFcvtWuS:
        case Op::kFcvtSW:
        case Op::kFcvtSWu: return cm.fp_cvt;
        case Op::kFeqS:
        case Op::kFltS:
        case Op::kFleS:
        case Op::kFminS:
        case Op::kFmaxS:
        case Op::kFclassS: return cm.fp_cmp;
        case Op::kFsgnjS:
        case Op::kFsgnjnS:
        case Op::kFsgnjxS:
        case Op::kFmvXW:
        case Op::kFmvWX: return cm.fp_mv;
        default: return cm.alu;
    }
}

}  // namespace iss
