// SPDX-License-Identifier: MIT
// Whole-model run on the simulated SoC: arena, relocation, steps (NPU kicks / host CPU nodes),
// end-to-end and per-layer isolated checks, task records mapped back to layers, progress line.
#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn for the progress poller
#include "app/model_run.h"
#include "app/model_runner.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <cstring>
#include <ctime>

#include <fmt/format.h>
#include <systemc>
#include <unistd.h>

#include "checker/checker.h"
#include "checker/cli.h"
#include "checker/spec_db.h"
#include "compiler/model_loader.h"
#include "compiler/ref/reference.h"
#include "drv/rknpu/driver.h"
#include "hal_sim/sim_hal.h"
#include "numerics/npy.h"
#include "numerics/ops.h"
#include "npu/memory/sparse_memory.h"
#include "platform/platform.h"

namespace sim {

namespace rk = drv::rknpu;
using npu::tlm_models::SimMode;
using npu::tlm_models::TaskRecord;

namespace {

uint64_t cycles(uint64_t ps, uint64_t clock_hz) {
    return static_cast<uint64_t>(std::llround(static_cast<double>(ps) * static_cast<double>(clock_hz) / 1e12));
}


const char* unit_name(rk::Unit u) {
    switch (u) {
        case rk::Unit::Npu: return "NPU";
        case rk::Unit::Cpu: return "CPU";
        case rk::Unit::View: return "view";
    }
    return "?";
}

int64_t numel_of(const drv::ir::Value& v) {
    const int64_t n = v.numel();
    return n < 0 ? 0 : n;
}

/// A tensor name as a file name (--dump-layers): anything but [A-Za-z0-9._-] becomes '_'.
std::string file_stem(const std::string& name) {
    std::string f = name;
    for (char& ch : f)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) ch = '_';
    return f;
}

/// Compares `got` with `want` (numerics/compare.h); float tensors in units of `lsb` (0: any
/// difference is "worse"). Returns an error text for mismatched dtype/shape.
std::string compare(const num::Tensor& got, const num::Tensor& want, double lsb, OutputCheck& c) {
    num::Tolerance tol;
    tol.lsb = lsb;
    const std::string e = num::compare(got, want, tol, c);
    return e.empty() ? e : "device " + e;
}

/// The quantization step of a float graph output: the scale of the DequantizeLinear producing it.
double output_lsb(const drv::ir::Graph& g, const std::string& name) {
    for (const drv::ir::Node& n : g.nodes()) {
        if (std::find(n.outputs.begin(), n.outputs.end(), name) == n.outputs.end()) continue;
        if (n.op_type != "DequantizeLinear" || !n.has_input(1)) return 0;
        const drv::ir::Value* s = g.find_value(n.input(1));
        if (!s || !s->is_constant() || s->data->dtype() != num::DType::F32 || s->data->numel() != 1) return 0;
        return s->data->data<float>()[0];
    }
    return 0;
}


}  // namespace

