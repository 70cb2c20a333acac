// SPDX-License-Identifier: MIT
// The bundled end-to-end job: one int8 Conv2D (+bias, ReLU, requantization) lowered by the
// driver, submitted through the HAL to an NPU core of the simulated SoC, and checked against an
// independent reference (direct convolution + onnxruntime QuantizeLinear semantics).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/profile.h"
#include "npu/tlm/rknpu_core.h"
#include "rtl/cosim.h"
#include "trace/trace_writer.h"

namespace sim {

struct ConvExampleSpec {
    std::string name = "conv3x3_int8";
    int in_c = 16, in_h = 32, in_w = 32, out_c = 32;
    int kernel = 3, stride = 1, pad = 1, dilation = 1;
    bool relu = true;
    uint32_t seed = 1;
    /// Load from a JSON file (keys as above); throws std::runtime_error with the file and key.
    static ConvExampleSpec from_file(const std::string& path);
};

struct OutputCheck {
    uint64_t values = 0, equal = 0, off_by_one = 0, worse = 0;
    int max_abs_diff = 0;
};

struct LayerReport {
    std::string name, op, input_shape, output_shape;
    int core = 0, tasks = 0;
    uint64_t macs = 0, macs_padded = 0, regcmd_entries = 0;
    uint64_t fetch_cycles = 0, dma_read_cycles = 0, compute_cycles = 0, write_cycles = 0, overhead_cycles = 0;
    uint64_t total_cycles = 0;
    double time_us = 0;
    uint64_t ddr_read_bytes = 0, ddr_write_bytes = 0;
    uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
    double mac_utilisation = 0;
    std::string bound;
};

struct RunResult {
    std::string platform, platform_name, model, mode;
    uint64_t clock_hz = 0;
    std::vector<LayerReport> layers;
    uint64_t total_ps = 0;
    uint64_t hw_elapse_ns = 0;
    OutputCheck check;
    bool checked = false;
    std::vector<std::string> errors;  ///< driver errors and model diagnostics
    std::vector<uint64_t> regcmd;     ///< the submitted regcmd buffer
    std::vector<std::string> notes;   ///< placement and other remarks for the report
    uint64_t regcmd_addr = 0;         ///< its device address
    hw::Calibration calibration;      ///< the profile's timing calibration (trust line of the report)
    bool rtl = false;                 ///< --rtl: the RTL co-simulation ran
    npu::rtl::RtlOptions rtl_opts;
    std::vector<npu::rtl::RtlTaskRecord> rtl_tasks;
    bool ok() const { return errors.empty() && (!checked || check.worse == 0); }
};

/// Build the platform and run the layer on each of `cores` at the same time (one copy per core,
/// all kicked before any is waited for, so they share the interconnect and DDR), to completion
/// (one SystemC elaboration per process); report one row per core.
/// `rtl`: co-simulate the tasks on the RTL datapath (rtl/cosim.h), nullptr: the C++ engines only.
RunResult run_conv_example(const hw::SocProfile& soc, const ConvExampleSpec& spec, const std::vector<int>& cores,
                           npu::tlm_models::SimMode mode, trace::TraceWriter* tw, bool tensors_in_sram = false,
                           const npu::rtl::RtlOptions* rtl = nullptr);

/// Reference: direct convolution on NCHW int8 data, then QuantizeLinear(real) with round half to
/// even (seed 002), ReLU on the real value. Independent of the NPU lowering.
std::vector<int8_t> reference_conv(const std::vector<int8_t>& x, const std::vector<int8_t>& w,
                                   const std::vector<int32_t>& bias, int in_c, int in_h, int in_w, int out_c,
                                   int k, int stride, int pad, int dilation, bool relu, float in_s, int in_zp,
                                   float w_s, float out_s, int out_zp);

}  // namespace sim
