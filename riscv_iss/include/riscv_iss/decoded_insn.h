// SPDX-License-Identifier: MIT
// Decoded-instruction record and opcode-table types shared by the decoder and the exec functions.
#pragma once
#include <cstdint>

namespace iss {

class Hart;
struct DecodedInsn;

/// One instruction's semantics (src/exec_*.cpp). Called by Hart's run loop with npc_ preset to
/// pc_ + length; a control transfer writes npc_, a fault calls Hart::raise_exception().
using ExecFn = void (*)(Hart& h, const DecodedInsn& d);

enum class Ext : uint8_t { kI, kM, kA, kF, kC, kZicsr, kZifencei, kPriv };

/// Field layouts (RISC-V ISA manual Vol. I ch. 2.3 and table 16.1). F/X suffixes say which register
/// file an operand lives in (F = f-registers, X = x-registers), which the hazard model needs.
enum class Fmt : uint8_t {
    kR,
    kI,
    kISH,
    kS,
    kB,
    kU,
    kJ,
    kNONE,
    kCSR,
    kIF,
    kSF,
    kR4,
    kRF,
    kRF1,
    kRFX,
    kRFXX,
    kRXF,
    kCIW,
    kCL,
    kCLF,
    kCS,
    kCSF,
    kCI,
    kCJAL,
    kCLI,
    kC16SP,
    kCLUI,
    kCBSH,
    kCBI,
    kCA,
    kCJ,
    kCB,
    kCISH,
    kCLWSP,
    kCFLWSP,
    kCJR,
    kCMV,
    kCNONE,
    kCJALR,
    kCADD,
    kCSWSP,
    kCFSWSP
};

enum class Op : uint16_t;

/// One row of riscv_iss/isa/rv32.opcodes.
struct OpcodeInfo {
    const char* name;
    Ext ext;
    Fmt fmt;
    uint32_t match;
    uint32_t mask;
    Op op;       ///< this row
    Op exec_op;  ///< the base instruction a compressed row expands to (itself otherwise)
    ExecFn fn;
};

/// Pre-decoded instruction, cached per PC (32 bytes). fn == nullptr means "not decoded yet".
struct DecodedInsn {
    ExecFn fn;
    int32_t imm;   ///< sign-extended immediate; CSR number for Zicsr
    uint32_t raw;  ///< the instruction word (16-bit ones zero-extended)
    uint16_t op;   ///< Op of the encoding actually fetched (c.* for compressed)
    uint8_t rd, rs1, rs2, rs3;
    uint8_t rm;      ///< funct3 (rounding mode for F)
    uint8_t len;     ///< 2 or 4 bytes
    uint8_t hz_rs1;  ///< x-register read (0 = none): used by the load-use hazard rule
    uint8_t hz_rs2;
    uint8_t load_rd;  ///< x-register written by an integer load (0 = none)
    uint8_t jalr_rs;  ///< rs1 of jalr / c.jr / c.jalr (0 = not a jalr): the jalr-use hazard rule
    uint16_t cycles;  ///< base cost from the cycle model, incl. fetch wait states of the region
};
static_assert(sizeof(DecodedInsn) == 32, "DecodedInsn is cached per halfword of code");

/// Decoded rd of an instruction that writes x0: results go to this sink register (x_[32]) so the run
/// loop never has to re-zero x0.
constexpr uint8_t kXSink = 32;

}  // namespace iss