HostCost host_node_cost(const drv::ir::Graph& g, const drv::ir::Node& n) {
    uint64_t bytes = 0, macs = 0, flops = 0, out_elems = 0;
    bool float_in = false;
    for (const std::string& in : n.inputs) {
        const drv::ir::Value* v = in.empty() ? nullptr : g.find_value(in);
        if (!v) continue;
        if (!v->is_constant()) bytes += static_cast<uint64_t>(numel_of(*v)) * num::dtype_size(v->dtype);
        if (v->dtype == num::DType::F32 && !v->is_constant()) float_in = true;
    }
    for (const std::string& out : n.outputs) {
        const drv::ir::Value* v = out.empty() ? nullptr : g.find_value(out);
        if (!v) continue;
        out_elems += static_cast<uint64_t>(numel_of(*v));
        bytes += static_cast<uint64_t>(numel_of(*v)) * num::dtype_size(v->dtype);
    }
    const std::string& op = n.op_type;
    // Inner-product work: per output element, the reduction length read from the weight/B shape.
    uint64_t k = 0;
    auto shape_of = [&](size_t i) -> const std::vector<int64_t>* {
        const drv::ir::Value* v = n.has_input(i) ? g.find_value(n.input(i)) : nullptr;
        return v ? &v->shape : nullptr;
    };
    if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
        const auto* w = shape_of(op == "QLinearConv" ? 3 : 1);
        if (w && w->size() >= 2) {
            k = static_cast<uint64_t>(std::max<int64_t>((*w)[1], 1));
            for (size_t i = 2; i < w->size(); ++i) k *= static_cast<uint64_t>(std::max<int64_t>((*w)[i], 1));
        }
    } else if (op == "Gemm" || op == "QGemm" || op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
        const auto* a = shape_of(0);
        if (a && !a->empty()) {
            int64_t kk = a->back();
            if ((op == "Gemm" || op == "QGemm") && a->size() == 2) {
                if (n.attrs.get_int("transA", 0) != 0) kk = (*a)[0];
            }
            k = static_cast<uint64_t>(std::max<int64_t>(kk, 1));
        }
    }
    // Recurrent layers: every step's gates are a product with W (input_size) and R (hidden_size)
    // per direction, batch entry and gate row (W [D, G H, I], R [D, G H, H], X [S, B, I]); the
    // element-wise gate arithmetic is small beside it (out_elems x 2 flops below covers Y's).
    uint64_t rnn_ip = 0;
    if ((op == "LSTM" || op == "GRU" || op == "RNN") && n.domain.empty()) {
        const auto *x = shape_of(0), *w = shape_of(1), *r = shape_of(2);
        if (x && w && r && x->size() == 3 && w->size() == 3 && r->size() == 3) {
            rnn_ip = 1;
            for (int64_t d : {(*x)[0], (*x)[1], (*w)[0], (*w)[1], (*w)[2] + (*r)[2]})
                rnn_ip *= static_cast<uint64_t>(std::max<int64_t>(d, 1));
        }
    }
    if (rnn_ip) {
        (float_in ? flops : macs) = rnn_ip * (float_in ? 2 : 1) + 2 * out_elems;
    } else if (k) (float_in ? flops : macs) = out_elems * k * (float_in ? 2 : 1);
    else if (float_in || op == "DequantizeLinear" || op == "QuantizeLinear") flops = 2 * out_elems;
    HostCost c;
    c.macs = macs;
    c.flops = flops;
    c.bytes = bytes;
    c.inner_products = rnn_ip ? rnn_ip : out_elems * k;
    return c;
}

uint64_t host_node_ps(const hw::SocProfile& soc, const drv::ir::Graph& g, const drv::ir::Node& n) {
    const HostCost c = host_node_cost(g, n);
    const double s = hw::host_op_seconds(soc.host, c.macs, c.flops, c.bytes);
    return static_cast<uint64_t>(std::llround(s * 1e12));
}

using run_detail::Runner;
using run_detail::now_ps;
using run_detail::process_cpu_seconds;

