// SPDX-License-Identifier: MIT
// Model compiler, phases 2-5: the activation memory plan, lowering the deferred layers, steps and
// per-core chains, and placing regcmd, operands and activations in the arena with relocations.
#include "compiler_internal.h"

namespace drv::rknpu::compiler_detail {

void Compiler::defer_output_cpu_layers() {
    std::vector<PendingLayer> keep, tail;
    for (auto& p : pending_) {
        bool sink = p.layer.unit == Unit::Cpu && !p.layer.outputs.empty();
        for (const auto& o : p.layer.outputs) sink &= g_.consumers(o).empty();
        (sink ? tail : keep).push_back(std::move(p));
    }
    for (auto& p : tail) keep.push_back(std::move(p));
    pending_ = std::move(keep);
}

std::string Compiler::root_of(const std::string& name) const {
    std::string r = name;
    for (int guard = 0; guard < 64; ++guard) {
        const auto& t = m_.tensors.at(r);
        if (t.alias_of.empty()) return r;
        r = t.alias_of;
    }
    throw std::logic_error("alias cycle at " + name);
}

std::map<std::string, std::pair<int, int>> Compiler::lifetimes() const {
    const int end = static_cast<int>(pending_.size()) + 1;
    std::map<std::string, std::pair<int, int>> life;
    auto touch = [&](const std::string& v, int at) {
        if (!m_.tensors.count(v)) return;
        auto [it, fresh] = life.emplace(root_of(v), std::make_pair(at, at));
        if (!fresh) {
            it->second.first = std::min(it->second.first, at);
            it->second.second = std::max(it->second.second, at);
        }
    };
    for (const auto& in : g_.inputs()) touch(in, -1);
    for (size_t l = 0; l < pending_.size(); ++l) {
        for (const auto& v : pending_[l].layer.inputs) touch(v, static_cast<int>(l));
        for (const auto& v : pending_[l].layer.outputs) touch(v, static_cast<int>(l));
    }
    for (const auto& [name, node] : scratch_)
        for (size_t l = 0; l < pending_.size(); ++l)
            if (pending_[l].unit_node == node) touch(name, static_cast<int>(l));
    for (const auto& out : g_.outputs()) touch(out, end);
    // Every device tensor needs a buffer, even one no layer lists (defensive).
    for (const auto& [name, t] : m_.tensors)
        if (!life.count(root_of(name))) touch(name, 0);
    return life;
}

void Compiler::plan_memory() {
    const auto life = lifetimes();
    // Greedy first fit in order of first use (ties: name order, deterministic).
    std::vector<std::pair<std::pair<int, int>, std::string>> order;
    for (const auto& [r, lt] : life) order.push_back({lt, r});
    std::sort(order.begin(), order.end());
    struct Live {
        uint64_t off, size;
        int last;
    };
    std::vector<Live> live;
    std::map<std::string, uint64_t> root_off;
    uint64_t top = 0;
    for (const auto& [lt, r] : order) {
        if (!opts_.keep_all_tensors)
            live.erase(std::remove_if(live.begin(), live.end(),
                                      [first = lt.first](const Live& x) { return x.last < first; }),
                       live.end());
        std::sort(live.begin(), live.end(), [](const Live& a, const Live& b) { return a.off < b.off; });
        const uint64_t size = align_up(m_.tensors.at(r).bytes, 64);
        uint64_t at = 0;
        for (const Live& x : live) {
            if (at + size <= x.off) break;
            at = std::max(at, align_up(x.off + x.size, 64));
        }
        live.push_back({at, size, lt.second});
        root_off[r] = at;
        top = std::max(top, at + size);
    }
    act_bytes_ = top;
    if (kActVirtual + act_bytes_ > 0xffffffffull)
        throw std::invalid_argument(fmt::format(
            "model needs {} MiB of activations, beyond the 32-bit NPU address window", act_bytes_ >> 20));
    assign_offsets(root_off);
}

void Compiler::assign_offsets(const std::map<std::string, uint64_t>& root_off) {
    std::function<uint64_t(const std::string&)> off = [&](const std::string& v) -> uint64_t {
        const DeviceTensor& t = m_.tensors.at(v);
        if (t.alias_of.empty()) return kActVirtual + root_off.at(v);
        const DeviceTensor& p = m_.tensors.at(t.alias_of);
        const auto s = slice_off_.find(v);
        const uint64_t c_off = s == slice_off_.end() ? 0 : static_cast<uint64_t>(s->second);
        return off(t.alias_of) + c_off / static_cast<uint64_t>(p.c2) * p.surf_stride;
    };
    for (auto& [name, t] : m_.tensors) {
        t.offset = off(name);
        if (!t.alias_of.empty() && slice_off_.count(name)) t.surf_stride = m_.tensors.at(t.alias_of).surf_stride;
    }
}

void Compiler::lower_all() {
    // One allocation for the initialised arena instead of repeated growth (ResNet: 25 MB).
    if (opts_.timing_only) arena_.set_placeholders(true);
    else arena_.reserve_init(init_estimate_ + (1u << 20));
    bodies_.resize(pending_.size());
    for (size_t l = 0; l < pending_.size(); ++l) {
        PendingLayer& p = pending_[l];
        if (p.layer.unit != Unit::Npu) continue;
        try {
            bodies_[l] = p.lower();
            if (bodies_[l].empty()) throw std::invalid_argument("lowering produced no task");
        } catch (const std::invalid_argument& e) {
            // Falls back to the CPU; its device tensors stay (the CPU step reads/writes them).
            bodies_[l].clear();
            p.layer.unit = Unit::Cpu;
            p.layer.op = g_.nodes()[p.unit_node].op_type;
            for (size_t k : p.layer.ir_nodes)  // a layer placed at another node (Flatten + Gemm): its own op
                if (k < g_.nodes().size() && g_.nodes()[k].name == p.layer.name) p.layer.op = g_.nodes()[k].op_type;
            p.layer.note = std::string("npusim has no NPU lowering yet: ") + e.what();
            p.layer.cpu_reason = CpuReason::NoLowering;
        }
    }
}

void Compiler::build_steps() {
    if (&ref_ != &m_.graph) m_.graph = ref_;
    for (size_t l = 0; l < pending_.size(); ++l) {
        Layer L = pending_[l].layer;
        for (auto& b : bodies_[l]) {
            b.meta.layer = static_cast<int>(l);
            L.tasks.push_back(m_.tasks.size());
            m_.tasks.push_back(b.meta);
            flat_bodies_.push_back(std::move(b));
        }
        if (L.unit == Unit::Npu) {
            std::set<std::pair<int, int>> rows, ks;
            for (size_t t : L.tasks) {
                rows.insert({m_.tasks[t].out_window.y0, m_.tasks[t].out_window.y1});
                ks.insert({m_.tasks[t].out_window.c0, m_.tasks[t].out_window.c1});
            }
            L.tiles_h = static_cast<int>(rows.size());
            L.tiles_k = static_cast<int>(ks.size());
        }
        m_.layers.push_back(std::move(L));
    }
    const bool multi = m_.cores.size() > 1;
    Step cur;
    cur.unit = Unit::Npu;
    auto flush = [&]() {
        if (cur.unit == Unit::Npu ? !cur.chains.empty() : !cur.layers.empty()) m_.steps.push_back(cur);
        cur = Step{};
    };
    for (size_t l = 0; l < m_.layers.size(); ++l) {
        const Layer& L = m_.layers[l];
        if (L.unit == Unit::View) continue;
        if (L.unit == Unit::Cpu) {
            if (cur.unit != Unit::Cpu) {
                flush();
                cur.unit = Unit::Cpu;
            }
            cur.layers.push_back(l);
            continue;
        }
        if (cur.unit != Unit::Npu) {
            flush();
            cur.unit = Unit::Npu;
        }
        const bool split = multi && pending_[l].multicore;
        if (split) flush(), cur.unit = Unit::Npu;
        for (size_t t : L.tasks) cur.chains[m_.tasks[t].core].push_back(t);
        if (split) flush(), cur.unit = Unit::Npu;
    }
    flush();
}

void Compiler::place() {
    m_.weight_bytes = arena_.init_end();
    arena_.set_placeholders(false);  // timing-only compile: the regcmd is kept
    // Regcmd blocks, one per chain, then the activation region.
    for (const Step& s : m_.steps) {
        for (const auto& [core, chain] : s.chains) {
            uint64_t n = 0;
            for (size_t t : chain) n += entries(t);
            uint64_t at = arena_.add_init(std::vector<uint8_t>(8 * n, 0), 64);
            for (size_t t : chain) {
                m_.tasks[t].regcmd_offset = at;
                m_.tasks[t].regcfg_amount = static_cast<uint32_t>(flat_bodies_[t].words.size());
                at += 8 * entries(t);
            }
        }
    }
    m_.regcmd_bytes = arena_.init_end() - m_.weight_bytes;
    const uint64_t act_base = arena_.reserve(act_bytes_, 64);
    if (act_base + act_bytes_ > 0xffffffffull)
        throw std::invalid_argument(fmt::format("model arena of {} MiB exceeds the 32-bit NPU address window",
                                                (act_base + act_bytes_) >> 20));
    for (auto& [name, t] : m_.tensors) t.offset = t.offset - kActVirtual + act_base;
    for (const Step& s : m_.steps)
        for (const auto& [core, chain] : s.chains)
            for (size_t k = 0; k < chain.size(); ++k)
                encode_task(chain[k], k + 1 < chain.size() ? static_cast<int64_t>(chain[k + 1]) : -1, act_base);
    std::sort(m_.relocs.begin(), m_.relocs.end());
    m_.arena_init = std::move(arena_.init());
    m_.arena_init_base = arena_.init_base();
    m_.timing_only = opts_.timing_only;
    m_.arena_bytes = arena_.size();
}

void Compiler::encode_task(size_t t, int64_t next, uint64_t act_base) {
    TaskBody& b = flat_bodies_[t];
    for (size_t w : b.addr_words) {
        auto c = hw::rknpu::RegCmd::decode(b.words[w]);
        const uint64_t r = c.value >= kActVirtual ? c.value - kActVirtual + act_base : c.value;
        if (r > 0xffffffffull) throw std::logic_error("address beyond 32 bits after placement");
        c.value = static_cast<uint32_t>(r);
        b.words[w] = c.encode();
    }
    uint32_t next_addr = 0, next_amount = 0;
    if (next >= 0) {
        const auto nt = static_cast<size_t>(next);
        next_addr = static_cast<uint32_t>(m_.tasks[nt].regcmd_offset);
        next_amount = regcmd::pc_data_amount(flat_bodies_[nt].words.size() + hw::rknpu::kTaskEndEntries,
                                             soc_.npu.pc_data_amount_scale.value);
    }
    regcmd::Builder end;
    end.end_task(next_addr, next_amount, m_.tasks[t].enable_mask);
    std::vector<uint64_t> words = b.words;
    words.insert(words.end(), end.words().begin(), end.words().end());
    words.resize(entries(t), 0);
    const uint64_t off = m_.tasks[t].regcmd_offset;
    std::memcpy(arena_.init().data() + (off - arena_.init_base()), words.data(), 8 * words.size());
    for (size_t w : b.addr_words) m_.relocs.push_back(off + 8 * w);
    if (next >= 0) m_.relocs.push_back(off + 8 * b.words.size());  // PC_BASE_ADDRESS
}

}  // namespace drv::rknpu::compiler_detail
