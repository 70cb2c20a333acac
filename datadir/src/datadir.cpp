// SPDX-License-Identifier: MIT
// Run-time data lookup (datadir.h).
#include "npusim/datadir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace npusim {

namespace fs = std::filesystem;

std::string exe_dir() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec || p.empty()) return {};
    return p.parent_path().string();
}

std::string data_dir() {
    if (const char* d = std::getenv("NPUSIM_DATA_DIR"); d && *d) return d;
    std::error_code ec;
    fs::path dir = exe_dir();
    // bin/ of an installed tree is one level below the prefix; build-tree programs sit up to
    // four levels below build/ (build/tests/unit/<component>/<test>).
    for (int up = 0; up < 6 && !dir.empty(); ++up) {
        const fs::path cand = dir / "share" / "npusim";
        if (fs::is_directory(cand / "profiles", ec)) return cand.string();
        if (dir == dir.parent_path()) break;
        dir = dir.parent_path();
    }
    return {};
}

std::string data_path(const char* kind, const char* env) {
    if (env)
        if (const char* e = std::getenv(env); e && *e) return e;
    const std::string d = data_dir();
    return (fs::path(d.empty() ? std::string("share/npusim (not found beside the npusim binary)") : d) / kind).string();
}

}  // namespace npusim
