// SPDX-License-Identifier: MIT
#include "app/conv_example.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "drv/regcmd/builder.h"
#include "compiler/rknpu/conv_lowering.h"
#include "drv/rknpu/driver.h"
#include "hal_sim/sim_hal.h"
#include "numerics/requant.h"
#include "platform/platform.h"

namespace sim {

ConvExampleSpec ConvExampleSpec::from_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(fmt::format("cannot open '{}'", path));
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(fmt::format("{}: not valid JSON: {}", path, e.what()));
    }
    ConvExampleSpec s;
    if (!j.is_object()) throw std::runtime_error(fmt::format("{}: top level must be an object", path));
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        auto num = [&](int& dst, int lo, int hi) {
            if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi)
                throw std::runtime_error(fmt::format("{}: '{}' must be an integer in [{}, {}]", path, k, lo, hi));
            dst = it->get<int>();
        };
        if (k == "name" && it->is_string()) s.name = it->get<std::string>();
        else if (k == "in_c") num(s.in_c, 1, 4096);
        else if (k == "in_h") num(s.in_h, 1, 2048);
        else if (k == "in_w") num(s.in_w, 1, 2048);
        else if (k == "out_c") num(s.out_c, 1, 8192);
        else if (k == "kernel") num(s.kernel, 1, 31);
        else if (k == "stride") num(s.stride, 1, 7);
        else if (k == "pad") num(s.pad, 0, 15);
        else if (k == "dilation") num(s.dilation, 1, 31);
        else if (k == "relu" && it->is_boolean()) s.relu = it->get<bool>();
        else if (k == "seed" && it->is_number_unsigned()) s.seed = it->get<uint32_t>();
        else throw std::runtime_error(fmt::format("{}: unknown or mistyped key '{}'", path, k));
    }
    return s;
}

std::vector<int8_t> reference_conv(const std::vector<int8_t>& x, const std::vector<int8_t>& w,
                                   const std::vector<int32_t>& bias, int in_c, int in_h, int in_w, int out_c, int k,
                                   int stride, int pad, int dilation, bool relu, float in_s, int in_zp, float w_s,
                                   float out_s, int out_zp) {
    const int eff = (k - 1) * dilation + 1;
    const int oh = (in_h + 2 * pad - eff) / stride + 1, ow = (in_w + 2 * pad - eff) / stride + 1;
    std::vector<int8_t> y(static_cast<size_t>(out_c) * oh * ow);
    for (int o = 0; o < out_c; ++o)
        for (int oy = 0; oy < oh; ++oy)
            for (int ox = 0; ox < ow; ++ox) {
                int64_t acc = bias[static_cast<size_t>(o)];
                for (int c = 0; c < in_c; ++c)
                    for (int ky = 0; ky < k; ++ky)
                        for (int kx = 0; kx < k; ++kx) {
                            const int iy = oy * stride - pad + ky * dilation, ix = ox * stride - pad + kx * dilation;
                            if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) continue;  // zero in real terms
                            const int xv = x[(static_cast<size_t>(c) * in_h + iy) * in_w + ix] - in_zp;
                            acc += int64_t{xv} * w[((static_cast<size_t>(o) * in_c + c) * k + ky) * k + kx];
                        }
                double real = static_cast<double>(acc) * in_s * w_s;
                if (relu && real < 0) real = 0;
                y[(static_cast<size_t>(o) * oh + oy) * ow + ox] = num::quantize_real_i8(real / out_s, out_zp);
            }
    return y;
}

