// SPDX-License-Identifier: MIT
// compile_model (model.h): partition a QDQ-folded graph into NPU / CPU / view layers, plan the
// activation memory, lower every NPU layer to task bodies, link them into per-core PC chains
// and lay everything out in one arena with its relocation list.
//
// Phases:
//  1. classify: walk the nodes in order; each becomes an NPU layer (with a deferred lowering), a
//     view (same bytes, 0 tasks), or a CPU layer (reason in Layer::note). Device tensors are
//     created for every value an NPU or view layer touches.
//  2. memory plan: one buffer per root tensor (aliases - concat slices, views - share their
//     root's bytes); lifetimes over the layer order; a greedy first-fit offset allocator. Offsets
//     are provisional (kActVirtual + offset) because the activation region's arena offset is only
//     known once weights and regcmd are placed.
//  3. lower: weights/operands go into the arena's initialised part. A lowering that throws
//     turns its layer into a CPU layer with the message as the note.
//  4. steps and chains: consecutive NPU layers form one step (one chain per core); CPU layers
//     split steps; with several cores each multi-core conv is its own step.
//  5. placement: regcmd of each chain (64-byte task blocks) in the arena, then the activation
//     region; provisional addresses patched; chains linked (PC_BASE_ADDRESS = next task, itself
//     a relocation); relocation list sorted.
#include "compiler_internal.h"

namespace drv::rknpu::compiler_detail {

namespace {

/// The spec of the SoC's platform, loaded once per process and SoC: the file whose name holds
/// the SoC as a '_'-separated token (rknn_v2.3.2_rk3566_rk3568.json for rk3566; one file parses in
/// ~10 ms, the whole DB in ~70 ms), else the whole DB. nullptr when no spec matches or the DB
/// cannot be read (then no checker verdicts are applied).
const check::PlatformSpec* platform_spec(const std::string& soc) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<check::SpecDb>> cache;  // the DB holding the SoC's spec
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(soc);
    if (it == cache.end()) {
        std::unique_ptr<check::SpecDb> db;
        try {
            const std::string dir = check::default_specs_dir();
            std::vector<std::string> files;
            for (const auto& e : std::filesystem::directory_iterator(dir))
                if (e.path().extension() == ".json") files.push_back(e.path().string());
            std::sort(files.begin(), files.end());
            for (const auto& f : files) {
                std::stringstream stem(std::filesystem::path(f).stem().string());
                std::string tok;
                bool named = false;
                while (std::getline(stem, tok, '_')) named |= tok == soc;
                if (!named) continue;
                auto one = std::make_unique<check::SpecDb>();
                one->add(check::SpecDb::load_file(f));
                if (one->find(soc)) {
                    db = std::move(one);
                    break;
                }
            }
            if (!db) db = std::make_unique<check::SpecDb>(check::SpecDb::load_dir(dir));
        } catch (const std::exception&) {
            db.reset();
        }
        it = cache.emplace(soc, std::move(db)).first;
    }
    return it->second ? it->second->find(soc) : nullptr;
}

}  // namespace

void Compiler::run() {
    m_.soc = soc_.name;
    m_.cores = parse_core_mask(opts_.core_mask, soc_);
    if (opts_.fp16 && soc_.npu.fp16_macs_per_cycle.value <= 0)
        throw std::invalid_argument(fmt::format("{} has no fp16 path on its NPU (profile npu.fp16_macs_per_cycle = 0)",
                                                soc_.name));
    consult_checker();
    classify();
    defer_output_cpu_layers();
    plan_memory();
    lower_all();
    build_steps();
    record_decisions();
    place();
}

