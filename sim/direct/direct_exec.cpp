// SPDX-License-Identifier: MIT
// Direct executor (direct_exec.h): a CompiledModel run through the NPU block engines without
// SystemC, for lowering tests and the runtime's cross-checks.
#include "direct/direct_exec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "compiler/ref/reference.h"
#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "npu/rknpu/pc.h"
#include "npu/rknpu/reg_file.h"
#include "numerics/ops.h"

namespace sim {

using namespace drv::rknpu;

std::string TensorDiff::str() const {
    if (!same_shape) return "shape or dtype differs";
    return fmt::format("{} values, {} equal, {} off by 1 LSB, {} worse, max |diff| {}", values, equal, off_by_one,
                       worse, max_diff);
}

namespace {

int64_t element(const num::Tensor& t, size_t i) {
    switch (t.dtype()) {
        case num::DType::U8:
            return t.data<uint8_t>()[i];
        case num::DType::I8:
            return t.data<int8_t>()[i];
        case num::DType::I32:
            return t.data<int32_t>()[i];
        default:
            throw std::invalid_argument("compare_tensors: integer tensors only");
    }
}

}  // namespace

TensorDiff compare_tensors(const num::Tensor& got, const num::Tensor& want) {
    TensorDiff d;
    if (got.dtype() != want.dtype() || got.numel() != want.numel()) {
        d.same_shape = false;
        return d;
    }
    d.values = got.numel();
    if (got.dtype() == num::DType::F32) {
        // Float outputs (DequantizeLinear of an int8 value): compare in LSB of the smallest step.
        for (size_t i = 0; i < d.values; ++i) {
            const float a = got.data<float>()[i], b = want.data<float>()[i];
            d.max_abs = std::max(d.max_abs, static_cast<double>(std::fabs(a - b)));
            if (a == b)
                ++d.equal;
            else
                ++d.worse;
        }
        return d;
    }
    for (size_t i = 0; i < d.values; ++i) {
        const int64_t diff = std::llabs(element(got, i) - element(want, i));
        d.max_diff = std::max<int>(d.max_diff, static_cast<int>(diff));
        if (diff == 0)
            ++d.equal;
        else if (diff == 1)
            ++d.off_by_one;
        else
            ++d.worse;
    }
    return d;
}

namespace {

std::vector<num::Tensor> run_node(const drv::ir::Graph& g, const drv::ir::Node& n,
                                  const std::map<std::string, num::Tensor>& env) {
    return drv::ref::run_node(g, n, [&](const std::string& in) -> const num::Tensor* {
        auto it = env.find(in);
        return it == env.end() ? nullptr : &it->second;
    });
}

}  // namespace

std::map<std::string, num::Tensor> reference_values(const drv::ir::Graph& g,
                                                    const std::map<std::string, num::Tensor>& inputs) {
    std::map<std::string, num::Tensor> env = inputs;
    for (const drv::ir::Node& n : g.nodes()) {
        auto out = run_node(g, n, env);
        for (size_t k = 0; k < n.outputs.size() && k < out.size(); ++k)
            if (!n.outputs[k].empty()) env[n.outputs[k]] = std::move(out[k]);
    }
    return env;
}

namespace {

class Runner {
   public:
    Runner(const CompiledModel& m, const hw::SocProfile& soc) : m_(m), soc_(soc), mem_(m.arena_bytes, 0) {
        std::copy(m.arena_init.begin(), m.arena_init.end(), mem_.begin());
    }

    void put(const DeviceTensor& t, const num::Tensor& x) {
        const auto img = to_device(t, x);
        check(t.offset, img.size(), t.name);
        std::memcpy(mem_.data() + t.offset, img.data(), img.size());
    }
    num::Tensor get(const DeviceTensor& t) const {
        check(t.offset, t.bytes, t.name);
        std::vector<uint8_t> img(mem_.begin() + static_cast<std::ptrdiff_t>(t.offset),
                                 mem_.begin() + static_cast<std::ptrdiff_t>(t.offset + t.bytes));
        return from_device(t, img);
    }
    const DeviceTensor* dev(const std::string& v) const {
        auto it = m_.tensors.find(v);
        return it == m_.tensors.end() ? nullptr : &it->second;
    }