namespace {

struct ExampleData {
    drv::rknpu::ConvLayer layer;
    std::vector<int8_t> input;
};

ExampleData make_data(const ConvExampleSpec& s) {
    std::mt19937 rng(s.seed);  // raw mt19937 output is specified by the standard: portable data
    auto i8 = [&]() { return static_cast<int8_t>(static_cast<int>(rng() % 256) - 128); };
    ExampleData d;
    drv::rknpu::ConvLayer& L = d.layer;
    L.name = s.name;
    L.in_c = s.in_c, L.in_h = s.in_h, L.in_w = s.in_w, L.out_c = s.out_c;
    L.kernel_h = L.kernel_w = s.kernel;
    L.stride_h = L.stride_w = s.stride;
    L.pad_top = L.pad_left = L.pad_bottom = L.pad_right = s.pad;
    L.dilation_h = L.dilation_w = s.dilation;
    L.relu = s.relu;
    L.in_scale = 0.05f, L.in_zp = -3, L.w_scale = 0.02f, L.out_zp = -10;
    // Output scale so that one accumulator standard deviation maps to ~40 LSB.
    const double sigma = std::sqrt(static_cast<double>(s.in_c) * s.kernel * s.kernel) * 74.0 * 73.0;
    L.out_scale = static_cast<float>(L.in_scale * L.w_scale * sigma / 40.0);
    L.weights.resize(static_cast<size_t>(s.out_c) * s.in_c * s.kernel * s.kernel);
    for (auto& v : L.weights) v = std::max<int8_t>(-127, i8());
    L.bias.resize(static_cast<size_t>(s.out_c));
    for (auto& b : L.bias) b = static_cast<int32_t>(rng() % 20001) - 10000;
    d.input.resize(static_cast<size_t>(s.in_c) * s.in_h * s.in_w);
    for (auto& v : d.input) v = i8();
    return d;
}

uint64_t cycles(uint64_t ps, uint64_t clock_hz) {
    return static_cast<uint64_t>(std::llround(static_cast<double>(ps) * static_cast<double>(clock_hz) / 1e12));
}

}  // namespace