std::vector<size_t> Compiler::ref_nodes(const std::vector<size_t>& unit_nodes) const {
    std::vector<size_t> out;
    for (size_t u : unit_nodes) out.insert(out.end(), g_.members(u).begin(), g_.members(u).end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

void Compiler::record_decisions() {
    const auto& rn = ref_.nodes();
    std::vector<int> layer_of(rn.size(), -1), unit_of(rn.size(), -1);
    for (size_t l = 0; l < m_.layers.size(); ++l)
        for (size_t r : m_.layers[l].ir_nodes) layer_of[r] = static_cast<int>(l);
    for (size_t u = 0; u < g_.nodes().size(); ++u)
        for (size_t r : g_.members(u)) unit_of[r] = static_cast<int>(u);
    m_.decisions.clear();
    for (size_t r = 0; r < rn.size(); ++r) {
        NodeDecision d;
        d.node = rn[r].name;
        d.layer = layer_of[r];
        d.vendor_checked = vendor_checked_ && unit_of[r] >= 0;
        if (d.vendor_checked) {
            const size_t u = static_cast<size_t>(unit_of[r]);
            d.vendor = vendor_[u];
            if (g_.nodes()[u].name != rn[r].name) {  // a DQ/act/Q member of a QDQ unit
                d.vendor.fused_into = g_.nodes()[u].name;
                d.vendor.reason = g_.rewrites(u).empty() ? std::string("part of ") + g_.nodes()[u].name
                                                         : g_.rewrites(u)[0];
                d.vendor.violations.clear();
                d.vendor.rewrites = g_.rewrites(u);
                if (d.vendor.verdict == check::Verdict::Target) d.vendor.verdict = check::Verdict::Fused;
            } else {
                for (const auto& rw : g_.rewrites(u))
                    if (std::find(d.vendor.rewrites.begin(), d.vendor.rewrites.end(), rw) == d.vendor.rewrites.end())
                        d.vendor.rewrites.push_back(rw);
            }
            d.vendor.node = rn[r].name;
            d.vendor.op_type = rn[r].domain.empty() ? rn[r].op_type : rn[r].domain + "." + rn[r].op_type;
        }
        m_.decisions.push_back(std::move(d));
    }
}

DeviceTensor& Compiler::dev(const std::string& name, float scale, int32_t graph_zp, const int* dims) {
    auto it = m_.tensors.find(name);
    const ir::Value& v = g_.value(name);
    const bool u8 = v.dtype == num::DType::U8;
    const int32_t zp = graph_zp - (u8 ? 128 : 0);
    if (it != m_.tensors.end()) {
        if (std::fabs(it->second.scale - scale) > 1e-6f * scale || it->second.zp != zp)
            unsupported(fmt::format("tensor '{}' is read with two different quantizations", name));
        if (it->second.row_major && !row_major_ok_)
            unsupported(fmt::format("tensor '{}' is row-major (channel-last), not NC1HWC2", name));
        if (journal_on_) journal_old_.emplace(name, it->second);  // the first copy is the one to restore
        return it->second;
    }
    if (!is_q8(v.dtype))
        unsupported(fmt::format("tensor '{}' is {}, not int8/uint8", name, num::dtype_name(v.dtype)));
    DeviceTensor t;
    t.name = name;
    t.ir_shape = v.shape;
    if (dims) {
        t.c = dims[0], t.h = dims[1], t.w = dims[2];
    } else if (!device_dims(v.shape, t.c, t.h, t.w))
        unsupported(
            fmt::format("tensor '{}' shape {} has no device layout (batch 1, rank 4 or 2)", name, v.shape_str()));
    t.c2 = soc_.npu.c2_int8.value;
    t.line_stride = static_cast<uint32_t>(t.w * t.c2);
    // Surfaces start on 16-byte boundaries: DST/EW/PPU surface strides are programmed in
    // 16-byte units, which matters with 8-byte atoms (RK356x) and an odd w*h.
    t.surf_stride =
        static_cast<uint32_t>(align_up(static_cast<uint64_t>(t.line_stride) * static_cast<uint64_t>(t.h), 16));
    t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((t.c + t.c2 - 1) / t.c2);
    t.scale = scale;
    t.zp = zp;
    t.graph_uint8 = u8;
    if (t.zp < -128 || t.zp > 127) unsupported(fmt::format("tensor '{}' zero point out of range", name));
    if (journal_on_) journal_new_.push_back(name);
    return m_.tensors.emplace(name, t).first->second;
}

void Compiler::rollback_attempt() {
    for (const std::string& n : journal_new_) m_.tensors.erase(n);
    for (auto& [n, t] : journal_old_) m_.tensors[n] = std::move(t);
}

DeviceTensor& Compiler::dev_q(const std::string& name) {
    const ir::Value& v = g_.value(name);
    if (v.quant.empty() || v.quant.per_axis())
        unsupported(fmt::format("tensor '{}' has no per-tensor quantization", name));
    return dev(name, v.quant.scale[0], v.quant.zero_point.empty() ? 0 : v.quant.zero_point[0]);
}

std::string Compiler::shape_of(const std::string& name) const {
    const ir::Value* v = g_.find_value(name);
    return v ? ir::shape_to_string(v->shape) : "?";
}

Layer Compiler::base_layer(size_t i, const std::string& op, Unit unit) const {
    const ir::Node& n = g_.nodes()[i];
    Layer L;
    L.name = n.name;
    L.op = op;
    L.unit = unit;
    for (const auto& in : n.inputs) {
        if (in.empty()) continue;
        const ir::Value* v = g_.find_value(in);
        if (v && !v->is_constant()) L.inputs.push_back(in);
    }
    L.outputs = n.outputs;
    if (!L.inputs.empty()) L.in_shape = shape_of(L.inputs[0]);
    if (!L.outputs.empty()) L.out_shape = shape_of(L.outputs[0]);
    L.ir_nodes = g_.members(i);
    L.rewrites = g_.rewrites(i);
    if (i < vendor_.size())
        for (const auto& r : vendor_[i].rewrites)
            if (std::find(L.rewrites.begin(), L.rewrites.end(), r) == L.rewrites.end()) L.rewrites.push_back(r);
    return L;
}

void Compiler::consult_checker() {
    if (!opts_.consult_checker) return;
    const check::PlatformSpec* spec = platform_spec(soc_.name);
    if (!spec) return;
    check::CheckResult r;
    try {
        // The vendor's view: its rewrites, then its operator rules (the same call `npusim check` makes).
        r = check::check_model(g_.checker_graph(), *spec);
    } catch (const check::CheckError& e) {
        throw std::invalid_argument(fmt::format("{}: {}", spec->id, e.what()));
    } catch (const std::exception&) {
        // The checker could not evaluate this graph view (not a verdict on the model): the
        // compiler's own lowering preconditions still decide NPU or CPU per node.
        return;
    }
    vendor_ = r.nodes;
    vendor_checked_ = true;
    for (const auto& nr : r.nodes) {
        std::string why;
        for (const auto& v : nr.violations)
            why += (why.empty() ? "" : "; ") + v.text + " [" + v.rule->source.text() + "]";
        if (why.empty()) why = nr.reason;
        if (nr.verdict == check::Verdict::Unsupported && opts_.reject_unsupported)
            throw std::invalid_argument(fmt::format("{} cannot run node '{}' ({}): {}", spec->id, nr.node,
                                                    nr.op_type, why.empty() ? "unsupported operator" : why));
        if (nr.verdict == check::Verdict::Unsupported)
            checker_cpu_[nr.node] = fmt::format("vendor rule: unsupported on {} ({}): {}", spec->id,
                                                nr.spec_op.empty() ? nr.op_type : nr.spec_op, why);
        if (nr.verdict == check::Verdict::CpuFallback)
            checker_cpu_[nr.node] =
                fmt::format("vendor rule sends it to the CPU ({} {}): {}", spec->id,
                            nr.spec_op.empty() ? nr.op_type : nr.spec_op, why.empty() ? "CPU fallback" : why);
    }
}

bool Compiler::forced_cpu(const ir::Node& n) const {
    for (const auto& s : opts_.cpu_nodes)
        if (s == n.name || s == n.op_type) return true;
    return false;
}

void Compiler::add_cpu(size_t i, const std::string& note, CpuReason why) {
    PendingLayer p;
    p.layer = base_layer(i, g_.nodes()[i].op_type, Unit::Cpu);
    p.layer.note = note;
    p.layer.cpu_reason = why;
    p.unit_node = i;
    pending_.push_back(std::move(p));
}

void Compiler::classify() {
    const auto& nodes = g_.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (consumed_.count(i)) continue;
        const ir::Node& n = nodes[i];
        cur_unit_ = i;
        if (forced_cpu(n)) {
            add_cpu(i, "forced onto the CPU (--cpu-nodes)", CpuReason::Forced);
            continue;
        }
        if (auto it = checker_cpu_.find(n.name); it != checker_cpu_.end()) {
            add_cpu(i, it->second, CpuReason::VendorRule);
            continue;
        }
        // Device tensors created for a layer that then fails are harmless (unused buffers are
        // dropped by the planner only if untouched; keep it simple: undo what this attempt did).
        journal_on_ = true;
        journal_new_.clear();
        journal_old_.clear();
        const std::string no_lowering = "npusim has no NPU lowering yet";
        try {
            if (!classify_npu(i)) {
                bool float_io = false;
                for (const auto* names : {&n.inputs, &n.outputs})
                    for (const auto& v : *names) {
                        const ir::Value* x = v.empty() ? nullptr : g_.find_value(v);
                        float_io |= x && !x->is_constant() && x->dtype == num::DType::F32;
                    }
                const bool qdq = n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear";
                add_cpu(i,
                        qdq ? fmt::format("{} for {} ({} conversion)", no_lowering, n.op_type,
                                          n.op_type == "QuantizeLinear" ? "float to int8" : "int8 to float")
                            : fmt::format("{} for {}{}{}", no_lowering, float_io ? "float " : "",
                                          n.domain.empty() ? "" : n.domain + ".", n.op_type),
                        CpuReason::NoLowering);
            } else {
                alias_extra_outputs(i);
            }
        } catch (const NpuUnsupported& e) {
            journal_on_ = false;
            rollback_attempt();
            add_cpu(i, no_lowering + ": " + e.what(), CpuReason::NoLowering);
        } catch (const std::invalid_argument& e) {
            journal_on_ = false;
            rollback_attempt();
            add_cpu(i, no_lowering + ": " + e.what(), CpuReason::NoLowering);
        }
        journal_on_ = false;
    }
}

void Compiler::alias_extra_outputs(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    // Split's outputs are its parts (split_node placed each), not copies of the first; LSTM / GRU
    // write Y, Y_h, Y_c themselves (rnn_f16).
    if (n.outputs.size() < 2 || pending_.empty() || n.op_type == "Split" || n.op_type == "LSTM" || n.op_type == "GRU" ||
        (n.op_type == "MaxPool" && !n.attrs.has("npusim_alias_outputs")))
        return;
    const auto it = m_.tensors.find(n.outputs[0]);
    if (it == m_.tensors.end()) return;
    for (size_t k = 1; k < n.outputs.size(); ++k) {
        DeviceTensor& t = dev_q(n.outputs[k]);
        if (t.scale != it->second.scale || t.zp != it->second.zp)
            unsupported(fmt::format("outputs '{}' and '{}' differ in quantization", n.outputs[0], n.outputs[k]));
        t.alias_of = n.outputs[0];
        pending_.back().layer.outputs.push_back(n.outputs[k]);
    }
}

bool Compiler::classify_npu(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const std::string& op = n.op_type;
    if (opts_.fp16 && classify_fp16(i)) return true;
    if (op == "QLinearConv") return conv(i);
    if (op == "QLinearConvTranspose" && n.domain == "npusim") return conv_transpose(i);
    if (op == "QGemm" && n.domain == "com.microsoft") return gemm(i, false);
    if (op == "QLinearMatMul" && n.domain.empty()) return gemm(i, true);
    if (op == "QLinearGlobalAveragePool" && n.domain == "com.microsoft") return gap(i);
    if ((op == "QLinearAdd" || op == "QLinearMul") && n.domain == "com.microsoft") return add(i);
    if ((op == "QLinearSub" || op == "QLinearMax" || op == "QLinearMin") && n.domain == "npusim") return add(i);
    if (op == "QLinearConcat" && n.domain == "com.microsoft") return concat(i);
    if (op == "MaxPool") return maxpool(i);
    if (op == "Reshape" && n.domain.empty() && (exmatmul_node(i) || channel_shuffle_node(i))) return true;
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity")
        return row_major_view(i) || flatten_gemm(i) || view(i);
    if ((op == "QLinearSigmoid" || op == "QLinearLeakyRelu") && n.domain == "com.microsoft") return lut_unit(i);
    if (op == "DequantizeLinear") return bn(i) || const_affine(i) || lut_region(i) || prelu_node(i) || requant_node(i);
    if (op == "Slice" && n.domain.empty()) return slice_node(i);
    if (op == "Split" && n.domain.empty()) return split_node(i);
    if (op == "Resize" && n.domain.empty()) return resize_node(i);
    if (op == "Pad" && n.domain.empty()) return pad_node(i);
    if ((op == "Tile" || op == "Expand") && n.domain.empty()) return tile_node(i);
    if (op == "QLinearAveragePool" && n.domain == "com.microsoft") return avgpool_node(i);
    if (op == "GlobalMaxPool" && n.domain.empty()) return global_maxpool_node(i);
    if (op == "Transpose" && n.domain.empty()) return transpose_node(i);
    if (op == "Gather" && n.domain.empty()) return gather_node(i);
    return false;
}

}  // namespace drv::rknpu::compiler_detail

