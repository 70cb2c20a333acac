// SPDX-License-Identifier: MIT
// SoC profiles: every hardware figure the models use, read from profiles/<soc>.json (SG-8.3.4).
// Each figure carries its trust grade so that unknowns stay named parameters, never silent defaults.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace hw {

enum class Grade { Known, Inferred, Unknown };
const char* grade_name(Grade g);

/// One profile figure: its value, how far we trust it, and where it came from.
template <typename T>
struct Param {
    T value{};
    Grade grade = Grade::Unknown;
    std::string source;
    std::string path;  ///< JSON path, for reports ("npu.task_overhead_cycles")
};

struct NpuParams {
    Param<int> core_count;
    Param<uint64_t> core_clock_hz;
    Param<std::vector<uint64_t>> core_mmio_bases;
    Param<uint64_t> core_mmio_window_bytes;
    Param<int> int8_macs_per_cycle;
    Param<int> fp16_macs_per_cycle;
    Param<int> int4_macs_per_cycle;  ///< 0 when the core has no int4 path
    Param<int> cbuf_banks;
    Param<uint32_t> cbuf_bank_bytes;
    Param<uint32_t> cbuf_entry_bytes;
    Param<int> c2_int8;
    Param<int> c2_fp16;
    Param<int> dma_address_bits;
    Param<int> pc_data_amount_scale;
    Param<std::string> regdb_generation;  ///< register-map generation (regdb <generations>)
    Param<int> pc_task_number_bits;
    Param<uint32_t> pc_task_status_offset;
    Param<int> pc_cycles_per_regcmd;  ///< PC decode cost per fetched entry
    Param<int> task_overhead_cycles;  ///< fixed cost per task: ping-pong switch, completion
    Param<int> dma_burst_bytes;       ///< size of one DMA transaction on the bus
    // Block throughputs and padded-MAC rules (hardware-facts.md Part III §5.1); read by
    // npu::rknpu::conv_cost, dpu_cycles and ppu_cycles.
    Param<int> int16_macs_per_cycle;       ///< int16 conv rate (two 8-bit cells per product)
    Param<int> cout_align_int8;            ///< output channels padded to this for the MAC count (int8/int4)
    Param<int> cout_align_fp16;            ///< same for fp16/int16
    Param<int> depthwise_cout_align;       ///< depthwise output channels padded to this (Mesa: 64)
    Param<double> depthwise_mac_efficiency;  ///< depthwise useful MACs/cycle as a fraction of the int8 (or fp16) peak
    Param<double> dpu_atoms_per_cycle;     ///< DPU 16-byte atoms per cycle through BS/BN/EW/convert
    Param<double> dpu_lut_atoms_per_cycle; ///< the same when the EW LUT is in the path
    Param<double> ppu_atoms_per_cycle;     ///< PPU atoms per cycle (cost = max(input, output) atoms)
    /// Fraction of a task's DMA loads that stream under the block pipeline; the rest (CBUF fill:
    /// first kernel group's weights, first input rows) lands before the pipeline starts. 1 = fully hidden.
    Param<double> load_compute_overlap;
    /// Weight blocks the CNA reads (Mesa rkt_coefs.c, mtx512 npu_matmul.c): per tap, blocks of
    /// `kernel_group` kernels x `channel_group` input channels; depthwise rows of
    /// `depthwise_channel_group` channels (npu/rknpu/weights.h).
    Param<int> weight_kernel_group_int8;
    Param<int> weight_channel_group_int8;
    Param<int> weight_kernel_group_fp16;
    Param<int> weight_channel_group_fp16;
    Param<int> depthwise_channel_group_int8;
    Param<int> depthwise_channel_group_fp16;
    // MAC-array feeding (NVDLA stripe operation, hardware-facts Part III): the weights of one array
    // pass stay in the MAC cells for a stripe of up to stripe_max_pixels output pixels; the next
    // pass's weights are read from the CBUF meanwhile. A stripe shorter than that read (small
    // output planes) leaves the array waiting: conv_cost counts max(stripe, weight load) cycles.
    Param<int> stripe_max_pixels;          ///< output pixels per stripe (one weight load each)
    Param<int> cbuf_read_bytes_per_cycle;  ///< CBUF -> MAC cells weight read bandwidth
    /// Sustained share of the padded-MAC peak on dense convolutions (accumulator drain between
    /// kernel groups, CBUF bank turnarounds): one figure per NPU generation, fitted per SoC.
    Param<double> conv_mac_efficiency;
};

struct MemoryParams {
    Param<uint64_t> ddr_base;
    Param<uint64_t> ddr_size_bytes;
    /// 1: NPU DMA addresses (regcmd, tensors) are IOVAs translated by the NPU's IOMMU in a domain
    /// [iova_base, iova_base + iova_bytes); 0: they are physical addresses (DDR or NBUF).
    Param<int> npu_iommu;
    Param<uint64_t> iova_base;
    Param<uint64_t> iova_bytes;
    Param<double> ddr_peak_bytes_per_s;
    Param<std::string> ddr_type;        ///< "LPDDR4x", "DDR4", ...: the efficiency is fitted per type
    Param<double> ddr_efficiency;       ///< sustained / peak
    Param<double> ddr_read_latency_ns;  ///< first-beat latency of a read burst
    Param<double> ddr_write_latency_ns;
    Param<double> interconnect_latency_ns;  ///< one hop through the NoC, each direction
    Param<uint64_t> nbuf_base;              ///< on-chip SRAM the NPU can use (NBUF); size 0 = none
    Param<uint64_t> nbuf_bytes;
    Param<double> nbuf_bytes_per_s;
    Param<double> nbuf_latency_ns;
};

