// SPDX-License-Identifier: MIT
// The fast functional paths against the reference engines they replace, on randomized
// configurations: conv accumulation (int8: the blocked path of conv_int8.cpp, the planar im2col +
// qgemm of conv_accumulate, the depthwise direct loops; int16 and fp16 stay on the reference loop)
// and the integer DPU (pixel-major accumulators or MRDMA image
// in, NC1HWC2 surfaces out) must be bit-identical to conv_accumulate_reference / run_dpu +
// pack_cube, over shapes, strides, dilation, padding, depthwise, C2 16 and 8, odd channel counts,
// every DPU stage and both GEMM kernels (vector and portable).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "hw/rknpu_layout.h"
#include "npu/rknpu/conv_engine.h"
#include "npu/rknpu/dpu_engine.h"
#include "npu/rknpu/ppu_config.h"
#include "numerics/gemm.h"

namespace {

using namespace npu::rknpu;

struct Rng {
    std::mt19937 g;
    explicit Rng(uint32_t seed) : g(seed) {}
    int64_t in(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g); }
    bool coin(int pct = 50) { return in(0, 99) < pct; }
    std::vector<uint8_t> bytes(size_t n) {
        std::vector<uint8_t> v(n);
        for (auto& b : v) b = static_cast<uint8_t>(in(0, 255));
        return v;
    }
};

/// A random DPU stage (BS or BN).
DpuStage random_stage(Rng& r, bool fl) {
    DpuStage s;
    s.bypass = r.coin(25);
    s.alu_bypass = r.coin(30), s.mul_bypass = r.coin(40), s.mul_prelu = r.coin(20);
    s.relu_bypass = r.coin(50), s.relux_en = r.coin(30);
    s.alu_from_mem = r.coin(60), s.mul_from_mem = r.coin(50);
    s.alu_algo = static_cast<uint32_t>(r.coin(70) ? 2 : r.in(0, 1));
    s.alu_operand = static_cast<uint32_t>(r.in(INT32_MIN, INT32_MAX));
    if (r.coin(60)) s.alu_operand = static_cast<uint32_t>(r.in(-5000, 5000));
    s.mul_operand = static_cast<uint32_t>(r.in(0, 0xffff));
    s.mul_shift = static_cast<uint32_t>(r.in(0, 40));
    s.relux_cmp = static_cast<uint32_t>(r.in(-100, 100000));
    if (fl) s.alu_operand = 0x3f800000u, s.relux_cmp = 0x40c00000u;  // 1.0f, 6.0f
    return s;
}

/// A random integer-path DPU configuration for a w x h x c cube. `simple` biases towards the
/// common conv / residual-add configurations (BS, EW add; no BN, no LUT).
DpuConfig random_dpu(Rng& r, uint32_t w, uint32_t h, uint32_t c, uint32_t atom, bool simple) {
    DpuConfig d;
    d.w = w, d.h = h, d.c = c, d.atom = atom;
    d.proc = Precision::Int8;
    d.out = r.coin(80) ? Precision::Int8 : Precision::Int16;
    d.bs = random_stage(r, false);
    d.bn = random_stage(r, false);
    if (simple) {
        // BN: bypassed, or the requantizing conv's second multiplier (bias + M1 >> S1 in BS,
        // M2 >> S2 in BN; drivers/compiler/rknpu/src/lower_conv.cpp).
        d.bn.bypass = r.coin(50);
        d.bn.alu_algo = 2;
        d.bn.mul_prelu = false;
        d.bs.alu_algo = 2;
        d.bs.mul_prelu = false;
    }
    d.ew.bypass = r.coin(simple ? 50 : 30);
    d.ew.op_bypass = r.coin(20), d.ew.lut_bypass = simple || r.coin(60), d.ew.cvt_bypass = r.coin(40);
    d.ew.relu_bypass = r.coin(50), d.ew.relux_en = r.coin(30), d.ew.mul_prelu = r.coin(20);
    d.ew.op_from_mem = r.coin(60), d.ew.op_is_mul = !simple && r.coin(40);
    d.ew.alu_algo = static_cast<uint32_t>(simple ? 2 : r.in(0, 2));  // simple: residual add (QLinearAdd)
    d.ew.operand = static_cast<uint32_t>(r.in(-3000, 3000));
    d.ew.cvt_offset = static_cast<int32_t>(r.in(-200, 200));
    d.ew.cvt_scale = static_cast<uint32_t>(r.in(0, 0xffff));
    d.ew.cvt_shift = static_cast<uint32_t>(r.in(0, 30));
    d.ew.truncate = static_cast<uint32_t>(r.in(0, 40));
    d.ew.relux_cmp = static_cast<uint32_t>(r.in(0, 50000));
    d.ew.erdma_data_size = static_cast<uint32_t>(r.in(0, 1));
    DpuLut& l = d.lut;
    l.le_start = static_cast<int32_t>(r.in(-3000, 0)), l.le_end = l.le_start + static_cast<int32_t>(r.in(0, 6000));
    l.lo_start = static_cast<int32_t>(r.in(-30000, 0)), l.lo_end = l.lo_start + static_cast<int32_t>(r.in(0, 60000));
    l.le_index_select = static_cast<uint32_t>(r.in(0, 8)), l.lo_index_select = static_cast<uint32_t>(r.in(0, 10));
    l.le_uflow_scale = static_cast<int32_t>(r.in(-300, 300)), l.le_oflow_scale = static_cast<int32_t>(r.in(-300, 300));
    l.lo_uflow_scale = static_cast<int32_t>(r.in(-300, 300)), l.lo_oflow_scale = static_cast<int32_t>(r.in(-300, 300));
    l.le_uflow_shift = static_cast<uint32_t>(r.in(0, 12)), l.le_oflow_shift = static_cast<uint32_t>(r.in(0, 12));
    l.lo_uflow_shift = static_cast<uint32_t>(r.in(0, 12)), l.lo_oflow_shift = static_cast<uint32_t>(r.in(0, 12));
    l.uflow_prefer_lo = r.coin(), l.oflow_prefer_lo = r.coin(), l.hybrid_prefer_lo = r.coin();
    l.le.resize(kLutLeEntries), l.lo.resize(kLutLoEntries);
    for (auto& e : l.le) e = static_cast<int16_t>(r.in(-32768, 32767));
    for (auto& e : l.lo) e = static_cast<int16_t>(r.in(-32768, 32767));
    d.out_cvt_offset = static_cast<int32_t>(r.in(-128, 127));
    d.out_cvt_scale = static_cast<uint32_t>(r.in(0, 0xffff));
    d.out_cvt_shift = static_cast<uint32_t>(r.coin(10) ? r.in(0, 63) : r.in(8, 30));
    if (r.coin(30)) d.out_cvt_scale = 1;  // the requantizing conv's OUT_CVT (lower_conv.cpp): scale 1, shift S3
    return d;
}

