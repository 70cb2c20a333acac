// SPDX-License-Identifier: MIT
// Where npusim's run-time data lives (the SoC profiles, the operator-spec DB, the ISS core presets,
// the MCU firmware ELFs, the example layers). The binary finds it relative to itself, so that an
// installed tree (`cmake --install build --prefix P`: P/bin/npusim, P/share/npusim/...) runs from
// any location with the source and build trees gone; the build tree mirrors the same layout in
// build/share/npusim (symbolic links, datadir/CMakeLists.txt). No source or build path is
// compiled in.
//
// Lookup, first hit wins (documented in the README, "Installing"):
//   1. a per-kind variable: NPUSIM_PROFILE_DIR, NPUSIM_SPECS_DIR, RVISS_PRESET_DIR, NPUSIM_MCU_FIRMWARE_DIR,
//      NPUSIM_TNPUV2_DIR;
//   2. $NPUSIM_DATA_DIR/<kind> (a share/npusim-style tree);
//   3. <directory of the executable>/../share/npusim/<kind>, then the same from each ancestor of
//      the executable's directory (build/sim/npusim and build/tests/... find build/share/npusim).
#pragma once
#include <string>

namespace npusim {

/// The directory of the running executable (/proc/self/exe), "" when unknown.
std::string exe_dir();

/// The share/npusim tree found from $NPUSIM_DATA_DIR or the executable's location, "" if none.
std::string data_dir();

/// The directory of one kind of data: "profiles", "specs", "presets", "firmware", "examples", "tnpuv2".
/// `env` names the per-kind override variable (nullptr: none). Returns data_dir()/kind, or a
/// path that does not exist (the callers' "not found" errors name it) when there is no tree.
std::string data_path(const char* kind, const char* env);

}  // namespace npusim
