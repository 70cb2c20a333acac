// SPDX-License-Identifier: MIT
// The tnpuv2 profile (hwdesc/tnpuv2/profile.json): every figure the tnpuv2 model, driver and
// compiler use, each with its grade and the reasoning for the value (all 'unknown': no hardware
// fact of this NPU is public). Strict like the SoC profiles (SG-8.3.4): unknown keys and
// out-of-range values are errors naming the JSON path.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/profile.h"

namespace hw::tnpuv2 {

struct NpuParams {
    Param<uint64_t> core_clock_hz;
    Param<uint64_t> mmio_base;
    Param<int> dma_address_bits;
    Param<int> depthwise_macs_per_cycle;    ///< 8-bit data; 16-bit data run at half
    Param<int> accumulator_bits;            ///< MAC sums saturate at this width
    Param<int> requant_multiplier_bits;     ///< unsigned bits of a requantization multiplier
    Param<uint64_t> conv_sram_bytes;        ///< one CONV command's input rows + weights + output band
    Param<uint64_t> lut_sram_bytes;         ///< largest LUT / parameter table
    Param<int> vector_int_elems_per_cycle;  ///< 8-bit elements; 16-bit take two lanes
    Param<int> vector_fp32_elems_per_cycle;
    Param<int> vector_transcendental_cycles;  ///< per element on the FP32 path
    Param<int> lut_elems_per_cycle;
    Param<int> pool_elems_per_cycle;  ///< window taps per cycle (8-bit; 16-bit half)
    Param<int> move_bytes_per_cycle;
    Param<int> genbox_cycles_per_value;
    Param<int> cmd_cycles_per_word;
    Param<int> op_overhead_cycles;
    Param<double> load_compute_overlap;
    Param<int> dma_segment_bytes;
    Param<int> dma_outstanding_bytes;
};

/// Dense MAC/cycle per (activation bits, weight bits); 12- and 14-bit data use the 16-bit path.
struct MacParams {
    Param<int> a4w4, a4w8, a4w16, a4w20, a8w4, a8w8, a8w16, a8w20, a16w4, a16w8, a16w16, a16w20;
};

struct MemParams {
    Param<uint64_t> ddr_base;
    Param<uint64_t> ddr_size_bytes;
    Param<double> ddr_peak_bytes_per_s;
    Param<double> ddr_efficiency;
    Param<double> ddr_read_latency_ns;
    Param<double> ddr_write_latency_ns;
    Param<double> interconnect_latency_ns;
};

struct Profile {
    int schema_version = 0;
    std::string name, display_name, family, notes, file;
    NpuParams npu;
    MacParams mac;
    MemParams mem;

    /// Dense MAC/cycle for activations of `data_bits` (4..16) and weights of `weight_bits` (4..20).
    int macs_per_cycle(int data_bits, int weight_bits) const;
    /// Picoseconds of one core clock cycle.
    uint64_t clock_ps() const;
    /// The memory figures in the shape the shared DDR model takes (no NBUF).
    hw::MemoryParams memory_params() const;
    /// Every parameter as (path, grade, value, source), in file order (`npusim platforms -v`).
    std::vector<SocProfile::ParamView> params() const;
};

/// Load and validate one profile file; ProfileError naming file and JSON path.
Profile load_profile(const std::string& path);
/// The bundled profile: $NPUSIM_DATA_DIR/hwdesc/tnpuv2/profile.json, else the source tree's.
std::string default_profile_path();
Profile load_default_profile();
/// `--param section.key=value` overrides (sections npu, mac, memory): all or nothing.
void apply_param_overrides(Profile& p, const std::vector<std::string>& assignments);

/// Whether a --platform value names this NPU ("tnpuv2", "uranus-tnpuv2", "uranus_tnpuv2", any case).
bool is_platform_name(const std::string& name);

}  // namespace hw::tnpuv2
