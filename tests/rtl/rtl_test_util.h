// SPDX-License-Identifier: MIT
// Shared pieces of the RTL test benches: a seeded generator of random int8 conv tasks and integer
// DPU configurations (the register-level structs the C++ engines take), and a SystemC runner that
// executes the bench body in an SC_THREAD (the datapath driver clocks the RTL with delta cycles).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <systemc>
#include <vector>

#include "npu/rknpu/conv_config.h"
#include "npu/rknpu/conv_engine.h"
#include "npu/rknpu/dpu_config.h"
#include "npu/rknpu/dpu_engine.h"

namespace rtltest {

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
    /// int8 bytes biased to the extremes (-128, 127, 0) a quarter of the time.
    std::vector<uint8_t> int8s(size_t n) {
        std::vector<uint8_t> v(n);
        for (auto& b : v) {
            const int64_t k = in(0, 15);
            b = static_cast<uint8_t>(k == 0 ? 0x80 : (k == 1 ? 0x7f : (k == 2 ? 0 : in(0, 255))));
        }
        return v;
    }
};

/// Number of random cases: `dflt`, or NPUSIM_RTL_TEST_CASES for a one-off long run.
inline int cases(int dflt) {
    const char* e = std::getenv("NPUSIM_RTL_TEST_CASES");
    return e ? std::atoi(e) : dflt;
}

/// A random int8 conv task (register-level fields as decode_conv fills them) and its operands.
struct ConvCase {
    ConvConfig c;
    ConvOperands ops;
    std::vector<uint8_t> bn, ew;
};

inline ConvCase random_conv(Rng& r, bool big = false) {
    ConvCase k;
    ConvConfig& c = k.c;
    c.precision = c.core_precision = Precision::Int8;
    c.atom = 16;
    c.depthwise = r.coin(30);
    c.in_c = static_cast<uint32_t>(16 * r.in(1, big ? 6 : 3));
    c.in_w = static_cast<uint32_t>(r.in(1, big ? 24 : 11));
    c.in_h = static_cast<uint32_t>(r.in(1, big ? 24 : 11));
    c.kernel_w = static_cast<uint32_t>(r.in(1, 5));
    c.kernel_h = static_cast<uint32_t>(r.coin(70) ? c.kernel_w : r.in(1, 5));
    c.stride_x = static_cast<uint32_t>(r.in(1, 3));
    c.stride_y = static_cast<uint32_t>(r.coin(70) ? c.stride_x : r.in(1, 3));
    c.dilation_x = static_cast<uint32_t>(r.coin(80) ? 1 : 2);
    c.dilation_y = static_cast<uint32_t>(r.coin(80) ? 1 : 2);
    c.pad_left = static_cast<uint32_t>(r.in(0, c.kernel_w / 2 + 1));
    c.pad_top = static_cast<uint32_t>(r.in(0, c.kernel_h / 2 + 1));
    c.pad_value = static_cast<int32_t>(r.coin(50) ? 0 : r.in(-128, 127));
    const int64_t eff_w = (c.kernel_w - 1) * c.dilation_x + 1, eff_h = (c.kernel_h - 1) * c.dilation_y + 1;
    const int64_t max_w = (static_cast<int64_t>(c.in_w) + c.pad_left + (eff_w - 1) - eff_w) / c.stride_x + 1;
    const int64_t max_h = (static_cast<int64_t>(c.in_h) + c.pad_top + (eff_h - 1) - eff_h) / c.stride_y + 1;
    c.out_w =
        static_cast<uint32_t>(std::max<int64_t>(1, r.in(std::max<int64_t>(1, max_w - 2), std::max<int64_t>(1, max_w))));
    c.out_h =
        static_cast<uint32_t>(std::max<int64_t>(1, r.in(std::max<int64_t>(1, max_h - 2), std::max<int64_t>(1, max_h))));
    c.out_c = c.depthwise ? static_cast<uint32_t>(r.in(1, c.in_c)) : static_cast<uint32_t>(r.in(1, big ? 96 : 70));
    c.kernels = c.out_c;
    c.clip_truncate = static_cast<uint32_t>(r.coin(70) ? 0 : r.in(1, 20));
    const uint64_t taps = static_cast<uint64_t>(c.kernel_w) * c.kernel_h;
    c.weight_bytes = static_cast<uint32_t>(c.depthwise ? taps * c.in_c : taps * c.in_c * c.out_c);
    c.weight_bytes_per_kernel = static_cast<uint32_t>(taps * c.in_c);
    k.ops.weights = r.int8s(c.weight_bytes);
    k.ops.feature = r.int8s(static_cast<size_t>(c.in_c / 16) * c.in_w * c.in_h * 16);
    return k;
}

