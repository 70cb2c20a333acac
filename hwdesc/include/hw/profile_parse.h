// SPDX-License-Identifier: MIT
// A SoC profile from JSON text in memory (hw/profile.h loads files; this is the parser behind it, for
// callers that hold the bytes: the profile fuzz target).
#pragma once
#include <string>

#include "hw/profile.h"

namespace hw {

/// Parse and validate the JSON text of a profile, exactly as load_profile does after reading the
/// file; `file` names it in messages. Throws ProfileError.
SocProfile parse_profile(const std::string& text, const std::string& file);

}  // namespace hw