    /// Kicks `tasks` (consecutive tasks of one chain) on `core` as the driver does: the first
    /// task's address and amount, TASK_NUMBER = the count. The PC interpreter follows the chain
    /// links; each fetched task must be the one the model lists (its address and op-enable mask).
    void kick(int core, const std::vector<size_t>& tasks) {
        using namespace hw::rknpu;
        const NpuTask& first = m_.tasks[tasks.front()];
        npu::rknpu::RegFile& rf = rf_[core];
        const auto scale = static_cast<uint32_t>(soc_.npu.pc_data_amount_scale.value);
        const uint32_t amount = (static_cast<uint32_t>(first.regcfg_amount) + 4 + scale - 1) / scale - 1;
        const hw::Field number = field_of(soc_generation(soc_), "PC.TASK_CON", "TASK_NUMBER");
        rf.write(PC_BASE_ADDRESS::kOffset, static_cast<uint32_t>(first.regcmd_offset + m_.relocated_base));
        rf.write(PC_REGISTER_AMOUNTS::kOffset, amount);
        rf.write(PC_TASK_CON::kOffset, number.put(static_cast<uint32_t>(tasks.size())));
        Port port(*this);
        const npu::rknpu::KickResult r = npu::rknpu::run_kick(rf, state_[core], soc_, port);
        for (size_t k = 0; k < r.tasks.size() && k < tasks.size(); ++k) {
            const NpuTask& t = m_.tasks[tasks[k]];
            const uint64_t want = t.regcmd_offset + m_.relocated_base;
            if (r.tasks[k].addr != want)
                throw std::runtime_error(fmt::format("chain on core {}: task {} fetched at 0x{:x}, expected 0x{:x}", core,
                                                     tasks[k], r.tasks[k].addr, want));
            if (r.tasks[k].faults.empty() && r.tasks[k].enable_mask != t.enable_mask)
                throw std::runtime_error(fmt::format("{}: op-enable 0x{:x} differs from the task's mask 0x{:x}",
                                                     who(tasks[k]), r.tasks[k].enable_mask, t.enable_mask));
        }
        if (!r.ok() || r.tasks_done != tasks.size()) {
            const size_t at = std::min(static_cast<size_t>(r.tasks_done), tasks.size() - 1);
            std::string why = r.diagnostics.empty() ? "stopped early" : r.diagnostics.front();
            if (!port.why.empty()) why += " (" + port.why + ")";
            throw std::runtime_error(fmt::format("{}: fault {}", who(tasks[at]), why));
        }
        tasks_run_ += r.tasks_done;
    }

    void run_cpu_layer(const Layer& L, std::map<std::string, num::Tensor>& env) {
        for (const auto& v : L.inputs)
            if (const DeviceTensor* t = dev(v)) env[v] = get(*t);
        for (size_t ni : L.ir_nodes) {
            const drv::ir::Node& n = m_.graph.nodes()[ni];
            auto out = run_node(m_.graph, n, env);
            for (size_t k = 0; k < n.outputs.size() && k < out.size(); ++k)
                if (!n.outputs[k].empty()) env[n.outputs[k]] = std::move(out[k]);
        }
        for (const auto& v : L.outputs)
            if (const DeviceTensor* t = dev(v)) put(*t, env.at(v));
    }

    size_t tasks_run_ = 0;