DpuOperands random_operands(Rng& r, const DpuConfig& d) {
    DpuOperands ops;
    ops.bs = r.bytes(d.bs.operand_bytes(d.c));
    ops.bn = r.bytes(d.bn.operand_bytes(d.c));
    if (!d.ew.bypass && !d.ew.op_bypass && d.ew.op_from_mem) ops.ew = r.bytes(cube_bytes(d.w, d.h, d.c, d.ew_prec(), d.atom));
    return ops;
}

std::vector<uint8_t> concat(const std::vector<std::vector<uint8_t>>& s) {
    std::vector<uint8_t> out;
    for (const auto& v : s) out.insert(out.end(), v.begin(), v.end());
    return out;
}

/// Runs `f` once per build of the engines' loop bodies this CPU can run (portable, AVX2,
/// AVX-512: npu::rknpu::set_engine_isa; NPUSIM_ENGINE_ISA does not narrow it), then restores
/// the choice in force before.
template <typename F>
void on_each_isa(const F& f) {
    const EngineIsa before = engine_isa(), best = best_engine_isa();
    for (const EngineIsa i : {EngineIsa::Portable, EngineIsa::Avx2, EngineIsa::Avx512}) {
        if (i > best) break;
        set_engine_isa(i);
        ASSERT_EQ(engine_isa(), i);
        SCOPED_TRACE(std::string("engine ISA ") + engine_isa_name(i));
        f();
        if (::testing::Test::HasFatalFailure()) break;
    }
    set_engine_isa(before);
}

TEST(EngineIsa, PortableCanBeForcedAndChoicesAreCappedByTheCpu) {
    const EngineIsa before = engine_isa(), best = best_engine_isa();
    EXPECT_LE(before, best);
    set_engine_isa(EngineIsa::Portable);
    EXPECT_EQ(engine_isa(), EngineIsa::Portable);
    set_engine_isa(EngineIsa::Avx512);  // capped to what the CPU has
    EXPECT_EQ(engine_isa(), best);
    set_engine_isa(before);
#if defined(__x86_64__)
    EXPECT_GE(best, EngineIsa::Avx2) << "an x86-64 CI host without AVX2 runs only the portable path";
#endif
}

class DpuEquivalence : public ::testing::TestWithParam<int> {};

TEST_P(DpuEquivalence, FastIntegerPathMatchesRunDpuBitForBit) {
    on_each_isa([this] {
    const bool simple = GetParam() == 1;
    Rng r(simple ? 11 : 12);
    for (int t = 0; t < 400; ++t) {
        const uint32_t atom = r.coin() ? 16 : 8;
        const uint32_t w = static_cast<uint32_t>(r.in(1, 9)), h = static_cast<uint32_t>(r.in(1, 7));
        const uint32_t c = static_cast<uint32_t>(r.in(1, 37));
        const DpuConfig d = random_dpu(r, w, h, c, atom, simple);
        ASSERT_TRUE(dpu_fast_ok(d));
        const DpuOperands ops = random_operands(r, d);
        // (a) accumulators from the CORE: full int32 range with some extremes.
        std::vector<int32_t> acc(size_t(w) * h * c);
        for (auto& v : acc)
            v = static_cast<int32_t>(r.coin(5) ? (r.coin() ? INT32_MIN : INT32_MAX) : r.in(r.coin() ? -40000 : INT32_MIN, r.coin() ? 40000 : INT32_MAX));
        Cube cube = Cube::make(w, h, c, false);
        std::copy(acc.begin(), acc.end(), cube.i.begin());
        const auto want = pack_cube(run_dpu(d, cube, ops), d.out, atom);
        ASSERT_EQ(concat(run_dpu_int_acc(d, acc.data(), ops)), want) << "trial " << t;
        // (b) MRDMA input image of int8 or int16 elements.
        DpuConfig dm = d;
        dm.from_core = false;
        // An output notch (rows spaced in memory, the data-movement copies) leaves the packed image as it is.
        if (r.coin(20)) dm.notch = static_cast<uint32_t>(r.in(1, 3));
        ASSERT_TRUE(dpu_fast_ok(dm));
        dm.src_prec = r.coin() ? Precision::Int8 : Precision::Int16;
        const auto img = r.bytes(cube_bytes(w, h, c, dm.src_prec, atom));
        const auto want_m = pack_cube(run_dpu(dm, unpack_cube(img, w, h, c, dm.src_prec, atom), ops), dm.out, atom);
        ASSERT_EQ(concat(run_dpu_int_image(dm, img, ops)), want_m) << "trial " << t << " (image input)";
    }
    });
}

INSTANTIATE_TEST_SUITE_P(Configs, DpuEquivalence, ::testing::Values(0, 1),
                         [](const auto& p) { return p.param ? std::string("ConvBiasReluAndResidualAdd") : std::string("AnyStage"); });

