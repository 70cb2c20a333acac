// SPDX-License-Identifier: MIT
// Non-SystemC harness for the block tests: a regcmd stream built with drv::regcmd::Builder is
// replayed into a RegFile, planned with plan_task, its reads served from a flat test memory,
// executed, and its writes stored back. Plus NCHW <-> NC1HWC2 helpers and num::Tensor helpers.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "drv/regcmd/builder.h"
#include "hw/profile.h"
#include "hw/regcmd.h"
#include "hw/rknpu_layout.h"
#include "npu/rknpu/cube.h"
#include "npu/rknpu/reg_file.h"
#include "npu/rknpu/task.h"
#include "numerics/ops.h"
#include "numerics/tensor.h"

namespace blk {

/// MAC-array cycles of a dense convolution task as the profile's timing rules state them
/// (hardware-facts III 5.1 + NVDLA stripes): `pixels` output pixels spent in stripes of
/// npu.stripe_max_pixels, a stripe shorter than the weight load (int8_macs_per_cycle /
/// cbuf_read_bytes_per_cycle cycles) waiting for it, `per_pixel` padded MACs per pixel, at
/// `rate` x npu.conv_mac_efficiency MACs per cycle.
inline uint64_t dense_cycles(const hw::SocProfile& p, uint64_t pixels, uint64_t per_pixel, uint64_t rate) {
    const uint64_t s = p.npu.stripe_max_pixels.value, cb = p.npu.cbuf_read_bytes_per_cycle.value;
    const uint64_t load = (p.npu.int8_macs_per_cycle.value + cb - 1) / cb;
    uint64_t px = 0;
    for (uint64_t left = pixels; left; left -= std::min(left, s)) px += std::max(std::min(left, s), load);
    return static_cast<uint64_t>(
        std::ceil(static_cast<double>(px * per_pixel) / (static_cast<double>(rate) * p.npu.conv_mac_efficiency.value) -
                  1e-9));
}

inline const hw::SocProfile& soc() {
    static const hw::SocProfile p = hw::load_named_profile("rk3588");
    return p;
}

/// Field values in silicon units (docs/rknpu-register-semantics.md §8, hw/rknpu_layout.h), the
/// way Mesa and mtx512 program them: LINE_STRIDE = row bytes / 4, SURF_STRIDE = LINE_STRIDE x
/// (H / 4 - 1) for a compact surface.
inline uint64_t line_field(uint64_t row_bytes, hw::rknpu::Generation g = hw::rknpu::Generation::RK3588) {
    const auto v = hw::rknpu::encode_line_stride(row_bytes, g);
    if (!v) throw std::invalid_argument("line stride not representable");
    return *v;
}
inline uint64_t surf_field(uint64_t surf_bytes, uint64_t row_bytes,
                           hw::rknpu::Generation g = hw::rknpu::Generation::RK3588) {
    const auto v = hw::rknpu::encode_surf_stride(surf_bytes, row_bytes, g);
    if (!v) throw std::invalid_argument("surface stride not representable");
    return *v;
}
/// Element index of weight (kernel o, tap t, input channel i) in the CNA's weight blocks of `p`
/// (Mesa rkt_coefs.c, mtx512 weight_int8/weight_fp16); depthwise: channel o.
inline uint64_t weight_at(const hw::SocProfile& p, uint32_t elem_bits, bool depthwise, uint32_t kernels, uint32_t taps,
                          uint32_t channels, uint32_t o, uint32_t t, uint32_t i) {
    const auto b = hw::rknpu::weight_blocks(p, elem_bits, depthwise);
    return depthwise ? hw::rknpu::weight_element(b, 1, taps, channels, 0, t, o)
                     : hw::rknpu::weight_element(b, kernels, taps, channels, o, t, i);
}

/// Replay the register writes of a stream (the task-ending PC entries included).
inline npu::rknpu::RegFile replay(const drv::regcmd::Builder& b, npu::rknpu::RegFile rf = {}) {
    for (uint64_t w : b.words()) {
        const auto c = hw::rknpu::RegCmd::decode(w);
        if (c.target() != 0 && c.is_write()) rf.write(c.offset, c.value);
    }
    return rf;
}

/// Flat device memory at address 0.
struct Memory {
    std::vector<uint8_t> bytes = std::vector<uint8_t>(8u << 20, 0xcd);
    void put(uint64_t addr, const std::vector<uint8_t>& v) {
        if (addr + v.size() > bytes.size()) throw std::out_of_range("test memory");
        std::memcpy(bytes.data() + addr, v.data(), v.size());
    }
    std::vector<uint8_t> get(uint64_t addr, uint64_t n) const {
        if (addr + n > bytes.size()) throw std::out_of_range("test memory");
        return {bytes.begin() + static_cast<std::ptrdiff_t>(addr), bytes.begin() + static_cast<std::ptrdiff_t>(addr + n)};
    }
};

/// Plan and execute one task against `mem` as the SystemC core would (reads, execute, writes).
inline npu::rknpu::TaskPlan run_task(const npu::rknpu::RegFile& rf, uint32_t mask, Memory& mem,
                                     const hw::SocProfile& profile = soc()) {
    npu::rknpu::TaskPlan plan = npu::rknpu::plan_task(rf, mask, profile);
    if (!plan.faults.empty())
        throw std::runtime_error("fault: " + plan.faults.front().block + "." + plan.faults.front().reg + "." +
                                 plan.faults.front().field + ": " + plan.faults.front().message);
    std::vector<std::vector<uint8_t>> in;
    for (const auto& r : plan.reads) in.push_back(mem.get(r.addr, r.bytes));
    const auto out = npu::rknpu::execute_task(plan, in);
    if (out.size() != plan.writes.size()) throw std::runtime_error("write count mismatch");
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i].size() != plan.writes[i].bytes) throw std::runtime_error("write size mismatch");
        mem.put(plan.writes[i].addr, out[i]);
    }
    return plan;
}