namespace {

struct CoreJob {
    int core = 0;
    drv::DmaBuffer out;
    std::vector<drv::rknpu::Task> tasks;
    drv::rknpu::SubmitResult sub;
    std::vector<int8_t> result;
};

/// Place one copy of the layer in DMA memory and build its tasks (host thread, through the HAL): the
/// model compiler's conv lowering (compiler/rknpu/conv_lowering.h), its tasks linked into one chain.
CoreJob prepare_job(SimHal& hal, const ExampleData& d, const drv::rknpu::LoweredConv& low, int core,
                    RunResult& r, bool sram, int pc_scale) {
    CoreJob job;
    job.core = core;
    const drv::Placement act = sram ? drv::Placement::TrySram : drv::Placement::Ddr;
    const auto bin = hal.bo_create(low.input_bytes, 64, act);
    const auto bc = hal.bo_create(low.constants.size(), 64);
    job.out = hal.bo_create(low.output_bytes, 64, act);
    if (sram)
        r.notes.push_back(fmt::format("core {}: input at 0x{:x}, output at 0x{:x} ({})", core, bin.dma_addr,
                                      job.out.dma_addr,
                                      hal.is_sram(bin) && hal.is_sram(job.out) ? "both in NBUF" : "NBUF absent or full: DDR used"));
    const std::vector<uint8_t> packed = drv::rknpu::pack_input(d.layer, low, d.input);
    hal.bo_write(bin, 0, packed.data(), packed.size());
    hal.bo_write(bc, 0, low.constants.data(), low.constants.size());
    const drv::rknpu::ConvAddresses addr{static_cast<uint32_t>(bin.dma_addr), static_cast<uint32_t>(bc.dma_addr),
                                         static_cast<uint32_t>(job.out.dma_addr)};
    std::vector<std::vector<uint64_t>> bodies;
    const uint32_t mask = low.tasks.front().meta.enable_mask;
    for (size_t t = 0; t < low.tasks.size(); ++t) {
        if (low.tasks[t].meta.enable_mask != mask)
            throw std::logic_error("conv example: the layer's tasks enable different blocks");
        bodies.push_back(drv::rknpu::conv_task_words(low, t, addr));
    }
    // The chain's size first (link_tasks pads every task to 64 bytes), then its address.
    std::vector<size_t> starts;
    const size_t entries = drv::regcmd::link_tasks(bodies, 0, pc_scale, mask, &starts).size();
    const auto breg = hal.bo_create(entries * 8, 64);
    const std::vector<uint64_t> words = drv::regcmd::link_tasks(bodies, breg.dma_addr, pc_scale, mask, &starts);
    hal.bo_write(breg, 0, words.data(), words.size() * 8);
    if (r.regcmd.empty()) {
        r.regcmd = words;
        r.regcmd_addr = breg.dma_addr;
    }
    for (size_t t = 0; t < bodies.size(); ++t) {
        drv::rknpu::Task task;
        task.regcmd_addr = breg.dma_addr + starts[t] * 8;
        task.regcfg_amount = static_cast<uint32_t>(bodies[t].size());
        task.int_mask = low.tasks[t].meta.int_mask;
        task.enable_mask = mask;
        job.tasks.push_back(task);
    }
    return job;
}

LayerReport layer_row(const ConvExampleSpec& spec, const ExampleData& d, int core,
                      const std::vector<npu::tlm_models::TaskRecord>& recs, const hw::SocProfile& soc,
                      uint64_t& total_ps) {
    const uint64_t hz = soc.npu.core_clock_hz.value;
    LayerReport lr;
    lr.name = spec.name;
    lr.op = fmt::format("Conv2D {}x{}/{} p{}{}{}", spec.kernel, spec.kernel, spec.stride, spec.pad, " +bias",
                        spec.relu ? " +ReLU" : "");
    lr.input_shape = fmt::format("1x{}x{}x{}", spec.in_c, spec.in_h, spec.in_w);
    lr.output_shape = fmt::format("1x{}x{}x{}", spec.out_c, d.layer.out_h(), d.layer.out_w());
    lr.core = core;
    lr.tasks = static_cast<int>(recs.size());
    total_ps = 0;
    for (const auto& t : recs) {
        lr.macs += t.macs;
        lr.macs_padded += t.macs_padded;
        lr.regcmd_entries += t.regcmd_entries;
        lr.fetch_cycles += cycles(t.fetch_ps, hz);
        lr.dma_read_cycles += cycles(t.dma_read_ps, hz);
        lr.compute_cycles += t.compute_cycles;
        lr.write_cycles += cycles(t.write_ps, hz);
        lr.overhead_cycles += cycles(t.overhead_ps, hz);
        lr.ddr_read_bytes += t.bytes_read;
        lr.ddr_write_bytes += t.bytes_written;
        lr.sram_read_bytes += t.sram_bytes_read;
        lr.sram_write_bytes += t.sram_bytes_written;
        total_ps += t.end_ps - t.start_ps;
    }
    lr.total_cycles = cycles(total_ps, hz);
    lr.time_us = static_cast<double>(total_ps) / 1e6;
    if (lr.total_cycles)
        lr.mac_utilisation = static_cast<double>(lr.macs) /
                             (static_cast<double>(lr.total_cycles) * soc.npu.int8_macs_per_cycle.value);
    // Loads overlap the MAC array; only what they add beyond it counts as memory time.
    const uint64_t memory = (lr.dma_read_cycles > lr.compute_cycles ? lr.dma_read_cycles - lr.compute_cycles : 0) +
                            lr.write_cycles;
    const uint64_t overhead = lr.fetch_cycles + lr.overhead_cycles;
    lr.bound = lr.compute_cycles >= memory ? (lr.compute_cycles >= overhead ? "compute" : "overhead")
                                           : (memory >= overhead ? "memory" : "overhead");
    return lr;
}

}  // namespace