struct ConvCase {
    ConvConfig c;
    ConvOperands ops;
    std::vector<uint8_t> bn, ew;
};

/// A random conv task in the model's geometry (legal sizes; the engine does not validate).
ConvCase random_conv(Rng& r, Precision prec, bool depthwise, uint32_t atom) {
    ConvCase k;
    ConvConfig& c = k.c;
    c.precision = c.core_precision = prec;
    c.atom = atom;
    c.depthwise = depthwise;
    const uint32_t c2 = c.c2();
    const uint32_t real = static_cast<uint32_t>(r.in(1, 40));
    c.in_c = (real + c2 - 1) / c2 * c2;
    c.in_c_real = real;
    c.in_w = static_cast<uint32_t>(r.in(1, 13)), c.in_h = static_cast<uint32_t>(r.in(1, 11));
    c.kernel_w = static_cast<uint32_t>(r.in(1, 5)), c.kernel_h = static_cast<uint32_t>(r.in(1, 5));
    c.stride_x = static_cast<uint32_t>(r.in(1, 3)), c.stride_y = static_cast<uint32_t>(r.in(1, 3));
    c.dilation_x = static_cast<uint32_t>(r.coin(70) ? 1 : r.in(2, 3)), c.dilation_y = static_cast<uint32_t>(r.coin(70) ? 1 : r.in(2, 3));
    c.pad_left = static_cast<uint32_t>(r.in(0, c.kernel_w - 1)), c.pad_top = static_cast<uint32_t>(r.in(0, c.kernel_h - 1));
    const int64_t eff_w = (c.kernel_w - 1) * int64_t{c.dilation_x} + 1, eff_h = (c.kernel_h - 1) * int64_t{c.dilation_y} + 1;
    int64_t max_w = (int64_t{c.in_w} + 2 * c.pad_left - eff_w) / c.stride_x + 1;
    int64_t max_h = (int64_t{c.in_h} + 2 * c.pad_top - eff_h) / c.stride_y + 1;
    if (max_w < 1 || max_h < 1) {  // kernel larger than the padded input: shrink it to 1x1
        c.kernel_w = c.kernel_h = 1, c.dilation_x = c.dilation_y = 1, c.pad_left = c.pad_top = 0;
        max_w = (c.in_w - 1) / c.stride_x + 1, max_h = (c.in_h - 1) / c.stride_y + 1;
    }
    c.out_w = static_cast<uint32_t>(r.coin(80) ? max_w : r.in(1, max_w));
    c.out_h = static_cast<uint32_t>(r.coin(80) ? max_h : r.in(1, max_h));
    c.out_c = depthwise ? static_cast<uint32_t>(r.in(1, c.in_c)) : static_cast<uint32_t>(r.in(1, 40));
    c.kernels = c.out_c;
    c.pad_value = static_cast<int32_t>(r.in(-40000, 40000));
    c.clip_truncate = static_cast<uint32_t>(r.coin(80) ? 0 : r.in(1, 6));
    const uint64_t taps = uint64_t{c.kernel_w} * c.kernel_h;
    k.ops.feature = r.bytes(cube_bytes(c.in_w, c.in_h, c.in_c, prec, atom));
    k.ops.weights = r.bytes((depthwise ? taps * c.in_c : taps * c.in_c * c.out_c) * c.elem());
    if (!depthwise && prec == Precision::Int8 && r.coin()) {  // zero weights on the C2 padding (as lowered)
        for (uint64_t n = 0; n < c.out_c; ++n)
            for (uint64_t t = 0; t < taps; ++t)
                for (uint32_t ch = real; ch < c.in_c; ++ch) k.ops.weights[(n * taps + t) * c.in_c + ch] = 0;
    }
    if (prec == Precision::Fp16) {  // finite fp16 values in [-2, 2): no inf/NaN in the sums
        for (size_t i = 1; i < k.ops.feature.size(); i += 2)
            k.ops.feature[i] = static_cast<uint8_t>((k.ops.feature[i] % 0x40) | (k.ops.feature[i] & 0x80));
        for (size_t i = 1; i < k.ops.weights.size(); i += 2) k.ops.weights[i] = static_cast<uint8_t>(0x38 | (k.ops.weights[i] & 0x80));
        c.pad_value = 0x3c00;  // 1.0
    }
    if (prec == Precision::Fp16) {
        c.dpu.proc = c.dpu.out = Precision::Fp16;
        c.dpu.w = c.out_w, c.dpu.h = c.out_h, c.dpu.c = c.out_c, c.dpu.atom = atom;
    } else {
        c.dpu = random_dpu(r, c.out_w, c.out_h, c.out_c, atom, r.coin());
    }
    const DpuOperands ops = random_operands(r, c.dpu);
    k.ops.bias = ops.bs, k.bn = ops.bn, k.ew = ops.ew;
    return k;
}

void expect_same_cube(const Cube& a, const Cube& b, int t) {
    ASSERT_EQ(a.is_float, b.is_float);
    ASSERT_EQ(a.size(), b.size());
    if (a.is_float) {
        for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(std::memcmp(&a.f[i], &b.f[i], 4), 0) << "trial " << t << " @" << i;
    } else {
        ASSERT_EQ(a.i, b.i) << "trial " << t;
    }
}

struct ConvParam {
    Precision prec;
    bool depthwise;
    bool generic_gemm;
};

class ConvEquivalence : public ::testing::TestWithParam<ConvParam> {};

