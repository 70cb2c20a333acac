// SPDX-License-Identifier: MIT
// Speed of the RKNPU functional engines on the 53 convolutions of ResNet-50 (224x224, int8,
// bench/resnet50_layers.h): each layer is lowered to one conv task (bias + ReLU + requantization),
// replayed into a register file, planned with plan_task and executed with execute_task, without
// SystemC. Prints CPU time per layer class and in total; with --reference also runs the reference
// engines (the per-element loops the fast paths must match) and checks the output bytes are
// identical. Compare with bench/resnet50_int8_bench (the reference executor on the whole model).
// With --tlm full|timing, the same 53 tasks also run through the SystemC platform (regcmd fetch,
// DMA over the interconnect and DDR model, engines; one kick per layer), full-mode outputs checked
// against the engine run (one mode per process: SystemC elaborates once).
//   bench_rknpu_resnet50 [--reference] [--tlm full|timing] [--repeat N]
// The CBUF of the profile is enlarged so that every layer is one task (the engine's speed is
// measured, not the tiling); the task count of a tiled model does not change the MAC work.
#include <time.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <systemc>

#include "../resnet50_layers.h"
#include "app/replay.h"
#include "drv/regcmd/builder.h"
#include "compiler/rknpu/conv_lowering.h"
#include "hw/profile.h"
#include "hw/regcmd.h"
#include "npu/rknpu/conv_engine.h"
#include "npu/rknpu/reg_file.h"
#include "npu/rknpu/task.h"
#include "numerics/gemm.h"

namespace {

double cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

struct Task {
    std::string cls;
    npu::rknpu::TaskPlan plan;
    std::vector<std::vector<uint8_t>> reads;
    uint64_t macs = 0;
};

/// A DPU-only residual add (QLinearAdd + ReLU as the DPU runs it): BS scales the input, the EW
/// stage adds the ERDMA cube through its convert, ReLU, output convert.
void emit_residual_add(drv::regcmd::Builder& b, uint32_t w, uint32_t h, uint32_t c) {
    const uint64_t surf16 = uint64_t{w} * h;  // DST/EW surface strides in 16-byte units (compact)
    b.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"OUTPUT_MODE", 2}});
    b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", 0}, {"IN_PRECISION", 0}, {"OUT_PRECISION", 0}});
    b.write("DPU_DST_BASE_ADDR", 0x7000000);
    b.write_fields("DPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", surf16}});
    b.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", w - 1}});
    b.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", h - 1}});
    b.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", c - 1}, {"ORIG_CHANNEL", c - 1}});
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 0}, {"BS_ALU_ALGO", 2}, {"BS_MUL_BYPASS", 0}, {"BS_RELU_BYPASS", 1}});
    b.write("DPU_BS_ALU_CFG", 4);
    b.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_OPERAND", 9000}, {"BS_MUL_SHIFT_VALUE", 8}});
    b.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 1}, {"BN_ALU_BYPASS", 1}, {"BN_MUL_BYPASS", 1}, {"BN_RELU_BYPASS", 1}});
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 0}, {"EW_OP_TYPE", 0}, {"EW_OP_SRC", 1}, {"EW_ALU_ALGO", 2},
                                  {"EW_OP_CVT_BYPASS", 0}, {"EW_LUT_BYPASS", 1}, {"EW_RELU_BYPASS", 0}});
    b.write("DPU_EW_CVT_OFFSET_VALUE", static_cast<uint32_t>(-7));
    b.write_fields("DPU_EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", 13000}, {"EW_OP_CVT_SHIFT", 8}});
    b.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(-128));
    b.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 1}});
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 6}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_WIDTH", {{"WIDTH", w - 1}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_HEIGHT", {{"HEIGHT", h - 1}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_CHANNEL", {{"CHANNEL", c - 1}});
    b.write("DPU_RDMA_RDMA_SRC_BASE_ADDR", 0x1000000);
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 0}, {"ERDMA_DATA_SIZE", 0}});
    b.write("DPU_RDMA_RDMA_EW_BASE_ADDR", 0x3000000);
    b.write_fields("DPU_RDMA_RDMA_EW_SURF_STRIDE", {{"EW_SURF_STRIDE", surf16}});
    b.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"MRDMA_DISABLE", 0}, {"IN_PRECISION", 0}, {"PROC_PRECISION", 0}});
}

