// SPDX-License-Identifier: MIT
// regcmd entry encode/decode and register-database look-ups, against hand-computed words from
// hardware-facts.md Part I §1.2 (bits 63..48 op/target, 47..16 value, 15..0 offset).
#include <gtest/gtest.h>

#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "trace/regcmd_disasm.h"

using namespace hw::rknpu;

TEST(Regcmd, EncodesWriteToCnaFeatureAddress) {
    // CNA target 0x0200 | write flag 0x1 = 0x0201; value 0x12345678; offset 0x1070.
    const RegCmd c = reg_write(target::CNA, 0x1070, 0x12345678);
    EXPECT_EQ(c.encode(), 0x0201'1234'5678'1070ull);
}

TEST(Regcmd, DecodesTrmOpEnableWord) {
    // TRM: 64'h0081_0000_007f_0008 sets each block's op_en.
    const RegCmd c = RegCmd::decode(0x0081'0000'007f'0008ull);
    EXPECT_EQ(c.op, 0x0081u);
    EXPECT_EQ(c.value, 0x7fu);
    EXPECT_EQ(c.offset, 0x0008u);
    EXPECT_TRUE(c.is_op_enable());
    EXPECT_TRUE(c.is_write());
    EXPECT_EQ(c.target(), 0u);
}

TEST(Regcmd, DecodesSyncWordAndNop) {
    const RegCmd s = RegCmd::decode(0x0041'0000'0000'0000ull);
    EXPECT_TRUE(s.is_sync());
    EXPECT_FALSE(s.is_op_enable());
    EXPECT_TRUE(RegCmd::decode(0).is_nop());
}

TEST(Regcmd, RoundTripsEveryRegisterWithExtremeValues) {
    for (const RegInfo& r : kRegs) {
        const uint32_t tgt = block_info(r.block).target;
        if (tgt > 0xffff) continue;  // DDMA/SDMA/GLOBAL cannot be addressed by a 16-bit target
        for (uint32_t v : {0u, 1u, 0x80000000u, 0xffffffffu}) {
            const RegCmd c = reg_write(tgt, r.offset, v);
            EXPECT_EQ(RegCmd::decode(c.encode()), c) << r.block_name << "." << r.name;
        }
    }
}

TEST(Regdb, FindsRegistersAndFields) {
    const RegInfo* r = find_reg(0x1014);
    ASSERT_NE(r, nullptr);
    EXPECT_STREQ(r->block_name, "CNA");
    EXPECT_STREQ(r->name, "CONV_CON3");
    const hw::FieldInfo* f = find_field(*r, "CONV_X_STRIDE");
    ASSERT_NE(f, nullptr);
    // 3-bit stride field at bits 0..2: limit 0x7 (the RKNN "offset 0x1014 limit 0x7" error).
    EXPECT_EQ(f->field().max(), 0x7u);
    EXPECT_EQ(find_reg(std::string("DPU.OUT_CVT_SCALE"))->offset, 0x4084);
    EXPECT_EQ(find_reg(uint16_t{0x1018}), nullptr);
    EXPECT_STREQ(block_of_target(0x1001)->name, "DPU");
    EXPECT_STREQ(block_at(0x5048)->name, "DPU_RDMA");
}

TEST(Regdb, TableIsSortedAndBlocksOwnTheirOffsets) {
    for (int i = 1; i < kRegCount; ++i) EXPECT_LT(kRegs[i - 1].offset, kRegs[i].offset);
    for (const RegInfo& r : kRegs) EXPECT_STREQ(block_at(r.offset)->name, r.block_name) << r.name;
}

TEST(Regdb, FieldHelpersPutAndGet) {
    // DATA_SIZE0: DATAIN_WIDTH bits 16..26, DATAIN_HEIGHT bits 0..10.
    const uint32_t v = CNA_DATA_SIZE0::DATAIN_WIDTH.put(224) | CNA_DATA_SIZE0::DATAIN_HEIGHT.put(112);
    EXPECT_EQ(v, (224u << 16) | 112u);
    EXPECT_EQ(CNA_DATA_SIZE0::DATAIN_WIDTH.get(v), 224u);
    EXPECT_FALSE(CNA_DATA_SIZE0::DATAIN_WIDTH.fits(2048));
    EXPECT_TRUE(CNA_DATA_SIZE0::DATAIN_WIDTH.fits(2047));
}

TEST(Disasm, NamesBlockRegisterAndFields) {
    const RegCmd c = reg_write(target::CNA, CNA_CONV_CON3::kOffset, CNA_CONV_CON3::CONV_X_STRIDE.put(2) |
                                                                          CNA_CONV_CON3::CONV_Y_STRIDE.put(1));
    EXPECT_EQ(trace::disasm_entry(c), "CNA.CONV_CON3 = 0x0000000a  CONV_X_STRIDE=2 CONV_Y_STRIDE=1");
    EXPECT_EQ(trace::disasm_entry(RegCmd::decode(0x0081'0000'001d'0008ull)), "OP_ENABLE blocks=0x1d (reg 0x0008)");
    const std::string mismatch = trace::disasm_entry(reg_write(target::DPU, CNA_CONV_CON3::kOffset, 0));
    EXPECT_NE(mismatch.find("does not match block CNA"), std::string::npos) << mismatch;
}

TEST(Regdb, DdmaAndSdmaFromTheTrm) {
    // RK3588 TRM §36.4: RKNN_ddma_cfg_outstanding at 0x8000 (rd_os_cnt 7:0, wr_os_cnt 15:8),
    // RKNN_ddma_cfg_dma_rd_qos at 0x8020 (rd_pc_qos 9:8), RKNN_sdma_* the same layout at 0x9000.
    const RegInfo* r = find_reg(uint16_t{0x8000});
    ASSERT_NE(r, nullptr);
    EXPECT_STREQ(r->block_name, "DDMA");
    EXPECT_STREQ(r->name, "CFG_OUTSTANDING");
    ASSERT_NE(find_field(*r, "WR_OS_CNT"), nullptr);
    EXPECT_EQ(find_field(*r, "WR_OS_CNT")->field().max(), 0xffu);
    EXPECT_EQ(find_field(*r, "WR_OS_CNT")->field().put(3), 3u << 8);
    const RegInfo* q = find_reg(std::string("SDMA.CFG_DMA_RD_QOS"));
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->offset, 0x9020);
    EXPECT_EQ(find_field(*q, "RD_PC_QOS")->field().put(3), 3u << 8);
    EXPECT_STREQ(block_at(0x9030)->name, "SDMA");
    EXPECT_EQ(find_reg(uint16_t{0x801C}), nullptr);  // a gap in the TRM map stays unknown
    // The byte counters the vendor driver reads on rk356x/rv1106/rk3562 are read-only.
    EXPECT_EQ(find_reg(std::string("DDMA.DT_RD_AMOUNT"))->access, hw::Access::RO);
}

// Registers every public producer writes (Mesa rkt_regcmd.c fill_first_regcmd, mtx512
// npu_matmul.c gen_matmul_task): the weight-decompress block, CORE 0x3030 and DPU 0x40C4.
TEST(Regdb, KnowsEveryRegisterThePublicProducersWrite) {
    for (uint16_t off = 0x1140; off <= 0x117C; off += 4) EXPECT_NE(find_reg(off), nullptr) << std::hex << off;
    for (uint16_t off : {0x1100, 0x1104, 0x1110, 0x3030, 0x40C4, 0x1180, 0x1184}) EXPECT_NE(find_reg(uint16_t(off)), nullptr);
    EXPECT_FALSE(find_reg(uint16_t{0x3030})->verified);  // meaning not public
    EXPECT_FALSE(find_reg(uint16_t{0x40C4})->verified);
}

TEST(Regdb, GenerationsDifferWhereThePublicSourcesSay) {
    // RK3568: CONV_CON4 at 0x1018, 8 DCOMP_ADDR + 8 DCOMP_AMOUNT (hardware-facts §1.5).
    EXPECT_EQ(find_reg(uint16_t{0x1018}, Generation::RK356X)->name, std::string("CONV_CON4"));
    EXPECT_EQ(find_reg(uint16_t{0x1018}, Generation::RK3588), nullptr);
    EXPECT_NE(find_reg(uint16_t{0x1114}, Generation::RK356X), nullptr);
    EXPECT_EQ(find_reg(uint16_t{0x1160}, Generation::RK356X), nullptr);
    // Vendor rknpu_drv.c: 12-bit task numbers on RK3588/RK356x, 16-bit on RV1106/RK3562/RK3576.
    EXPECT_EQ(field_of(Generation::RK3588, "PC.TASK_CON", "TASK_NUMBER").width(), 12u);
    EXPECT_EQ(field_of(Generation::RV1106, "PC.TASK_CON", "TASK_NUMBER").width(), 16u);
    EXPECT_EQ(field_of(Generation::RK3562, "PC.TASK_CON", "TASK_COUNT_CLEAR").low, 17u);
    EXPECT_EQ(find_reg(std::string("PC.TASK_STATUS"), Generation::RK3562)->offset, 0x48);
    EXPECT_EQ(generation_by_name("rk356x"), Generation::RK356X);
    EXPECT_FALSE(generation_by_name("rk9999").has_value());
}

TEST(Regdb, FieldsCarryUnitsAndEnums) {
    // Mesa: a 32-wide int8 row (512 B) is programmed LINE_STRIDE = 32 * 16 / 4 = 128.
    EXPECT_EQ(CNA_DMA_CON1::LINE_STRIDE.bytes(128), 512u);
    EXPECT_EQ(CNA_CBUF_CON1::DATA_ENTRIES.unit, 64u);
    EXPECT_EQ(DPU_DST_SURF_STRIDE::DST_SURF_STRIDE.bytes(DPU_DST_SURF_STRIDE::DST_SURF_STRIDE.put(1024)), 16384u);
    EXPECT_EQ(CORE_DATAOUT_SIZE_0::DATAOUT_WIDTH.count(31), 32u);
    EXPECT_EQ(static_cast<uint32_t>(enums::Precision::INT32), 4u);  // mtx512 precision_int32
    EXPECT_EQ(static_cast<uint32_t>(enums::Precision::FP32), 5u);
    const hw::FieldInfo* f = find_field(*find_reg(std::string("DPU.DATA_FORMAT")), "OUT_PRECISION");
    ASSERT_NE(field_enum(*f), nullptr);
    EXPECT_STREQ(field_enum(*f)->find(4)->name, "INT32");
}

TEST(Disasm, ShowsUnitsEnumsAndCounts) {
    EXPECT_EQ(trace::disasm_entry(reg_write(target::CNA, CNA_DMA_CON1::kOffset, 128)),
              "CNA.DMA_CON1 = 0x00000080  LINE_STRIDE=128 (512 B)");
    EXPECT_EQ(trace::disasm_entry(reg_write(target::DPU, DPU_DATA_FORMAT::kOffset,
                                            DPU_DATA_FORMAT::OUT_PRECISION.put(4))),
              "DPU.DATA_FORMAT = 0x80000000  OUT_PRECISION=INT32");
    EXPECT_EQ(trace::disasm_entry(reg_write(target::CORE, 0x3030, 0)), "CORE.UNKNOWN_3030 = 0x00000000  VALUE=0");
    EXPECT_NE(trace::disasm_entry(reg_write(target::CORE, 0x3030, 5)).find("meaning not public"), std::string::npos);
    const std::vector<uint64_t> w = {reg_write(target::CNA, 0x1140, 0).encode(), reg_write(target::DPU, 0x40c4, 0).encode(),
                                     reg_write(target::CNA, 0x1018, 0).encode()};
    EXPECT_EQ(trace::disasm_stats(w, Generation::RK3588).unknown, 1u);  // 0x1018 is RK356x only
    EXPECT_EQ(trace::disasm_stats(w, Generation::RK3588).unverified, 1u);
}
