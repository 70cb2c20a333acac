// SPDX-License-Identifier: MIT
// npusim sweep internals (issue 24), without running the simulator: SHA-256 against the FIPS
// 180-4 example vectors, grid parsing against hand-computed values, spec errors, YAML and JSON
// specs expanding to the same ids, expansion order and core-mask filtering against the profiles'
// core counts, id stability, the report adapter on a hand-written report, and merged outputs
// independent of the order the result files were written in.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sweep/merge.h"
#include "sweep/sha256.h"
#include "sweep/spec.h"
#include "sweep/store.h"
#include "sweep/yaml_json.h"

namespace fs = std::filesystem;
using namespace sweep;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        char tmpl[] = "/tmp/npusim-sweep-testXXXXXX";
        path = mkdtemp(tmpl);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    fs::path write(const std::string& name, const std::string& text) const {
        std::ofstream(path / name, std::ios::binary) << text;
        return path / name;
    }
};

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const SweepError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(SweepSha256, FipsExamples) {
    // FIPS 180-4 / NIST CSRC example values.
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    Sha256 h;  // one million 'a', fed in uneven pieces
    const std::string chunk(999, 'a');
    for (int i = 0; i < 1001; ++i) h.update(chunk);
    h.update(std::string(1000000 - 999 * 1001, 'a'));
    EXPECT_EQ(h.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(SweepGrid, ListsRangesAndGeometric) {
    using V = std::vector<std::string>;
    EXPECT_EQ(parse_grid_text("k", "1,2.5,x"), (V{"1", "2.5", "x"}));
    EXPECT_EQ(parse_grid_text("k", "0.5:0.8:0.1"), (V{"0.5", "0.6", "0.7", "0.8"}));  // inclusive, no 0.7000001
    EXPECT_EQ(parse_grid_text("k", "8e9:32e9:x2"), (V{"8000000000", "16000000000", "32000000000"}));
    EXPECT_EQ(parse_grid_text("k", "10:1:-3"), (V{"10", "7", "4", "1"}));
    EXPECT_EQ(parse_grid_text("k", "1:2:0.3"), (V{"1", "1.3", "1.6", "1.9"}));  // 2.2 > 2 is not taken
    EXPECT_NE(error_of([] { parse_grid_text("k", "1:5:0"); }).find("step 0 does not lead from 1 to 5"),
              std::string::npos);
    EXPECT_NE(error_of([] { parse_grid_text("k", "1:5:-1"); }).find("does not lead"), std::string::npos);
    EXPECT_NE(error_of([] { parse_grid_text("k", "1:x:1"); }).find("'x' is not a number"), std::string::npos);
    EXPECT_NE(error_of([] { parse_grid_text("k", "1,,2"); }).find("empty value"), std::string::npos);
    EXPECT_EQ(number_text(1e10), "10000000000");
    EXPECT_EQ(number_text(0.65), "0.65");
    EXPECT_EQ(number_text(1.5e-7), "1.5e-07");
}

TEST(SweepSpec, ErrorsNameKeyAndFile) {
    TempDir t;
    t.write("m.onnx", "model bytes");
    auto err = [&](const std::string& text) { return error_of([&] { load_spec(t.write("s.json", text).string()); }); };
    EXPECT_NE(
        err(R"({"models":["m.onnx"],"platforms":["rk3588"],"colour":1})").find("unknown key (known: name, models"),
        std::string::npos);
    EXPECT_NE(err(R"({"platforms":["rk3588"]})").find("models"), std::string::npos);
    EXPECT_NE(err(R"({"models":["m.onnx"],"platforms":["rk3588"],"modes":["fast"]})").find("unknown mode 'fast'"),
              std::string::npos);
    EXPECT_NE(err(R"({"models":["m.onnx"],"platforms":["rk3588"],"params":{"a.b":{"from":1,"to":2}}})")
                  .find("exactly one of 'step', 'count', 'factor'"),
              std::string::npos);
    EXPECT_NE(err(R"({"models":["m.onnx"],"platforms":["rk3588"],"options":{"trace":true}})").find("options.trace"),
              std::string::npos);
    EXPECT_NE(err("{not json").find("not valid JSON"), std::string::npos);
    const std::string e = err(R"({"models":["m.onnx"],"platforms":["rk3588"]})");
    EXPECT_EQ(e, "");
    // Expansion checks the inputs before anything runs.
    auto expand_err = [&](const std::string& text) {
        return error_of([&] { expand(load_spec(t.write("s.json", text).string()), "0"); });
    };
    EXPECT_NE(expand_err(R"({"models":["nope.onnx"],"platforms":["rk3588"]})").find("model 'nope.onnx' not found"),
              std::string::npos);
    EXPECT_NE(expand_err(R"({"models":["m.onnx"],"platforms":["rk9999"]})").find("platform 'rk9999'"),
              std::string::npos);
    EXPECT_NE(
        expand_err(R"({"models":["m.onnx"],"platforms":["rk3588"],"params":{"npu.nosuch":[1]}})").find("npu.nosuch"),
        std::string::npos);
    EXPECT_NE(expand_err(R"({"models":["m.onnx"],"platforms":["rk3588"],"params":{"memory.ddr_efficiency":[7]}})")
                  .find("memory.ddr_efficiency"),
              std::string::npos);
    EXPECT_NE(expand_err(R"({"models":["m.onnx"],"platforms":["rk3566"],"core_masks":["0_1"]})")
                  .find("core mask '0_1' is valid on none of the platforms"),
              std::string::npos);
    EXPECT_NE(expand_err(R"({"models":["m.onnx","m.onnx"],"platforms":["rk3588"]})").find("appears twice"),
              std::string::npos);
}

TEST(SweepSpec, ExpansionOrderAndCoreMasks) {
    TempDir t;
    t.write("a.onnx", "model a");
    t.write("b.onnx", "model b");
    const fs::path f = t.write("s.json", R"({"models":["a.onnx","b.onnx"],"platforms":["RK3588","rk3566"],
        "core_masks":["auto","0_1_2"],"modes":["timing","full"],
        "params":{"memory.ddr_efficiency":[0.5,0.6],"npu.task_overhead_cycles":{"from":100,"to":300,"step":100}}})");
    const Expansion ex = expand(load_spec(f.string()), "1.0");
    // rk3588 has 3 cores (both masks), rk3566 one (auto only): per model (2 + 1) x 2 modes x 2 x 3.
    ASSERT_EQ(ex.points.size(), 2u * 3u * 2u * 6u);
    ASSERT_EQ(ex.notes.size(), 1u);
    EXPECT_EQ(ex.notes[0], "core mask 0_1_2 left out on rk3566 (too few cores)");
    const Point& p0 = ex.points[0];
    EXPECT_EQ(p0.model, "a.onnx");
    EXPECT_EQ(p0.platform, "rk3588");  // names are case-insensitive
    EXPECT_EQ(p0.core_mask, "auto");
    EXPECT_EQ(p0.mode, "timing");
    EXPECT_EQ(p0.params[0].second, "0.5");
    EXPECT_EQ(p0.params[1].second, "100");
    EXPECT_EQ(ex.points[1].params[1].second, "200");  // the last axis varies fastest
    EXPECT_EQ(ex.points[3].params[0].second, "0.6");
    EXPECT_EQ(ex.points[6].mode, "full");
    EXPECT_EQ(ex.points[12].core_mask, "0_1_2");
    EXPECT_EQ(ex.points[24].platform, "rk3566");
    EXPECT_EQ(ex.points[36].model, "b.onnx");
    for (size_t i = 0; i < ex.points.size(); ++i) EXPECT_EQ(ex.points[i].index, i);
    const std::vector<std::string> args = ex.points[12].run_args("/r.json");
    const std::vector<std::string> want{"run",
                                        "--mode",
                                        "timing",
                                        "--core-mask",
                                        "0_1_2",
                                        "--platform",
                                        "rk3588",
                                        "--param",
                                        "memory.ddr_efficiency=0.5",
                                        "--param",
                                        "npu.task_overhead_cycles=100",
                                        "--seed",
                                        "0",
                                        "--quiet",
                                        "--report",
                                        "/r.json",
                                        (t.path / "a.onnx").string()};
    EXPECT_EQ(args, want);
}

TEST(SweepSpec, IdsFollowContentNotPath) {
    TempDir t;
    t.write("a.onnx", "model a");
    const char* spec = R"({"models":["a.onnx"],"platforms":["rk3588"],"params":{"memory.ddr_efficiency":[0.5,0.6]}})";
    const fs::path f = t.write("s.json", spec);
    const std::vector<Point> p1 = expand(load_spec(f.string()), "1.0").points;
    const std::vector<Point> p2 = expand(load_spec(f.string()), "1.0").points;
    ASSERT_EQ(p1.size(), 2u);
    EXPECT_EQ(p1[0].id, p2[0].id);
    EXPECT_NE(p1[0].id, p1[1].id);
    EXPECT_EQ(p1[0].id.size(), 16u);
    EXPECT_NE(expand(load_spec(f.string()), "1.1").points[0].id, p1[0].id);  // npusim version
    t.write("a.onnx", "model a, changed");
    EXPECT_NE(expand(load_spec(f.string()), "1.0").points[0].id, p1[0].id);  // model bytes
    t.write("a.onnx", "model a");
    // The same spec in another folder with the same bytes: the same ids.
    TempDir u;
    u.write("a.onnx", "model a");
    EXPECT_EQ(expand(load_spec(u.write("s.json", spec).string()), "1.0").points[1].id, p1[1].id);
}

#ifdef NPUSIM_HAVE_YAML_CPP
TEST(SweepSpec, YamlMatchesJson) {
    TempDir t;
    t.write("a.onnx", "model a");
    const fs::path j = t.write("s.json", R"({"name":"x","models":["a.onnx"],"platforms":["rk3588","rk3576"],
        "core_masks":["auto","0_1"],"params":{"memory.ddr_peak_bytes_per_s":{"from":8e9,"to":32e9,"factor":2},
        "host.cpu":["Cortex-A76"],"memory.ddr_efficiency":[0.5,0.75]},"options":{"seed":3,"no_compare":true}})");
    const fs::path y = t.write("s.yaml", R"(# the same sweep in YAML
name: x
models: [a.onnx]
platforms:
  - rk3588
  - rk3576
core_masks: [auto, "0_1"]
params:
  memory.ddr_peak_bytes_per_s: {from: 8e9, to: 32e9, factor: 2}
  host.cpu: [Cortex-A76]
  memory.ddr_efficiency: [0.5, 0.75]
options:
  seed: 3
  no_compare: true
)");
    const auto a = expand(load_spec(j.string()), "1").points, b = expand(load_spec(y.string()), "1").points;
    ASSERT_EQ(a.size(), b.size());
    ASSERT_EQ(a.size(), 2u * 2u * 3u * 2u);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].id, b[i].id) << i;
    EXPECT_NE(
        error_of([&] { load_spec(t.write("bad.yaml", "models: [a\n  b: c: d").string()); }).find("not valid YAML"),
        std::string::npos);
}