namespace {

/// Bound of an NPU layer from its summed task cycles (as the single-conv report does).
std::string bound_of(uint64_t compute, uint64_t dma_read, uint64_t write, uint64_t fetch, uint64_t ovh) {
    const uint64_t memory = (dma_read > compute ? dma_read - compute : 0) + write;
    const uint64_t overhead = fetch + ovh;
    return compute >= memory ? (compute >= overhead ? "compute" : "overhead")
                             : (memory >= overhead ? "memory" : "overhead");
}

/// A host layer that only converts a graph input (QuantizeLinear of a graph input) or a graph
/// output (DequantizeLinear producing a graph output): the vendor runtime does this outside its run
/// call (rknn_inputs_set quantizes the input; outputs are dequantized when fetched or by the
/// application), so it is part of the end-to-end latency but not of the inference figure.
bool is_host_io(const drv::ir::Graph& g, const rk::Layer& L) {
    if (L.ir_nodes.empty()) return false;
    const auto& gin = g.inputs();
    const auto& gout = g.outputs();
    for (size_t ni : L.ir_nodes) {
        if (ni >= g.nodes().size()) return false;
        const drv::ir::Node& n = g.nodes()[ni];
        if (n.op_type == "QuantizeLinear") {
            if (n.inputs.empty() || std::find(gin.begin(), gin.end(), n.inputs[0]) == gin.end()) return false;
        } else if (n.op_type == "DequantizeLinear") {
            for (const std::string& o : n.outputs)
                if (!o.empty() && std::find(gout.begin(), gout.end(), o) == gout.end()) return false;
        } else {
            return false;
        }
    }
    return true;
}

/// What limits a multi-core layer (the step barrier after it, the fixed per-task cost the split
/// adds, the DDR shared by the cores): from the layer's task records.
ModelLayerRow::Scaling layer_scaling(const hw::SocProfile& soc, const rk::Layer& L, const rk::CompiledModel& m,
                                     const Runner& run, Platform& plat, uint64_t start, uint64_t end, size_t ncores) {
    ModelLayerRow::Scaling s;
    s.cores = static_cast<int>(ncores);
    s.span_ps = end - start;
    std::map<int, uint64_t> core_end;
    const double bw = soc.mem.ddr_peak_bytes_per_s.value * soc.mem.ddr_efficiency.value;
    for (size_t ti : L.tasks) {
        if (ti >= m.tasks.size() || run.task_core_[ti] < 0) continue;
        const int c = run.task_core_[ti];
        const TaskRecord& t = plat.core(c).tasks().at(run.task_rec_[ti]);
        s.work_ps += t.end_ps - t.start_ps;
        s.split_ps += t.fetch_ps + t.overhead_ps;
        const auto alone = static_cast<uint64_t>(static_cast<double>(t.bytes_read) * 1e12 / bw);
        if (t.dma_read_ps > alone) s.ddr_contention_ps += t.dma_read_ps - alone;
        core_end[c] = std::max(core_end[c], t.end_ps);
    }
    for (const auto& [c, e] : core_end) s.barrier_ps += end - e;
    s.efficiency = s.span_ps ? static_cast<double>(s.work_ps) / (static_cast<double>(ncores) * s.span_ps) : 0;
    const uint64_t worst = std::max({s.barrier_ps, s.split_ps, s.ddr_contention_ps});
    s.limit = worst == 0 ? "-" : worst == s.barrier_ps ? "barrier" : worst == s.ddr_contention_ps ? "DDR contention"
                                                                                                   : "split overhead";
    return s;
}

}  // namespace

