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
    Param<int> pc_task_number_bits;
    Param<uint32_t> pc_task_status_offset;
    Param<int> pc_cycles_per_regcmd;  ///< PC decode cost per fetched entry
    Param<int> task_overhead_cycles;  ///< fixed cost per task: ping-pong switch, completion
    Param<int> dma_burst_bytes;       ///< size of one DMA transaction on the bus
};

struct MemoryParams {
    Param<uint64_t> ddr_base;
    Param<uint64_t> ddr_size_bytes;
    Param<double> ddr_peak_bytes_per_s;
    Param<double> ddr_efficiency;       ///< sustained / peak
    Param<double> ddr_read_latency_ns;  ///< first-beat latency of a read burst
    Param<double> ddr_write_latency_ns;
    Param<double> interconnect_latency_ns;  ///< one hop through the NoC, each direction
    Param<uint64_t> nbuf_base;              ///< on-chip SRAM the NPU can use (NBUF); size 0 = none
    Param<uint64_t> nbuf_bytes;
    Param<double> nbuf_bytes_per_s;
    Param<double> nbuf_latency_ns;
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
/// Directory holding the bundled profiles: $NPUSIM_DATA_DIR/npu_models/hwdesc/profiles, else the
/// compiled-in source location.
std::string profile_dir();
/// Names of the bundled profiles, sorted.
std::vector<std::string> list_profiles();
/// Load a bundled profile by name ("rk3588"); ProfileError listing the known names if absent.
SocProfile load_named_profile(const std::string& name);

}  // namespace hw