   private:
    /// The arena as the NPU's DMA sees it: device addresses from relocated_base; writes must stay
    /// in the activation region (never over weights or regcmd).
    struct Port : npu::rknpu::DmaPort {
        Runner& r;
        std::string why;
        explicit Port(Runner& run) : r(run) {}
        bool in(uint64_t addr, uint64_t n, uint64_t& off) {
            if (addr < r.m_.relocated_base) return false;
            off = addr - r.m_.relocated_base;
            return off + n <= r.mem_.size() && off + n >= off;
        }
        bool read(uint64_t addr, uint8_t* dst, uint64_t n) override {
            uint64_t off = 0;
            if (!in(addr, n, off)) return false;
            std::memcpy(dst, r.mem_.data() + off, n);
            return true;
        }
        bool write(uint64_t addr, const uint8_t* src, uint64_t n) override {
            uint64_t off = 0;
            if (!in(addr, n, off)) return false;
            if (off < r.m_.arena_init.size()) {
                why = fmt::format("writes into the initialised arena at 0x{:x}", off);
                return false;
            }
            std::memcpy(r.mem_.data() + off, src, n);
            return true;
        }
    };
    std::string who(size_t task) const {
        const NpuTask& t = m_.tasks[task];
        return fmt::format("layer '{}' task {} ({})", t.layer >= 0 ? m_.layers[static_cast<size_t>(t.layer)].name : "?",
                           task, t.what);
    }
    void check(uint64_t off, uint64_t n, const std::string& what) const {
        if (off + n > mem_.size() || off + n < off)
            throw std::runtime_error(
                fmt::format("{}: bytes [0x{:x}, 0x{:x}) outside the {}-byte arena", what, off, off + n, mem_.size()));
    }
    const CompiledModel& m_;
    const hw::SocProfile& soc_;
    std::vector<uint8_t> mem_;
    std::map<int, npu::rknpu::RegFile> rf_;
    std::map<int, npu::rknpu::CoreState> state_;
};

}  // namespace

DirectResult run_direct(const CompiledModel& m, const hw::SocProfile& soc,
                        const std::map<std::string, num::Tensor>& inputs, const DirectOptions& opts) {
    if (m.timing_only) throw std::invalid_argument("run_direct: the model was compiled timing-only (no weights)");
    Runner r(m, soc);
    DirectResult res;
    if (const auto* ref = opts.isolated_reference) {
        for (size_t l = 0; l < m.layers.size(); ++l) {
            const Layer& L = m.layers[l];
            if (L.unit != Unit::Npu) continue;
            for (const auto& v : L.inputs)
                if (const DeviceTensor* t = r.dev(v)) r.put(*t, ref->at(v));
            std::map<int, std::vector<size_t>> per_core;
            for (size_t t : L.tasks) per_core[m.tasks[t].core].push_back(t);
            for (const auto& [core, tasks] : per_core)
                for (size_t t : tasks) r.kick(core, {t});
            LayerCheck c;
            c.layer = l;
            for (const auto& v : L.outputs) {
                const DeviceTensor* t = r.dev(v);
                if (!t) continue;
                const TensorDiff d = compare_tensors(r.get(*t), ref->at(v));
                c.diff.same_shape &= d.same_shape;
                c.diff.values += d.values, c.diff.equal += d.equal, c.diff.off_by_one += d.off_by_one,
                    c.diff.worse += d.worse;
                c.diff.max_diff = std::max(c.diff.max_diff, d.max_diff);
                c.diff.max_abs = std::max(c.diff.max_abs, d.max_abs);
            }
            res.layers.push_back(c);
        }
        res.tasks_run = r.tasks_run_;
        return res;
    }
    std::map<std::string, num::Tensor> env = inputs;
    for (const auto& in : m.graph.inputs()) {
        auto it = inputs.find(in);
        if (it == inputs.end()) throw std::invalid_argument("run_direct: no data for graph input '" + in + "'");
        if (const DeviceTensor* t = r.dev(in)) r.put(*t, it->second);
    }
    for (const Step& s : m.steps) {
        if (s.unit == Unit::Cpu) {
            for (size_t l : s.layers) r.run_cpu_layer(m.layers[l], env);
            continue;
        }
        for (const auto& [core, chain] : s.chains) r.kick(core, chain);
    }
    for (const auto& out : m.graph.outputs()) {
        if (const DeviceTensor* t = r.dev(out))
            res.outputs[out] = r.get(*t);
        else if (env.count(out))
            res.outputs[out] = env.at(out);
        else
            throw std::runtime_error("run_direct: graph output '" + out + "' was never produced");
    }
    res.tasks_run = r.tasks_run_;
    return res;
}

}  // namespace sim