ModelRunResult run_model(const hw::SocProfile& soc, rk::CompiledModel& m,
                         const std::map<std::string, num::Tensor>& inputs, const ModelRunOptions& o,
                         trace::TraceWriter* tw, std::ostream& progress_out) {
    ModelRunResult r;
    r.platform = soc.name;
    r.platform_name = soc.display_name;
    r.model = o.model_name;
    r.rewrites = m.graph.rewrites();
    r.mode = o.mode == SimMode::Full ? "full" : "timing";
    r.clock_hz = soc.npu.core_clock_hz.value;
    r.cores = m.cores;
    r.expect_exact = o.expect_exact;
    r.tasks = m.tasks.size();
    r.regcmd_bytes = m.regcmd_bytes;
    r.weight_bytes = m.weight_bytes;
    r.arena_bytes = m.arena_bytes;
    r.steps = m.steps.size();
    const bool full = o.mode == SimMode::Full;
    if (full && m.timing_only)
        throw std::invalid_argument("full mode needs a full compile (the model was compiled timing-only: no weights)");
    if (full)
        for (const std::string& name : m.graph.inputs())
            if (!inputs.count(name)) throw std::invalid_argument(fmt::format("no data for graph input '{}'", name));

    Platform plat("soc", soc, o.mode, tw);
    std::unique_ptr<npu::rtl::RtlSession> rtl_session;
    if (o.rtl) rtl_session = std::make_unique<npu::rtl::RtlSession>(*o.rtl, soc, plat.cores());
    Runner run(soc, m, inputs, o, plat, r, progress_out);
    plat.set_host_program([&]() {
        if (o.progress && full) sc_core::sc_spawn([&]() { run.poller(); }, "progress");
        run.host_program();
    });
    sc_core::sc_start();
    r.total_ps = run.t1_ - run.t0_;
    if (o.repeat > 0 && !run.sim_cpu_s_.empty()) {
        r.repeat = static_cast<int>(run.sim_cpu_s_.size());
        double sum = 0, best = run.sim_cpu_s_.front();
        for (double s : run.sim_cpu_s_) sum += s, best = std::min(best, s);
        r.sim_cpu_ms_best = best * 1e3;
        r.sim_cpu_ms_mean = sum * 1e3 / static_cast<double>(run.sim_cpu_s_.size());
    }
    if (rtl_session) {
        rtl_session->finish();
        r.rtl = true;
        r.rtl_opts = *o.rtl;
        r.rtl_tasks = rtl_session->records();
        // Name each co-simulated task by its layer (the task records carry core and start time).
        std::map<std::pair<int, uint64_t>, std::string> layer_of;
        for (const rk::Layer& L : m.layers)
            for (size_t ti : L.tasks)
                if (ti < m.tasks.size() && run.task_core_[ti] >= 0) {
                    const int c = run.task_core_[ti];
                    layer_of[{c, plat.core(c).tasks().at(run.task_rec_[ti]).start_ps}] = L.name;
                }
        for (const npu::rtl::RtlTaskRecord& t : r.rtl_tasks) {
            const auto it = layer_of.find({t.core, t.start_ps});
            r.rtl_layers.push_back(it == layer_of.end() ? "" : it->second);
        }
        const std::string e = npu::rtl::mismatch_error(r.rtl_tasks);
        if (!e.empty()) r.errors.push_back(e);
    }
    r.calibration = soc.calibration;
    for (const auto& pv : soc.params()) {
        (pv.grade == hw::Grade::Known ? r.grade_known : pv.grade == hw::Grade::Inferred ? r.grade_inferred
                                                                                       : r.grade_unknown)++;
        if (pv.source.rfind("override ", 0) == 0) r.overridden.push_back(pv.path + "=" + pv.value);
        const bool timing = pv.path.rfind("npu.", 0) == 0 || pv.path.rfind("memory.", 0) == 0;
        const bool nbuf_unused = pv.path.rfind("memory.nbuf_", 0) == 0 && soc.mem.nbuf_bytes.value == 0;
        if (pv.grade == hw::Grade::Unknown && timing && !nbuf_unused) r.unknown_params.push_back(pv.path);
    }
    if (full && r.errors.empty())
        for (const std::string& name : m.graph.outputs()) r.final_outputs.emplace_back(name, run.final_outputs_.at(name));

    // Per-layer rows from the task records.
    const uint64_t hz = r.clock_hz;
    const double macs_per_cycle = soc.npu.int8_macs_per_cycle.value;
    int host_track = -1;
    for (size_t li = 0; li < m.layers.size(); ++li) {
        const rk::Layer& L = m.layers[li];
        ModelLayerRow row;
        row.name = L.name;
        row.op = L.op;
        row.unit = unit_name(L.unit);
        row.input_shape = L.in_shape;
        row.output_shape = L.out_shape;
        row.note = L.note;
        row.cpu_reason = rk::cpu_reason_name(L.cpu_reason);
        row.rewrites = L.rewrites;
        row.macs = L.macs;
        for (size_t ni : L.ir_nodes)
            if (ni < m.graph.nodes().size()) row.nodes.push_back(m.graph.nodes()[ni].name);
        if (L.unit == rk::Unit::Npu) {
            ++r.npu_layers;
            std::set<int> cores;
            std::map<int, std::pair<uint64_t, uint64_t>> span;  // per core, for the trace
            uint64_t start = UINT64_MAX, end = 0;
            for (size_t ti : L.tasks) {
                if (ti >= m.tasks.size() || run.task_core_[ti] < 0) continue;
                const int c = run.task_core_[ti];
                const TaskRecord& t = plat.core(c).tasks().at(run.task_rec_[ti]);
                ++row.tasks;
                cores.insert(c);
                row.macs_padded += t.macs_padded;
                row.regcmd_entries += t.regcmd_entries;
                row.fetch_cycles += cycles(t.fetch_ps, hz);
                row.dma_read_cycles += cycles(t.dma_read_ps, hz);
                row.compute_cycles += t.compute_cycles;
                row.write_cycles += cycles(t.write_ps, hz);
                row.overhead_cycles += cycles(t.overhead_ps, hz);
                r.core_busy_ps[c] += t.end_ps - t.start_ps;
                row.ddr_read_bytes += t.bytes_read;
                row.ddr_write_bytes += t.bytes_written;
                row.sram_read_bytes += t.sram_bytes_read;
                row.sram_write_bytes += t.sram_bytes_written;
                start = std::min(start, t.start_ps);
                end = std::max(end, t.end_ps);
                if (tw)  // the blocks' slices of this task carry the layer's name
                    tw->annotate(plat.core(c).name(), t.start_ps, t.end_ps + 1,
                                 {trace::arg("layer", L.name), trace::arg("op", L.op)});
                auto& sp = span.try_emplace(c, t.start_ps, t.end_ps).first->second;
                sp.first = std::min(sp.first, t.start_ps);
                sp.second = std::max(sp.second, t.end_ps);
            }
            if (row.tasks && cores.size() > 1) row.scaling = layer_scaling(soc, L, m, run, plat, start, end, cores.size());
            if (row.tasks) {
                row.start_ps = start;
                row.end_ps = end;
                row.total_cycles = cycles(end - start, hz);
                row.time_us = static_cast<double>(end - start) / 1e6;
                if (row.total_cycles)
                    row.mac_utilisation = static_cast<double>(row.macs) /
                                          (static_cast<double>(row.total_cycles) * macs_per_cycle *
                                           static_cast<double>(cores.size()));
                row.bound = bound_of(row.compute_cycles, row.dma_read_cycles, row.write_cycles, row.fetch_cycles,
                                     row.overhead_cycles);
            }
            for (int c : cores) row.cores += (row.cores.empty() ? "" : ",") + std::to_string(c);
            if (tw)
                for (const auto& [c, sp] : span)
                    tw->complete(tw->track(plat.core(c).name(), "layers"), L.name, sp.first, sp.second - sp.first,
                                 {trace::arg("op", L.op), trace::arg("tasks", static_cast<uint64_t>(row.tasks))},
                                 "layer");
        } else if (L.unit == rk::Unit::Cpu) {
            ++r.cpu_layers;
            if (!row.macs)
                for (size_t ni : L.ir_nodes) row.macs += host_node_cost(m.graph, m.graph.nodes().at(ni)).inner_products;
            row.cores = "host";
            row.bound = "host";
            row.start_ps = run.layer_host_[li].first;
            row.end_ps = run.layer_host_[li].second;
            row.time_us = static_cast<double>(row.end_ps - row.start_ps) / 1e6;
            row.host_io = is_host_io(m.graph, L);
            if (row.host_io) r.host_io_ps += row.end_ps - row.start_ps;
            if (tw && row.end_ps > row.start_ps) {
                if (host_track < 0) host_track = tw->track("host", "host CPU");
                tw->complete(host_track, L.name, row.start_ps, row.end_ps - row.start_ps,
                             {trace::arg("op", L.op), trace::arg("note", L.note)}, "layer");
            }
        } else {
            ++r.view_layers;
            row.cores = "-";
        }
        r.ddr_read_bytes += row.ddr_read_bytes;
        r.ddr_write_bytes += row.ddr_write_bytes;
        r.layers.push_back(std::move(row));
    }
    r.inference_ps = r.total_ps > r.host_io_ps ? r.total_ps - r.host_io_ps : 0;
    for (int c = 0; c < plat.core_count(); ++c)
        for (const std::string& d : plat.core(c).diagnostics())
            if (std::find_if(r.errors.begin(), r.errors.end(),
                             [&](const std::string& e) { return e.find(d) != std::string::npos; }) == r.errors.end())
                r.errors.push_back(fmt::format("core {}: {}", c, d));

    if (!full || !o.check || !r.errors.empty()) return r;
    std::vector<CheckedLayer> checked;
    for (const rk::Layer& L : m.layers) {
        checked.push_back({L.name, L.unit == rk::Unit::Npu, L.inputs, L.outputs, L.ir_nodes, {}});
        // An int8-input layer with an fp16 output is an int8 conv with a float output (ConvOp::float_out).
        bool int8_in = false;
        for (const std::string& in : L.inputs)
            if (auto t = m.tensors.find(in); t != m.tensors.end() && !t->second.fp16) int8_in = true;
        for (const std::string& out : L.outputs)
            if (auto t = m.tensors.find(out); L.unit == rk::Unit::Npu && t != m.tensors.end() && t->second.fp16)
                checked.back().float_rtol = int8_in ? rk::kFloatOutLayerRtol : rk::kFp16LayerRtol;
    }
    check_with_reference(m.graph, m.graph, checked, inputs, run.final_outputs_, run.snapshot_, r, o.dump_layers_dir);
    return r;
}

