// SPDX-License-Identifier: MIT
// MCU target table (see mcu_target.h): generated from hwdesc/profiles/mcu/*.json at build time.
#include "mcu/mcu_target.h"

#include <algorithm>
#include <cctype>

namespace mcu {

const std::vector<McuTarget>& all_targets() {
    static const std::vector<McuTarget> targets = [] {
        std::vector<McuTarget> v;
#include "mcu_targets.inc"
        return v;
    }();
    return targets;
}

const McuTarget* find_target(const std::string& name) {
    auto low = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    const std::string n = low(name);
    for (const auto& t : all_targets()) {
        if (low(t.name) == n) return &t;
        for (const auto& a : t.aliases)
            if (low(a) == n) return &t;
    }
    return nullptr;
}

}  // namespace mcu
