// SPDX-License-Identifier: MIT
// `npusim check` on an RKNPU platform reports npusim's own per-node decision: the model imported as
// `npusim run` imports it and compiled (timing-only: same layers, no weight packing) for the SoC, so
// the vendor verdict, the rewrites and NPU / CPU / view come from the run's compiler.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "checker/cli.h"

namespace drv::rknpu {

/// drv::check::PlacementFn for the CLI. nullopt when `platform` (or the spec's id) names no RKNPU
/// profile. Throws std::exception (one line) when the model cannot be imported or compiled.
std::optional<std::vector<drv::check::NodePlacement>> check_placement(const std::string& model,
                                                                      const std::string& platform,
                                                                      const drv::check::PlatformSpec& spec,
                                                                      const std::vector<std::string>& input_shapes);

}  // namespace drv::rknpu
