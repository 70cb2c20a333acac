// SPDX-License-Identifier: MIT
// The Runner (model_runner.h): upload, relocation, NPU kicks and host CPU steps of a whole-model
// run, per-layer isolated checks, snapshots for the report, the progress line.
#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn for the progress poller
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
namespace run_detail {

namespace rk = drv::rknpu;
using npu::tlm_models::SimMode;
using npu::tlm_models::TaskRecord;

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

num::Tensor Runner::download(const rk::DeviceTensor& t) {
    std::vector<uint8_t> img(t.bytes);
    hal_->bo_read(arena_, t.offset, img.data(), img.size());
    num::Tensor x = rk::from_device(t, img);
    if (const drv::ir::Value* v = m_.graph.find_value(t.name)) x.quant = v->quant;
    return x;
}

void Runner::upload(const rk::DeviceTensor& t, const num::Tensor& x) {
    std::vector<uint8_t> img = rk::to_device(t, x);
    if (img.size() > t.bytes) img.resize(t.bytes);
    if (t.alias_of.empty() || t.row_major) {  // a row-major view spans its parent's bytes
        hal_->bo_write(arena_, t.offset, img.data(), img.size());
        return;
    }
    // A channel slice of another tensor: write only this slice's elements, not the atoms' padding
    // (which belongs to the neighbouring slice).
    std::vector<uint8_t> cur(t.bytes);
    hal_->bo_read(arena_, t.offset, cur.data(), cur.size());
    const int c2 = std::max(t.c2, 1);
    for (int c = 0; c < t.c; ++c)
        for (int y = 0; y < t.h; ++y)
            for (int xw = 0; xw < t.w; ++xw) {
                const uint64_t eb = static_cast<uint64_t>(t.elem_bytes());  // fp16 tensors: 2 bytes
                const uint64_t off = static_cast<uint64_t>(c / c2) * t.surf_stride + static_cast<uint64_t>(y) * t.line_stride +
                                     (static_cast<uint64_t>(xw) * c2 + c % c2) * eb;
                for (uint64_t k = 0; k < eb; ++k)
                    if (off + k < cur.size() && off + k < img.size()) cur[off + k] = img[off + k];
            }
    hal_->bo_write(arena_, t.offset, cur.data(), cur.size());
}

void Runner::run_nodes_on_host(const rk::Layer& L, std::map<std::string, num::Tensor>& env,
                               const std::function<const num::Tensor&(const std::string&)>& get) {
    const auto& nodes = m_.graph.nodes();
    for (size_t ni : L.ir_nodes) {
        const drv::ir::Node& n = nodes.at(ni);
        // Inputs by reference (the image input is 600 KB of floats: no copy per inference).
        std::vector<num::Tensor> out = drv::ref::run_node(m_.graph, n, [&](const std::string& in) -> const num::Tensor* {
            auto it = env.find(in);
            if (it != env.end()) return &it->second;
            return &get(in);
        });
        for (size_t k = 0; k < n.outputs.size() && k < out.size(); ++k) {
            if (n.outputs[k].empty()) continue;
            out[k].quant = m_.graph.value(n.outputs[k]).quant;
            env[n.outputs[k]] = std::move(out[k]);
        }
    }
}

const num::Tensor& Runner::host_value(const std::string& name) {
    const drv::ir::Value& v = m_.graph.value(name);
    if (v.is_constant()) return *v.data;
    auto it = host_env_.find(name);
    if (it != host_env_.end()) return it->second;
    auto dt = m_.tensors.find(name);
    if (dt != m_.tensors.end()) return host_env_[name] = download(dt->second);
    auto p = producer_.find(name);
    if (p == producer_.end() || m_.layers[p->second].unit == rk::Unit::Npu)
        throw std::runtime_error(fmt::format("value '{}' is neither on the host nor a device tensor", name));
    run_nodes_on_host(m_.layers[p->second], host_env_, [&](const std::string& n) -> const num::Tensor& { return host_value(n); });
    it = host_env_.find(name);
    if (it == host_env_.end()) throw std::runtime_error(fmt::format("value '{}' was not produced by its layer", name));
    return it->second;
}

void Runner::snapshot_views() {
    // View layers (reshape, concat by addressing): record the device's view of their output once
    // every input has been recorded, so that consumers are checked against what they really read.
    for (const rk::Layer& L : m_.layers) {
        if (L.unit != rk::Unit::View) continue;
        bool ready = true, have = true;
        for (const std::string& in : L.inputs) {
            const drv::ir::Value* v = m_.graph.find_value(in);
            if (v && !v->is_constant() && !snapshot_.count(in)) ready = false;
        }
        for (const std::string& out : L.outputs) have = have && snapshot_.count(out);
        if (!ready || have) continue;
        bool on_device = true;
        for (const std::string& out : L.outputs) on_device = on_device && m_.tensors.count(out);
        if (on_device) {
            for (const std::string& out : L.outputs) snapshot_[out] = download(m_.tensors.at(out));
        } else {
            std::map<std::string, num::Tensor> env;
            run_nodes_on_host(L, env, [&](const std::string& n) -> const num::Tensor& { return snapshot_.at(n); });
            for (const std::string& out : L.outputs)
                if (env.count(out)) snapshot_[out] = env.at(out);
        }
    }
}

std::string Runner::fail_text(size_t step, const Kick& k) {
    const auto& recs = plat_.core(k.core).tasks();
    size_t bad = recs.size() - k.rec_before;  // first task that did not complete
    std::string why;
    for (size_t j = k.rec_before; j < recs.size(); ++j)
        if (!recs[j].faults.empty()) {
            bad = j - k.rec_before;
            why = recs[j].faults.front().message;
            break;
        }
    const auto& diags = plat_.core(k.core).diagnostics();
    if (why.empty() && diags.size() > k.diag_before) why = diags[k.diag_before];
    std::string where = "no task started";
    if (bad < k.tasks.size()) {
        const rk::NpuTask& t = m_.tasks[k.tasks[bad]];
        const std::string layer = t.layer >= 0 && static_cast<size_t>(t.layer) < m_.layers.size()
                                      ? m_.layers[static_cast<size_t>(t.layer)].name
                                      : std::string("?");
        where = fmt::format("task {} of the chain (model task {}) of layer '{}'{}", bad, k.tasks[bad], layer,
                            t.what.empty() ? "" : " [" + t.what + "]");
    }
    std::string err = k.sub.error;
    const std::string prefix = fmt::format("core {}: ", k.core);
    if (err.rfind(prefix, 0) == 0) err.erase(0, prefix.size());
    return fmt::format("step {} (NPU), core {}: {}: {}{}", step, k.core, where, err, why.empty() ? "" : "; " + why);
}

void Runner::run_npu_step(size_t si, rk::Driver& drvr) {
    const rk::Step& st = m_.steps[si];
    const size_t max_tasks = (size_t{1} << soc_.npu.pc_task_number_bits.value) - 1;
    // A chain longer than one kick can carry is submitted in segments (each segment waits for the
    // previous one on every core of the step).
    size_t rounds = 0;
    for (const auto& [core, chain] : st.chains) rounds = std::max(rounds, (chain.size() + max_tasks - 1) / max_tasks);
    for (size_t round = 0; round < rounds && !failed_; ++round) {
        std::vector<Kick> kicks;
        for (const auto& [core, chain] : st.chains) {
            const size_t b = round * max_tasks;
            if (b >= chain.size()) continue;
            Kick k;
            k.core = core;
            for (size_t i = b; i < std::min(chain.size(), b + max_tasks); ++i) {
                const rk::NpuTask& t = m_.tasks.at(chain[i]);
                k.tasks.push_back(chain[i]);
                rk::Task hw;
                hw.regcmd_addr = base_ + t.regcmd_offset;
                hw.regcfg_amount = t.regcfg_amount;
                hw.int_mask = t.int_mask;
                hw.enable_mask = t.enable_mask;
                k.hw.push_back(hw);
            }
            if (core < 0 || core >= plat_.core_count())
                throw std::runtime_error(fmt::format("step {}: chain for core {}, the SoC has {} core(s)", si, core,
                                                     plat_.core_count()));
            kicks.push_back(std::move(k));
        }
        for (Kick& k : kicks) {
            k.rec_before = plat_.core(k.core).tasks().size();
            k.diag_before = plat_.core(k.core).diagnostics().size();
            drvr.kick(k.core, k.hw, k.sub);
        }
        active_ = &kicks;
        for (Kick& k : kicks)
            if (k.sub.error.empty()) drvr.wait(k.core, k.hw, o_.job_timeout_ns, k.sub);
        active_ = nullptr;
        for (Kick& k : kicks) {
            const auto& recs = plat_.core(k.core).tasks();
            for (size_t j = k.rec_before; j < recs.size() && j - k.rec_before < k.tasks.size(); ++j) {
                task_core_[k.tasks[j - k.rec_before]] = k.core;
                task_rec_[k.tasks[j - k.rec_before]] = j;
            }
            if (!k.sub.ok) {
                r_.errors.push_back(fail_text(si, k));
                failed_ = true;
            }
        }
    }
    if (failed_ || !checking_) return;
    std::set<size_t> layers;
    for (const auto& [core, chain] : st.chains)
        for (size_t t : chain)
            if (m_.tasks[t].layer >= 0) layers.insert(static_cast<size_t>(m_.tasks[t].layer));
    for (size_t li : layers)
        for (const std::string& out : m_.layers[li].outputs) {
            auto dt = m_.tensors.find(out);
            if (dt != m_.tensors.end()) snapshot_[out] = download(dt->second);
        }
    snapshot_views();
}

void Runner::run_cpu_step(size_t si) {
    const rk::Step& st = m_.steps[si];
    for (size_t li : st.layers) {
        const rk::Layer& L = m_.layers.at(li);
        show_progress(li);
        const uint64_t start = now_ps();
        uint64_t cost = 0;
        for (size_t ni : L.ir_nodes) cost += host_node_ps(soc_, m_.graph, m_.graph.nodes().at(ni));
        if (full_) {
            std::map<std::string, num::Tensor> env;
            run_nodes_on_host(L, env, [&](const std::string& n) -> const num::Tensor& { return host_value(n); });
            for (auto& [name, t] : env) {
                auto dt = m_.tensors.find(name);
                if (dt != m_.tensors.end()) upload(dt->second, t);
                if (checking_) snapshot_[name] = t;
                host_env_[name] = std::move(t);
            }
        }
        sc_core::wait(sc_core::sc_time(static_cast<double>(cost), sc_core::SC_PS));
        layer_host_[li] = {start, now_ps()};
    }
    if (checking_) snapshot_views();
}

void Runner::show_progress(size_t layer) {
    if (!o_.progress || !full_ || layer == shown_layer_ || m_.layers.empty()) return;
    shown_layer_ = layer;
    const rk::Layer& L = m_.layers[layer];
    const int pct = static_cast<int>(100 * layer / m_.layers.size());
    const std::string line = fmt::format("layer {}/{} {} ({}) {}%", layer + 1, m_.layers.size(), L.name, L.op, pct);
    if (o_.progress_tty) {
        progress_ << "\r" << line << "\x1b[K" << std::flush;
        shown_any_ = true;
    } else if (pct / 10 > shown_decile_) {
        shown_decile_ = pct / 10;
        progress_ << line << "\n" << std::flush;
    }
}

void Runner::poller() {
    // Samples which task each core is on, in simulated time; reads state only.
    const sc_core::sc_time period(20, sc_core::SC_US);
    while (!done_) {
        sc_core::wait(period);
        if (!active_) continue;
        size_t layer = SIZE_MAX;
        for (const Kick& k : *active_) {
            const size_t done = plat_.core(k.core).tasks().size() - k.rec_before;
            if (done < k.tasks.size() && m_.tasks[k.tasks[done]].layer >= 0)
                layer = std::min(layer, static_cast<size_t>(m_.tasks[k.tasks[done]].layer));
        }
        if (layer != SIZE_MAX) show_progress(layer);
    }
}

bool Runner::attach_arena() {
    // The arena in host memory attached to the simulated DDR (SparseMemory::attach) instead of
    // copied into its sparse pages: the compiled image (weights, register commands) is used where
    // it is, the rest is zero memory the OS provides on first touch. Same bytes at the same
    // addresses; every DMA and host access still goes through the DDR model.
    const uint64_t ddr_base = soc_.mem.ddr_base.value;
    const uint64_t init0 = m_.arena_init_base, init1 = init0 + m_.arena_init.size();
    if (base_ < ddr_base || init1 > m_.arena_bytes) return false;
    npu::memory::SparseMemory& store = plat_.ddr().store();
    const uint64_t off = base_ - ddr_base;
    if (!store.in_range(off, m_.arena_bytes)) return false;
    auto zeros = [&](uint64_t from, uint64_t to) {
        if (to <= from) return true;
        arena_zero_.emplace_back(static_cast<uint8_t*>(std::calloc(to - from, 1)), &std::free);
        return arena_zero_.back() && store.attach(off + from, arena_zero_.back().get(), to - from, true);
    };
    // Tracked attachments: only the DDR model writes these bytes (its stamps tell the NPU model
    // which weights it read before are unchanged, issue 25).
    return zeros(0, init0) && (init1 == init0 || store.attach(off + init0, m_.arena_init.data(), init1 - init0, true)) &&
           zeros(init1, m_.arena_bytes);
}

/// Process CPU seconds (user + sys) so far.
double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void Runner::run_inference(rk::Driver& drvr) {
    t0_ = now_ps();
    if (full_)
        for (const std::string& name : m_.graph.inputs()) {
            const num::Tensor& x = inputs_.at(name);
            host_env_[name] = x;
            if (checking_) snapshot_[name] = x;
            auto dt = m_.tensors.find(name);
            if (dt != m_.tensors.end()) upload(dt->second, x);
        }
    if (checking_) snapshot_views();
    for (size_t si = 0; si < m_.steps.size() && !failed_; ++si) {
        const uint64_t s0 = now_ps();
        if (m_.steps[si].unit == rk::Unit::Npu) {
            run_npu_step(si, drvr);
            r_.npu_ps += now_ps() - s0;
        } else if (m_.steps[si].unit == rk::Unit::Cpu) {
            run_cpu_step(si);
            r_.cpu_ps += now_ps() - s0;
        }
    }
    if (full_ && !failed_)
        for (const std::string& name : m_.graph.outputs()) final_outputs_[name] = host_value(name);
    t1_ = now_ps();
}

std::vector<uint64_t> Runner::task_figures() const {
    std::vector<uint64_t> f;
    f.reserve(3 * m_.tasks.size() + 1);
    f.push_back(t1_ - t0_);
    for (size_t ti = 0; ti < m_.tasks.size(); ++ti) {
        if (task_core_[ti] < 0) {
            f.insert(f.end(), {UINT64_MAX, 0, 0});
            continue;
        }
        const TaskRecord& t = plat_.core(task_core_[ti]).tasks().at(task_rec_[ti]);
        f.insert(f.end(), {static_cast<uint64_t>(task_core_[ti]), t.end_ps - t.start_ps, t.compute_cycles});
    }
    return f;
}

void Runner::host_program() {
    const uint64_t pool_base = soc_.mem.ddr_base.value + (16u << 20);
    const uint64_t ddr_end = soc_.mem.ddr_base.value + soc_.mem.ddr_size_bytes.value;
    const uint64_t want = std::max<uint64_t>(256u << 20, m_.arena_bytes + (16u << 20));
    const uint64_t pool = std::min<uint64_t>(want, ddr_end > pool_base ? ddr_end - pool_base : 0);
    SimHal hal(plat_, pool_base, pool);
    hal_ = &hal;
    try {
        rk::CoreConfig cc{soc_.npu.core_count.value, soc_.npu.pc_data_amount_scale.value,
                          soc_.npu.pc_task_number_bits.value, soc_.npu.pc_task_status_offset.value};
        rk::Driver drvr(hal, cc);
        arena_ = hal.bo_create(m_.arena_bytes, 4096);
        base_ = arena_.dma_addr;
        rk::relocate(m_, base_);
        if (!attach_arena() && !m_.arena_init.empty())
            hal.bo_write(arena_, m_.arena_init_base, m_.arena_init.data(), m_.arena_init.size());
        // --repeat: the same inference again on the same arena and cores (the weights and
        // register commands stay in place, as with a vendor runtime's repeated run calls). Only
        // the last repetition is recorded for the checks; every one must give the first one's
        // outputs and task cycles.
        const int reps = std::max(1, o_.repeat);
        const bool check = checking_;
        std::map<std::string, num::Tensor> first_outputs;
        std::vector<uint64_t> first_figures;
        for (int rep = 0; rep < reps && !failed_; ++rep) {
            checking_ = check && rep + 1 == reps;
            host_env_.clear();
            snapshot_.clear();
            final_outputs_.clear();
            r_.npu_ps = r_.cpu_ps = 0;
            const double c0 = process_cpu_seconds();
            run_inference(drvr);
            sim_cpu_s_.push_back(process_cpu_seconds() - c0);
            if (failed_ || reps == 1) break;
            if (rep == 0) {
                first_outputs = final_outputs_;
                first_figures = task_figures();
                continue;
            }
            for (const auto& [name, x] : final_outputs_) {
                const num::Tensor& y = first_outputs.at(name);
                if (x.shape() != y.shape() || x.nbytes() != y.nbytes() ||
                    std::memcmp(x.raw(), y.raw(), x.nbytes()) != 0)
                    r_.errors.push_back(fmt::format("--repeat: repetition {} gave a different output '{}' than "
                                                    "repetition 1", rep + 1, name));
            }
            const std::vector<uint64_t> f = task_figures();
            if (f.front() != first_figures.front())
                r_.errors.push_back(fmt::format("--repeat: repetition {} took {} ps, repetition 1 {} ps", rep + 1,
                                                f.front(), first_figures.front()));
            else if (f != first_figures)
                r_.errors.push_back(fmt::format("--repeat: repetition {} gave different task cycles than repetition 1",
                                                rep + 1));
            if (!r_.errors.empty()) failed_ = true;
        }
    } catch (const std::exception& e) {
        r_.errors.push_back(e.what());
        failed_ = true;
        t1_ = now_ps();
    }
    hal_ = nullptr;
    done_ = true;
    if (shown_any_) progress_ << "\r\x1b[K" << std::flush;
}

}  // namespace run_detail
}  // namespace sim
