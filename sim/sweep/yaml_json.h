// SPDX-License-Identifier: MIT
// YAML sweep specs: the document converted to the JSON value the JSON reader gives (yaml-cpp,
// Debian libyaml-cpp-dev). Plain scalars become null/bool/integer/float when they read as one
// (YAML 1.2 core schema), quoted scalars stay strings.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace sweep {

/// SweepError naming the file and line on a YAML syntax error (or when built without yaml-cpp).
nlohmann::ordered_json yaml_to_json(const std::string& text, const std::string& file);

}  // namespace sweep