TEST_P(ConvEquivalence, FastPathMatchesTheReferenceLoopBitForBit) {
    const ConvParam p = GetParam();
    num::gemm_force_generic(p.generic_gemm);
    Rng r(100 + static_cast<uint32_t>(p.prec) * 10 + (p.depthwise ? 1 : 0) + (p.generic_gemm ? 5 : 0));
    const int trials = p.prec == Precision::Int8 ? 150 : 40;
    for (int t = 0; t < trials; ++t) {
        const uint32_t atom = r.coin() ? 16 : 8;
        const ConvCase k = random_conv(r, p.prec, p.depthwise, atom);
        expect_same_cube(conv_accumulate(k.c, k.ops), conv_accumulate_reference(k.c, k.ops), t);
        const auto fast = run_conv(k.c, k.ops, k.bn, k.ew);
        const auto surf = run_conv_surfaces(k.c, k.ops, k.bn, k.ew);
        set_reference_engines(true);
        const auto ref = run_conv(k.c, k.ops, k.bn, k.ew);
        set_reference_engines(false);
        ASSERT_EQ(fast, ref) << "trial " << t;
        ASSERT_EQ(concat(surf), ref) << "trial " << t;
        ASSERT_EQ(surf.size(), (k.c.out_c + c2_of(k.c.dpu.out, atom) - 1) / c2_of(k.c.dpu.out, atom));
    }
    num::gemm_force_generic(false);
}

INSTANTIATE_TEST_SUITE_P(Kinds, ConvEquivalence,
                         ::testing::Values(ConvParam{Precision::Int8, false, false}, ConvParam{Precision::Int8, false, true},
                                           ConvParam{Precision::Int8, true, false}, ConvParam{Precision::Int16, false, false},
                                           ConvParam{Precision::Fp16, false, false}, ConvParam{Precision::Fp16, true, false}),
                         [](const auto& p) {
                             return std::string(precision_name(p.param.prec)) + (p.param.depthwise ? "_depthwise" : "") +
                                    (p.param.generic_gemm ? "_portable_gemm" : "");
                         });

TEST(ConvEquivalence, Int8ResNetShapesMatchOnBothAtomSizes) {
    // Real layer shapes (odd output width, C2-multiple channels, 3x3 stride 2 and 1x1).
    on_each_isa([] {
    Rng r(7);
    for (const uint32_t atom : {16u, 8u})
        for (const auto& [ic, hw, oc, k, s] : std::vector<std::array<uint32_t, 5>>{{64, 15, 64, 3, 1}, {32, 14, 48, 3, 2}, {128, 7, 96, 1, 1}}) {
            ConvCase cc = random_conv(r, Precision::Int8, false, atom);
            ConvConfig& c = cc.c;
            c.in_c = c.in_c_real = ic, c.in_w = c.in_h = hw, c.out_c = c.kernels = oc;
            c.kernel_w = c.kernel_h = k, c.stride_x = c.stride_y = s, c.dilation_x = c.dilation_y = 1;
            c.pad_left = c.pad_top = k / 2;
            c.out_w = c.out_h = (hw + 2 * (k / 2) - k) / s + 1;
            c.pad_value = -3, c.clip_truncate = 0;
            c.dpu = random_dpu(r, c.out_w, c.out_h, c.out_c, atom, true);
            cc.ops.feature = r.bytes(cube_bytes(hw, hw, ic, Precision::Int8, atom));
            cc.ops.weights = r.bytes(uint64_t{k} * k * ic * oc);
            const DpuOperands ops = random_operands(r, c.dpu);
            cc.ops.bias = ops.bs;
            const auto fast = run_conv(c, cc.ops, ops.bn, ops.ew);
            set_reference_engines(true);
            const auto ref = run_conv(c, cc.ops, ops.bn, ops.ew);
            set_reference_engines(false);
            ASSERT_EQ(fast, ref) << ic << "x" << hw << " -> " << oc << " k" << k << " s" << s << " atom " << atom;
        }
    });
}


TEST(ConvEquivalence, BlockedInt8ConvWithTheFusedDpuMatchesOnEachIsaAndGemmKernel) {
    // The blocked int8 path (padded pixel operand, weight panels, 16-channel accumulator blocks in
    // rounds of 96 pixels, the fused DPU sweep) against the reference loop and run_dpu, with the
    // DPU configurations the sweep takes (conv + bias + requant + ReLU/clip, residual add) on
    // every engine ISA and both GEMM kernels; inputs up to 16 x 14 pixels so that several rounds run,
    // stems whose padding channels meet zero weights (4- and 8-byte pixel blocks).
    on_each_isa([] {
        for (const bool generic : {false, true}) {
            num::gemm_force_generic(generic);
            Rng r(generic ? 31 : 32);
            for (int t = 0; t < 120; ++t) {
                const uint32_t atom = r.coin() ? 16 : 8;
                ConvCase k = random_conv(r, Precision::Int8, r.coin(30), atom);
                ConvConfig& c = k.c;
                if (r.coin(40) && !c.depthwise) {  // a larger input, stride 1: several 96-pixel rounds
                    c.in_w = static_cast<uint32_t>(r.in(10, 16)), c.in_h = static_cast<uint32_t>(r.in(8, 14));
                    c.stride_x = c.stride_y = 1, c.dilation_x = c.dilation_y = 1;
                    c.kernel_w = c.kernel_h = r.coin() ? 3 : 1;
                    c.pad_left = c.pad_top = c.kernel_w / 2;
                    c.out_w = c.in_w + 2 * c.pad_left - c.kernel_w + 1, c.out_h = c.in_h + 2 * c.pad_top - c.kernel_h + 1;
                    const uint64_t taps = uint64_t{c.kernel_w} * c.kernel_h;
                    k.ops.feature = r.bytes(cube_bytes(c.in_w, c.in_h, c.in_c, Precision::Int8, atom));
                    k.ops.weights = r.bytes(taps * c.in_c * c.out_c);
                    if (r.coin())  // zero weights on the C2 padding (the stem case)
                        for (uint64_t n = 0; n < c.out_c; ++n)
                            for (uint64_t tp = 0; tp < taps; ++tp)
                                for (uint32_t ch = c.in_c_real; ch < c.in_c; ++ch) k.ops.weights[(n * taps + tp) * c.in_c + ch] = 0;
                }
                c.dpu = random_dpu(r, c.out_w, c.out_h, c.out_c, atom, true);
                c.dpu.out = r.coin(90) ? Precision::Int8 : Precision::Int16;
                const DpuOperands ops = random_operands(r, c.dpu);
                k.ops.bias = ops.bs, k.bn = ops.bn, k.ew = ops.ew;
                const auto fast = run_conv(c, k.ops, k.bn, k.ew);
                set_reference_engines(true);
                const auto ref = run_conv(c, k.ops, k.bn, k.ew);
                set_reference_engines(false);
                ASSERT_EQ(fast, ref) << "trial " << t << (generic ? " (portable GEMM)" : "") << " " << c.in_c << "x" << c.in_w
                                     << "x" << c.in_h << " -> " << c.out_c << " k" << c.kernel_w << "x" << c.kernel_h
                                     << (c.depthwise ? " dw" : "");
            }
        }
        num::gemm_force_generic(false);
    });
}