/// A random BS/BN stage of the integer path.
inline DpuStage random_stage(Rng& r) {
    DpuStage s;
    s.bypass = r.coin(25);
    s.alu_bypass = r.coin(30), s.mul_bypass = r.coin(35), s.mul_prelu = r.coin(20);
    s.relu_bypass = r.coin(50), s.relux_en = r.coin(30);
    s.alu_from_mem = r.coin(60), s.mul_from_mem = r.coin(50);
    s.alu_algo = static_cast<uint32_t>(r.coin(60) ? 2 : r.in(0, 1));
    s.alu_operand = static_cast<uint32_t>(r.coin(50) ? r.in(INT32_MIN, INT32_MAX) : r.in(-5000, 5000));
    s.mul_operand = static_cast<uint32_t>(r.in(0, 0xffff));
    s.mul_shift = static_cast<uint32_t>(r.in(0, 63));
    s.relux_cmp = static_cast<uint32_t>(r.coin(20) ? r.in(INT32_MIN, INT32_MAX) : r.in(-100, 100000));
    return s;
}

/// A random integer-path DPU configuration (no LUT: not in the RTL) for a w x h x c cube; its
/// BS/BN operand images and EW cube are filled into `ops`.
inline DpuConfig random_dpu(Rng& r, uint32_t w, uint32_t h, uint32_t c, DpuOperands& ops) {
    DpuConfig d;
    d.w = w, d.h = h, d.c = c, d.atom = 16;
    d.proc = Precision::Int8;
    d.out = r.coin(75) ? Precision::Int8 : Precision::Int16;
    d.src_prec = r.coin(70) ? Precision::Int8 : Precision::Int16;
    d.bs = random_stage(r);
    d.bn = random_stage(r);
    d.ew.bypass = r.coin(30);
    d.ew.op_bypass = r.coin(20);
    d.ew.op_is_mul = r.coin(35);
    d.ew.mul_prelu = r.coin(20);
    d.ew.op_from_mem = r.coin(65);
    d.ew.erdma_disable = false;
    d.ew.erdma_data_size = r.coin(70) ? 0 : 1;
    d.ew.cvt_bypass = r.coin(30);
    d.ew.alu_algo = static_cast<uint32_t>(r.coin(60) ? 2 : r.in(0, 1));
    d.ew.operand = static_cast<uint32_t>(r.coin(50) ? r.in(INT32_MIN, INT32_MAX) : r.in(-300, 300));
    d.ew.cvt_offset = static_cast<int32_t>(r.coin(30) ? r.in(INT32_MIN, INT32_MAX) : r.in(-200, 200));
    d.ew.cvt_scale = static_cast<uint32_t>(r.in(0, 0xffff));
    d.ew.cvt_shift = static_cast<uint32_t>(r.in(0, 63));
    d.ew.truncate = static_cast<uint32_t>(r.in(0, 63));
    d.ew.relu_bypass = r.coin(50), d.ew.relux_en = r.coin(30);
    d.ew.relux_cmp = static_cast<uint32_t>(r.in(-50, 70000));
    d.ew.lut_bypass = true;
    d.out_cvt_scale = static_cast<uint32_t>(r.in(0, 0xffff));
    d.out_cvt_shift = static_cast<uint32_t>(r.in(0, 63));
    d.out_cvt_offset = static_cast<int32_t>(r.coin(70) ? r.in(-128, 127) : r.in(INT32_MIN, INT32_MAX));
    ops.bs = r.bytes(d.bs.operand_bytes(c));
    ops.bn = r.bytes(d.bn.operand_bytes(c));
    ops.ew = r.bytes(d.ew_bytes());
    return d;
}

/// Run `body` in an SC_THREAD (sc_start once per process: the SystemC kernel cannot restart).
class ScRunner : public sc_core::sc_module {
   public:
    ScRunner(sc_core::sc_module_name name, std::function<void()> body) : sc_module(name), body_(std::move(body)) {
        SC_THREAD(run);
    }
    SC_HAS_PROCESS(ScRunner);

   private:
    void run() { body_(); }
    std::function<void()> body_;
};

}  // namespace rtltest