namespace drv::rknpu {

using compiler_detail::Compiler;

const char* cpu_reason_name(CpuReason r) {
    switch (r) {
        case CpuReason::None: return "";
        case CpuReason::VendorRule: return "vendor rule";
        case CpuReason::NoLowering: return "no NPU lowering yet";
        case CpuReason::Forced: return "forced";
    }
    return "";
}


std::vector<int> parse_core_mask(const std::string& mask, const hw::SocProfile& soc) {
    const int n = soc.npu.core_count.value;
    // "auto": one core, as RKNN_NPU_CORE_AUTO picks one idle core; the simulator takes core 0.
    if (mask.empty() || mask == "auto") return {0};
    std::vector<int> cores;
    std::string known = "auto";
    for (int i = 0; i < n; ++i) known += ", " + std::to_string(i);
    if (n > 1) {
        std::string all = "0";
        for (int i = 1; i < n; ++i) all += "_" + std::to_string(i), known += ", " + all;
    }
    auto bad = [&]() {
        return std::invalid_argument(fmt::format("core mask '{}' is invalid for {} ({} core{}); use {}", mask, soc.name,
                                                 n, n == 1 ? "" : "s", known));
    };
    std::stringstream ss(mask);
    std::string part;
    while (std::getline(ss, part, '_')) {
        if (part.size() != 1 || part[0] < '0' || part[0] > '9') throw bad();
        const int c = part[0] - '0';
        if (c >= n || std::find(cores.begin(), cores.end(), c) != cores.end()) throw bad();
        cores.push_back(c);
    }
    if (cores.empty() || mask.back() == '_') throw bad();
    std::sort(cores.begin(), cores.end());
    return cores;
}

CompiledModel compile_model(const ir::Graph& g, const hw::SocProfile& soc, const CompileOptions& opts) {
    CompiledModel m;
    Compiler(g, soc, opts, m).run();
    return m;
}

CompiledModel compile_model(ir::Graph&& g, const hw::SocProfile& soc, const CompileOptions& opts) {
    CompiledModel m;
    m.graph = std::move(g);
    Compiler(m.graph, soc, opts, m).run();
    return m;
}

void relocate(CompiledModel& m, uint64_t base) {
    if (base == m.relocated_base) return;
    for (uint64_t off : m.relocs) {
        if (off < m.arena_init_base || off - m.arena_init_base + 8 > m.arena_init.size())
            throw std::logic_error("relocation outside the initialised arena");
        uint8_t* at = m.arena_init.data() + (off - m.arena_init_base);
        uint64_t w = 0;
        std::memcpy(&w, at, 8);
        auto c = hw::rknpu::RegCmd::decode(w);
        const uint64_t v = static_cast<uint64_t>(c.value) - m.relocated_base + base;
        if (v > 0xffffffffull)
            throw std::invalid_argument(fmt::format("relocate: arena at 0x{:x} puts an address beyond 32 bits", base));
        c.value = static_cast<uint32_t>(v);
        w = c.encode();
        std::memcpy(at, &w, 8);
    }
    m.relocated_base = base;
}

}  // namespace drv::rknpu
