// SPDX-License-Identifier: MIT
// RTL co-simulation of a run (`npusim run --rtl core,dpu`, `npusim replay --rtl ...`): one
// verilated RKNPU datapath per NPU core of the platform, put behind each core's task execution
// (RknpuCore::set_task_executor). Every conv / DPU task then runs its CORE and/or DPU part on the
// RTL, and also on the C++ engines: the RTL's bytes are what the core writes, the per-task
// comparison says whether they equal the C++ engine's, and the RTL's cycles stand beside the
// timing model's estimate. The platform's timeline stays the timing model's (the RTL runs in
// delta cycles), so reports with and without --rtl agree except for the RTL section.
// Built without Verilator (NPUSIM_RTL=OFF), creating a session throws std::invalid_argument.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hw/profile.h"
#include "npu/tlm/rknpu_core.h"

namespace npu::rtl {

struct RtlOptions {
    bool core = false;  ///< the CORE (MAC array + accumulators) in RTL
    bool dpu = false;   ///< the DPU integer datapath in RTL
    std::string vcd;    ///< write the RTL's signals here (VCD), empty: none
    bool any() const { return core || dpu; }
};

/// "core", "dpu", "core,dpu" (either order) -> options; throws std::invalid_argument naming the
/// bad item and the known ones.
RtlOptions parse_rtl_blocks(const std::string& list);

/// Whether this npusim was built with the RTL co-simulation (Verilator found, NPUSIM_RTL=ON).
bool rtl_built();

/// Why the RTL datapath cannot co-simulate this SoC ("" = it can): it is built for 16-byte atoms.
std::string soc_unsupported(const hw::SocProfile& soc);

/// One conv / DPU task as the co-simulation saw it.
struct RtlTaskRecord {
    int core = 0;
    int index = 0;          ///< task index within its kick
    uint64_t start_ps = 0;  ///< the task's start on the platform's timeline (its TaskRecord::start_ps)
    std::string kind;       ///< TaskPlan::kind
    std::string rtl;        ///< blocks that ran in RTL: "core+dpu", "core", "dpu", or "" (none)
    std::string fallback;   ///< why a requested block ran on the C++ engine ("" = none did)
    /// The compared span: "core+dpu" (CORE streaming into the DPU) vs max(model CORE, model DPU);
    /// "core" vs the model's MAC-array cycles; "dpu" vs the model's DPU cycles.
    uint64_t model_cycles = 0, rtl_cycles = 0;
    uint64_t model_core = 0, model_dpu = 0;  ///< the timing model's per-stage estimates
    uint64_t rtl_core_last = 0;              ///< cycle of the RTL CORE's last output (0: not in RTL)
    uint64_t bytes = 0, bytes_differ = 0;    ///< task output bytes and how many differ from the C++ engine
    double diff_pct() const {
        return model_cycles ? 100.0 * (static_cast<double>(rtl_cycles) - static_cast<double>(model_cycles)) /
                                  static_cast<double>(model_cycles)
                            : 0.0;
    }
};

class RtlSession {
   public:
    /// Attach to `cores` (during elaboration, before sc_start). Throws std::invalid_argument when
    /// the SoC does not fit the RTL (atoms other than 16 bytes), or when built without Verilator.
    RtlSession(const RtlOptions& o, const hw::SocProfile& soc, const std::vector<tlm_models::RknpuCore*>& cores);
    ~RtlSession();
    RtlSession(const RtlSession&) = delete;
    RtlSession& operator=(const RtlSession&) = delete;

    /// Every co-simulated task, ordered by start time then core.
    std::vector<RtlTaskRecord> records() const;
    /// Close the VCD (after sc_start returned).
    void finish();

   private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Text section for the run report: one row per task (`label(record)` names its layer, may be
/// empty) and a summary line. JSON: {"blocks": ..., "tasks": [...], "summary": {...}}.
std::string report_text(const std::vector<RtlTaskRecord>& recs, const RtlOptions& o,
                        const std::vector<std::string>& labels = {});
nlohmann::ordered_json report_json(const std::vector<RtlTaskRecord>& recs, const RtlOptions& o,
                                   const std::vector<std::string>& labels = {});
/// One error line per run when some task's RTL bytes differ from the C++ engine's ("" = none).
std::string mismatch_error(const std::vector<RtlTaskRecord>& recs);

}  // namespace npu::rtl