/// The host CPU that runs CPU-fallback nodes and host-side layout conversion (hardware-facts.md
/// Part II §2). Rates are sustained single-core figures.
struct HostParams {
    Param<std::string> cpu;            ///< "4x Cortex-A76 + 4x Cortex-A55"
    Param<uint64_t> cpu_clock_hz;      ///< clock of the core that runs fallback nodes
    Param<double> int8_macs_per_s;     ///< quantized kernels (conv/gemm inner loops)
    Param<double> float_flops_per_s;   ///< float kernels (2 flops per FMA)
    Param<double> bytes_per_s;         ///< layout conversion, copies, elementwise streaming
    Param<double> op_overhead_ns;      ///< per-node dispatch + NPU/CPU hand-over (cache maintenance, wake-up)
};

/// Host time of one CPU node: op_overhead + macs / int8 rate + flops / float rate + bytes / byte rate.
double host_op_seconds(const HostParams& h, uint64_t macs, uint64_t flops, uint64_t bytes);

/// One published figure the profile was calibrated against, with the fit's estimate (all three
/// models fitted) and the leave-one-model-out estimate (fitted without this model).
struct CalibrationRow {
    std::string model;
    double published_ms = 0, estimate_ms = 0, error_pct = 0, loo_error_pct = 0;
};

/// How far the timing of this profile can be trusted (tools/calibrate/fit_soc.py writes it):
/// which parameters were fitted on this SoC's published figures, which come from a joint fit over
/// several SoCs, which are inherited from another SoC and why, and the fit's errors.
struct Calibration {
    std::string status = "none";  ///< "calibrated" (own published figures), "inherited", "none"
    std::string summary;          ///< one line for reports
    std::string data;             ///< published figures used ("shared/calibration/rk3588-int8.json")
    std::string fit;              ///< the fit record (tools/calibrate/fits/<soc>.json)
    std::string inherits_from;    ///< SoC whose fitted values are inherited ("" when calibrated)
    std::vector<std::string> fitted;                           ///< paths fitted on this SoC's rows
    std::vector<std::pair<std::string, std::string>> joint;    ///< path -> the SoCs fitted together
    std::vector<std::pair<std::string, std::string>> inherited;  ///< path -> from where and why
    std::vector<CalibrationRow> rows;
    double fit_mae_pct = -1, fit_max_pct = -1;  ///< |error| of the rows (-1: no rows)
    double loo_mae_pct = -1, loo_max_pct = -1;  ///< leave-one-model-out |error|
};

struct SocProfile {
    int schema_version = 0;
    std::string name;          ///< "rk3588"
    std::string display_name;  ///< "Rockchip RK3588 / RK3588S"
    std::string family;        ///< "rknpu"
    std::string notes;
    std::string file;  ///< where it was loaded from
    NpuParams npu;
    MemoryParams mem;
    HostParams host;
    Calibration calibration;

    /// Every parameter as (path, grade, value text), in file order: for reports and `platforms`.
    struct ParamView {
        std::string path;
        Grade grade;
        std::string value;
        std::string source;
    };
    std::vector<ParamView> params() const;
};

/// Raised for a malformed or inconsistent profile; the message names file and JSON path.
class ProfileError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// Load and validate one profile file.
SocProfile load_profile(const std::string& path);
/// Directory holding the bundled profiles: $NPUSIM_PROFILE_DIR, else share/npusim/profiles found
/// beside the binary (npusim/datadir.h; $NPUSIM_DATA_DIR/hwdesc/profiles of a checkout still works).
std::string profile_dir();
/// Names of the bundled profiles, sorted.
std::vector<std::string> list_profiles();
/// Load a bundled profile by name ("rk3588"); ProfileError listing the known names if absent.
SocProfile load_named_profile(const std::string& name);
/// A bundled name ("rk3588") or a profile file (anything ending in ".json" or containing '/').
SocProfile load_profile_arg(const std::string& name_or_file);

/// Set one parameter from "section.key=value" (e.g. "npu.task_overhead_cycles=1200",
/// "memory.ddr_efficiency=0.65", "host.cpu=Cortex-A76"; a list as "0x1,0x2"). The value is parsed and
/// range-checked as the loader does, then the profile's cross-checks run again; the grade is kept
/// and the source records the override. ProfileError naming the path on an unknown path, a bad
/// value or a failed check.
void apply_param_override(SocProfile& p, const std::string& assignment);
/// Several overrides (`--param` given more than once): all are set, then the cross-checks run once
/// (so npu.core_count and npu.core_mmio_bases can change together); all or nothing.
void apply_param_overrides(SocProfile& p, const std::vector<std::string>& assignments);

}  // namespace hw
