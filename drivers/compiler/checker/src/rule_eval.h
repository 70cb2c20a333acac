// SPDX-License-Identifier: MIT
// Evaluation of one spec rule against one node: returns the violation text in plain words with
// the actual value ("kernel_w = 33 outside [1, 31]"), or nothing when the rule holds, does not
// apply (precondition false) or cannot be evaluated (value undefined).
#pragma once
#include <optional>
#include <string>

#include "node_context.h"

namespace drv::check {

std::optional<std::string> evaluate_rule(const Rule& r, const NodeContext& ctx, const PlatformSpec& p);

}  // namespace drv::check