TEST(ConvEquivalence, BlockedDepthwiseAccumulatorsReachTheOutputExactly) {
    // The depthwise paths of the blocked conv (the AVX-512 tap quads with their weight quads and
    // -128 sum w start, the direct loops) with values small enough that every accumulator is an
    // int8 output: all DPU stages bypassed, so an accumulator off by one is an output off by one
    // (a random requantization hides most of those). Several 16-channel groups, 2..8 taps per
    // row, strides 1 and 2, padding with a non-zero pad value.
    on_each_isa([] {
        Rng r(53);
        for (int t = 0; t < 200; ++t) {
            const uint32_t atom = r.coin(80) ? 16 : 8;
            ConvCase k = random_conv(r, Precision::Int8, true, atom);
            ConvConfig& c = k.c;
            c.in_c = c.in_c_real = static_cast<uint32_t>(r.in(1, 5)) * 16;
            c.out_c = c.kernels = r.coin() ? c.in_c : static_cast<uint32_t>(r.in(1, c.in_c));
            c.in_w = static_cast<uint32_t>(r.in(4, 20)), c.in_h = static_cast<uint32_t>(r.in(3, 12));
            c.kernel_w = static_cast<uint32_t>(r.in(2, 8)), c.kernel_h = static_cast<uint32_t>(r.in(1, 4));
            c.stride_x = static_cast<uint32_t>(r.in(1, 2)), c.stride_y = static_cast<uint32_t>(r.in(1, 2));
            c.dilation_x = 1, c.dilation_y = static_cast<uint32_t>(r.coin(80) ? 1 : 2);
            c.pad_left = static_cast<uint32_t>(r.in(0, c.kernel_w - 1)), c.pad_top = static_cast<uint32_t>(r.in(0, c.kernel_h - 1));
            const int64_t eff_h = (c.kernel_h - 1) * int64_t{c.dilation_y} + 1;
            const int64_t max_w = (int64_t{c.in_w} + 2 * c.pad_left - c.kernel_w) / c.stride_x + 1;
            const int64_t max_h = (int64_t{c.in_h} + 2 * c.pad_top - eff_h) / c.stride_y + 1;
            if (max_w < 1 || max_h < 1) continue;
            c.out_w = static_cast<uint32_t>(max_w), c.out_h = static_cast<uint32_t>(max_h);
            c.pad_value = static_cast<int32_t>(r.in(-1, 1)), c.clip_truncate = 0;
            const uint64_t taps = uint64_t{c.kernel_w} * c.kernel_h;
            // |sum| <= 32 taps x 1 x 3 < 128 (inputs and pad value in -1..1, weights in -3..3):
            // every accumulator is its own int8 output.
            k.ops.feature = r.bytes(cube_bytes(c.in_w, c.in_h, c.in_c, Precision::Int8, atom));
            for (auto& b : k.ops.feature) b = static_cast<uint8_t>(static_cast<int8_t>(b % 3) - 1);
            k.ops.weights = r.bytes(taps * c.in_c);
            for (auto& b : k.ops.weights) b = static_cast<uint8_t>(static_cast<int8_t>(b % 7) - 3);
            c.dpu = random_dpu(r, c.out_w, c.out_h, c.out_c, atom, true);
            c.dpu.out = Precision::Int8;
            c.dpu.bs.bypass = c.dpu.bn.bypass = c.dpu.ew.bypass = true;
            c.dpu.out_cvt_scale = 1, c.dpu.out_cvt_shift = 0, c.dpu.out_cvt_offset = 0;
            const DpuOperands ops = random_operands(r, c.dpu);
            k.ops.bias = ops.bs, k.bn = ops.bn, k.ew = ops.ew;
            const auto fast = concat(run_conv_surfaces(c, k.ops, k.bn, k.ew));
            set_reference_engines(true);
            const auto ref = run_conv(c, k.ops, k.bn, k.ew);
            set_reference_engines(false);
            ASSERT_EQ(fast, ref) << "trial " << t << " " << c.in_c << "x" << c.in_w << "x" << c.in_h << " -> " << c.out_c
                                 << " k" << c.kernel_w << "x" << c.kernel_h << " s" << c.stride_x << c.stride_y;
        }
    });
}

