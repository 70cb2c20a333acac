// SPDX-License-Identifier: MIT
// The host program of a whole-model run (internal to sim/app): the Runner drives the simulated
// SoC through the model's steps (NPU kicks through the driver, host CPU nodes), checks each layer
// and records what the report needs. run_model() (model_run.cpp) builds it and reads its results.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "app/model_run.h"
#include "drv/rknpu/driver.h"
#include "numerics/tensor.h"
#include "platform/platform.h"

namespace sim {
class SimHal;
namespace run_detail {

namespace rk = drv::rknpu;
using npu::tlm_models::SimMode;

/// Simulated time now, in picoseconds.
uint64_t now_ps();
/// Process CPU seconds (user + sys) so far.
double process_cpu_seconds();

/// Everything the host program needs while the simulation runs.
class Runner {
   public:
    Runner(const hw::SocProfile& soc, rk::CompiledModel& m, const std::map<std::string, num::Tensor>& inputs,
           const ModelRunOptions& o, Platform& plat, ModelRunResult& r, std::ostream& progress)
        : soc_(soc), m_(m), inputs_(inputs), o_(o), plat_(plat), r_(r), progress_(progress) {
        full_ = o.mode == SimMode::Full;
        checking_ = full_ && o.check;
        for (size_t i = 0; i < m.layers.size(); ++i)
            for (const std::string& out : m.layers[i].outputs) producer_[out] = i;
        task_core_.assign(m.tasks.size(), -1);
        task_rec_.assign(m.tasks.size(), 0);
        layer_host_.assign(m.layers.size(), {0, 0});
    }

    void host_program();
    void poller();
    /// Process CPU seconds of each repetition's inference (--repeat).
    std::vector<double> sim_cpu_s_;

    // Results read after the simulation.
    std::vector<int> task_core_;                          ///< core whose records hold the task, -1 = not run
    std::vector<size_t> task_rec_;                        ///< index into that core's records
    std::vector<std::pair<uint64_t, uint64_t>> layer_host_;  ///< CPU layers: start, end ps
    std::map<std::string, num::Tensor> final_outputs_;
    std::map<std::string, num::Tensor> snapshot_;         ///< device/host value of every tensor when produced
    uint64_t t0_ = 0, t1_ = 0;
    bool done_ = false;

   private:
    struct Kick {
        int core = 0;
        std::vector<size_t> tasks;  ///< model task indices
        std::vector<rk::Task> hw;
        rk::SubmitResult sub;
        size_t rec_before = 0, diag_before = 0;
    };

    uint64_t base_ = 0;
    drv::DmaBuffer arena_{};
    SimHal* hal_ = nullptr;

    std::string fail_text(size_t step, const Kick& k);
    /// Attaches the arena's host memory to the simulated DDR; false: copy it in instead.
    bool attach_arena();
    std::vector<std::unique_ptr<uint8_t, void (*)(void*)>> arena_zero_;  ///< zero parts of the attached arena
    void run_inference(rk::Driver& drvr);
    /// The inference's latency, then per model task: core, span and compute cycles (--repeat).
    std::vector<uint64_t> task_figures() const;
    void run_npu_step(size_t si, rk::Driver& drvr);
    void run_cpu_step(size_t si);
    void run_nodes_on_host(const rk::Layer& L, std::map<std::string, num::Tensor>& env,
                           const std::function<const num::Tensor&(const std::string&)>& get);
    /// A value the host holds or fetches (a constant, a host result, a device tensor downloaded
    /// once); the reference stays valid while host_env_ keeps the entry.
    const num::Tensor& host_value(const std::string& name);
    num::Tensor download(const rk::DeviceTensor& t);
    void upload(const rk::DeviceTensor& t, const num::Tensor& x);
    void snapshot_views();
    void show_progress(size_t layer);

    const hw::SocProfile& soc_;
    rk::CompiledModel& m_;
    const std::map<std::string, num::Tensor>& inputs_;
    const ModelRunOptions& o_;
    Platform& plat_;
    ModelRunResult& r_;
    std::ostream& progress_;
    bool full_ = true, checking_ = true, failed_ = false;
    std::map<std::string, size_t> producer_;
    std::map<std::string, num::Tensor> host_env_;
    // progress
    std::vector<Kick>* active_ = nullptr;
    size_t shown_layer_ = SIZE_MAX;
    int shown_decile_ = 0;
    bool shown_any_ = false;
};

}  // namespace run_detail
}  // namespace sim