RunResult run_conv_example(const hw::SocProfile& soc, const ConvExampleSpec& spec, const std::vector<int>& cores,
                           npu::tlm_models::SimMode mode, trace::TraceWriter* tw, bool tensors_in_sram,
                           const npu::rtl::RtlOptions* rtl) {
    RunResult r;
    r.platform = soc.name;
    r.platform_name = soc.display_name;
    r.calibration = soc.calibration;
    r.model = spec.name;
    r.mode = mode == npu::tlm_models::SimMode::Full ? "full" : "timing";
    r.clock_hz = soc.npu.core_clock_hz.value;
    if (cores.empty()) throw std::invalid_argument("no core selected");
    for (size_t i = 0; i < cores.size(); ++i) {
        if (cores[i] < 0 || cores[i] >= soc.npu.core_count.value)
            throw std::invalid_argument(fmt::format("core {} does not exist on {} (cores 0..{})", cores[i], soc.name,
                                                    soc.npu.core_count.value - 1));
        for (size_t j = 0; j < i; ++j)
            if (cores[j] == cores[i]) throw std::invalid_argument(fmt::format("core {} selected twice", cores[i]));
    }
    ExampleData d = make_data(spec);
    const drv::rknpu::LoweredConv low = drv::rknpu::lower_conv(d.layer, soc);  // throws on bad geometry

    Platform plat("soc", soc, mode, tw);
    std::unique_ptr<npu::rtl::RtlSession> rtl_session;
    if (rtl) rtl_session = std::make_unique<npu::rtl::RtlSession>(*rtl, soc, plat.cores());
    std::vector<CoreJob> jobs;
    plat.set_host_program([&]() {
        // The DMA pool starts 16 MiB into DDR, as a driver's IOMMU domain would map buffers.
        SimHal hal(plat, soc.mem.ddr_base.value + (16u << 20), 256u << 20);
        drv::rknpu::CoreConfig cc{soc.npu.core_count.value, soc.npu.pc_data_amount_scale.value,
                                  soc.npu.pc_task_number_bits.value, soc.npu.pc_task_status_offset.value};
        drv::rknpu::Driver drvr(hal, cc);
        for (int c : cores) jobs.push_back(prepare_job(hal, d, low, c, r, tensors_in_sram, soc.npu.pc_data_amount_scale.value));
        for (CoreJob& j : jobs) drvr.kick(j.core, j.tasks, j.sub);
        for (CoreJob& j : jobs) {
            if (!j.sub.error.empty()) continue;
            drvr.wait(j.core, j.tasks, 500'000'000, j.sub);
            std::vector<uint8_t> img(low.output_bytes);
            hal.bo_read(j.out, 0, img.data(), img.size());
            j.result = drv::rknpu::unpack_output(d.layer, low, img);
        }
    });
    sc_core::sc_start();
    if (rtl_session) {
        rtl_session->finish();
        r.rtl = true;
        r.rtl_opts = *rtl;
        r.rtl_tasks = rtl_session->records();
        const std::string e = npu::rtl::mismatch_error(r.rtl_tasks);
        if (!e.empty()) r.errors.push_back(e);
    }

    std::vector<int8_t> ref;
    if (mode == npu::tlm_models::SimMode::Full) {
        const drv::rknpu::ConvLayer& L = d.layer;
        ref = reference_conv(d.input, L.weights, L.bias, L.in_c, L.in_h, L.in_w, L.out_c, spec.kernel, spec.stride,
                             spec.pad, spec.dilation, L.relu, L.in_scale, L.in_zp, L.w_scale, L.out_scale, L.out_zp);
    }
    for (const CoreJob& j : jobs) {
        if (!j.sub.ok) r.errors.push_back(j.sub.error);
        r.hw_elapse_ns = std::max(r.hw_elapse_ns, j.sub.hw_elapse_ns);
        uint64_t total_ps = 0;
        r.layers.push_back(layer_row(spec, d, j.core, plat.core(j.core).tasks(), soc, total_ps));
        r.total_ps = std::max(r.total_ps, total_ps);
        if (ref.empty() || !j.sub.ok) continue;
        r.checked = true;
        for (size_t i = 0; i < ref.size(); ++i)
            r.check.add_value(ref[i], j.result.at(i), int{j.result.at(i)} - int{ref[i]}, {});
    }
    for (int i = 0; i < plat.core_count(); ++i)
        for (const std::string& m : plat.core(i).diagnostics()) r.errors.push_back(m);
    return r;
}

}  // namespace sim