/// The requantizing conv's DPU (lower_conv.cpp: bias + M1 in BS without a shift, M2 >> S2 in BN,
/// OUT_CVT scale 1 and shift S3, ReLU / ReLUX in BS or BN, an EW constant) with random constants
/// around it: the sweep that folds a lane into one multiply, shift and clamp takes these.
void requant_dpu(Rng& r, DpuConfig& d) {
    d.out = Precision::Int8;
    DpuStage& s = d.bs;
    s.bypass = false, s.alu_bypass = r.coin(10), s.alu_algo = 2, s.mul_bypass = r.coin(25), s.mul_prelu = false;
    s.mul_shift = r.coin(90) ? 0 : static_cast<uint32_t>(r.in(1, 20));
    s.relu_bypass = r.coin(40), s.relux_en = r.coin(40);
    s.relux_cmp = static_cast<uint32_t>(r.coin(90) ? r.in(0, 100000) : r.in(-100, 100));
    DpuStage& n = d.bn;
    n.bypass = r.coin(30), n.alu_bypass = r.coin(70), n.alu_algo = 2, n.mul_bypass = r.coin(15), n.mul_prelu = false;
    n.mul_shift = static_cast<uint32_t>(r.coin(10) ? r.in(0, 62) : r.in(10, 31));
    n.relu_bypass = r.coin(60), n.relux_en = r.coin(40);
    n.relux_cmp = static_cast<uint32_t>(r.in(-100, 100000));
    d.ew.bypass = r.coin(50), d.ew.op_from_mem = false, d.ew.op_is_mul = false, d.ew.lut_bypass = true;
    d.ew.op_bypass = r.coin(40), d.ew.alu_algo = 2, d.ew.relu_bypass = r.coin(60), d.ew.relux_en = r.coin(40);
    d.out_cvt_scale = r.coin(95) ? 1 : static_cast<uint32_t>(r.in(0, 3));
    d.out_cvt_shift = static_cast<uint32_t>(r.coin(10) ? r.in(0, 63) : r.in(0, 31));
    d.out_cvt_offset = static_cast<int32_t>(r.coin(95) ? r.in(-128, 127) : r.in(INT32_MIN, INT32_MAX));
}

TEST(ConvEquivalence, RequantizingConvSweepMatchesOnEachIsa) {
    on_each_isa([] {
        Rng r(41);
        for (int t = 0; t < 300; ++t) {
            const uint32_t atom = r.coin() ? 16 : 8;
            ConvCase k = random_conv(r, Precision::Int8, false, atom);
            ConvConfig& c = k.c;
            c.clip_truncate = 0;
            requant_dpu(r, c.dpu);
            const DpuOperands ops = random_operands(r, c.dpu);
            k.ops.bias = ops.bs, k.bn = ops.bn, k.ew = ops.ew;
            const auto fast = run_conv(c, k.ops, k.bn, k.ew);
            set_reference_engines(true);
            const auto ref = run_conv(c, k.ops, k.bn, k.ew);
            set_reference_engines(false);
            ASSERT_EQ(fast, ref) << "trial " << t << " " << c.in_c << "x" << c.in_w << "x" << c.in_h << " -> " << c.out_c;
            // The same DPU on an int8 MRDMA image (DPU-only task).
            DpuConfig dm = c.dpu;
            dm.from_core = false, dm.src_prec = Precision::Int8;
            const auto img = r.bytes(cube_bytes(dm.w, dm.h, dm.c, Precision::Int8, atom));
            const auto want = pack_cube(run_dpu(dm, unpack_cube(img, dm.w, dm.h, dm.c, Precision::Int8, atom), ops), dm.out, atom);
            ASSERT_EQ(concat(run_dpu_int_image(dm, img, ops)), want) << "trial " << t << " (image input)";
        }
    });
}

TEST(ConvEquivalence, RawWeightBlocksPackLikeTheCanonicalWeights) {
    // The weight image as the CNA reads it (hw::rknpu::weight_element blocks of KG kernels x CG
    // channels per tap, Mesa rkt_coefs.c's int8 layout at 32 x 32), handed to run_conv_surfaces
    // without the canonical copy, against the canonical weights and the reference loop; fewer
    // WEIGHT_KERNELS than output channels (the rest accumulate 0).
    if (std::string(num::qgemm_kernel_name()) != "avx512vnni") GTEST_SKIP() << "raw weight packing needs the VNNI GEMM";
    Rng r(41);
    int ran = 0;
    for (int t = 0; t < 80; ++t) {
        ConvCase k = random_conv(r, Precision::Int8, false, r.coin(80) ? 16 : 8);
        ConvConfig& c = k.c;
        c.in_c_real = c.in_c;
        c.kernels = r.coin(70) ? c.out_c : static_cast<uint32_t>(r.in(1, c.out_c));
        c.present_kernels = std::min(c.kernels, c.out_c);
        c.wblocks.kernel_group = r.coin() ? 32 : 16, c.wblocks.channel_group = r.coin() ? 32 : 16;
        const uint32_t taps = c.kernel_w * c.kernel_h;
        std::vector<uint8_t> raw(static_cast<size_t>(c.kernels) * taps * c.in_c);
        c.weight_bytes = static_cast<uint32_t>(raw.size());
        for (uint32_t n = 0; n < c.out_c; ++n)
            for (uint32_t tp = 0; tp < taps; ++tp)
                for (uint32_t ch = 0; ch < c.in_c; ++ch) {
                    uint8_t& w = k.ops.weights[(static_cast<size_t>(n) * taps + tp) * c.in_c + ch];
                    if (n >= c.kernels) w = 0;  // as canonical_weights leaves the kernels past WEIGHT_KERNELS
                    else raw[hw::rknpu::weight_element(c.wblocks, c.kernels, taps, c.in_c, n, tp, ch)] = w;
                }
        if (!conv_takes_raw_weights(c, raw.size())) continue;
        ++ran;
        ConvOperands rops = k.ops;
        rops.weights = raw, rops.weights_raw = true, rops.raw_kernels = c.kernels;
        const auto got = concat(run_conv_surfaces(c, rops, k.bn, k.ew));
        ASSERT_EQ(got, concat(run_conv_surfaces(c, k.ops, k.bn, k.ew))) << "trial " << t;
        set_reference_engines(true);
        const auto ref = run_conv(c, k.ops, k.bn, k.ew);
        set_reference_engines(false);
        ASSERT_EQ(got, ref) << "trial " << t;
    }
    EXPECT_GT(ran, 40);
}

