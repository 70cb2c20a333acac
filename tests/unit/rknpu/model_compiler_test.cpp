// SPDX-License-Identifier: MIT
// Model compiler (issue 6): zoo graphs compiled for RK3588, run WITHOUT SystemC by the direct
// executor (chains followed through their PC links, tasks replayed into the block engines, CPU
// layers on num::run_op), outputs compared with the reference executor (ref::execute). Isolated
// mode feeds each NPU layer the reference inputs and compares its outputs with the reference's.
// Zoo: the build tree's tests/unit/compiler/zoo (tests + MobileNetV2); ResNet50 v2, YOLOv5s and
// YOLOv8n from $NPUSIM_ZOO_DIR when set (make_zoo.py --models resnet50v2,yolov5s,yolov8n).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "compiler/model_loader.h"
#include "compiler/ref/reference.h"
#include "direct/direct_exec.h"
#include "compiler/rknpu/lower.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"

namespace {

using namespace drv::rknpu;
using sim::compare_tensors;
using sim::DirectOptions;
using sim::DirectResult;
using sim::reference_values;
using sim::run_direct;
using sim::TensorDiff;

const hw::SocProfile& rk3588() {
    static const hw::SocProfile p = hw::load_named_profile("rk3588");
    return p;
}

std::string zoo_path(const std::string& file, bool big) {
    if (big) {
        const char* d = std::getenv("NPUSIM_ZOO_DIR");
        if (!d || !*d) d = NPUSIM_TEST_ZOO_DIR;  // the build zoo holds them with NPUSIM_ZOO_FULL
        const std::string p = std::string(d) + "/" + file;
        return std::filesystem::exists(p) ? p : std::string();
    }
    const std::string p = std::string(NPUSIM_TEST_ZOO_DIR) + "/" + file;
    return std::filesystem::exists(p) ? p : std::string();
}

drv::ir::Graph load(const std::string& path) {
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Rewrite;
    return drv::importer::load_model(path, io);
}

std::map<std::string, num::Tensor> inputs_for(const drv::ir::Graph& g, uint64_t seed) {
    std::map<std::string, num::Tensor> in;
    for (size_t k = 0; k < g.inputs().size(); ++k)
        in[g.inputs()[k]] = drv::ref::random_input(g.value(g.inputs()[k]), seed, k);
    return in;
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

struct Counts {
    size_t npu = 0, cpu = 0, view = 0;
};
Counts count_layers(const CompiledModel& m) {
    Counts c;
    for (const auto& L : m.layers) (L.unit == Unit::Npu ? c.npu : L.unit == Unit::Cpu ? c.cpu : c.view)++;
    return c;
}

/// Memory plan property, recomputed from the layer list: two root buffers (tensors that alias no
/// other) whose lifetimes overlap never share bytes. Lifetime = first to last layer touching the
/// tensor or any alias of it; graph inputs from the start, graph outputs to the end. With
/// `all_disjoint` (keep_all_tensors) no two roots share bytes at all.
void check_memory_plan(const CompiledModel& m, bool all_disjoint) {
    auto root = [&](std::string v) {
        for (int k = 0; k < 64 && !m.tensors.at(v).alias_of.empty(); ++k) v = m.tensors.at(v).alias_of;
        return v;
    };
    std::map<std::string, std::pair<long, long>> life;
    auto touch = [&](const std::string& v, long at) {
        if (!m.tensors.count(v)) return;
        auto [it, fresh] = life.emplace(root(v), std::make_pair(at, at));
        if (!fresh) it->second = {std::min(it->second.first, at), std::max(it->second.second, at)};
    };
    for (const auto& in : m.graph.inputs()) touch(in, -1);
    for (size_t l = 0; l < m.layers.size(); ++l) {
        for (const auto& v : m.layers[l].inputs) touch(v, static_cast<long>(l));
        for (const auto& v : m.layers[l].outputs) touch(v, static_cast<long>(l));
    }
    for (const auto& out : m.graph.outputs()) touch(out, static_cast<long>(m.layers.size()) + 1);
    std::vector<std::pair<std::string, std::pair<long, long>>> roots(life.begin(), life.end());
    for (size_t i = 0; i < roots.size(); ++i)
        for (size_t j = i + 1; j < roots.size(); ++j) {
            const auto &a = roots[i], &b = roots[j];
            const bool live_together = a.second.first <= b.second.second && b.second.first <= a.second.second;
            if (!live_together && !all_disjoint) continue;
            const DeviceTensor &ta = m.tensors.at(a.first), &tb = m.tensors.at(b.first);
            const bool overlap = ta.offset < tb.offset + tb.bytes && tb.offset < ta.offset + ta.bytes;
            EXPECT_FALSE(overlap) << a.first << " [" << a.second.first << "," << a.second.second << "] and " << b.first
                                  << " [" << b.second.first << "," << b.second.second << "] share bytes";
        }
}

/// Step structure and arena invariants every compiled model must satisfy.
void check_structure(const CompiledModel& m) {
    ASSERT_FALSE(m.steps.empty());
    std::vector<int> seen(m.tasks.size(), 0);
    for (const auto& s : m.steps) {
        if (s.unit == Unit::Cpu) {
            EXPECT_TRUE(s.chains.empty());
            for (size_t l : s.layers) EXPECT_EQ(m.layers[l].unit, Unit::Cpu);
            continue;
        }
        for (const auto& [core, chain] : s.chains)
            for (size_t t : chain) {
                ASSERT_LT(t, m.tasks.size());
                EXPECT_EQ(m.tasks[t].core, core);
                EXPECT_EQ(m.tasks[t].regcmd_offset % 64, 0u);
                ++seen[t];
            }
    }
    for (size_t t = 0; t < seen.size(); ++t) EXPECT_EQ(seen[t], 1) << "task " << t << " not in exactly one chain";
    EXPECT_EQ(m.arena_init.size(), m.weight_bytes + m.regcmd_bytes);
    for (const auto& [name, t] : m.tensors) {
        EXPECT_GE(t.offset, m.arena_init.size()) << name << " overlaps the initialised arena";
        EXPECT_LE(t.offset + t.bytes, m.arena_bytes) << name;
    }
    for (uint64_t r : m.relocs) EXPECT_LT(r + 8, m.arena_init.size() + 1);
    check_memory_plan(m, false);
}

struct Figures {
    TensorDiff isolated;  ///< all NPU layers together
    size_t layers_exact = 0, layers = 0;
};

Figures isolated_figures(const CompiledModel& m, const std::map<std::string, num::Tensor>& in,
                         const hw::SocProfile& soc) {
    const auto ref = reference_values(m.graph, in);
    DirectOptions o;
    o.isolated_reference = &ref;
    const DirectResult r = run_direct(m, soc, in, o);
    Figures f;
    for (const auto& c : r.layers) {
        EXPECT_TRUE(c.diff.same_shape) << m.layers[c.layer].name;
        EXPECT_LE(c.diff.max_diff, 1) << "layer " << m.layers[c.layer].name << " (" << m.layers[c.layer].op
                                      << "): " << c.diff.str();
        f.isolated.values += c.diff.values, f.isolated.equal += c.diff.equal,
            f.isolated.off_by_one += c.diff.off_by_one;
        f.isolated.worse += c.diff.worse, f.isolated.max_diff = std::max(f.isolated.max_diff, c.diff.max_diff);
        if (std::getenv("NPUSIM_TEST_VERBOSE"))
            std::cout << "  layer " << m.layers[c.layer].name << " (" << m.layers[c.layer].op << "): " << c.diff.str()
                      << "\n";
        f.layers_exact += c.diff.exact();
        ++f.layers;
    }
    return f;
}

size_t argmax(const num::Tensor& t) {
    const float* p = t.data<float>();
    return static_cast<size_t>(std::max_element(p, p + t.numel()) - p);
}

/// Compiles, checks structure, runs isolated and end to end; prints the figures.
/// LSB of a float graph output produced by a DequantizeLinear (0 if not).
double output_lsb(const drv::ir::Graph& g, const std::string& out) {
    const int p = g.producer(out);
    if (p < 0 || g.nodes()[static_cast<size_t>(p)].op_type != "DequantizeLinear") return 0;
    const drv::ir::Value& s = g.value(g.nodes()[static_cast<size_t>(p)].input(1));
    return s.data ? s.data->data<float>()[0] : 0;
}

void run_model(const std::string& label, const std::string& path, double max_isolated_off_frac, bool classifier,
               const CompileOptions& opts = {}, const hw::SocProfile& soc = rk3588()) {
    const drv::ir::Graph g = load(path);
    const double t0 = cpu_seconds();
    const CompiledModel m = compile_model(g, soc, opts);
    const double compile_s = cpu_seconds() - t0;
    check_structure(m);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << problem;
    const Counts c = count_layers(m);
    const auto in = inputs_for(g, 7);
    const Figures f = isolated_figures(m, in, soc);
    EXPECT_LE(static_cast<double>(f.isolated.off_by_one),
              max_isolated_off_frac * static_cast<double>(f.isolated.values));
    const DirectResult r = run_direct(m, soc, in);
    const auto want = drv::ref::execute(g, in);
    std::string e2e;
    for (const auto& [name, w] : want) {
        ASSERT_TRUE(r.outputs.count(name)) << name;
        const TensorDiff d = compare_tensors(r.outputs.at(name), w);
        EXPECT_TRUE(d.same_shape) << name;
        const double lsb = output_lsb(g, name);
        e2e += fmt::format(
            " {}: {} values, {} differ ({:.1f}%), max |diff| {:.4g}{}", name, d.values, d.values - d.equal,
            100.0 * static_cast<double>(d.values - d.equal) / static_cast<double>(std::max<size_t>(1, d.values)),
            w.dtype() == num::DType::F32 ? d.max_abs : static_cast<double>(d.max_diff),
            lsb > 0 ? fmt::format(" = {:.0f} LSB", d.max_abs / lsb) : std::string());
        if (classifier) {
            const bool top1 = argmax(r.outputs.at(name)) == argmax(w);
            e2e += top1 ? ", top-1 agrees" : ", top-1 DIFFERS";
            EXPECT_TRUE(top1) << name;
        }
    }
    for (const auto& L : m.layers)
        if (L.unit != Unit::Npu || L.op == "Concat")
            std::cout << fmt::format("[{}] {} layer {} ({}): {}\n", label,
                                     L.unit == Unit::Cpu    ? "CPU"
                                     : L.unit == Unit::View ? "view"
                                                            : "NPU",
                                     L.name, L.op, L.note);
    std::cout << fmt::format(
        "[{}] {}: layers {} NPU / {} CPU / {} view, {} tasks, {} steps; weights {} KiB, regcmd {} KiB, arena {} KiB; "
        "compile "
        "{:.1f} ms CPU\n[{}] isolated: {} NPU layers, {} exact; {} values, {} off by 1 LSB ({:.3f}%), {} worse\n[{}] "
        "end to end:{}\n",
        label, soc.name, c.npu, c.cpu, c.view, m.tasks.size(), m.steps.size(), m.weight_bytes >> 10,
        m.regcmd_bytes >> 10, m.arena_bytes >> 10, compile_s * 1e3, label, f.layers, f.layers_exact, f.isolated.values,
        f.isolated.off_by_one,
        100.0 * static_cast<double>(f.isolated.off_by_one) /
            static_cast<double>(std::max<size_t>(1, f.isolated.values)),
        f.isolated.worse, label, e2e);
}

TEST(ModelCompiler, CoreMaskParsing) {
    const auto& p = rk3588();
    EXPECT_EQ(parse_core_mask("auto", p), std::vector<int>{0});
    EXPECT_EQ(parse_core_mask("1", p), std::vector<int>{1});
    EXPECT_EQ(parse_core_mask("0_1_2", p), (std::vector<int>{0, 1, 2}));
    for (const char* bad : {"3", "0_0", "x", "0_", "", "01"}) {
        if (std::string(bad).empty()) continue;  // empty = auto
        EXPECT_THROW(parse_core_mask(bad, p), std::invalid_argument) << bad;
    }
    try {
        parse_core_mask("7", p);
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("0_1_2"), std::string::npos) << e.what();
    }
}

TEST(ModelCompiler, LayoutRoundTripUint8WithPartialAtom) {
    DeviceTensor t;
    t.name = "x";
    t.c = 19, t.h = 3, t.w = 5, t.c2 = 16;
    t.ir_shape = {1, 19, 3, 5};
    t.line_stride = 5 * 16, t.surf_stride = 5 * 16 * 3 + 32;  // a gap between surfaces
    t.bytes = 2ull * t.surf_stride;
    t.graph_uint8 = true;
    t.zp = -3;
    num::Tensor x(num::DType::U8, {1, 19, 3, 5});
    for (size_t i = 0; i < x.numel(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(i * 37 + 11);
    const auto img = to_device(t, x);
    ASSERT_EQ(img.size(), t.bytes);
    // Channel 17, row 2, column 4 lives in surface 1 at lane 1, stored shifted by -128.
    const size_t at = 1 * t.surf_stride + 2 * t.line_stride + 4 * 16 + 1;
    EXPECT_EQ(static_cast<int8_t>(img[at]), static_cast<int>(x.data<uint8_t>()[(17 * 3 + 2) * 5 + 4]) - 128);
    const num::Tensor back = from_device(t, img);
    ASSERT_EQ(back.dtype(), num::DType::U8);
    EXPECT_EQ(back.shape(), x.shape());
    EXPECT_TRUE(std::equal(back.raw(), back.raw() + back.nbytes(), x.raw()));
    num::Tensor wrong(num::DType::I8, {1, 19, 3, 5});
    EXPECT_THROW(to_device(t, wrong), std::invalid_argument);
}

TEST(ModelCompiler, TinyQLinearConvAddMatchesReferenceAndRelocates) {
    const std::string path = zoo_path("t_qlinear.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    const drv::ir::Graph g = load(path);
    CompiledModel m = compile_model(g, rk3588());
    check_structure(m);
    const Counts c = count_layers(m);
    EXPECT_EQ(c.npu, 2u);           // QLinearConv, QLinearAdd
    EXPECT_EQ(c.cpu, 2u);           // QuantizeLinear (input), DequantizeLinear (output)
    ASSERT_EQ(m.steps.size(), 3u);  // CPU, NPU chain of 2+ tasks, CPU
    EXPECT_EQ(m.steps[1].unit, Unit::Npu);
    const auto in = inputs_for(g, 3);
    const auto want = drv::ref::execute(g, in);
    const DirectResult r = run_direct(m, rk3588(), in);
    const TensorDiff d = compare_tensors(r.outputs.at("y"), want.at("y"));
    EXPECT_TRUE(d.same_shape);
    // One Add of a conv output with itself: at most one LSB of the output scale anywhere.
    const float ys = g.value("d").quant.scale.at(0);
    EXPECT_LE(d.max_abs, ys * 1.0001) << d.str();
    // Relocation: same results at another base; idempotent; patches only the listed words.
    const auto before = m.arena_init;
    relocate(m, 0x100000);
    relocate(m, 0x100000);
    size_t changed = 0;
    for (size_t i = 0; i < before.size(); i += 8) changed += std::memcmp(&before[i], &m.arena_init[i], 8) != 0;
    EXPECT_EQ(changed, m.relocs.size());
    const DirectResult r2 = run_direct(m, rk3588(), in);
    EXPECT_TRUE(compare_tensors(r2.outputs.at("y"), r.outputs.at("y")).exact());
    relocate(m, 0);
    EXPECT_EQ(m.arena_init, before);
}

TEST(ModelCompiler, ForcedCpuNodesAndCpuStepSplit) {
    const std::string path = zoo_path("t_qlinear.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    const drv::ir::Graph g = load(path);
    CompileOptions o;
    o.cpu_nodes = {"QLinearAdd"};
    const CompiledModel m = compile_model(g, rk3588(), o);
    const Counts c = count_layers(m);
    EXPECT_EQ(c.npu, 1u);
    EXPECT_EQ(c.cpu, 3u);
    bool noted = false;
    for (const auto& L : m.layers)
        if (L.op == "QLinearAdd") noted = L.unit == Unit::Cpu && L.note.find("forced") != std::string::npos;
    EXPECT_TRUE(noted);
    const auto in = inputs_for(g, 5);
    const auto want = drv::ref::execute(g, in);
    const DirectResult r = run_direct(m, rk3588(), in);
    const TensorDiff d = compare_tensors(r.outputs.at("y"), want.at("y"));
    EXPECT_LE(d.max_abs, g.value("d").quant.scale.at(0) * 1.0001) << d.str();
}

TEST(ModelCompiler, BadCoreMaskThrowsOneLine) {
    const std::string path = zoo_path("t_qlinear.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    CompileOptions o;
    o.core_mask = "0_5";
    try {
        compile_model(load(path), rk3588(), o);
        FAIL() << "no throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
}

TEST(ModelCompiler, MobileNetV2) {
    const std::string path = zoo_path("mobilenetv2_qdq.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    run_model("mobilenetv2", path, 0.01, true);
}

TEST(ModelCompiler, MobileNetV2Int8Activations) {
    const std::string path = zoo_path("mobilenetv2_qdq_s8.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    run_model("mobilenetv2 s8", path, 0.01, true);
}

TEST(ModelCompiler, MovedGraphCompilesToTheSameModel) {
    const std::string path = zoo_path("mobilenetv2_qdq.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    drv::ir::Graph g = load(path);
    const CompiledModel a = compile_model(g, rk3588());
    const CompiledModel b = compile_model(std::move(g), rk3588());
    EXPECT_EQ(a.arena_init, b.arena_init);
    EXPECT_EQ(a.relocs, b.relocs);
    EXPECT_EQ(a.arena_bytes, b.arena_bytes);
    EXPECT_EQ(a.graph.dump(), b.graph.dump());
}

TEST(ModelCompiler, KeepAllTensorsGivesEveryActivationItsOwnBytes) {
    const std::string path = zoo_path("mobilenetv2_qdq.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    const drv::ir::Graph g = load(path);
    CompileOptions o;
    o.keep_all_tensors = true;
    const CompiledModel all = compile_model(g, rk3588(), o);
    const CompiledModel reuse = compile_model(g, rk3588());
    check_memory_plan(all, true);
    check_memory_plan(reuse, false);
    const uint64_t act_all = all.arena_bytes - all.arena_init.size(),
                   act_reuse = reuse.arena_bytes - reuse.arena_init.size();
    std::cout << fmt::format("[mobilenetv2] activations: {} KiB with reuse, {} KiB with keep_all_tensors\n",
                             act_reuse >> 10, act_all >> 10);
    EXPECT_LT(act_reuse * 3, act_all);  // lifetime-based reuse saves most of it
}

TEST(ModelCompiler, MobileNetV2WithoutCheckerLowersQGemm) {
    // RK3588's seed table has no Gemm, so the checker sends QGemm to the CPU; without it the
    // QGemm runs as a 1x1 conv on the NPU.
    const std::string path = zoo_path("mobilenetv2_qdq.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    CompileOptions o;
    o.consult_checker = false;
    const CompiledModel m = compile_model(load(path), rk3588(), o);
    bool gemm_on_npu = false;
    for (const auto& L : m.layers) gemm_on_npu |= L.op == "FullyConnected" && L.unit == Unit::Npu;
    EXPECT_TRUE(gemm_on_npu);
    run_model("mobilenetv2 (no checker)", path, 0.01, true, o);
}

TEST(ModelCompiler, MobileNetV2OnRk3566EightByteAtoms) {
    const std::string path = zoo_path("mobilenetv2_qdq.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    static const hw::SocProfile p = hw::load_named_profile("rk3566");
    run_model("mobilenetv2", path, 0.01, true, {}, p);
}

TEST(ModelCompiler, MobileNetV2ThreeCores) {
    const std::string path = zoo_path("mobilenetv2_qdq.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    const drv::ir::Graph g = load(path);
    CompileOptions o;
    o.core_mask = "0_1_2";
    const CompiledModel m = compile_model(g, rk3588(), o);
    check_structure(m);
    for (const auto& problem : verify_tiling(m, rk3588())) ADD_FAILURE() << problem;
    EXPECT_EQ(m.cores, (std::vector<int>{0, 1, 2}));
    const auto in = inputs_for(g, 7);
    isolated_figures(m, in, rk3588());
    const DirectResult r = run_direct(m, rk3588(), in);
    const auto want = drv::ref::execute(g, in);
    for (const auto& [name, w] : want) EXPECT_EQ(argmax(r.outputs.at(name)), argmax(w)) << name;
}

TEST(ModelCompiler, ResNet50v2) {
    const std::string path = zoo_path("resnet50v2_qdq.onnx", true);
    if (path.empty()) GTEST_SKIP() << "set NPUSIM_ZOO_DIR to a make_zoo.py output with resnet50v2";
    run_model("resnet50v2", path, 0.01, true);
}

TEST(ModelCompiler, YoloV5s) {
    const std::string path = zoo_path("yolov5s_qdq.onnx", true);
    if (path.empty()) GTEST_SKIP() << "set NPUSIM_ZOO_DIR to a make_zoo.py output with yolov5s";
    run_model("yolov5s", path, 0.01, false);
}

/// YOLOv8n (make_zoo.py --models yolov8n): every SiLU a ConvolutionSwish layer (issue 15).
TEST(ModelCompiler, YoloV8n) {
    const std::string path = zoo_path("yolov8n_qdq.onnx", true);
    if (path.empty()) GTEST_SKIP() << "set NPUSIM_ZOO_DIR to a make_zoo.py output with yolov8n";
    run_model("yolov8n", path, 0.01, false);
}

}  // namespace

namespace {

/// Compile CPU time, best of 3 (reported, not asserted: timings are not test criteria).
TEST(ModelCompiler, CompileCpuTime) {
    for (const auto& [file, big] : {std::pair<const char*, bool>{"mobilenetv2_qdq.onnx", false},
                                    {"resnet50v2_qdq.onnx", true},
                                    {"yolov5s_qdq.onnx", true}}) {
        const std::string path = zoo_path(file, big);
        if (path.empty()) continue;
        const drv::ir::Graph g = load(path);
        double best = 1e9;
        for (int k = 0; k < 3; ++k) {
            const double t0 = cpu_seconds();
            const CompiledModel m = compile_model(g, rk3588());
            best = std::min(best, cpu_seconds() - t0);
            EXPECT_FALSE(m.tasks.empty());
        }
        std::cout << fmt::format("[{}] compile_model best of 3: {:.1f} ms CPU\n", file, best * 1e3);
    }
}

}  // namespace

// ---- operator coverage on a small in-memory QDQ graph --------------------------------------
#ifdef NPUSIM_TEST_HAS_ONNX_BUILDER
#include "compiler/onnx/onnx_importer.h"
#include "onnx_builder.h"

namespace {

constexpr int32_t kU8 = ::onnx::TensorProto::UINT8;
constexpr int32_t kI8 = ::onnx::TensorProto::INT8;
constexpr int32_t kI32 = ::onnx::TensorProto::INT32;
constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

/// Deterministic pseudo-random values in [lo, hi].
using test_onnx::ramp;
std::vector<float> franges(size_t n, float lo, float hi, uint32_t seed) {
    std::vector<float> v;
    for (int32_t x : ramp(n, 0, 1000, seed)) v.push_back(lo + (hi - lo) * static_cast<float>(x) / 1000.f);
    return v;
}

/// x -> Q -> conv 3x3 (20 -> 32 ch, 9x11: odd sizes, input C not a multiple of 16) -> c1
///   c1 -> DQ -> BatchNormalization -> Q -> bn        (DPU per-channel affine)
///   bn -> MaxPool 3x3/2 p1 (ceil_mode) -> mp          (PPU)
///   c1 * bn -> QLinearMul -> ml                       (DPU EW multiply)
///   concat(c1, ml) -> QLinearConcat (different scales: copies) -> cc
///   cc -> QLinearGlobalAveragePool -> gp -> Flatten -> QLinearMatMul (64 -> 10) -> y1
drv::ir::Graph ops_graph() {
    test_onnx::ModelBuilder b(13);
    const int C = 20, K = 32, H = 9, W = 11;
    b.input("x", kF32, {1, C, H, W});
    auto q = [&](const std::string& in, const std::string& out, float s, int z) {
        b.init_f32(out + "_s", {}, {s});
        b.init_int(out + "_z", kU8, {}, {z});
        b.node("QuantizeLinear", {in, out + "_s", out + "_z"}, {out});
    };
    auto dq = [&](const std::string& in, const std::string& out) {
        b.node("DequantizeLinear", {in, in + "_s", in + "_z"}, {out});
    };
    q("x", "xq", 0.02f, 120);
    dq("xq", "xf");
    b.init_int("w", kI8, {K, C, 3, 3}, ramp(static_cast<size_t>(K) * C * 9, -90, 90, 1));
    b.init_f32("w_s", {K}, franges(K, 0.002f, 0.006f, 2));
    b.init_int("w_z", kI8, {K}, std::vector<int32_t>(K, 0));
    auto& dw = b.node("DequantizeLinear", {"w", "w_s", "w_z"}, {"wf"});
    test_onnx::ModelBuilder::attr_int(dw, "axis", 0);
    auto& cv = b.node("Conv", {"xf", "wf"}, {"c"}, "conv");
    test_onnx::ModelBuilder::attr_ints(cv, "pads", {1, 1, 1, 1});
    q("c", "c1", 0.05f, 130);
    dq("c1", "c1f");
    b.init_f32("g", {K}, franges(K, 0.5f, 1.5f, 3));
    b.init_f32("be", {K}, franges(K, -0.5f, 0.5f, 4));
    b.init_f32("mu", {K}, franges(K, -0.3f, 0.3f, 5));
    b.init_f32("va", {K}, franges(K, 0.5f, 2.f, 6));
    b.node("BatchNormalization", {"c1f", "g", "be", "mu", "va"}, {"bnf"}, "bn");
    q("bnf", "bn", 0.04f, 128);
    dq("bn", "bnf2");
    auto& mp = b.node("MaxPool", {"bnf2"}, {"mpf"}, "pool");
    test_onnx::ModelBuilder::attr_ints(mp, "kernel_shape", {3, 3});
    test_onnx::ModelBuilder::attr_ints(mp, "strides", {2, 2});
    test_onnx::ModelBuilder::attr_ints(mp, "pads", {1, 1, 1, 1});
    test_onnx::ModelBuilder::attr_int(mp, "ceil_mode", 1);
    q("mpf", "mp", 0.04f, 128);
    dq("mp", "y0");
    b.node("Mul", {"c1f", "bnf2"}, {"mlf"}, "mul");
    q("mlf", "ml", 0.09f, 100);
    dq("ml", "mlf2");
    auto& cc = b.node("Concat", {"c1f", "mlf2"}, {"ccf"}, "concat");
    test_onnx::ModelBuilder::attr_int(cc, "axis", 1);
    q("ccf", "cc", 0.07f, 110);
    dq("cc", "ccf2");
    b.node("GlobalAveragePool", {"ccf2"}, {"gpf"}, "gap");
    q("gpf", "gp", 0.03f, 125);
    dq("gp", "gpf2");
    auto& fl = b.node("Flatten", {"gpf2"}, {"flf"}, "flatten");
    test_onnx::ModelBuilder::attr_int(fl, "axis", 1);
    q("flf", "fl", 0.03f, 125);
    dq("fl", "flf2");
    b.dq_weight("m", {2 * K, 10}, ramp(2 * K * 10, -100, 100, 7), 0.004f, "mf");
    b.node("MatMul", {"flf2", "mf"}, {"mmf"}, "matmul");
    q("mmf", "mm", 0.05f, 128);
    dq("mm", "y1");
    b.output("y0");
    b.output("y1");
    (void)kI32;
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "ops.onnx");
}

TEST(ModelCompiler, OperatorCoverageIsolatedAndEndToEnd) {
    const drv::ir::Graph g = ops_graph();
    for (const char* mask : {"auto", "0_1_2"}) {
        CompileOptions o;
        o.core_mask = mask;
        o.consult_checker = false;  // the seed lists no MatMul-as-FC / Mul rules to test here
        const CompiledModel m = compile_model(g, rk3588(), o);
        check_structure(m);
        for (const auto& problem : verify_tiling(m, rk3588())) ADD_FAILURE() << mask << ": " << problem;
        std::map<std::string, Unit> unit;
        for (const auto& L : m.layers) {
            unit[L.op] = L.unit;
            if (L.unit == Unit::Cpu)
                std::cout << "[ops " << mask << "] CPU layer " << L.name << " (" << L.op << "): " << L.note << "\n";
        }
        for (const char* op : {"Conv", "BatchNorm", "MaxPool", "Mul", "Concat", "GlobalAveragePool", "FullyConnected"})
            EXPECT_EQ(unit.count(op) ? unit.at(op) : Unit::Cpu, Unit::Npu) << op << " (" << mask << ")";
        const auto in = inputs_for(g, 11);
        const Figures f = isolated_figures(m, in, rk3588());  // asserts <= 1 LSB per layer
        EXPECT_EQ(f.layers, 7u);
        EXPECT_LE(static_cast<double>(f.isolated.off_by_one), 0.02 * static_cast<double>(f.isolated.values)) << mask;
        const DirectResult r = run_direct(m, rk3588(), in);
        const auto want = drv::ref::execute(g, in);
        for (const auto& [name, w] : want) {
            const TensorDiff d = compare_tensors(r.outputs.at(name), w);
            // Per-layer 1-LSB differences may add up over the 6 layers before y1.
            EXPECT_LE(d.max_abs, 3.01 * output_lsb(g, name)) << name << " (" << mask << "): " << d.str();
        }
    }
}

// TensorRT-style explicit quantization (symmetric int8, zero point 0, one input quantizer per
// reader): DequantizeLinear -> BatchNormalization -> Clip(0, 6) -> two identical QuantizeLinear.
// onnxruntime keeps the Clip (the Q's range [-128, 127] does not imply it); the NPU layer is one
// DPU affine task whose BN-stage ReLU / ReLUX give the bounds Q(0) = 0 and Q(6) = 120, compared
// with the reference nodes (onnxruntime's float BatchNormalization, Clip, Q). (The vendor rule takes
// a standalone Clip only as ReLU6.)
TEST(ModelCompiler, TensorRtStyleBatchNormClipIsOneAffineTask) {
    const int C = 40, H = 5, W = 7;  // 40 channels: two C2 groups on RK3588 plus a partial one
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, C, H, W});
    b.init_f32("xs", {}, {0.02f});
    b.init_int("xz", kI8, {}, {0});
    b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
    b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xf"});
    b.init_f32("g", {C}, franges(C, -3.f, 3.f, 3));  // negative scales flip the sign too
    b.init_f32("be", {C}, franges(C, -0.5f, 0.5f, 4));
    b.init_f32("mu", {C}, franges(C, -0.3f, 0.3f, 5));
    b.init_f32("va", {C}, franges(C, 0.1f, 0.5f, 6));
    b.node("BatchNormalization", {"xf", "g", "be", "mu", "va"}, {"bnf"}, "bn");
    b.init_f32("lo", {}, {0.0f});
    b.init_f32("hi", {}, {6.0f});
    b.node("Clip", {"bnf", "lo", "hi"}, {"cf"}, "clip");
    b.init_f32("ys", {}, {0.05f});
    b.init_int("yz", kI8, {}, {0});
    for (const char* k : {"a", "b"}) {
        b.node("QuantizeLinear", {"cf", "ys", "yz"}, {std::string("q") + k}, std::string("quant_") + k);
        b.node("DequantizeLinear", {std::string("q") + k, "ys", "yz"}, {std::string("y") + k});
        b.output(std::string("y") + k);
    }
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Rewrite;
    const std::string s = b.bytes();
    const drv::ir::Graph g = drv::importer::import_onnx_bytes(s.data(), s.size(), io, "bnclip.onnx");
    static const hw::SocProfile rk3566 = hw::load_named_profile("rk3566");
    for (const hw::SocProfile* soc : {&rk3588(), &rk3566}) {
        const CompiledModel m = compile_model(g, *soc);
        std::vector<const Layer*> npu;
        for (const auto& L : m.layers)
            if (L.unit == Unit::Npu) npu.push_back(&L);
        ASSERT_EQ(npu.size(), 1u) << soc->name;
        EXPECT_EQ(npu[0]->op, "BatchNorm");
        EXPECT_EQ(npu[0]->ir_nodes.size(), 5u);  // DQ, BN, Clip, both Qs
        const auto in = inputs_for(g, 3);
        const Figures f = isolated_figures(m, in, *soc);  // asserts <= 1 LSB
        EXPECT_EQ(f.layers, 1u);
        const auto want = drv::ref::execute(g, in);
        const DirectResult r = run_direct(m, *soc, in);
        size_t at_lo = 0, at_hi = 0;
        for (const char* y : {"ya", "yb"}) {
            const TensorDiff d = compare_tensors(r.outputs.at(y), want.at(y));
            EXPECT_LE(d.max_abs, 0.05 * 1.0001) << y << " on " << soc->name << ": " << d.str();
            const float* v = want.at(y).data<float>();
            for (size_t k = 0; k < want.at(y).numel(); ++k) at_lo += v[k] == 0.0f, at_hi += v[k] > 5.99f;
        }
        EXPECT_GT(at_lo, 0u);  // both bounds bind somewhere: the clamp is exercised
        EXPECT_GT(at_hi, 0u);
        const TensorDiff same = compare_tensors(r.outputs.at("ya"), r.outputs.at("yb"));
        EXPECT_EQ(same.max_abs, 0.0);  // the second quantizer aliases the first
    }
}

TEST(ModelCompiler, AddAgreesWithOnnxruntimesKernelOnEveryInputPair) {
    // QLinearAdd on all 256 x 256 int8 input pairs against the reference (onnxruntime's float kernel,
    // qlinear.cpp QAdd). One 15-bit multiplier per ratio (OUT_CVT_SCALE 1) leaves ~4e-3 LSB per term
    // and put 34 of these outputs 1 LSB off; the searched common factor of the output convert
    // (lower_eltwise.cpp plan_add_scales) leaves ~3e-5 LSB: none for these scales.
    test_onnx::ModelBuilder b(13);
    const float sa = 0.0173f, sb = 0.0291f, sc = 0.0437f;
    const int za = 3, zb = -7, zc = 5;
    b.input("xa", kF32, {1, 16, 64, 64});
    b.input("xb", kF32, {1, 16, 64, 64});
    b.init_f32("a_s", {}, {sa});
    b.init_int("a_z", kI8, {}, {za});
    b.init_f32("b_s", {}, {sb});
    b.init_int("b_z", kI8, {}, {zb});
    b.init_f32("c_s", {}, {sc});
    b.init_int("c_z", kI8, {}, {zc});
    b.node("QuantizeLinear", {"xa", "a_s", "a_z"}, {"qa"});
    b.node("DequantizeLinear", {"qa", "a_s", "a_z"}, {"fa"});
    b.node("QuantizeLinear", {"xb", "b_s", "b_z"}, {"qb"});
    b.node("DequantizeLinear", {"qb", "b_s", "b_z"}, {"fb"});
    b.node("Add", {"fa", "fb"}, {"fc"}, "add");
    b.node("QuantizeLinear", {"fc", "c_s", "c_z"}, {"c"});
    b.output("c");
    drv::importer::ImportOptions io;
    const std::string bytes = b.bytes();
    const drv::ir::Graph g = drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), io, "add.onnx");
    const CompiledModel m = compile_model(g, rk3588());
    bool npu_add = false;
    for (const auto& L : m.layers) npu_add |= L.name == "add" && L.unit == Unit::Npu;
    ASSERT_TRUE(npu_add);
    std::map<std::string, num::Tensor> in;
    for (const char* name : {"xa", "xb"}) in.emplace(name, num::Tensor(num::DType::F32, {1, 16, 64, 64}));
    float* xa = in.at("xa").data<float>();
    float* xb = in.at("xb").data<float>();
    for (int i = 0; i < 65536; ++i) {  // codes a = i % 256, b = i / 256 - 128 (as int8)
        xa[i] = static_cast<float>(i % 256 - 128 - za) * sa;
        xb[i] = static_cast<float>(i / 256 - 128 - zb) * sb;
    }
    const auto want = drv::ref::execute(g, in);
    const DirectResult r = run_direct(m, rk3588(), in);
    const TensorDiff d = compare_tensors(r.outputs.at("c"), want.at("c"));
    EXPECT_TRUE(d.exact()) << d.str();
}

TEST(ModelCompiler, UnalignedConcatRunsOnTheNpuThroughAScratch) {
    // 20 + 20 channels: the second slice starts inside an atom, which no DPU copy can write; the
    // inputs go to C2-aligned slices of a scratch and a 1x1 selection conv writes the output
    // (concat_gather; was a CPU layer).
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, 20, 4, 4});
    b.qdq("x", "xq", "xf", "xq", 0.02f, kU8, 128);
    b.node("Add", {"xf", "xf"}, {"af"}, "add");
    b.qdq("af", "a", "af2", "a", 0.05f, kU8, 128);
    auto& cc = b.node("Concat", {"af2", "xf"}, {"cf"}, "concat");
    test_onnx::ModelBuilder::attr_int(cc, "axis", 1);
    b.qdq("cf", "c", "y", "c", 0.05f, kU8, 128);
    b.output("y");
    drv::importer::ImportOptions io;
    const std::string s = b.bytes();
    const drv::ir::Graph g = drv::importer::import_onnx_bytes(s.data(), s.size(), io, "cat.onnx");
    const CompiledModel m = compile_model(g, rk3588());
    bool npu_concat = false;
    for (const auto& L : m.layers)
        if (L.name == "concat") npu_concat = L.unit == Unit::Npu && L.note.find("inside an atom") != std::string::npos;
    EXPECT_TRUE(npu_concat);
    for (const std::string& p : verify_tiling(m, rk3588())) ADD_FAILURE() << "tiling: " << p;
    const auto in = inputs_for(g, 2);
    const auto want = drv::ref::execute(g, in);
    const DirectResult r = run_direct(m, rk3588(), in);
    const TensorDiff d = compare_tensors(r.outputs.at("y"), want.at("y"));
    EXPECT_LE(d.max_abs, 0.05 * 1.0001) << d.str();
}

}  // namespace
#endif

namespace {

/// Every bundled RKNPU profile compiles the small QDQ net (or rejects it with one line) and the
/// compiled model reproduces the reference within one output LSB.
TEST(ModelCompiler, EveryProfileCompilesTQLinear) {
    const std::string path = zoo_path("t_qlinear.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    const drv::ir::Graph g = load(path);
    const auto in = inputs_for(g, 9);
    const auto want = drv::ref::execute(g, in);
    for (const char* name :
         {"rk2118", "rk3562", "rk3566", "rk3568", "rk3576", "rk3588", "rv1103", "rv1106", "rv1106b", "rv1126b"}) {
        const hw::SocProfile p = hw::load_named_profile(name);
        CompiledModel m;
        try {
            m = compile_model(g, p);
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << name;
            std::cout << fmt::format("[t_qlinear] {}: rejected: {}\n", name, e.what());
            continue;
        }
        const Counts c = count_layers(m);
        std::cout << fmt::format("[t_qlinear] {}: {} NPU / {} CPU layers, {} tasks\n", name, c.npu, c.cpu,
                                 m.tasks.size());
        for (const auto& problem : verify_tiling(m, p)) ADD_FAILURE() << name << ": " << problem;
        const DirectResult r = run_direct(m, p, in);
        const TensorDiff d = compare_tensors(r.outputs.at("y"), want.at("y"));
        EXPECT_LE(d.max_abs, g.value("d").quant.scale.at(0) * 1.0001) << name << ": " << d.str();
    }
}

}  // namespace

namespace {

/// The small zoo nets (mostly float: every layer on the CPU) compile and reproduce the
/// reference exactly; nothing is lowered that should not be.
TEST(ModelCompiler, SmallZooNetsCompileAndMatch) {
    size_t seen = 0;
    for (const char* net : {"t_activations", "t_conv", "t_depthwise", "t_elementwise", "t_gemm", "t_integer", "t_matmul",
                            "t_pool", "t_qlinear", "t_reduce", "t_shape"}) {
        const std::string path = zoo_path(std::string(net) + ".onnx", false);
        if (path.empty()) continue;
        ++seen;
        const drv::ir::Graph g = load(path);
        const CompiledModel m = compile_model(g, rk3588());
        check_structure(m);
        const auto in = inputs_for(g, 4);
        const auto want = drv::ref::execute(g, in);
        const DirectResult r = run_direct(m, rk3588(), in);
        const Counts c = count_layers(m);
        for (const auto& [name, w] : want) {
            const TensorDiff d = compare_tensors(r.outputs.at(name), w);
            if (c.npu == 0) {
                EXPECT_TRUE(d.exact()) << net << " " << name << ": " << d.str();
            }
        }
    }
    if (seen == 0) GTEST_SKIP() << "zoo not generated";
}

}  // namespace

namespace {

/// Timing-only compile (CompileOptions::timing_only, `npusim run --mode timing`): the same tasks,
/// layers, steps, tensor placement, relocations and arena layout as the full compile, and the
/// kept bytes are exactly the full compile's regcmd region (the weights are only laid out).
void expect_timing_only_matches(const std::string& path, const hw::SocProfile& soc, const std::string& mask) {
    CompileOptions fo, to;
    fo.core_mask = to.core_mask = mask;
    to.timing_only = true;
    CompiledModel full = compile_model(load(path), soc, fo);
    CompiledModel tim = compile_model(load(path), soc, to);
    EXPECT_FALSE(full.timing_only);
    EXPECT_TRUE(tim.timing_only);
    EXPECT_EQ(full.arena_init_base, 0u);
    EXPECT_EQ(tim.arena_bytes, full.arena_bytes);
    EXPECT_EQ(tim.weight_bytes, full.weight_bytes);
    EXPECT_EQ(tim.regcmd_bytes, full.regcmd_bytes);
    EXPECT_EQ(tim.relocs, full.relocs);
    ASSERT_EQ(tim.tasks.size(), full.tasks.size());
    for (size_t t = 0; t < tim.tasks.size(); ++t) {
        const NpuTask &a = tim.tasks[t], &b = full.tasks[t];
        EXPECT_EQ(a.regcmd_offset, b.regcmd_offset) << t;
        EXPECT_EQ(a.regcfg_amount, b.regcfg_amount) << t;
        EXPECT_EQ(a.enable_mask, b.enable_mask) << t;
        EXPECT_EQ(a.core, b.core) << t;
        EXPECT_EQ(a.layer, b.layer) << t;
        EXPECT_EQ(a.what, b.what) << t;
        EXPECT_EQ(a.macs, b.macs) << t;
    }
    ASSERT_EQ(tim.layers.size(), full.layers.size());
    for (size_t l = 0; l < tim.layers.size(); ++l) {
        EXPECT_EQ(tim.layers[l].name, full.layers[l].name);
        EXPECT_TRUE(tim.layers[l].unit == full.layers[l].unit) << tim.layers[l].name;
        EXPECT_EQ(tim.layers[l].tasks, full.layers[l].tasks) << tim.layers[l].name;
    }
    ASSERT_EQ(tim.steps.size(), full.steps.size());
    for (size_t s = 0; s < tim.steps.size(); ++s) EXPECT_EQ(tim.steps[s].chains, full.steps[s].chains) << s;
    ASSERT_EQ(tim.tensors.size(), full.tensors.size());
    for (const auto& [name, t] : full.tensors) EXPECT_EQ(tim.tensors.at(name).offset, t.offset) << name;
    // Kept bytes: the regcmd only, identical to the full compile's (no register holds a weight-
    // derived value; the per-channel requantization operands live in the unwritten weight region).
    EXPECT_EQ(tim.arena_init_base, full.weight_bytes);
    ASSERT_EQ(tim.arena_init.size(), full.regcmd_bytes);
    ASSERT_EQ(full.arena_init.size(), full.weight_bytes + full.regcmd_bytes);
    const std::vector<uint8_t> regcmd(full.arena_init.begin() + static_cast<std::ptrdiff_t>(full.weight_bytes),
                                      full.arena_init.end());
    EXPECT_TRUE(tim.arena_init == regcmd);
    // Relocation patches the same words in both images.
    relocate(full, 0x40000000);
    relocate(tim, 0x40000000);
    EXPECT_TRUE(std::equal(tim.arena_init.begin(), tim.arena_init.end(),
                           full.arena_init.begin() + static_cast<std::ptrdiff_t>(full.weight_bytes)));
    // The direct (full-numerics) executor refuses a model without weights.
    EXPECT_THROW(run_direct(tim, soc, inputs_for(tim.graph, 1)), std::invalid_argument);
}

TEST(ModelCompiler, TimingOnlyCompileMatchesFullCompileMobileNetV2) {
    const std::string path = zoo_path("mobilenetv2_qdq.onnx", false);
    if (path.empty()) GTEST_SKIP() << "zoo not generated";
    expect_timing_only_matches(path, rk3588(), "auto");
    expect_timing_only_matches(path, rk3588(), "0_1_2");
    expect_timing_only_matches(path, hw::load_named_profile("rk3566"), "auto");  // 8-byte atoms, C2 8
}

TEST(ModelCompiler, TimingOnlyCompileMatchesFullCompileSmallNets) {
    size_t seen = 0;
    for (const char* net : {"t_qlinear", "t_conv", "t_depthwise", "t_gemm"}) {
        const std::string path = zoo_path(std::string(net) + ".onnx", false);
        if (path.empty()) continue;
        ++seen;
        SCOPED_TRACE(net);
        expect_timing_only_matches(path, rk3588(), "auto");
    }
    if (seen == 0) GTEST_SKIP() << "zoo not generated";
}

TEST(ModelCompiler, ArenaPlaceholdersKeepOffsetsAndOnlyTheKeptBytes) {
    // Same offsets in both modes; placeholder mode keeps nothing before the first kept byte.
    ArenaBuilder full, tim;
    tim.set_placeholders(true);
    for (ArenaBuilder* a : {&full, &tim}) {
        EXPECT_EQ(a->add_placeholder(100), 0u);
        EXPECT_EQ(a->add_init(std::vector<uint8_t>(10, 7)), 128u);
        EXPECT_EQ(a->add_placeholder(1, 256), 256u);
    }
    tim.set_placeholders(false);
    EXPECT_EQ(full.add_init({1, 2, 3}), 320u);
    EXPECT_EQ(tim.add_init({1, 2, 3}), 320u);
    EXPECT_EQ(tim.init_base(), 257u);
    EXPECT_EQ(tim.init().size(), 66u);  // 63 alignment zeros, then the 3 bytes
    EXPECT_EQ(full.init_base(), 0u);
    EXPECT_EQ(full.init().size(), 323u);
    EXPECT_EQ(full.init()[130], 7);
    EXPECT_EQ(full.init_end(), tim.init_end());
    EXPECT_EQ(full.reserve(10), tim.reserve(10));
    // A placeholder after kept bytes would split the kept image: refused.
    ArenaBuilder b;
    b.add_init({1});
    b.set_placeholders(true);
    EXPECT_THROW(b.add_placeholder(8), std::logic_error);
}

}  // namespace