/// NCHW values (C x H x W, batch 1) as a cube in precision p, packed NC1HWC2.
inline std::vector<uint8_t> pack_i(const std::vector<int>& v, uint32_t c, uint32_t h, uint32_t w,
                                   npu::rknpu::Precision p = npu::rknpu::Precision::Int8) {
    npu::rknpu::Cube q = npu::rknpu::Cube::make(w, h, c, false);
    for (size_t i = 0; i < v.size(); ++i) q.i[i] = v[i];
    return npu::rknpu::pack_cube(q, p);
}
inline std::vector<uint8_t> pack_f(const std::vector<float>& v, uint32_t c, uint32_t h, uint32_t w) {
    npu::rknpu::Cube q = npu::rknpu::Cube::make(w, h, c, true);
    q.f = v;
    return npu::rknpu::pack_cube(q, npu::rknpu::Precision::Fp16);
}
inline npu::rknpu::Cube unpack(const Memory& m, uint64_t addr, uint32_t c, uint32_t h, uint32_t w,
                               npu::rknpu::Precision p) {
    return npu::rknpu::unpack_cube(m.get(addr, npu::rknpu::cube_bytes(w, h, c, p)), w, h, c, p);
}

inline std::vector<int> random_i8(size_t n, std::mt19937& rng, int lo = -128, int hi = 127) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}
/// Random values already representable in fp16.
inline std::vector<float> random_f16(size_t n, std::mt19937& rng, float lo = -4.f, float hi = 4.f) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = npu::rknpu::round_to_fp16(d(rng));
    return v;
}

inline num::Tensor tensor_i8(const std::vector<int>& v, std::vector<int64_t> shape) {
    num::Tensor t(num::DType::I8, std::move(shape));
    for (size_t i = 0; i < v.size(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(v[i]);
    return t;
}
inline num::Tensor tensor_f32(const std::vector<float>& v, std::vector<int64_t> shape) {
    num::Tensor t(num::DType::F32, std::move(shape));
    for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = v[i];
    return t;
}
inline num::Tensor scalar_f32(float v) { return tensor_f32({v}, {}); }
inline num::Tensor scalar_i8(int v) { return tensor_i8({v}, {}); }
inline std::vector<int> ints(const num::Tensor& t) {
    std::vector<int> v(t.numel());
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<int8_t>()[i];
    return v;
}
inline std::vector<float> floats(const num::Tensor& t) {
    return {t.data<float>(), t.data<float>() + t.numel()};
}

/// Registers of a DPU-only task (MRDMA input cube at `src`, output at `dst`, compact layouts) with
/// every stage bypassed and an identity output convert; tests then override the stages.
inline void emit_dpu_task(drv::regcmd::Builder& b, uint32_t w, uint32_t h, uint32_t c, uint32_t src, uint32_t dst,
                          bool fp16 = false) {
    const uint64_t prec = fp16 ? 2 : 0;
    b.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"OUTPUT_MODE", 2}});
    b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", prec}, {"IN_PRECISION", prec}, {"OUT_PRECISION", prec}});
    b.write("DPU_DST_BASE_ADDR", dst);
    b.write_fields("DPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", uint64_t{w} * h}});
    b.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", w - 1}});
    b.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", h - 1}});
    b.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", c - 1}, {"ORIG_CHANNEL", c - 1}});
    b.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 1}, {"BS_ALU_BYPASS", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 1}});
    b.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 1}, {"BN_ALU_BYPASS", 1}, {"BN_MUL_BYPASS", 1}, {"BN_RELU_BYPASS", 1}});
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 1}, {"EW_OP_BYPASS", 1}, {"EW_LUT_BYPASS", 1}, {"EW_OP_CVT_BYPASS", 1},
                                  {"EW_RELU_BYPASS", 1}});
    b.write("DPU_OUT_CVT_OFFSET", 0);
    b.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 1}});
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 0}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_WIDTH", {{"WIDTH", w - 1}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_HEIGHT", {{"HEIGHT", h - 1}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_CHANNEL", {{"CHANNEL", c - 1}});
    b.write("DPU_RDMA_RDMA_SRC_BASE_ADDR", src);
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
    b.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG",
                   {{"BURST_LEN", 15}, {"MRDMA_DISABLE", 0}, {"IN_PRECISION", prec}, {"PROC_PRECISION", prec}});
}

inline constexpr uint32_t kDpuOnly = npu::rknpu::enable::DPU | npu::rknpu::enable::DPU_RDMA;

}  // namespace blk