/// The engine cache (npu_models/rknpu/src/engine_cache.h) keeps a task's weight panels and DPU
/// constants for the next task with the same operand bytes (a repeated inference). Operands that
/// change between two runs of the same task, as a write into the weights or the BS / BN operands
/// in DDR changes them, must give the reference result for the new bytes: a cache keyed on the
/// task alone would return the first run's output. Canonical and raw (CNA block) weight images.
TEST(EngineCache, ChangedWeightsAndOperandsBetweenRepeatsGiveTheNewResult) {
    on_each_isa([] {
        Rng r(53);
        int changed = 0, trials = 0;
        const bool vnni = std::string(num::qgemm_kernel_name()) == "avx512vnni";
        for (int t = 0; t < 90; ++t) {
            const uint32_t atom = r.coin(70) ? 16 : 8;
            ConvCase k = random_conv(r, Precision::Int8, false, atom);
            ConvConfig& c = k.c;
            c.clip_truncate = 0;
            c.in_c_real = c.in_c;
            const uint32_t taps = c.kernel_w * c.kernel_h;
            // A requantizing DPU that keeps the outputs off the clamps, so that changed operands
            // show: bias from memory (BS), M2 >> S2 in BN with S2 scaling the sums' spread
            // (~sqrt(K) x 74^2 for random bytes) to about +-32, OUT_CVT the identity.
            DpuConfig& d = c.dpu;
            d.out = Precision::Int8;
            d.bs = DpuStage{}, d.bn = DpuStage{}, d.ew = DpuEw{};
            d.bs.bypass = false, d.bs.alu_bypass = false, d.bs.alu_from_mem = true, d.bs.alu_algo = 2;
            d.bn.bypass = false, d.bn.mul_bypass = false, d.bn.mul_operand = static_cast<uint32_t>(r.in(1, 3));
            d.bn.mul_shift = static_cast<uint32_t>(std::max(0.0, std::floor(std::log2(std::sqrt(double(taps) * c.in_c) * 5500 / 32))));
            d.bn.relu_bypass = r.coin(70);
            d.out_cvt_scale = 1, d.out_cvt_shift = 0, d.out_cvt_offset = static_cast<int32_t>(r.in(-20, 20));
            k.ops.bias.resize(4ull * c.out_c);
            for (uint32_t n = 0; n < c.out_c; ++n) {
                const int32_t b = static_cast<int32_t>(r.in(-3000, 3000));
                std::memcpy(k.ops.bias.data() + 4 * n, &b, 4);
            }
            k.bn.clear(), k.ew.clear();
            ConvOperands run_ops = k.ops;
            const bool raw = vnni && r.coin();
            if (raw) {  // the CNA's block image (RawWeightBlocksPackLikeTheCanonicalWeights)
                c.kernels = c.out_c, c.present_kernels = c.out_c;
                c.wblocks.kernel_group = r.coin() ? 32 : 16, c.wblocks.channel_group = r.coin() ? 32 : 16;
                run_ops.weights.assign(static_cast<size_t>(c.kernels) * taps * c.in_c, 0);
                c.weight_bytes = static_cast<uint32_t>(run_ops.weights.size());
                if (!conv_takes_raw_weights(c, run_ops.weights.size())) continue;
                run_ops.weights_raw = true, run_ops.raw_kernels = c.kernels;
            }
            const auto to_raw = [&] {
                if (!raw) return;
                for (uint32_t n = 0; n < c.out_c; ++n)
                    for (uint32_t tp = 0; tp < taps; ++tp)
                        for (uint32_t ch = 0; ch < c.in_c; ++ch)
                            run_ops.weights[hw::rknpu::weight_element(c.wblocks, c.kernels, taps, c.in_c, n, tp, ch)] =
                                k.ops.weights[(static_cast<size_t>(n) * taps + tp) * c.in_c + ch];
            };
            to_raw();
            const auto reference = [&] {
                set_reference_engines(true);
                const auto ref = run_conv(c, k.ops, k.bn, k.ew);
                set_reference_engines(false);
                return ref;
            };
            const auto first = concat(run_conv_surfaces(c, run_ops, k.bn, k.ew));
            ASSERT_EQ(first, reference()) << "trial " << t;
            ASSERT_EQ(concat(run_conv_surfaces(c, run_ops, k.bn, k.ew)), first) << "trial " << t << ": the repeat";
            // New bytes in one operand: the weights (one element, or a whole kernel) or the BS
            // operands (the bias of one kernel).
            const int what = static_cast<int>(r.in(0, 2));
            std::vector<uint8_t>* v = what <= 1 ? &k.ops.weights : &k.ops.bias;
            if (what == 2) {
                // a shift of about 16 outputs
                const auto b = static_cast<int32_t>(r.in(-3000, 3000) * (int64_t{1} << d.bn.mul_shift) / 100);
                std::memcpy(v->data() + 4 * r.in(0, c.out_c - 1), &b, 4);
            } else if (what == 1) {
                const uint64_t n = static_cast<uint64_t>(r.in(0, c.out_c - 1)), K = uint64_t{taps} * c.in_c;
                for (uint64_t i = 0; i < K; ++i) (*v)[n * K + i] = static_cast<uint8_t>(r.in(0, 255));
            } else {
                (*v)[static_cast<size_t>(r.in(0, static_cast<int64_t>(v->size()) - 1))] ^= static_cast<uint8_t>(r.in(1, 255));
            }
            run_ops.bias = k.ops.bias;
            if (raw) to_raw();
            else run_ops.weights = k.ops.weights;
            const auto want = reference();
            ASSERT_EQ(concat(run_conv_surfaces(c, run_ops, k.bn, k.ew)), want)
                << "trial " << t << (raw ? " (raw weights)" : "") << ": operand " << what << " changed";
            ++trials;
            changed += want != first;
        }
        EXPECT_GT(trials, 40);
        EXPECT_GT(changed, trials / 2) << "the changes must reach the outputs for the test to see a stale cache";
    });
}

