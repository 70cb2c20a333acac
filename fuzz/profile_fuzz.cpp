// SPDX-License-Identifier: MIT
// libFuzzer target: SoC profile JSON (hwdesc/profiles/*.json) through hw::parse_profile (schema,
// ranges, cross-field validation, calibration section), then, when it loads, what every command
// derives from a profile: the parameter listing, the register generation and the host cost model.
// A clean outcome is a loaded profile or hw::ProfileError; anything else escaping aborts. Seeds:
// corpus/profile (the shipped profiles).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "hw/profile_parse.h"
#include "hw/regdb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const hw::SocProfile p = hw::parse_profile(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
        for (const auto& v : p.params())
            if (v.path.empty()) std::abort();
        (void)hw::rknpu::soc_generation(p);
        const double s = hw::host_op_seconds(p.host, 1000, 1000, 1000);
        if (std::isnan(s) || s < 0) std::abort();  // validated parameters give a real, non-negative cost
    } catch (const hw::ProfileError&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz finding: parse_profile threw %s: %s\n", typeid(e).name(), e.what());
        std::abort();
    }
    return 0;
}