/// A PPU-only 3x3/2 max pool with padding 1 (ResNet-50's stem pool).
void emit_maxpool(drv::regcmd::Builder& b, uint32_t w, uint32_t h, uint32_t c) {
    const uint32_t ow = (w + 2 - 3) / 2 + 1, oh = (h + 2 - 3) / 2 + 1;
    b.write_fields("PPU_DATA_CUBE_IN_WIDTH", {{"CUBE_IN_WIDTH", w - 1}});
    b.write_fields("PPU_DATA_CUBE_IN_HEIGHT", {{"CUBE_IN_HEIGHT", h - 1}});
    b.write_fields("PPU_DATA_CUBE_IN_CHANNEL", {{"CUBE_IN_CHANNEL", c - 1}});
    b.write_fields("PPU_DATA_CUBE_OUT_WIDTH", {{"CUBE_OUT_WIDTH", ow - 1}});
    b.write_fields("PPU_DATA_CUBE_OUT_HEIGHT", {{"CUBE_OUT_HEIGHT", oh - 1}});
    b.write_fields("PPU_DATA_CUBE_OUT_CHANNEL", {{"CUBE_OUT_CHANNEL", c - 1}});
    b.write_fields("PPU_OPERATION_MODE_CFG", {{"POOLING_METHOD", 1}, {"FLYING_MODE", 1}});
    b.write_fields("PPU_POOLING_KERNEL_CFG", {{"KERNEL_WIDTH", 2}, {"KERNEL_HEIGHT", 2}, {"KERNEL_STRIDE_WIDTH", 1},
                                              {"KERNEL_STRIDE_HEIGHT", 1}});
    b.write_fields("PPU_POOLING_PADDING_CFG", {{"PAD_LEFT", 1}, {"PAD_TOP", 1}, {"PAD_RIGHT", 1}, {"PAD_BOTTOM", 1}});
    b.write("PPU_PADDING_VALUE_1_CFG", static_cast<uint32_t>(-128));
    b.write_fields("PPU_DST_BASE_ADDR", {{"DST_BASE_ADDR", 0x7000000 >> 4}});
    b.write_fields("PPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", uint64_t{ow} * oh}});
    b.write_fields("PPU_DATA_FORMAT", {{"PROC_PRECISION", 0}, {"DPU_FLYIN", 0}});
    b.write_fields("PPU_RDMA_RDMA_CUBE_IN_WIDTH", {{"CUBE_IN_WIDTH", w - 1}});
    b.write_fields("PPU_RDMA_RDMA_CUBE_IN_HEIGHT", {{"CUBE_IN_HEIGHT", h - 1}});
    b.write_fields("PPU_RDMA_RDMA_CUBE_IN_CHANNEL", {{"CUBE_IN_CHANNEL", c - 1}});
    b.write("PPU_RDMA_RDMA_SRC_BASE_ADDR", 0x1000000);
    b.write_fields("PPU_RDMA_RDMA_SRC_LINE_STRIDE", {{"SRC_LINE_STRIDE", w}});
    b.write_fields("PPU_RDMA_RDMA_SRC_SURF_STRIDE", {{"SRC_SURF_STRIDE", uint64_t{w} * h}});
    b.write_fields("PPU_RDMA_RDMA_DATA_FORMAT", {{"IN_PRECISION", 1}});
}

std::string layer_class(const bench::ConvLayer& l) {
    if (l.k == 7) return "stem 7x7/2";
    if (l.downsample) return "downsample 1x1";
    if (l.k == 3) return l.stride == 2 ? "3x3/2" : "3x3/1";
    return "1x1";
}

}  // namespace

int sc_main(int, char*[]) { return 0; }

