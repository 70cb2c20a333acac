// SPDX-License-Identifier: MIT
// Fault catalogue: each malformed stream must stop its task, set the documented interrupt status
// bit, raise the interrupt (error bits are never masked in this model) and produce a diagnostic
// naming the problem. All cases run in one simulation (one SystemC elaboration per process); each
// TEST_P checks one case's result.
#include <functional>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "stream_fixture.h"

namespace {

using namespace hw::rknpu;
/// Status bits a conv task (CNA|CORE|DPU) raises in register group 0: each block its own bit
/// (docs/rknpu-register-semantics.md §4: CNA feature/weight/CSC 0/2/4, CORE 6, DPU 8).
constexpr uint32_t kConvDone0 = PC_INTERRUPT_RAW_STATUS::CNA_FEATURE_0.mask() | PC_INTERRUPT_RAW_STATUS::CNA_WEIGHT_0.mask() |
                                PC_INTERRUPT_RAW_STATUS::CNA_CSC_0.mask() | PC_INTERRUPT_RAW_STATUS::CORE_0.mask() |
                                PC_INTERRUPT_RAW_STATUS::DPU_0.mask();
constexpr uint32_t kFault = PC_INTERRUPT_RAW_STATUS::SIM_PROGRAMMING_FAULT.mask();
constexpr uint32_t kRdErr = PC_INTERRUPT_RAW_STATUS::DMA_READ_ERROR.mask();
constexpr uint32_t kWrErr = PC_INTERRUPT_RAW_STATUS::DMA_WRITE_ERROR.mask();

struct Case {
    const char* name;
    std::function<void(testfix::ValidConv&)> mutate;
    uint32_t status_bit;   ///< 0: the valid baseline (expects DPU_0 and no diagnostic)
    const char* message;   ///< substring of the diagnostic
    int channels = 16;     ///< the valid conv it mutates: 16 or 32 channels (one or two surfaces)
};

/// The value of a register write in the valid stream.
uint32_t value_of(const testfix::ValidConv& v, const char* reg) {
    return RegCmd::decode(v.job.words.at(size_t(v.index_of(reg)))).value;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

int find_word(const std::vector<uint64_t>& w, uint64_t word) {
    for (size_t i = 0; i < w.size(); ++i)
        if (w[i] == word) return static_cast<int>(i);
    return -1;
}

const std::vector<Case>& cases() {
    static const std::vector<Case> c = {
        {"valid_stream", [](testfix::ValidConv&) {}, 0, ""},
        {"missing_sync_entry",
         [](testfix::ValidConv& v) { v.job.words.erase(v.job.words.begin() + find_word(v.job.words, 0x0041000000000000ull)); },
         kFault, "without the preceding 0x0041 entry"},
        {"fetch_amount_too_small", [](testfix::ValidConv& v) { v.job.amount = 3; }, kFault,
         "no op-enable entry in the 8 fetched entries"},
        {"target_block_mismatch",
         [](testfix::ValidConv& v) {
             const int i = v.index_of("CNA_CONV_CON3");
             auto cmd = RegCmd::decode(v.job.words[size_t(i)]);
             cmd.op = target::DPU | opflag::WRITE;
             v.job.words[size_t(i)] = cmd.encode();
         },
         kFault, "target DPU but offset 0x1014 is a CNA register"},
        {"missing_write_flag",
         [](testfix::ValidConv& v) {
             const int i = v.index_of("CNA_CONV_CON1");
             auto cmd = RegCmd::decode(v.job.words[size_t(i)]);
             cmd.op = target::CNA;
             v.job.words[size_t(i)] = cmd.encode();
         },
         kFault, "has no write flag"},
        {"unknown_register",
         [](testfix::ValidConv& v) { v.job.words.insert(v.job.words.begin(), reg_write(target::CNA, 0x1018, 1).encode()); },
         kFault, "no register at offset 0x1018 in CNA"},
        {"cbuf_banks_exceeded",
         [](testfix::ValidConv& v) {
             testfix::set_value(v.job.words, v.index_of("CNA_CBUF_CON0"),
                                CNA_CBUF_CON0::DATA_BANK.put(9) | CNA_CBUF_CON0::WEIGHT_BANK.put(5));
         },
         kFault, "9 + 5 banks exceed the 12 CBUF banks of rk3588"},
        {"feature_exceeds_data_banks",
         [](testfix::ValidConv& v) {
             testfix::set_value(v.job.words, v.index_of("CNA_CBUF_CON0"),
                                CNA_CBUF_CON0::DATA_BANK.put(0) | CNA_CBUF_CON0::WEIGHT_BANK.put(2));
         },
         kFault, "does not fit 0 data bank(s)"},
        {"stride_zero", [](testfix::ValidConv& v) { testfix::set_value(v.job.words, v.index_of("CNA_CONV_CON3"), 0); },
         kFault, "stride 0"},
        {"kernel_size_zero",
         [](testfix::ValidConv& v) {
             testfix::set_value(v.job.words, v.index_of("CNA_WEIGHT_SIZE2"),
                                CNA_WEIGHT_SIZE2::WEIGHT_KERNELS.put(16) | CNA_WEIGHT_SIZE2::WEIGHT_HEIGHT.put(3));
         },
         kFault, "kernel size 0"},
        {"output_larger_than_input",
         [](testfix::ValidConv& v) {
             testfix::set_value(v.job.words, v.index_of("CORE_DATAOUT_SIZE_0"),
                                CORE_DATAOUT_SIZE_0::DATAOUT_WIDTH.put(10) | CORE_DATAOUT_SIZE_0::DATAOUT_HEIGHT.put(7));
         },
         // 8x8 input, pad 1, 3x3: up to 2 implied right/bottom padding columns allow a 9x9 output.
         kFault, "output 11x8 larger than the 9x9"},
        {"weight_bytes_mismatch",
         [](testfix::ValidConv& v) { testfix::set_value(v.job.words, v.index_of("CNA_WEIGHT_SIZE0"), 2304 + 16); },
         kFault, "expected bytes_per_kernel*kernels = 2304"},
        {"channels_not_c2_aligned",
         [](testfix::ValidConv& v) {
             testfix::set_value(v.job.words, v.index_of("CNA_DATA_SIZE1"),
                                CNA_DATA_SIZE1::DATAIN_CHANNEL.put(12) | CNA_DATA_SIZE1::DATAIN_CHANNEL_REAL.put(11));
         },
         kFault, "must be a multiple of C2 = 16"},
        {"no_kernels",
         [](testfix::ValidConv& v) {
             const int i = v.index_of("CNA_WEIGHT_SIZE2");
             const uint32_t w = RegCmd::decode(v.job.words[size_t(i)]).value & ~CNA_WEIGHT_SIZE2::WEIGHT_KERNELS.mask();
             testfix::set_value(v.job.words, i, w);
         },
         kFault, "no kernels"},
        {"line_stride_too_small",
         // LINE_STRIDE counts 4-byte units: 16 = 64-byte rows, below the 8 x 16 bytes of a row.
         [](testfix::ValidConv& v) { testfix::set_value(v.job.words, v.index_of("CNA_DMA_CON1"), 16); }, kFault,
         "row stride 64 bytes below width x pixel = 128 bytes"},
        {"blocks_not_enabled",
         [](testfix::ValidConv& v) {
             const int i = find_word(v.job.words, RegCmd{opflag::OP_EN | opflag::WRITE, kConvOpEnableMask, 8}.encode());
             testfix::set_value(v.job.words, i, 0x01);
         },
         kFault, "without CNA, CORE and DPU enabled"},
        {"feature_address_outside_memory",
         [](testfix::ValidConv& v) { testfix::set_value(v.job.words, v.index_of("CNA_FEATURE_DATA_ADDR"), 0xfff00000u); },
         kRdErr, "feature load of 1024 bytes at 0xfff00000 outside memory"},
        {"output_address_outside_memory",
         [](testfix::ValidConv& v) { testfix::set_value(v.job.words, v.index_of("DPU_DST_BASE_ADDR"), 0xfff00000u); },
         kWrErr, "output write of 1024 bytes at 0xfff00000 outside memory"},
        {"regcmd_outside_memory", [](testfix::ValidConv& v) { v.job.addr = 0xfff00000u; }, kRdErr,
         "regcmd fetch of"},
        {"broken_chain", [](testfix::ValidConv& v) { v.job.task_number = 2; }, kFault,
         "chain ends after 1 of 2 tasks"},
        {"zero_task_kick", [](testfix::ValidConv& v) { v.job.task_number = 0; }, kFault, "kick with zero tasks"},
        // Re-derived in silicon units (docs/rknpu-register-semantics.md §8): SURF_STRIDE counts
        // 16-byte units from four rows on; 8 rows of 128 bytes need 16 x (SURF + 32) >= 7 x 128 + 128.
        {"surface_stride_overlaps_rows",
         [](testfix::ValidConv& v) { testfix::set_value(v.job.words, v.index_of("CNA_DMA_CON2"), 0); }, kFault,
         "surface stride 512 bytes below the 8 rows of a surface (1024 bytes)", 32},
        // DST_SURF_STRIDE counts 16-byte units: 8 (128 bytes) puts the second surface inside the
        // first one's rows.
        {"output_surfaces_overlap",
         [](testfix::ValidConv& v) { testfix::set_value(v.job.words, v.index_of("DPU_DST_SURF_STRIDE"), 8u << 4); },
         kFault, "overlap at a stride of 128 bytes", 32},
        {"weight_reuse_without_loaded_weights",
         [](testfix::ValidConv& v) {
             testfix::set_value(v.job.words, v.index_of("CNA_CBUF_CON0"),
                                value_of(v, "CNA_CBUF_CON0") | CNA_CBUF_CON0::WEIGHT_REUSE.mask());
         },
         kFault, "WEIGHT_REUSE set but no weights were loaded into the CBUF since reset"},
        {"compressed_weights",
         [](testfix::ValidConv& v) {
             v.job.words.insert(v.job.words.begin(), reg_write(target::CNA, CNA_DCOMP_CTRL::kOffset, 1).encode());
         },
         kFault, "compressed weights (DECOMP_CONTROL != 0)"},
        {"input_convert_with_zero_scale",
         [](testfix::ValidConv& v) { testfix::set_value(v.job.words, v.index_of("CNA_CVT_CON0"), 0); }, kFault,
         "input convert on (CVT_BYPASS = 0) with every CVT_SCALE 0"},
        {"image_input_of_five_channels",
         [](testfix::ValidConv& v) {
             testfix::set_value(v.job.words, v.index_of("CNA_CONV_CON1"), CNA_CONV_CON1::ARGB_IN.put(8));
             testfix::set_value(v.job.words, v.index_of("CNA_DATA_SIZE1"),
                                CNA_DATA_SIZE1::DATAIN_CHANNEL.put(16) | CNA_DATA_SIZE1::DATAIN_CHANNEL_REAL.put(4));
         },
         kFault, "image input of 5 channels per pixel"},
        {"image_input_argb_in_channel_mismatch",
         [](testfix::ValidConv& v) {
             testfix::set_value(v.job.words, v.index_of("CNA_CONV_CON1"), CNA_CONV_CON1::ARGB_IN.put(10));
             testfix::set_value(v.job.words, v.index_of("CNA_DATA_SIZE1"),
                                CNA_DATA_SIZE1::DATAIN_CHANNEL.put(16) | CNA_DATA_SIZE1::DATAIN_CHANNEL_REAL.put(0));
         },
         kFault, "ARGB_IN 10 selects 3 channels per pixel, DATAIN_CHANNEL_REAL + 1 = 1"},
        {"weights_outside_the_iommu_domain",
         [](testfix::ValidConv& v) { testfix::set_value(v.job.words, v.index_of("CNA_DCOMP_ADDR0"), 0xfff00000u); },
         kRdErr, "weights load of 2304 bytes at 0xfff00000 outside memory"},
    };
    return c;
}

const std::map<std::string, sim::RawResult>& results() {
    static const std::map<std::string, sim::RawResult> r = [] {
        hw::SocProfile soc = hw::load_named_profile("rk3588");
        // Replay backs every page of the NPU's IOMMU domain on first touch (a capture's process
        // mapped its buffers); a domain of 3.75 GiB leaves 0xf0000000 and up unmapped, which is
        // where the "outside memory" cases point (an IOMMU fault on silicon, a DMA error bit).
        hw::apply_param_override(soc, "memory.iova_bytes=0xf0000000");
        std::vector<sim::RawJob> jobs;
        for (const Case& c : cases()) {
            testfix::ValidConv v = testfix::make_valid_conv(soc, 1, c.channels);
            c.mutate(v);
            jobs.push_back(v.job);
        }
        jobs.push_back(testfix::make_valid_conv(soc, 3).job);  // PC chaining, checked below
        const auto res = sim::run_raw_jobs(soc, jobs, npu::tlm_models::SimMode::Full, nullptr);
        std::map<std::string, sim::RawResult> m;
        for (size_t i = 0; i < cases().size(); ++i) m[cases()[i].name] = res[i];
        m["chain_of_three"] = res.back();
        return m;
    }();
    return r;
}

class FaultCatalogue : public ::testing::TestWithParam<Case> {};

TEST_P(FaultCatalogue, StopsWithStatusBitAndDiagnostic) {
    const Case& c = GetParam();
    const sim::RawResult& r = results().at(c.name);
    EXPECT_TRUE(r.irq) << "interrupt not raised";
    std::string diags;
    for (const auto& d : r.diagnostics) diags += d + "\n";
    if (c.status_bit == 0) {
        EXPECT_EQ(r.raw_status, kConvDone0);
        EXPECT_EQ(r.task_status, 1u);
        EXPECT_TRUE(r.diagnostics.empty()) << diags;
        return;
    }
    EXPECT_TRUE(r.raw_status & c.status_bit) << std::hex << "raw status 0x" << r.raw_status;
    // Only the broken chain lets its first (legal) task complete before the PC stops.
    const bool first_completes = std::string(c.name) == "broken_chain";
    EXPECT_EQ((r.raw_status & PC_INTERRUPT_RAW_STATUS::DPU_0.mask()) != 0, first_completes);
    EXPECT_EQ(r.task_status, first_completes ? 1u : 0u);
    EXPECT_NE(diags.find(c.message), std::string::npos) << "diagnostics:\n" << diags;
    EXPECT_NE(diags.find("task "), std::string::npos) << "the diagnostic must name the task\n" << diags;
}

TEST(PcChaining, ThreeChainedTasksRunInOneKick) {
    const sim::RawResult& r = results().at("chain_of_three");
    const sim::RawResult& single = results().at("valid_stream");
    EXPECT_TRUE(r.irq);
    EXPECT_TRUE(r.diagnostics.empty());
    EXPECT_EQ(r.task_status, 3u);
    // The kick writes CNA/CORE S_POINTER = 0xE (EXECUTER_PP_EN) as the vendor kernel does on
    // multi-core SoCs: their groups alternate (task 1 in group 1); the stream writes no DPU
    // S_POINTER, so the DPU stays in group 0 (docs/rknpu-register-semantics.md §4, §11).
    const uint32_t group1 = PC_INTERRUPT_RAW_STATUS::CNA_FEATURE_1.mask() | PC_INTERRUPT_RAW_STATUS::CNA_WEIGHT_1.mask() |
                            PC_INTERRUPT_RAW_STATUS::CNA_CSC_1.mask() | PC_INTERRUPT_RAW_STATUS::CORE_1.mask();
    EXPECT_EQ(r.raw_status, kConvDone0 | group1);
    ASSERT_EQ(r.tasks.size(), 3u);
    ASSERT_EQ(r.readback.size(), 3u);
    ASSERT_EQ(single.readback.size(), 1u);
    for (const auto& out : r.readback) EXPECT_EQ(out, single.readback[0]);
    bool any_nonzero = false;
    for (uint8_t b : single.readback[0]) any_nonzero |= b != 0;
    EXPECT_TRUE(any_nonzero);
    // Tasks run back to back: each starts after the previous one ended.
    for (size_t i = 1; i < r.tasks.size(); ++i) EXPECT_GE(r.tasks[i].start_ps, r.tasks[i - 1].end_ps);
}

INSTANTIATE_TEST_SUITE_P(Streams, FaultCatalogue, ::testing::ValuesIn(cases()),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