/// The same for a DPU-only task whose per-channel EW operand (part of the cached constants)
/// changes between two runs.
TEST(EngineCache, ChangedPerChannelEwOperandGivesTheNewResult) {
    on_each_isa([] {
        Rng r(59);
        int changed = 0;
        for (int t = 0; t < 120; ++t) {
            const uint32_t atom = r.coin() ? 16 : 8;
            DpuConfig d;
            d.w = static_cast<uint32_t>(r.in(2, 9)), d.h = static_cast<uint32_t>(r.in(1, 7)), d.c = static_cast<uint32_t>(r.in(1, 40));
            d.atom = atom, d.proc = Precision::Int8, d.from_core = false, d.src_prec = Precision::Int8;
            // x + the channel's operand (through the EW convert), clamped to int8.
            d.out = Precision::Int8;
            d.bs = DpuStage{}, d.bn = DpuStage{}, d.ew = DpuEw{};
            d.ew.bypass = false, d.ew.op_bypass = false, d.ew.op_from_mem = true, d.ew.data_mode = 0;
            d.ew.erdma_data_size = 1, d.ew.cvt_bypass = r.coin(), d.ew.alu_algo = 2;
            d.ew.cvt_offset = static_cast<int32_t>(r.in(-20, 20)), d.ew.cvt_scale = 1, d.ew.cvt_shift = 0;
            d.out_cvt_scale = 1, d.out_cvt_shift = 0, d.out_cvt_offset = 0;
            DpuOperands ops;
            ops.ew = r.bytes(cube_bytes(1, 1, d.c, Precision::Int8, atom));
            const auto img = r.bytes(cube_bytes(d.w, d.h, d.c, Precision::Int8, atom));
            const auto reference = [&] {
                return pack_cube(run_dpu(d, unpack_cube(img, d.w, d.h, d.c, Precision::Int8, atom), ops), d.out, atom);
            };
            const auto first = concat(run_dpu_int_image(d, img, ops));
            ASSERT_EQ(first, reference()) << "trial " << t;
            ASSERT_EQ(concat(run_dpu_int_image(d, img, ops)), first) << "trial " << t << ": the repeat";
            const uint32_t ch = static_cast<uint32_t>(r.in(0, d.c - 1));
            ops.ew[(ch / atom) * surface_bytes(1, 1, atom) + ch % atom] ^= static_cast<uint8_t>(r.in(1, 255));
            const auto want = reference();
            ASSERT_EQ(concat(run_dpu_int_image(d, img, ops)), want) << "trial " << t << ": EW operand of channel " << ch;
            changed += want != first;
        }
        EXPECT_GT(changed, 40);
    });
}

TEST(PpuEquivalence, FastIntegerPoolingMatchesRunPpuBitForBit) {
    on_each_isa([] {
    Rng r(21);
    for (int t = 0; t < 400; ++t) {
        PpuConfig c;
        c.atom = r.coin() ? 16 : 8;
        c.prec = r.coin(70) ? Precision::Int8 : Precision::Int16;
        c.method_raw = static_cast<uint32_t>(r.in(0, 2));
        c.method = static_cast<PoolMethod>(c.method_raw);
        c.in_w = static_cast<uint32_t>(r.in(1, 12)), c.in_h = static_cast<uint32_t>(r.in(1, 10));
        c.in_c = c.out_c = static_cast<uint32_t>(r.in(1, 40));
        c.kernel_w = static_cast<uint32_t>(r.in(1, 6)), c.kernel_h = static_cast<uint32_t>(r.in(1, 6));
        c.stride_x = static_cast<uint32_t>(r.in(1, 4)), c.stride_y = static_cast<uint32_t>(r.in(1, 4));
        c.pad_left = static_cast<uint32_t>(r.in(0, c.kernel_w - 1)), c.pad_right = static_cast<uint32_t>(r.in(0, c.kernel_w - 1));
        c.pad_top = static_cast<uint32_t>(r.in(0, c.kernel_h - 1)), c.pad_bottom = static_cast<uint32_t>(r.in(0, c.kernel_h - 1));
        const int64_t max_w = (int64_t{c.in_w} + c.pad_left + c.pad_right - c.kernel_w) / c.stride_x + 1;
        const int64_t max_h = (int64_t{c.in_h} + c.pad_top + c.pad_bottom - c.kernel_h) / c.stride_y + 1;
        if (max_w < 1 || max_h < 1) continue;
        c.out_w = static_cast<uint32_t>(r.in(1, max_w)), c.out_h = static_cast<uint32_t>(r.in(1, max_h));
        c.pad_value = static_cast<uint32_t>(r.in(-70000, 70000));
        c.recip_w = static_cast<uint32_t>(r.in(1, 0x1ffff)), c.recip_h = static_cast<uint32_t>(r.in(1, 0x1ffff));
        ASSERT_TRUE(ppu_fast_ok(c));
        const auto img = r.bytes(cube_bytes(c.in_w, c.in_h, c.in_c, c.prec, c.atom));
        const auto want = pack_cube(run_ppu(c, unpack_cube(img, c.in_w, c.in_h, c.in_c, c.prec, c.atom)), c.prec, c.atom);
        std::vector<const uint8_t*> in;
        const uint64_t surf = surface_bytes(c.in_w, c.in_h, c.atom);
        for (uint64_t at = 0; at < img.size(); at += surf) in.push_back(img.data() + at);
        ASSERT_EQ(concat(run_ppu_int(c, in)), want) << "trial " << t;
    }
    });
}

}  // namespace