TEST(SweepSpec, YamlScalarsResolveAsTheCoreSchema) {
    // YAML 1.2 core schema (yaml.org/spec/1.2.2, 10.3.2): plain scalars resolve, quoted stay strings.
    const nlohmann::ordered_json j = yaml_to_json(
        "[7, -3, 0x1f, 0o17, 1.5, 8e9, .5, true, False, ~, null, '7', \"true\", 1.5.2, 0_1, Cortex-A76, 1e]", "t");
    const nlohmann::ordered_json want = nlohmann::ordered_json::parse(
        R"([7, -3, 31, 15, 1.5, 8000000000.0, 0.5, true, false, null, null, "7", "true", "1.5.2", "0_1",
            "Cortex-A76", "1e"])");
    EXPECT_EQ(j.dump(), want.dump());
    EXPECT_TRUE(j[5].is_number_float());
    EXPECT_TRUE(j[0].is_number_unsigned());
}
#endif

namespace {

std::string report(uint64_t latency_ps, const std::string& bound1) {
    return fmt::format(R"({{"layers":[
      {{"name":"c1","op":"Conv","unit":"NPU","bound":"{}","time_us":30.0,"mac_utilisation":0.5,
        "cycles":{{"total":30000}},"macs":1000,"macs_padded":1600,"ddr_read_bytes":10,"ddr_write_bytes":20}},
      {{"name":"fc","op":"Gemm","unit":"CPU","bound":"host","time_us":10.0,"mac_utilisation":0,
        "cycles":{{"total":0}},"macs":24,"macs_padded":24,"ddr_read_bytes":0,"ddr_write_bytes":0}}],
      "totals":{{"latency_ps":{},"latency_ms":{},"fps":25.0,"npu_ps":30000000,"cpu_ps":10000000,
        "ddr_read_bytes":10,"ddr_write_bytes":20,"tasks":2,"weight_bytes":5,"arena_bytes":6,"npu_layers":1,
        "cpu_layers":1}}}})",
                       bound1, latency_ps, static_cast<double>(latency_ps) / 1e9);
}

}  // namespace

