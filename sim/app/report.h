// SPDX-License-Identifier: MIT
// Per-layer run report: a text table for people, JSON for tools. Both deterministic.
#pragma once
#include <string>

#include "app/conv_example.h"

namespace sim {

std::string report_text(const RunResult& r);
std::string report_json(const RunResult& r);

}  // namespace sim