void check_with_reference(const drv::ir::Graph& ref_graph, const drv::ir::Graph& g, const std::vector<CheckedLayer>& layers,
                          const std::map<std::string, num::Tensor>& inputs,
                          const std::map<std::string, num::Tensor>& final_outputs,
                          const std::map<std::string, num::Tensor>& snapshot, ModelRunResult& r,
                          const std::string& dump_layers_dir) {
    // End to end: the reference executor on the same inputs.
    std::map<std::string, num::Tensor> ref;
    // --dump-layers: the reference executor's own value of every NPU layer output, from the graph
    // inputs (RKNN accuracy analysis' "entire" error beside the per-layer "single" one).
    std::map<std::string, num::Tensor> chained;
    std::set<std::string> wanted;
    if (!dump_layers_dir.empty())
        for (const CheckedLayer& L : layers)
            if (L.device) wanted.insert(L.outputs.begin(), L.outputs.end());
    try {
        ref = drv::ref::execute(ref_graph, inputs, [&](const std::string& name, const num::Tensor& v) {
            if (wanted.count(name)) chained[name] = v;
        });
    } catch (const std::exception& e) {
        r.errors.push_back(std::string("reference executor: ") + e.what());
        return;
    }
    r.outputs_checked = true;
    for (const std::string& name : g.outputs()) {
        OutputRow row;
        row.name = name;
        const double lsb = output_lsb(g, name);
        if (!ref.count(name) || !final_outputs.count(name)) {
            r.errors.push_back(fmt::format("output '{}': not produced", name));
            continue;
        }
        if (ref.at(name).dtype() == num::DType::F32 && lsb <= 0) row.unit = "exact";
        const std::string e = compare(final_outputs.at(name), ref.at(name), lsb, row.check);
        if (!e.empty()) r.errors.push_back(fmt::format("output '{}': {}", name, e));
        // Produced by an fp16 layer, or by a CPU layer after fp16 layers (their rounding reaches it:
        // a float output of an fp16 run, e.g. a Softmax on the host): the relative error.
        const bool fp16_run =
            std::any_of(layers.begin(), layers.end(), [](const CheckedLayer& L) { return L.float_rtol > 0; });
        for (const CheckedLayer& L : layers)
            if ((L.float_rtol > 0 || (fp16_run && !L.device)) &&
                std::find(L.outputs.begin(), L.outputs.end(), name) != L.outputs.end() &&
                ref.at(name).dtype() == num::DType::F32 && e.empty()) {
                const num::Tensor& want = ref.at(name);
                double peak = 0;
                for (size_t k = 0; k < want.numel(); ++k) peak = std::max(peak, std::fabs(double(want.data<float>()[k])));
                row.fp16_rel_error = row.check.max_abs / (peak > 0 ? peak : 1.0);
            }
        r.outputs.push_back(row);
    }

    // Isolated per-layer check: each NPU layer's device output against its reference nodes fed with
    // the device's own inputs, so that one 1-LSB requantization tie does not count downstream.
    r.isolated_checked = true;
    std::string dump_rows;  // --dump-layers: index.csv, one row per layer output
    if (!dump_layers_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(dump_layers_dir, ec);
    }
    for (size_t li = 0; li < layers.size(); ++li) {
        const CheckedLayer& L = layers[li];
        if (!L.device) continue;
        ModelLayerRow& row = r.layers[li];
        std::map<std::string, num::Tensor> env;
        std::string missing;
        for (const std::string& in : L.inputs) {
            const drv::ir::Value* v = g.find_value(in);
            if (!v || v->is_constant()) continue;
            auto it = snapshot.find(in);
            if (it == snapshot.end()) missing = in;
            else env[in] = it->second;
        }
        for (const std::string& out : L.outputs)
            if (!snapshot.count(out)) missing = out;
        if (!missing.empty()) {
            r.notes.push_back(fmt::format("layer '{}': '{}' not recorded; isolated check skipped", L.name, missing));
            continue;
        }
        std::map<std::string, num::Tensor> computed = env;
        try {
            for (size_t ni : L.ir_nodes) {
                const drv::ir::Node& n = g.nodes().at(ni);
                std::vector<num::Tensor> out =
                    drv::ref::run_node(g, n, [&](const std::string& in) -> const num::Tensor* {
                        auto it = computed.find(in);
                        return it == computed.end() ? nullptr : &it->second;
                    });
                for (size_t k = 0; k < n.outputs.size() && k < out.size(); ++k) {
                    if (n.outputs[k].empty()) continue;
                    out[k].quant = g.value(n.outputs[k]).quant;
                    computed[n.outputs[k]] = std::move(out[k]);
                }
            }
        } catch (const std::exception& e) {
            r.errors.push_back(fmt::format("isolated check of layer '{}': {}", L.name, e.what()));
            continue;
        }
        row.checked = true;
        for (const std::string& out : L.outputs) {
            if (!computed.count(out)) continue;
            auto fl = L.float_lsb.find(out);
            double lsb = fl == L.float_lsb.end() ? 0 : fl->second, peak = 0;
            const bool fp16 = L.float_rtol > 0 && computed.at(out).dtype() == num::DType::F32;
            if (fp16) {
                const num::Tensor& want = computed.at(out);
                for (size_t k = 0; k < want.numel(); ++k) peak = std::max(peak, std::fabs(double(want.data<float>()[k])));
                lsb = L.float_rtol * (peak > 0 ? peak : 1.0) / 1.5;
            }
            OutputCheck one;
            const std::string e = compare(snapshot.at(out), computed.at(out), lsb, one);
            if (fp16 && e.empty()) {
                row.fp16_rtol = L.float_rtol;
                row.fp16_rel_error = std::max(row.fp16_rel_error, one.max_abs / (peak > 0 ? peak : 1.0));
            }
            if (!e.empty()) r.errors.push_back(fmt::format("layer '{}' output '{}': {}", L.name, out, e));
            row.check.merge(one);
            if (!dump_layers_dir.empty() && e.empty()) {
                // What RKNN's accuracy analysis gives: the device's tensor beside the reference's.
                const std::string stem = fmt::format("{:03d}_{}", li, file_stem(out));
                OutputCheck whole;  // against the reference executor's end-to-end value (empty: not comparable)
                try {
                    num::write_npy(dump_layers_dir + "/" + stem + ".device.npy", snapshot.at(out));
                    num::write_npy(dump_layers_dir + "/" + stem + ".reference.npy", computed.at(out));
                    if (auto c = chained.find(out); c != chained.end()) {
                        num::write_npy(dump_layers_dir + "/" + stem + ".end_to_end.npy", c->second);
                        if (!compare(snapshot.at(out), c->second, lsb, whole).empty()) whole = OutputCheck{};
                    }
                } catch (const std::exception& ex) {
                    r.errors.push_back(fmt::format("--dump-layers '{}': {}", dump_layers_dir, ex.what()));
                }
                dump_rows += fmt::format("{},{},{},{},{},{},{},{},{:.6f},{:.6g},{:.6g},{},{:.6g}\n", li, L.name, out, stem,
                                         one.values, one.equal, one.off_by_one, one.worse, one.cosine(), one.max_abs,
                                         one.mean_abs(), whole.values - whole.equal, whole.max_abs);
            }
        }
        ++r.layers_checked;
        r.isolated.merge(row.check);
        if (row.check.worse) ++r.layers_worse;
        else if (row.check.off_by_one) ++r.layers_off_by_one;
        else ++r.layers_exact;
    }
    if (!dump_layers_dir.empty()) {
        std::ofstream f(dump_layers_dir + "/index.csv", std::ios::binary);
        f << "layer_index,layer,tensor,file_stem,values,exact,off_by_one,worse,cosine,max_abs,mean_abs,"
             "end_to_end_differ,end_to_end_max_abs\n" << dump_rows;
        if (!f) r.errors.push_back(fmt::format("--dump-layers '{}': cannot write index.csv", dump_layers_dir));
    }
}

}  // namespace sim