TEST(SweepMerge, AdapterAndOrderIndependence) {
    const PointSummary s = summarize_report(nlohmann::json::parse(report(40000000, "memory")));
    EXPECT_EQ(s.macs, 1024u);  // 1000 + 24: the layers' sum
    EXPECT_EQ(s.macs_padded, 1624u);
    EXPECT_EQ(s.top_layer, "c1");
    EXPECT_DOUBLE_EQ(s.top_layer_share, 0.75);  // 30 of 40 us
    EXPECT_EQ(s.bound_counts[1], 1u);
    EXPECT_EQ(s.bound_counts[3], 1u);
    EXPECT_NE(error_of([] { summarize_report(nlohmann::json::parse(R"({"layers":[]})")); }).find("'totals'"),
              std::string::npos);

    TempDir t;
    t.write("a.onnx", "model a");
    const Expansion ex = expand(load_spec(t.write("s.json", R"({"models":["a.onnx"],"platforms":["rk3588"],
            "params":{"memory.ddr_efficiency":[0.5,0.6,0.7]}})")
                                              .string()),
                                "1");
    Manifest m;
    m.name = "t";
    m.npusim_version = "1";
    m.param_keys = {"memory.ddr_efficiency"};
    m.points = ex.points;
    auto results = [&](const std::string& dir, const std::vector<size_t>& order) {
        Store st((t.path / dir).string());
        st.init();
        for (size_t i : order) {
            PointResult r;
            r.id = m.points[i].id;
            r.status = i == 1 ? "failed" : "ok";
            r.exit_code = i == 1 ? 3 : 0;
            r.error = i == 1 ? "cannot load 'a.onnx': x, \"quoted\"" : "";
            if (i != 1) r.report = nlohmann::json::parse(report(40000000 + i, i == 2 ? "compute" : "memory"));
            st.save(m.points[i], r);
        }
        const Merged mg = merge(st, m);
        return std::make_pair(merged_json(mg), merged_csv(mg));
    };
    const auto forward = results("f", {0, 1, 2}), backward = results("b", {2, 1, 0});
    EXPECT_EQ(forward.first, backward.first);
    EXPECT_EQ(forward.second, backward.second);
    // CSV: header + 3 rows; the error with a comma and quotes is one quoted field.
    EXPECT_NE(forward.second.find(",failed,3,"), std::string::npos);
    EXPECT_NE(forward.second.find("\"cannot load 'a.onnx': x, \"\"quoted\"\"\"\n"), std::string::npos);
    EXPECT_NE(forward.second.find(",ok,0,40000002,"), std::string::npos);
    // A point without a result is "missing"; a result whose key differs does not count.
    Store st((t.path / "partial").string());
    st.init();
    PointResult r;
    r.id = m.points[0].id;
    r.status = "ok";
    r.report = nlohmann::json::parse(report(1, "memory"));
    Point other = m.points[0];
    other.key["mode"] = "full";
    st.save(other, r);  // same file name, different key
    const Merged mg = merge(st, m);
    EXPECT_EQ(mg.missing, 3u);
}
