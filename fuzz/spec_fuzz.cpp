// SPDX-License-Identifier: MIT
// libFuzzer target: operator-spec JSON (drivers/compiler/specs/*.json) through the strict schema
// loader (check::SpecDb::parse: keys, types, rule expressions), then, when it loads, the checker
// with that spec on fixed graphs (three models of corpus/onnx, as written and as the NPU toolchain
// sees it, quantized_view): each rule's expressions evaluated against real nodes. A clean outcome
// is a loaded spec and verdicts, or SpecError/CheckError (std::runtime_error); anything else
// escaping aborts. Seeds: corpus/spec (small excerpts of the shipped specs).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "checker/checker.h"
#include "checker/spec_db.h"
#include "compiler/onnx/onnx_importer.h"
#include "numerics/limits.h"

#ifndef NPUSIM_FUZZ_SPEC_MODELS
#error "NPUSIM_FUZZ_SPEC_MODELS: the fixed ONNX models, ','-separated (fuzz/CMakeLists.txt)"
#endif

namespace {

const std::vector<drv::ir::Graph>& graphs() {
    static const std::vector<drv::ir::Graph> gs = [] {
        num::set_max_memory(uint64_t{256} << 20);
        std::vector<drv::ir::Graph> out;
        std::stringstream files(NPUSIM_FUZZ_SPEC_MODELS);
        for (std::string f; std::getline(files, f, ',');) {
            drv::ir::Graph g = drv::importer::import_onnx_file(f);
            out.push_back(drv::check::quantized_view(g));
            out.push_back(std::move(g));
        }
        if (out.empty()) std::abort();  // no models: the target would test nothing
        return out;
    }();
    return gs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<drv::ir::Graph>& gs = graphs();
    drv::check::PlatformSpec spec;
    try {
        spec = drv::check::SpecDb::parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    } catch (const std::runtime_error&) {
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz finding: SpecDb::parse threw %s: %s\n", typeid(e).name(), e.what());
        std::abort();
    }
    for (const drv::ir::Graph& g : gs) {
        try {
            const drv::check::CheckResult r = drv::check::check_graph(g, spec);
            if (r.nodes.size() > g.nodes().size()) std::abort();  // one result per node at most
        } catch (const std::runtime_error&) {
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fuzz finding: check_graph threw %s: %s\n", typeid(e).name(), e.what());
            std::abort();
        }
    }
    return 0;
}
