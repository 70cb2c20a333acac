// SPDX-License-Identifier: MIT
// `npusim run --compile-cache DIR` (issue 25): the compiled model of an NPU model run is stored in
// DIR under a key of everything the compilation depends on, and a later run with the same key
// loads it instead of importing and compiling the model. The file format is
// compiler/rknpu/model_cache.h; a file that cannot be used (damaged, truncated, another format or key)
// is a miss with a one-line warning, and the run compiles afresh and stores the file again.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/rknpu/model.h"
#include "hw/profile.h"

namespace sim {

/// What the compiled model depends on besides the npusim build (its GNU build ID, or the
/// executable's bytes) and the operator spec DB, which the key always includes.
struct CompileCacheKeyInputs {
    std::string model;                    ///< model file (its bytes are hashed)
    const hw::SocProfile* soc = nullptr;  ///< the profile after --profile and --param
    std::string mode;                     ///< "full" / "timing"
    bool keep_all_tensors = false;        ///< full mode with the check (CompileOptions::keep_all_tensors)
    std::string core_mask, quantize;
    std::vector<std::string> cpu_nodes, input_shapes;
};

/// The key: a hash of the cache format, the build, the spec DB, the model bytes, every profile
/// parameter and the options. Throws std::runtime_error when the model cannot be read.
uint64_t compile_cache_key(const CompileCacheKeyInputs& k);

/// The outcome of one run's cache use, for the report (ModelRunResult::compile_cache).
struct CompileCacheStatus {
    bool used = false, hit = false;
    std::string file;    ///< DIR/<key>.npc
    std::string reason;  ///< a miss: "no file" or why the file could not be used
};

class CompileCache {
   public:
    /// Creates `dir` if needed; throws std::invalid_argument (exit 2) when it cannot.
    CompileCache(const std::string& dir, uint64_t key);
    /// Loads the compiled model and the stored `extra` strings. false: a miss (status().reason;
    /// a file that exists but cannot be used also gets a warning line on `err`).
    bool load(drv::rknpu::CompiledModel& m, std::vector<std::string>& extra, std::ostream& err);
    /// Stores `m` (before relocation) atomically: a temporary file renamed over DIR/<key>.npc. A
    /// failure is a warning on `err`, not an error of the run.
    void store(const drv::rknpu::CompiledModel& m, const std::vector<std::string>& extra, std::ostream& err);
    const CompileCacheStatus& status() const { return status_; }

   private:
    uint64_t key_;
    CompileCacheStatus status_;
};

}  // namespace sim
