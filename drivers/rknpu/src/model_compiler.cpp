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

/// The graph as the vendor toolchain's checker sees it: the fused integer ops of the QDQ rewrite
/// turned back into the ONNX ops the spec DB describes (QLinearConv -> Conv, QLinearAdd -> Add,
/// QGemm -> Gemm, ...), Q/DQ pairs removed (check::quantized_view), and uint8 activations shown as
/// int8 because the NPU stores them as int8 shifted by -128 (what RKNN's asymmetric int8 does).
/// Large constants keep their shape with a one-element stand-in for their data (the rules read
/// shapes of weights, elements only of small constants such as pads or scales).
ir::Graph checker_view(const ir::Graph& g) {
    ir::Graph v;
    for (const auto& [name, val] : g.values()) {
        ir::Value c;
        c.name = val.name;
        c.dtype = val.dtype;
        c.shape = val.shape;
        c.shape_known = val.shape_known;
        c.quant = val.quant;
        if (val.is_constant()) c.data = val.data->numel() <= 4096 ? *val.data : num::Tensor(val.dtype, {1});
        v.add_value(std::move(c));
    }
    // Rewritten op -> (ONNX op, input indices kept).
    static const std::map<std::string, std::pair<std::string, std::vector<size_t>>> back = {
        {"QLinearConv", {"Conv", {0, 3, 8}}},
        {"QLinearMatMul", {"MatMul", {0, 3}}},
        {"com.microsoft.QLinearAdd", {"Add", {0, 3}}},
        {"com.microsoft.QLinearMul", {"Mul", {0, 3}}},
        {"com.microsoft.QGemm", {"Gemm", {0, 3, 6}}},
        {"com.microsoft.QLinearGlobalAveragePool", {"GlobalAveragePool", {0}}},
        {"com.microsoft.QLinearAveragePool", {"AveragePool", {0}}},
        {"com.microsoft.QLinearSigmoid", {"Sigmoid", {0}}},
        {"com.microsoft.QLinearLeakyRelu", {"LeakyRelu", {0}}},
    };
    for (const ir::Node& n : g.nodes()) {
        ir::Node c = n;
        const std::string key = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
        if (auto it = back.find(key); it != back.end()) {
            c.op_type = it->second.first;
            c.domain.clear();
            c.inputs.clear();
            for (size_t k : it->second.second)
                if (n.has_input(k)) c.inputs.push_back(n.input(k));
        } else if (key == "com.microsoft.QLinearConcat") {
            c.op_type = "Concat";
            c.domain.clear();
            c.inputs.clear();
            for (size_t k = 2; k < n.inputs.size(); k += 3) c.inputs.push_back(n.inputs[k]);
        }
        v.add_node(std::move(c));
    }
    v.inputs() = g.inputs();
    v.outputs() = g.outputs();
    for (const auto& [d, ver] : g.opsets()) v.set_opset(d, ver);
    ir::Graph q = check::quantized_view(v);
    ir::Graph out;
    for (const auto& [name, val] : q.values()) {
        ir::Value c = val;
        if (!c.is_constant() && c.dtype == num::DType::U8 && c.is_quantized()) {
            c.dtype = num::DType::I8;
            for (auto& z : c.quant.zero_point) z -= 128;
        }
        out.add_value(std::move(c));
    }
    for (const auto& n : q.nodes()) out.add_node(n);
    out.inputs() = q.inputs();
    out.outputs() = q.outputs();
    for (const auto& [d, ver] : q.opsets()) out.set_opset(d, ver);
    return out;
}

}  // namespace

void Compiler::run() {
    m_.soc = soc_.name;
    m_.cores = parse_core_mask(opts_.core_mask, soc_);
    consult_checker();
    classify();
    defer_output_cpu_layers();
    plan_memory();
    lower_all();
    build_steps();
    place();
}

