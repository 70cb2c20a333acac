// SPDX-License-Identifier: MIT
// Decoder: opcode-table consistency (Spike's overlap-test idea) and field extraction per format.
#include "decoder.h"

#include <gtest/gtest.h>

#include <bitset>

#include "riscv_iss_isa_table.inc"

namespace iss {
namespace {

// Two rows overlap if some word matches both; that is only allowed when one row's mask strictly
// contains the other's (the decoder then picks the more specific row, e.g. c.jr over c.mv).
TEST(Decoder, TableHasNoAmbiguousOverlaps) {
    for (std::size_t i = 0; i < std::size(kOpcodes); ++i) {
        for (std::size_t j = i + 1; j < std::size(kOpcodes); ++j) {
            const OpcodeInfo& a = kOpcodes[i];
            const OpcodeInfo& b = kOpcodes[j];
            if (((a.match & 3) == 3) != ((b.match & 3) == 3)) continue;
            const uint32_t common = a.mask & b.mask;
            if ((a.match & common) != (b.match & common)) continue;  // disjoint
            const bool nested = (a.mask & b.mask) == a.mask || (a.mask & b.mask) == b.mask;
            EXPECT_TRUE(nested && a.mask != b.mask) << a.name << " overlaps " << b.name;
        }
    }
}

TEST(Decoder, EveryRowDecodesItsOwnMatchPattern) {
    IsaConfig isa;
    Decoder dec(isa);
    int decoded = 0;
    for (const OpcodeInfo& row : kOpcodes) {
        DecodedInsn d;
        // Fill the don't-care bits with a pattern that makes register fields non-zero (c.jr needs rs1 != 0,
        // c.addi4spn/c.lui need non-zero immediates), then force the fixed bits.
        const uint32_t filler = (row.match & 3) == 3 ? 0x5a5a5a50u : 0x1ffcu;
        const uint32_t word = (filler & ~row.mask) | row.match;
        if (!dec.decode(word, d)) continue;
        ++decoded;
        EXPECT_STREQ(Decoder::info(d.op).name, row.name) << std::hex << word;
    }
    EXPECT_GE(decoded, static_cast<int>(std::size(kOpcodes)) - 3);  // a few rows reject the filler (reserved forms)
}

TEST(Decoder, ExtractsFieldsPerFormat) {
    IsaConfig isa;
    Decoder dec(isa);
    DecodedInsn d;
    // add a0, a0, a1 = 0x00b50533: rs2=11, rs1=10, rd=10
    ASSERT_TRUE(dec.decode(0x00b50533u, d));
    EXPECT_STREQ(Decoder::info(d.op).name, "add");
    EXPECT_EQ(d.rd, 10);
    EXPECT_EQ(d.rs1, 10);
    EXPECT_EQ(d.rs2, 11);
    // jal x0, -4 = 0xffdff06f: J-immediate -4
    ASSERT_TRUE(dec.decode(0xffdff06fu, d));
    EXPECT_EQ(d.imm, -4);
    // beq x0, x0, +8 = 0x00000463: B-immediate 8
    ASSERT_TRUE(dec.decode(0x00000463u, d));
    EXPECT_EQ(d.imm, 8);
    // sw a1, -4(a0) = 0xfeb52e23: S-immediate -4, rs1=10, rs2=11
    ASSERT_TRUE(dec.decode(0xfeb52e23u, d));
    EXPECT_EQ(d.imm, -4);
    EXPECT_EQ(d.rs2, 11);
    // csrrs a0, mstatus, x0 = 0x30002573: CSR number in imm
    ASSERT_TRUE(dec.decode(0x30002573u, d));
    EXPECT_EQ(d.imm, 0x300);
    // c.addi16sp sp, -64 = 0x7139: nzimm = -64
    ASSERT_TRUE(dec.decode(0x7139u, d));
    EXPECT_STREQ(Decoder::info(d.op).name, "c.addi16sp");
    EXPECT_EQ(d.imm, -64);
    EXPECT_EQ(d.len, 2);
    // c.lw a2, 4(a0) = 0x4150: rd'=a2 (12), rs1'=a0 (10), offset 4
    ASSERT_TRUE(dec.decode(0x4150u, d));
    EXPECT_EQ(d.rd, 12);
    EXPECT_EQ(d.rs1, 10);
    EXPECT_EQ(d.imm, 4);
}

TEST(Decoder, RejectsReservedAndDisabledEncodings) {
    IsaConfig isa;
    Decoder dec(isa);
    DecodedInsn d;
    EXPECT_FALSE(dec.decode(0x0000u, d));      // all-zero halfword
    EXPECT_FALSE(dec.decode(0x6001u, d));      // c.lui x0 / zero immediate: reserved
    EXPECT_FALSE(dec.decode(0x8002u, d));      // c.jr x0: reserved
    EXPECT_FALSE(dec.decode(0x02001013u, d));  // slli with shamt[5] = 1: illegal on RV32
    EXPECT_FALSE(dec.decode(0xffffffffu, d));  // >32-bit encoding space
    EXPECT_EQ(d.raw, 0xffffffffu);
    IsaConfig no_a = isa;
    no_a.a = false;
    Decoder dec2(no_a);
    EXPECT_FALSE(dec2.decode(0x00b5252fu, d));  // amoadd.w a0, a1, (a0) without A
    EXPECT_TRUE(dec.decode(0x00b5252fu, d));
}

}  // namespace
}  // namespace iss
