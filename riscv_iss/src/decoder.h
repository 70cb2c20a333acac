// SPDX-License-Identifier: MIT
// Table-driven decoder built at start-up from the generated opcode table (riscv_iss/isa/rv32.opcodes).
#pragma once
#include <cstdint>
#include <vector>

#include "riscv_iss/core_preset.h"
#include "riscv_iss/decoded_insn.h"

namespace iss {

class Decoder {
public:
    explicit Decoder(const IsaConfig& isa);
    /// Decodes one instruction (`raw` holds 16 or 32 bits; its low two bits say which). Fills every
    /// field of `d` but `cycles`; returns false for an illegal/unsupported encoding (d.fn is then
    /// the illegal-instruction handler, so executing it traps with mtval = raw).
    bool decode(uint32_t raw, DecodedInsn& d) const;
    /// The opcode-table row of d.op (for disassembly, traces, the cycle model).
    static const OpcodeInfo& info(uint16_t op);
    static const OpcodeInfo* find(const char* name);
    static std::size_t table_size();

private:
    // Candidates per bucket, most specific mask first: 32 major opcodes (bits 6:2) for 32-bit
    // encodings; quadrant*8 + funct3 for compressed ones.
    std::vector<const OpcodeInfo*> wide_[32];
    std::vector<const OpcodeInfo*> narrow_[24];
};

/// Handler used for encodings that decode to nothing: raises an illegal-instruction exception.
void ex_illegal(Hart& h, const DecodedInsn& d);

}  // namespace iss
