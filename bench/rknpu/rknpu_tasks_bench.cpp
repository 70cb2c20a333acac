// SPDX-License-Identifier: MIT
// How many RKNPU tasks the model simulates per second of host time: a 16x8x8 -> 16 int8 3x3 conv
// task chained 4000 times per kick (RK3588 TASK_NUMBER limit 4095), kicks repeated until the
// requested task count, in timing mode (no data computed) and in full mode.
//   bench_rknpu_tasks [TASKS] [timing|full]
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <random>
#include <string>

#include <fmt/format.h>
#include <systemc>

#include "app/replay.h"
#include "drv/regcmd/builder.h"
#include "compiler/rknpu/conv_lowering.h"
#include "hw/regcmd.h"

int sc_main(int, char*[]) { return 0; }

int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
    const long total = argc > 1 ? std::atol(argv[1]) : 100000;
    const bool full = argc > 2 && std::string(argv[2]) == "full";
    const hw::SocProfile soc = hw::load_named_profile("rk3588");

    drv::rknpu::ConvLayer L;
    L.in_c = 16, L.in_h = 8, L.in_w = 8, L.out_c = 16;
    L.pad_top = L.pad_left = L.pad_bottom = L.pad_right = 1;
    L.in_scale = 0.05f, L.w_scale = 0.02f, L.out_scale = 0.5f;
    L.weights.assign(16 * 16 * 9, 3);
    L.bias.assign(16, 0);
    const auto low = drv::rknpu::lower_conv(L, soc);
    constexpr uint64_t kIn = 0x1000000, kC = 0x1010000, kOut = 0x1030000, kCmd = 0x2000000;
    drv::regcmd::Builder b;
    drv::rknpu::emit_conv_task(L, low, {uint32_t(kIn), uint32_t(kC), uint32_t(kOut)}, b);  // one task
    const long per_kick = 4000;
    sim::RawJob job;
    job.addr = kCmd;
    job.words = drv::regcmd::link_tasks(std::vector<std::vector<uint64_t>>(per_kick, b.words()), kCmd,
                                        soc.npu.pc_data_amount_scale.value, low.tasks.front().meta.enable_mask);
    job.preload = {{kIn, std::vector<uint8_t>(low.input_bytes, 1)}, {kC, low.constants}};
    std::vector<sim::RawJob> jobs;
    for (long done = 0; done < total; done += per_kick) {
        jobs.push_back(job);
        if (total - done < per_kick) jobs.back().task_number = static_cast<uint32_t>(total - done);
        job.preload.clear();
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    const auto res = sim::run_raw_jobs(soc, jobs, full ? npu::tlm_models::SimMode::Full : npu::tlm_models::SimMode::Timing,
                                       nullptr);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    long tasks = 0;
    uint64_t sim_ns = 0;
    for (const auto& r : res) {
        tasks += r.task_status;
        sim_ns += r.elapsed_ns;
    }
    fmt::print("rknpu {} mode: {} tasks in {:.3f} s wall = {:.0f} tasks/s; {:.3f} s CPU = {:.0f} tasks/s "
               "(simulated {:.3f} ms of NPU time, {:.2f} us per task)\n",
               full ? "full" : "timing", tasks, secs, tasks / secs, cpu, tasks / cpu, sim_ns / 1e6,
               sim_ns / 1e3 / tasks);
    return tasks == total ? 0 : 1;
}