int main(int argc, char** argv) {
    bool reference = false, tlm = false, tlm_full = true;
    int repeat = 3;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--reference") reference = true;
        else if (a == "--tlm" && i + 1 < argc) tlm = true, tlm_full = std::string(argv[++i]) != "timing";
        else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: bench_rknpu_resnet50 [--reference] [--tlm full|timing] [--repeat N]\n");
            return 2;
        }
    }
    hw::SocProfile soc = hw::load_named_profile("rk3588");
    soc.npu.cbuf_bank_bytes.value = 8u << 20;  // one task per layer (see the header comment)
    std::mt19937 rng(5);
    std::vector<Task> tasks;
    std::vector<sim::RawJob> jobs;
    for (const bench::ConvLayer& l : bench::resnet50_convs()) {
        drv::rknpu::ConvLayer L;
        L.in_c = static_cast<int>(l.cin), L.in_h = L.in_w = static_cast<int>(l.in_hw), L.out_c = static_cast<int>(l.cout);
        L.kernel_h = L.kernel_w = static_cast<int>(l.k);
        L.stride_h = L.stride_w = static_cast<int>(l.stride);
        L.pad_top = L.pad_left = L.pad_bottom = L.pad_right = static_cast<int>(l.k / 2);
        L.relu = l.relu;
        L.in_scale = 0.05f, L.w_scale = 0.01f, L.out_scale = 0.2f, L.in_zp = -3, L.out_zp = 2;
        L.weights.resize(static_cast<size_t>(l.cout * l.cin * l.k * l.k));
        std::uniform_int_distribution<int> d8(-127, 127), db(-2000, 2000);
        for (auto& w : L.weights) w = static_cast<int8_t>(d8(rng));
        L.bias.resize(static_cast<size_t>(l.cout));
        for (auto& b : L.bias) b = db(rng);
        const auto low = drv::rknpu::lower_conv(L, soc);
        constexpr uint32_t kIn = 0x1000000, kC = 0x4000000, kOut = 0x7000000;
        drv::regcmd::Builder b;
        drv::rknpu::emit_conv_task(L, low, {kIn, kC, kOut}, b);  // one task: the inflated CBUF holds the layer
        const uint32_t mask = low.tasks.front().meta.enable_mask;
        npu::rknpu::RegFile rf;
        for (uint64_t w : b.words()) {
            const auto c = hw::rknpu::RegCmd::decode(w);
            if (c.target() != 0 && c.is_write()) rf.write(c.offset, c.value);
        }
        Task t;
        t.cls = layer_class(l);
        t.plan = npu::rknpu::plan_task(rf, mask, soc);
        if (!t.plan.faults.empty()) {
            std::fprintf(stderr, "layer %zu: %s\n", tasks.size(), t.plan.faults.front().message.c_str());
            return 1;
        }
        std::vector<int8_t> x(static_cast<size_t>(l.cin * l.in_hw * l.in_hw));
        for (auto& v : x) v = static_cast<int8_t>(d8(rng));
        const std::vector<uint8_t> img = drv::rknpu::pack_input(L, low, x);
        for (const auto& r : t.plan.reads) {
            const std::vector<uint8_t>* src = r.addr >= kC ? &low.constants : &img;
            const uint64_t base = r.addr >= kC ? kC : kIn;
            t.reads.emplace_back(src->begin() + static_cast<std::ptrdiff_t>(r.addr - base),
                                 src->begin() + static_cast<std::ptrdiff_t>(r.addr - base + r.bytes));
        }
        t.macs = t.plan.macs;
        sim::RawJob job;
        job.addr = 0x8000000;
        job.words = drv::regcmd::link_tasks({b.words()}, 0x8000000, soc.npu.pc_data_amount_scale.value, mask);
        job.preload = {{kIn, img}, {kC, low.constants}};
        uint64_t out_bytes = 0;
        for (const auto& w : t.plan.writes) out_bytes = std::max(out_bytes, w.addr + w.bytes - kOut);
        job.readback = {{kOut, out_bytes}};
        jobs.push_back(std::move(job));
        tasks.push_back(std::move(t));
    }
    const size_t n_conv = tasks.size();
    // The rest of the network's NPU work: 16 residual adds (DPU-only) and the stem max pool (PPU).
    auto add_task = [&](const std::string& cls, const drv::regcmd::Builder& b, uint32_t mask) {
        npu::rknpu::RegFile rf;
        for (uint64_t w : b.words()) {
            const auto c = hw::rknpu::RegCmd::decode(w);
            if (c.target() != 0 && c.is_write()) rf.write(c.offset, c.value);
        }
        Task t;
        t.cls = cls;
        t.plan = npu::rknpu::plan_task(rf, mask, soc);
        if (!t.plan.faults.empty()) {
            std::fprintf(stderr, "%s: %s\n", cls.c_str(), t.plan.faults.front().message.c_str());
            std::exit(1);
        }
        for (const auto& r : t.plan.reads) {
            std::vector<uint8_t> v(r.bytes);
            for (auto& x : v) x = static_cast<uint8_t>(rng());
            t.reads.push_back(std::move(v));
        }
        tasks.push_back(std::move(t));
    };
    for (const auto& [hw_, c, n] : std::vector<std::array<uint32_t, 3>>{{56, 256, 3}, {28, 512, 4}, {14, 1024, 6}, {7, 2048, 3}})
        for (uint32_t i = 0; i < n; ++i) {
            drv::regcmd::Builder b;
            emit_residual_add(b, hw_, hw_, c);
            add_task("residual add", b, npu::rknpu::enable::DPU | npu::rknpu::enable::DPU_RDMA);
        }
    {
        drv::regcmd::Builder b;
        emit_maxpool(b, 112, 112, 64);
        add_task("maxpool 3x3/2", b, npu::rknpu::enable::PPU | npu::rknpu::enable::PPU_RDMA);
    }
    std::printf("%zu conv + %zu DPU/PPU tasks (ResNet-50 v1.5, 224x224, int8, rk3588); qgemm kernel %s\n", n_conv,
                tasks.size() - n_conv, num::qgemm_kernel_name());

    auto run_all = [&](bool ref, std::map<std::string, double>& per_class, std::vector<std::vector<uint8_t>>* outs) {
        npu::rknpu::set_reference_engines(ref);
        double total = 0;
        for (const Task& t : tasks) {
            auto reads = t.reads;  // the DMA's buffers: consumed by the engines, made outside the timing
            const double t0 = cpu_ms();
            auto w = npu::rknpu::execute_task(t.plan, std::move(reads));
            const double dt = cpu_ms() - t0;
            per_class[t.cls] += dt;
            total += dt;
            if (outs) {
                std::vector<uint8_t> all;
                for (auto& v : w) all.insert(all.end(), v.begin(), v.end());
                outs->push_back(std::move(all));
            }
        }
        npu::rknpu::set_reference_engines(false);
        return total;
    };

    std::map<std::string, double> best_class;
    double best = 1e300;
    std::vector<std::vector<uint8_t>> fast_out;
    for (int r = 0; r < repeat; ++r) {
        std::map<std::string, double> pc;
        const double t = run_all(false, pc, r == 0 ? &fast_out : nullptr);
        if (t < best) best = t, best_class = pc;
    }
    uint64_t macs = 0;
    for (const Task& t : tasks) macs += t.macs;
    double conv_ms = 0;
    for (const auto& [cls, ms] : best_class)
        if (cls != "residual add" && cls != "maxpool 3x3/2") conv_ms += ms;
    for (const auto& [cls, ms] : best_class) std::printf("  %-16s %8.1f ms cpu\n", cls.c_str(), ms);
    std::printf("engines (fast): %.1f ms cpu, convolutions %.1f ms, for %.2f GMAC (best of %d)\n", best, conv_ms,
                static_cast<double>(macs) * 1e-9, repeat);
    if (reference) {
        std::map<std::string, double> pc;
        std::vector<std::vector<uint8_t>> ref_out;
        const double t = run_all(true, pc, &ref_out);
        for (const auto& [cls, ms] : pc) std::printf("  %-16s %8.1f ms cpu (reference)\n", cls.c_str(), ms);
        size_t differ = 0;
        for (size_t i = 0; i < tasks.size(); ++i) differ += ref_out[i] != fast_out[i];
        std::printf("engines (reference): %.1f ms cpu; outputs: %zu of %zu tasks differ\n", t, differ, tasks.size());
        if (differ) return 1;
    }
    if (tlm) {
        setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
        sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
        {
            const bool full = tlm_full;
            const auto mode = full ? npu::tlm_models::SimMode::Full : npu::tlm_models::SimMode::Timing;
            const double t0 = cpu_ms();
            const auto res = sim::run_raw_jobs(soc, jobs, mode, nullptr);
            const double dt = cpu_ms() - t0;
            size_t differ = 0;
            uint64_t sim_ns = 0;
            for (size_t i = 0; i < res.size(); ++i) {
                sim_ns += res[i].elapsed_ns;
                if (!full) continue;
                // The compacted writes of the fast run, at their offsets in the read-back range.
                const auto& plan = tasks[i].plan;
                const std::vector<uint8_t>& got = res[i].readback.at(0);
                uint64_t at = 0;
                for (const auto& w : plan.writes) {
                    differ += !std::equal(fast_out[i].begin() + static_cast<std::ptrdiff_t>(at),
                                          fast_out[i].begin() + static_cast<std::ptrdiff_t>(at + w.bytes),
                                          got.begin() + static_cast<std::ptrdiff_t>(w.addr - 0x7000000));
                    at += w.bytes;
                }
            }
            std::printf("TLM platform, %s mode: %.1f ms cpu for %zu kicks (simulated %.3f ms)%s\n",
                        full ? "full" : "timing", dt, res.size(), static_cast<double>(sim_ns) * 1e-6,
                        full ? (differ ? "; OUTPUT DIFFERS" : "; outputs equal the engine run") : "");
            if (differ) return 1;
        }
    }
    return 0;
}
