// SPDX-License-Identifier: MIT
// Per-node placement for `npusim check` from the RKNPU model compiler (check_placement.h).
#include "compiler/rknpu/check_placement.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "compiler/model_loader.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"

namespace drv::rknpu {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

/// The RKNPU profile the check's platform names: the --platform text, else a '_' token of the spec
/// id (RK3566_RK3568 -> rk3566). False when none is an RKNPU profile.
bool rknpu_profile(const std::string& platform, const drv::check::PlatformSpec& spec, hw::SocProfile& soc) {
    std::vector<std::string> names{lower(platform)};
    std::stringstream ss(lower(spec.id));
    for (std::string t; std::getline(ss, t, '_');) names.push_back(t);
    for (const auto& n : names) {
        try {
            soc = hw::load_named_profile(n);
        } catch (const hw::ProfileError&) {
            continue;
        }
        return soc.family == "rknpu";
    }
    return false;
}

const char* unit_name(Unit u) {
    switch (u) {
        case Unit::Npu: return "NPU";
        case Unit::Cpu: return "CPU";
        case Unit::View: return "view";
    }
    return "?";
}

}  // namespace

std::optional<std::vector<drv::check::NodePlacement>> check_placement(const std::string& model,
                                                                      const std::string& platform,
                                                                      const drv::check::PlatformSpec& spec,
                                                                      const std::vector<std::string>& input_shapes) {
    hw::SocProfile soc;
    if (!rknpu_profile(platform, spec, soc)) return std::nullopt;
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Rewrite;  // as `npusim run` imports
    io.ort_cpu = drv::importer::OrtCpu::X86_64;
    for (const auto& s : input_shapes) drv::importer::parse_input_shape(s, io);
    drv::ir::Graph g = drv::importer::load_model(model, io);
    CompileOptions co;
    co.timing_only = true;           // the same layers as the full compile (model_compiler_test)
    co.reject_unsupported = false;   // report the unsupported node instead of refusing the model
    // A float model: the fp16 path where the profile has one, as `npusim run` without --quantize.
    co.fp16 = is_float_model(g) && soc.npu.fp16_macs_per_cycle.value > 0;
    std::vector<drv::check::NodePlacement> out;
    CompiledModel m;
    try {
        m = compile_model(std::move(g), soc, co);
    } catch (const std::invalid_argument& e) {
        // npusim run would refuse the model (it does not fit, ...): the vendor verdicts still hold.
        const drv::ir::Graph again = drv::importer::load_model(model, io);
        for (auto& r : drv::check::check_model(again, spec).nodes) {
            drv::check::NodePlacement p;
            p.vendor = std::move(r);
            p.unit = "-";
            p.reason = "not compiled";
            p.note = e.what();
            out.push_back(std::move(p));
        }
        return out;
    }
    for (const auto& d : m.decisions) {
        drv::check::NodePlacement p;
        p.vendor = d.vendor;
        if (!d.vendor_checked) {
            p.vendor.node = d.node;
            p.vendor.verdict = drv::check::Verdict::NotInSeed;
            p.vendor.reason = "the compiler found no operator spec for " + soc.name;
        }
        if (d.layer >= 0) {
            const Layer& L = m.layers[static_cast<size_t>(d.layer)];
            p.unit = unit_name(L.unit);
            p.layer = L.name;
            p.reason = cpu_reason_name(L.cpu_reason);
            p.note = L.note;
        }
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace drv::rknpu
