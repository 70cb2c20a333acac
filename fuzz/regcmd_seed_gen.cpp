// SPDX-License-Identifier: MIT
// Writes the seed corpus of regcmd_fuzz: each model compiled in full for rk3588 as `npusim run` compiles
// it, relocated to the profile's IOVA base, and its regcmd region (every task's entries and task-end
// entries, in arena order) written as a raw little-endian buffer, like `npusim run --dump-regcmd`.
//   regcmd_seed_gen OUT_DIR MODEL.onnx...
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "compiler/model_loader.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: regcmd_seed_gen OUT_DIR MODEL.onnx...\n";
        return 2;
    }
    const hw::SocProfile soc = hw::load_named_profile("rk3588");
    for (int i = 2; i < argc; ++i) {
        drv::importer::ImportOptions io;
        io.ort_cpu = drv::importer::OrtCpu::X86_64;
        drv::rknpu::CompiledModel m = drv::rknpu::compile_model(drv::importer::load_model(argv[i], io), soc, {});
        drv::rknpu::relocate(m, soc.mem.iova_base.value);
        if (m.tasks.empty()) {
            std::cerr << argv[i] << ": no NPU tasks\n";
            continue;
        }
        uint64_t lo = UINT64_MAX, hi = 0;
        for (const auto& t : m.tasks) {
            lo = std::min(lo, t.regcmd_offset);
            hi = std::max(hi, t.regcmd_offset + (uint64_t{t.regcfg_amount} + 4) * 8);
        }
        const std::string out =
            (std::filesystem::path(argv[1]) / (std::filesystem::path(argv[i]).stem().string() + ".regcmd")).string();
        std::ofstream f(out, std::ios::binary);
        f.write(reinterpret_cast<const char*>(m.arena_init.data() + (lo - m.arena_init_base)),
                static_cast<std::streamsize>(hi - lo));
        std::cout << out << ": " << m.tasks.size() << " tasks, " << (hi - lo) / 8 << " entries\n";
    }
    return 0;
}