DeviceTensor& Compiler::dev(const std::string& name, float scale, int32_t graph_zp) {
    auto it = m_.tensors.find(name);
    const ir::Value& v = g_.value(name);
    const bool u8 = v.dtype == num::DType::U8;
    const int32_t zp = graph_zp - (u8 ? 128 : 0);
    if (it != m_.tensors.end()) {
        if (std::fabs(it->second.scale - scale) > 1e-6f * scale || it->second.zp != zp)
            unsupported(fmt::format("tensor '{}' is read with two different quantizations", name));
        return it->second;
    }
    if (!is_q8(v.dtype))
        unsupported(fmt::format("tensor '{}' is {}, not int8/uint8", name, num::dtype_name(v.dtype)));
    DeviceTensor t;
    t.name = name;
    t.ir_shape = v.shape;
    if (!device_dims(v.shape, t.c, t.h, t.w))
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
    return m_.tensors.emplace(name, t).first->second;
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
    L.ir_nodes = {i};
    return L;
}

void Compiler::consult_checker() {
    if (!opts_.consult_checker) return;
    const check::PlatformSpec* spec = platform_spec(soc_.name);
    if (!spec) return;
    check::CheckResult r;
    try {
        r = check::check_graph(checker_view(g_), *spec);
    } catch (const check::CheckError& e) {
        throw std::invalid_argument(fmt::format("{}: {}", spec->id, e.what()));
    } catch (const std::exception&) {
        // The checker could not evaluate this graph view (not a verdict on the model): the
        // compiler's own lowering preconditions still decide NPU or CPU per node.
        return;
    }
    for (const auto& nr : r.nodes) {
        std::string why;
        for (const auto& v : nr.violations) why += (why.empty() ? "" : "; ") + v.text;
        if (why.empty()) why = nr.reason;
        if (nr.verdict == check::Verdict::Unsupported)
            throw std::invalid_argument(fmt::format("{} cannot run node '{}' ({}): {}", spec->id, nr.node,
                                                    nr.op_type, why.empty() ? "unsupported operator" : why));
        if (nr.verdict == check::Verdict::CpuFallback)
            checker_cpu_[nr.node] =
                fmt::format("checker ({} {}): {}", spec->id, nr.spec_op.empty() ? nr.op_type : nr.spec_op,
                            why.empty() ? "CPU fallback" : why);
    }
}

bool Compiler::forced_cpu(const ir::Node& n) const {
    for (const auto& s : opts_.cpu_nodes)
        if (s == n.name || s == n.op_type) return true;
    return false;
}

void Compiler::add_cpu(size_t i, const std::string& note) {
    PendingLayer p;
    p.layer = base_layer(i, g_.nodes()[i].op_type, Unit::Cpu);
    p.layer.note = note;
    pending_.push_back(std::move(p));
}

void Compiler::classify() {
    const auto& nodes = g_.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (consumed_.count(i)) continue;
        const ir::Node& n = nodes[i];
        if (forced_cpu(n)) {
            add_cpu(i, "forced onto the CPU (--cpu-nodes)");
            continue;
        }
        if (auto it = checker_cpu_.find(n.name); it != checker_cpu_.end()) {
            add_cpu(i, it->second);
            continue;
        }
        // Device tensors created for a layer that then fails are harmless (unused buffers are
        // dropped by the planner only if untouched; keep it simple: erase what this attempt added).
        const auto before = m_.tensors;
        try {
            if (!classify_npu(i))
                add_cpu(i,
                        fmt::format("no NPU lowering for {}{}", n.domain.empty() ? "" : n.domain + ".", n.op_type));
        } catch (const NpuUnsupported& e) {
            m_.tensors = before;
            add_cpu(i, e.what());
        } catch (const std::invalid_argument& e) {
            m_.tensors = before;
            add_cpu(i, e.what());
        }
    }
}

bool Compiler::classify_npu(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const std::string& op = n.op_type;
    if (op == "QLinearConv") return conv(i);
    if (op == "QGemm" && n.domain == "com.microsoft") return gemm(i, false);
    if (op == "QLinearMatMul" && n.domain.empty()) return gemm(i, true);
    if (op == "QLinearGlobalAveragePool" && n.domain == "com.microsoft") return gap(i);
    if ((op == "QLinearAdd" || op == "QLinearMul") && n.domain == "com.microsoft") return add(i);
    if (op == "QLinearConcat" && n.domain == "com.microsoft") return concat(i);
    if (op == "MaxPool") return maxpool(i);
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") return view(i);
    if (op == "DequantizeLinear") return bn(i);
    return false;
}

}  // namespace drv::rknpu::compiler_detail

namespace drv::rknpu {

using compiler_detail::Compiler;


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
