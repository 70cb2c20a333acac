// SPDX-License-Identifier: MIT
// Shared by the model pipeline fuzz targets (onnx_pipeline_fuzz, tflite_pipeline_fuzz): what
// `npusim run --platform rk3588 --mode timing MODEL` does after reading the file. The importer
// runs shape inference, constant folding and the QDQ fold (ImportOptions as model_cli.cpp sets
// them for timing mode); compile_model consults the operator-spec checker for every node, then
// partitions, plans memory and lowers timing-only (weights laid out, not packed).
//
// A clean outcome is a compiled model or an error the CLI reports in one line: std::invalid_argument
// (the platform refuses the model) or std::runtime_error (ImportError, CheckError, num::SizeError,
// ...). Anything else escaping - std::bad_alloc, std::out_of_range, std::length_error, another
// logic_error - is an internal failure and aborts (a finding), as crashes and sanitizer reports do.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <stdexcept>
#include <typeinfo>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "numerics/limits.h"

namespace npusim_fuzz {

/// Tensors a fuzz input may ask for are capped well below libFuzzer's 2 GiB malloc limit: a larger
/// one must be refused by the budget check (num::SizeError), never allocated.
inline constexpr uint64_t kFuzzMaxMemory = uint64_t{256} << 20;

inline const hw::SocProfile& rk3588() {
    static const hw::SocProfile soc = [] {
        num::set_max_memory(kFuzzMaxMemory);
        return hw::load_named_profile("rk3588");
    }();
    return soc;
}

inline drv::importer::ImportOptions timing_import_options() {
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Rewrite;
    io.ort_cpu = drv::importer::OrtCpu::X86_64;
    io.skip_data_from_bytes = 64 * 1024;
    return io;
}

[[noreturn]] inline void finding(const char* stage, const std::exception& e) {
    std::fprintf(stderr, "fuzz finding: %s threw %s: %s\n", stage, typeid(e).name(), e.what());
    std::abort();
}

/// Runs `import` (returns the graph) then the timing-only compile for rk3588 (fp16 path for odd-sized
/// inputs, so both the int8 and the float-on-NPU lowerings are reached).
template <class Import>
void run_pipeline(Import&& import, size_t size) {
    const hw::SocProfile& soc = rk3588();
    drv::ir::Graph g;
    try {
        g = import(timing_import_options());
    } catch (const std::runtime_error&) {
        return;
    } catch (const std::exception& e) {
        finding("import", e);
    }
    try {
        drv::rknpu::CompileOptions co;
        co.timing_only = true;
        co.fp16 = size % 2 == 1;
        const drv::rknpu::CompiledModel m = drv::rknpu::compile_model(std::move(g), soc, co);
        if (m.arena_init.size() > m.arena_bytes) std::abort();  // the initialised part lies inside the arena
    } catch (const std::invalid_argument&) {
    } catch (const std::runtime_error&) {
    } catch (const std::exception& e) {
        finding("compile_model", e);
    }
}

}  // namespace npusim_fuzz
