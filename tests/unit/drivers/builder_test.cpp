// SPDX-License-Identifier: MIT
// Regcmd builder, driver helpers and requantization-scale conversion.
#include <cmath>

#include <gtest/gtest.h>

#include "drv/regcmd/builder.h"
#include "drv/rknpu/driver.h"
#include "hw/regcmd.h"
#include "numerics/requant.h"

using drv::regcmd::Builder;
using drv::regcmd::EmitError;
using hw::rknpu::RegCmd;

TEST(Builder, FieldOverflowNamesRegisterFieldLimitAndValue) {
    Builder b;
    try {
        b.write_fields("CNA_CONV_CON3", {{"CONV_X_STRIDE", 0x32}});
        FAIL() << "no error";
    } catch (const EmitError& e) {
        EXPECT_STREQ(e.what(),
                     "regcmd: field overflow: CNA.CONV_CON3.CONV_X_STRIDE (offset 0x1014, shift 0) limit 0x7, value 0x32");
    }
    EXPECT_THROW(b.write("CNA_NO_SUCH", 0), EmitError);
    EXPECT_THROW(b.write_fields("CNA_CONV_CON3", {{"NOPE", 1}}), EmitError);
    EXPECT_THROW(b.write("PC_INTERRUPT_STATUS", 0), EmitError);  // read-only
    EXPECT_EQ(b.size(), 0u);
}

TEST(Builder, EndTaskAppendsTheFourVendorEntries) {
    Builder b;
    b.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", 31}});
    b.end_task(0x12340, 5, 0x1d);
    ASSERT_EQ(b.size(), 5u);
    EXPECT_EQ(b.words()[0], 0x1001'0000'001f'4030ull);
    EXPECT_EQ(b.words()[1], 0x0101'0001'2340'0010ull);  // PC_BASE_ADDRESS = next task
    EXPECT_EQ(b.words()[2], 0x0101'0000'0005'0014ull);  // PC_REGISTER_AMOUNTS
    EXPECT_EQ(b.words()[3], 0x0041'0000'0000'0000ull);
    EXPECT_EQ(b.words()[4], 0x0081'0000'001d'0008ull);
    b.align(8);
    EXPECT_EQ(b.size(), 8u);
    EXPECT_TRUE(RegCmd::decode(b.words()[7]).is_nop());
}

TEST(Driver, PcDataAmountFollowsVendorFormula) {
    // ceil((regcfg + 4) / scale) - 1
    EXPECT_EQ(drv::regcmd::pc_data_amount(74, 2), 36u);
    EXPECT_EQ(drv::regcmd::pc_data_amount(75, 2), 37u);
    EXPECT_EQ(drv::regcmd::pc_data_amount(75, 1), 74u);
}

TEST(Driver, FuzzStatusFoldsPingPongPairs) {
    EXPECT_EQ(drv::rknpu::fuzz_status(0x100), 0x300u);
    EXPECT_EQ(drv::rknpu::fuzz_status(0x200), 0x300u);
    EXPECT_EQ(drv::rknpu::fuzz_status(0x101), 0x303u);
    EXPECT_EQ(drv::rknpu::fuzz_status(0), 0u);
}

TEST(Requant, QuantizeScaleIsAccurateAndNormalised) {
    for (double s : {1.0 / 1500, 0.75, 3.2e-5, 1.0, 0.9999999}) {
        const num::FixedScale f = num::quantize_scale(s, 15, 63);
        EXPECT_GE(f.multiplier, 1 << 14) << s;
        EXPECT_LT(f.multiplier, 1 << 15) << s;
        EXPECT_NEAR(f.value(), s, s * std::ldexp(1.0, -14)) << s;
    }
    EXPECT_THROW(num::quantize_scale(0.0, 15, 63), std::invalid_argument);
}

TEST(Requant, MulShiftRoundingModes) {
    using num::Rounding;
    // 5 * 1 >> 1 = 2.5; -5 >> 1 = -2.5; 7 >> 1 = 3.5
    EXPECT_EQ(num::mul_shift(5, 1, 1, Rounding::HalfUp), 3);
    EXPECT_EQ(num::mul_shift(-5, 1, 1, Rounding::HalfUp), -2);
    EXPECT_EQ(num::mul_shift(-5, 1, 1, Rounding::HalfAwayFromZero), -3);
    EXPECT_EQ(num::mul_shift(5, 1, 1, Rounding::HalfToEven), 2);
    EXPECT_EQ(num::mul_shift(7, 1, 1, Rounding::HalfToEven), 4);
    EXPECT_EQ(num::mul_shift(-5, 1, 1, Rounding::Truncate), -3);  // floor
    EXPECT_EQ(num::quantize_linear_i8(2.5f, 1.0f, 0), 2);         // half to even
    EXPECT_EQ(num::quantize_linear_i8(-3.5f, 1.0f, 0), -4);
    EXPECT_EQ(num::quantize_linear_i8(1000.f, 1.0f, 10), 127);    // saturates
}
