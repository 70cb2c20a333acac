// SPDX-License-Identifier: MIT
// The fuzz findings (fuzz/README.md), each fixed where it arose and checked here against the
// operator's definition: the faulty input gives a one-line ImportError naming the node and the
// limit, and the valid neighbour of the input still gives the shape the ONNX spec defines.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "compiler/onnx/onnx_importer.h"
#include "onnx_builder.h"

using test_onnx::ModelBuilder;

namespace {

std::string error_of(const std::string& bytes) {
    try {
        drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), {}, "fuzz.onnx");
    } catch (const drv::importer::ImportError& e) {
        return e.what();
    }
    return "";
}

std::vector<int64_t> out_shape(const std::string& bytes) {
    const drv::ir::Graph g = drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), {}, "fuzz.onnx");
    return g.find_value("y")->shape;
}

// Resize (opset 13: X, roi, scales): output dim = floor(dim x scale) (ONNX Resize); onnxruntime
// refuses a scale <= 0 ("Scale value should be greater than 0", upsamplebase.h).
std::string resize(float scale_h) {
    ModelBuilder b(13);
    b.input("x", 1, {1, 1, 4, 4});
    b.init_f32("roi", {0}, {});
    b.init_f32("scales", {4}, {1, 1, scale_h, 2});
    b.node("Resize", {"x", "roi", "scales"}, {"y"}, "up");
    b.output("y");
    return b.bytes();
}

std::string tile(const std::vector<int64_t>& reps) {
    ModelBuilder b(13);
    b.input("x", 1, {2, 3});
    b.init_i64("reps", {2}, reps);
    b.node("Tile", {"x", "reps"}, {"y"}, "tile");
    b.output("y");
    return b.bytes();
}

}  // namespace

// onnx_loader_fuzz finding: a scale of -1.7e38 gave floor(8 x scale) = -1.36e39, cast to int64; onnx_pipeline_fuzz:
// a scale of 1.7e28 (fuzz/regressions/onnx_*/resize_*.onnx)
// (undefined behaviour, UBSan: "outside the range of representable values").
TEST(FuzzFindings, ResizeScaleOutOfRange) {
    EXPECT_EQ(out_shape(resize(2.5f)), (std::vector<int64_t>{1, 1, 10, 8}));  // floor(4 x 2.5) = 10
    for (float bad : {std::numeric_limits<float>::lowest(), -2.0f, 0.0f, std::numeric_limits<float>::quiet_NaN(),
                      std::numeric_limits<float>::infinity(), 1e30f}) {
        const std::string m = error_of(resize(bad));
        EXPECT_NE(m.find("'up'"), std::string::npos) << bad << ": " << m;
        EXPECT_NE(m.find("scales[2]"), std::string::npos) << bad << ": " << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
}

// The same rule family: Tile multiplied dims by repeats unchecked (signed overflow, negative dims).
TEST(FuzzFindings, TileRepeatsOutOfRange) {
    EXPECT_EQ(out_shape(tile({3, 2})), (std::vector<int64_t>{6, 6}));
    EXPECT_NE(error_of(tile({-1, 1})).find("repeats[0] = -1 is negative"), std::string::npos) << error_of(tile({-1, 1}));
    const std::string m = error_of(tile({1, int64_t{1} << 62}));
    EXPECT_NE(m.find("overflows int64"), std::string::npos) << m;
}
