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
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "checker/checker.h"
#include "compiler/ir/graph.h"
#include "drv/regcmd/builder.h"
#include "drv/rknpu/lower.h"
#include "drv/rknpu/model.h"
#include "hw/regcmd.h"

namespace drv::rknpu {

namespace {

/// Provisional base of the activation region while lowering (above any initialised offset).
constexpr uint64_t kActVirtual = 0x80000000ull;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

struct NpuUnsupported : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};
[[noreturn]] void unsupported(const std::string& why) { throw NpuUnsupported(why); }

const num::Tensor* const_of(const ir::Graph& g, const ir::Node& n, size_t i) {
    if (!n.has_input(i)) return nullptr;
    const ir::Value* v = g.find_value(n.input(i));
    return v && v->is_constant() ? &*v->data : nullptr;
}

std::vector<float> floats_of(const num::Tensor& t) {
    std::vector<float> out(t.numel());
    if (t.dtype() == num::DType::F32) {
        std::memcpy(out.data(), t.data<float>(), 4 * out.size());
        return out;
    }
    unsupported("scale is not float32");
}

std::vector<int32_t> ints_of(const num::Tensor& t) {
    std::vector<int32_t> out(t.numel());
    for (size_t i = 0; i < out.size(); ++i) {
        switch (t.dtype()) {
            case num::DType::U8:
                out[i] = t.data<uint8_t>()[i];
                break;
            case num::DType::I8:
                out[i] = t.data<int8_t>()[i];
                break;
            case num::DType::I32:
                out[i] = t.data<int32_t>()[i];
                break;
            default:
                unsupported(fmt::format("{} zero point / bias", num::dtype_name(t.dtype())));
        }
    }
    return out;
}

const num::Tensor& required(const ir::Graph& g, const ir::Node& n, size_t i) {
    const num::Tensor* t = const_of(g, n, i);
    if (!t) unsupported(fmt::format("input {} is not constant", i));
    return *t;
}

float scalar_scale(const ir::Graph& g, const ir::Node& n, size_t i) {
    const num::Tensor* t = const_of(g, n, i);
    if (!t) unsupported(fmt::format("input {} (scale) is not constant", i));
    const auto v = floats_of(*t);
    if (v.size() != 1) unsupported(fmt::format("input {} is a per-axis scale", i));
    if (!(v[0] > 0) || !std::isfinite(v[0])) unsupported(fmt::format("scale {} is not positive", v[0]));
    return v[0];
}

int32_t scalar_zp(const ir::Graph& g, const ir::Node& n, size_t i) {
    if (!n.has_input(i)) return 0;
    const num::Tensor* t = const_of(g, n, i);
    if (!t) unsupported(fmt::format("input {} (zero point) is not constant", i));
    const auto v = ints_of(*t);
    if (v.empty()) return 0;
    for (int32_t z : v)
        if (z != v[0]) unsupported("per-axis zero point");
    return v[0];
}

bool is_q8(num::DType t) { return t == num::DType::U8 || t == num::DType::I8; }

/// (c, h, w) of an IR shape the device layout supports: [1,C,H,W], [1,C] (a vector as channels).
bool device_dims(const std::vector<int64_t>& s, int& c, int& h, int& w) {
    if (s.size() == 4 && s[0] == 1) {
        c = static_cast<int>(s[1]), h = static_cast<int>(s[2]), w = static_cast<int>(s[3]);
    } else if (s.size() == 2 && s[0] == 1) {
        c = static_cast<int>(s[1]), h = 1, w = 1;
    } else {
        return false;
    }
    return c > 0 && h > 0 && w > 0;
}

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

struct PendingLayer {
    Layer layer;
    std::function<std::vector<TaskBody>()> lower;  ///< NPU layers
    bool multicore = false;                        ///< split across the cores (conv family)
};

class Compiler {
   public:
    Compiler(const ir::Graph& g, const hw::SocProfile& soc, const CompileOptions& opts, CompiledModel& m)
        : g_(g), soc_(soc), opts_(opts), m_(m) {}

    void run() {
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

   private:
    const ir::Graph& g_;
    const hw::SocProfile& soc_;
    const CompileOptions& opts_;
    CompiledModel& m_;
    ArenaBuilder arena_;
    std::vector<PendingLayer> pending_;
    std::vector<std::vector<TaskBody>> bodies_;  ///< per layer
    std::set<size_t> consumed_;                  ///< nodes folded into an earlier layer
    std::set<std::string> aliased_;              ///< values already placed inside a concat buffer

    // ---- device tensors -------------------------------------------------------------------

    DeviceTensor& dev(const std::string& name, float scale, int32_t graph_zp) {
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

    /// The device tensor of a value that carries its own per-tensor quantization (fold_qdq).
    DeviceTensor& dev_q(const std::string& name) {
        const ir::Value& v = g_.value(name);
        if (v.quant.empty() || v.quant.per_axis())
            unsupported(fmt::format("tensor '{}' has no per-tensor quantization", name));
        return dev(name, v.quant.scale[0], v.quant.zero_point.empty() ? 0 : v.quant.zero_point[0]);
    }

    std::string shape_of(const std::string& name) const {
        const ir::Value* v = g_.find_value(name);
        return v ? ir::shape_to_string(v->shape) : "?";
    }

    Layer base_layer(size_t i, const std::string& op, Unit unit) const {
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

    // ---- constraint checker ---------------------------------------------------------------

    /// CPU-fallback notes by node name, from the constraint checker for this SoC's platform.
    /// An unsupported node rejects the model (the vendor toolchain would not convert it).
    std::map<std::string, std::string> checker_cpu_;

    void consult_checker() {
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

    // ---- classification -------------------------------------------------------------------

    bool forced_cpu(const ir::Node& n) const {
        for (const auto& s : opts_.cpu_nodes)
            if (s == n.name || s == n.op_type) return true;
        return false;
    }

    void add_cpu(size_t i, const std::string& note) {
        PendingLayer p;
        p.layer = base_layer(i, g_.nodes()[i].op_type, Unit::Cpu);
        p.layer.note = note;
        pending_.push_back(std::move(p));
    }

    void classify() {
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

    /// Returns false when the op has no NPU lowering at all; throws NpuUnsupported for a
    /// lowering whose preconditions fail.
    bool classify_npu(size_t i) {
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

    void push_npu(Layer L, std::function<std::vector<TaskBody>()> f, bool multicore) {
        PendingLayer p;
        p.layer = std::move(L);
        p.lower = std::move(f);
        p.multicore = multicore;
        pending_.push_back(std::move(p));
    }

    bool conv(size_t i) {
        const ir::Node& n = g_.nodes()[i];
        const ir::Value& x = g_.value(n.input(0));
        const num::Tensor* w = const_of(g_, n, 3);
        if (!w) unsupported("weights are not constant");
        if (w->dtype() != num::DType::I8) unsupported("weights are not int8");
        if (w->rank() != 4 || x.shape.size() != 4) unsupported("only 2-D convolution is lowered");
        if (ir::attr_string(n.attrs, "auto_pad", "NOTSET") != "NOTSET") unsupported("auto_pad is not lowered");
        if (const num::Tensor* wz = const_of(g_, n, 5))
            for (int32_t z : ints_of(*wz))
                if (z != 0) unsupported("weight zero point is not 0");
        const int64_t group = ir::attr_int(n.attrs, "group", 1);
        ConvOp op;
        op.name = n.name;
        op.in_c = static_cast<int>(x.shape[1]);
        op.out_c = static_cast<int>(w->dim(0));
        op.kernel_h = static_cast<int>(w->dim(2));
        op.kernel_w = static_cast<int>(w->dim(3));
        op.depthwise = group > 1;
        if (group != 1 && !(group == op.in_c && op.out_c == op.in_c && w->dim(1) == 1))
            unsupported(fmt::format("grouped convolution (group {}) is not lowered", group));
        if (w->dim(1) != (op.depthwise ? 1 : op.in_c))  // the lowering reads out_c x in_c x KH x KW values
            unsupported("weight input channels differ from the input's");
        const auto st = ir::attr_ints(n.attrs, "strides", {1, 1});
        const auto dl = ir::attr_ints(n.attrs, "dilations", {1, 1});
        const auto pd = ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
        if (st.size() != 2 || dl.size() != 2 || pd.size() != 4) unsupported("strides/dilations/pads rank");
        op.stride_h = static_cast<int>(st[0]), op.stride_w = static_cast<int>(st[1]);
        op.dilation_h = static_cast<int>(dl[0]), op.dilation_w = static_cast<int>(dl[1]);
        op.pad_top = static_cast<int>(pd[0]), op.pad_left = static_cast<int>(pd[1]);
        op.pad_bottom = static_cast<int>(pd[2]), op.pad_right = static_cast<int>(pd[3]);
        op.w_scales = floats_of(required(g_, n, 4));
        if (op.w_scales.size() != 1 && op.w_scales.size() != static_cast<size_t>(op.out_c))
            unsupported("weight scale count");
        if (const num::Tensor* b = const_of(g_, n, 8))
            op.bias = ints_of(*b);
        else if (n.has_input(8))
            unsupported("bias is not constant");
        const float xs = scalar_scale(g_, n, 1), ys = scalar_scale(g_, n, 6);
        const DeviceTensor& in = dev(n.input(0), xs, scalar_zp(g_, n, 2));
        const DeviceTensor& out = dev(n.outputs.at(0), ys, scalar_zp(g_, n, 7));
        op.in_scale = xs, op.out_scale = ys, op.in_zp = in.zp, op.out_zp = out.zp;
        Layer L = base_layer(i, op.depthwise ? "DepthwiseConv" : "Conv", Unit::Npu);
        const auto& ys_shape = g_.value(n.outputs[0]).shape;
        L.macs = static_cast<uint64_t>(op.out_c) * static_cast<uint64_t>(ys_shape[2] * ys_shape[3]) *
                 static_cast<uint64_t>(op.depthwise ? 1 : op.in_c) * static_cast<uint64_t>(op.kernel_h * op.kernel_w);
        push_conv(std::move(L), std::move(op), n.input(0), n.outputs[0],
                  [w](ConvOp& o) { o.weights_ref = w->data<int8_t>(); });  // the graph constant, no copy
        return true;
    }

    /// `fill` produces the OIHW weights at lowering time, and they are released right after, so
    /// that only one layer's copy is alive at a time (ResNet50: 25 MB of weights).
    void push_conv(Layer L, ConvOp op, const std::string& in, const std::string& out,
                   std::function<void(ConvOp&)> fill) {
        // Packed weights pad input channels to C2 (depthwise: channels); bias and scales per kernel.
        const uint64_t c2 = static_cast<uint64_t>(soc_.npu.c2_int8.value);
        const uint64_t kin = op.depthwise ? 1 : (static_cast<uint64_t>(op.in_c) + c2 - 1) / c2 * c2;
        init_estimate_ +=
            static_cast<uint64_t>(op.out_c) * (kin * static_cast<uint64_t>(op.kernel_h * op.kernel_w) + 64) + 4096;
        push_npu(
            std::move(L),
            [this, op = std::move(op), in, out, fill = std::move(fill)]() mutable {
                if (!opts_.timing_only) fill(op);  // timing-only: the lowering lays the weights out unpacked
                auto bodies = lower_conv_op(op, m_.tensors.at(in), m_.tensors.at(out), arena_, soc_, m_.cores);
                std::vector<int8_t>().swap(op.weights);
                return bodies;
            },
            true);
    }

    /// QGemm (a, as, az, B, bs, bz, [C], [ys, yz]) or QLinearMatMul (a, as, az, B, bs, bz, ys, yz)
    /// with a [1, K] input and a constant int8 B: a 1x1 convolution on a 1x1xK input.
    bool gemm(size_t i, bool matmul) {
        const ir::Node& n = g_.nodes()[i];
        const std::string what = matmul ? "QLinearMatMul" : "QGemm";
        const size_t ys_at = matmul ? 6 : 7;
        if (!matmul) {
            if (ir::attr_int(n.attrs, "transA", 0) != 0) unsupported("QGemm with transA");
            if (std::fabs(ir::attr_float(n.attrs, "alpha", 1.f) - 1.f) > 0) unsupported("QGemm with alpha != 1");
        }
        if (!n.has_input(ys_at)) unsupported(what + " with float output (no y_scale): dequantized on the CPU");
        const ir::Value& a = g_.value(n.input(0));
        if (a.shape.size() != 2 || a.shape[0] != 1) unsupported(what + " input is not [1, K]");
        const num::Tensor* b = const_of(g_, n, 3);
        if (!b || b->dtype() != num::DType::I8 || b->rank() != 2)
            unsupported(what + " B is not a constant int8 matrix");
        if (const num::Tensor* bz = const_of(g_, n, 5))
            for (int32_t z : ints_of(*bz))
                if (z != 0) unsupported(what + " B zero point is not 0");
        const bool tb = !matmul && ir::attr_int(n.attrs, "transB", 0) != 0;
        const int K = static_cast<int>(a.shape[1]);
        const int N = static_cast<int>(tb ? b->dim(0) : b->dim(1));
        if ((tb ? b->dim(1) : b->dim(0)) != K) unsupported(what + " K mismatch");
        ConvOp op;
        op.name = n.name;
        op.in_c = K, op.out_c = N;
        op.w_scales = floats_of(required(g_, n, 4));
        if (op.w_scales.size() != 1 && op.w_scales.size() != static_cast<size_t>(N))
            unsupported(what + " B scale count");
        if (!matmul && n.has_input(6)) {
            const num::Tensor* c = const_of(g_, n, 6);
            if (!c || c->dtype() != num::DType::I32) unsupported("QGemm C is not a constant int32 bias");
            op.bias = ints_of(*c);
            if (op.bias.size() == 1) op.bias.assign(static_cast<size_t>(N), op.bias[0]);
            if (op.bias.size() != static_cast<size_t>(N)) unsupported("QGemm bias shape");
        }
        const float as = scalar_scale(g_, n, 1), ys = scalar_scale(g_, n, ys_at);
        const DeviceTensor& in = dev(n.input(0), as, scalar_zp(g_, n, 2));
        const DeviceTensor& out = dev(n.outputs.at(0), ys, scalar_zp(g_, n, ys_at + 1));
        op.in_scale = as, op.out_scale = ys, op.in_zp = in.zp, op.out_zp = out.zp;
        Layer L = base_layer(i, "FullyConnected", Unit::Npu);
        L.macs = static_cast<uint64_t>(K) * static_cast<uint64_t>(N);
        L.note = what + " as a 1x1 convolution on a 1x1xK input";
        push_conv(std::move(L), std::move(op), n.input(0), n.outputs[0], [b, tb, K, N](ConvOp& o) {
            o.weights.resize(static_cast<size_t>(K) * static_cast<size_t>(N));
            const int8_t* bw = b->data<int8_t>();
            for (size_t r = 0; r < static_cast<size_t>(N); ++r)
                for (size_t k = 0; k < static_cast<size_t>(K); ++k)
                    o.weights[r * static_cast<size_t>(K) + k] =
                        tb ? bw[r * static_cast<size_t>(K) + k] : bw[k * static_cast<size_t>(N) + r];
        });
        return true;
    }

    bool gap(size_t i) {
        const ir::Node& n = g_.nodes()[i];
        if (ir::attr_int(n.attrs, "channels_last", 0) != 0) unsupported("channels_last GlobalAveragePool");
        const ir::Value& x = g_.value(n.input(0));
        if (x.shape.size() != 4) unsupported("GlobalAveragePool input is not 4-D");
        const int C = static_cast<int>(x.shape[1]), H = static_cast<int>(x.shape[2]), W = static_cast<int>(x.shape[3]);
        ConvOp op;
        op.name = n.name;
        op.in_c = op.out_c = C;
        op.kernel_h = H, op.kernel_w = W;
        op.depthwise = true;
        op.w_scales = {1.f / static_cast<float>(H * W)};
        const float xs = scalar_scale(g_, n, 1), ys = scalar_scale(g_, n, 3);
        const DeviceTensor& in = dev(n.input(0), xs, scalar_zp(g_, n, 2));
        const DeviceTensor& out = dev(n.outputs.at(0), ys, scalar_zp(g_, n, 4));
        op.in_scale = xs, op.out_scale = ys, op.in_zp = in.zp, op.out_zp = out.zp;
        Layer L = base_layer(i, "GlobalAveragePool", Unit::Npu);
        L.macs = static_cast<uint64_t>(C) * H * W;
        L.note = "depthwise conv with an all-ones kernel: exact integer sum, one requantization";
        push_conv(std::move(L), std::move(op), n.input(0), n.outputs[0],
                  [C, H, W](ConvOp& o) { o.weights.assign(static_cast<size_t>(C) * H * W, 1); });
        return true;
    }

    bool add(size_t i) {
        const ir::Node& n = g_.nodes()[i];
        const std::string a = n.input(0), b = n.input(3), y = n.outputs.at(0);
        if (g_.value(a).shape != g_.value(y).shape || g_.value(b).shape != g_.value(y).shape)
            unsupported("QLinearAdd with broadcasting");
        if (g_.value(a).is_constant() || g_.value(b).is_constant()) unsupported("QLinearAdd with a constant input");
        dev(a, scalar_scale(g_, n, 1), scalar_zp(g_, n, 2));
        dev(b, scalar_scale(g_, n, 4), scalar_zp(g_, n, 5));
        dev(y, scalar_scale(g_, n, 6), scalar_zp(g_, n, 7));
        const bool mul = n.op_type == "QLinearMul";
        Layer L = base_layer(i, mul ? "Mul" : "Add", Unit::Npu);
        push_npu(
            std::move(L),
            [this, a, b, y, mul, name = n.name]() {
                const DeviceTensor &ta = m_.tensors.at(a), &tb = m_.tensors.at(b), &ty = m_.tensors.at(y);
                return across_cores(ty.h, [&](int y0, int rows, int core) {
                    return (mul ? lower_mul_op : lower_add_op)(name, rows_of(ta, y0, rows), rows_of(tb, y0, rows),
                                                               rows_of(ty, y0, rows), arena_, soc_, core);
                });
            },
            true);
        return true;
    }

    bool maxpool(size_t i) {
        const ir::Node& n = g_.nodes()[i];
        if (n.outputs.size() > 1 && !n.outputs[1].empty()) unsupported("MaxPool with Indices output");
        const ir::Value& x = g_.value(n.input(0));
        if (!is_q8(x.dtype)) unsupported("float MaxPool");
        if (x.shape.size() != 4) unsupported("MaxPool input is not 4-D");
        if (ir::attr_string(n.attrs, "auto_pad", "NOTSET") != "NOTSET") unsupported("auto_pad is not lowered");
        for (int64_t d : ir::attr_ints(n.attrs, "dilations", {1, 1}))
            if (d != 1) unsupported("dilated MaxPool");
        const auto k = ir::attr_ints(n.attrs, "kernel_shape", {});
        const auto s = ir::attr_ints(n.attrs, "strides", {1, 1});
        const auto p = ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
        if (k.size() != 2 || s.size() != 2 || p.size() != 4) unsupported("MaxPool attribute ranks");
        PoolOp op;
        op.name = n.name;
        op.kernel_h = static_cast<int>(k[0]), op.kernel_w = static_cast<int>(k[1]);
        op.stride_h = static_cast<int>(s[0]), op.stride_w = static_cast<int>(s[1]);
        op.pad_top = static_cast<int>(p[0]), op.pad_left = static_cast<int>(p[1]);
        op.pad_bottom = static_cast<int>(p[2]), op.pad_right = static_cast<int>(p[3]);
        const DeviceTensor& in = dev_q(n.input(0));
        const DeviceTensor& out = dev_q(n.outputs[0]);
        if (in.scale != out.scale || in.zp != out.zp) unsupported("MaxPool changes the quantization");
        Layer L = base_layer(i, "MaxPool", Unit::Npu);
        const std::string a = n.input(0), y = n.outputs[0];
        const int core = m_.cores.front();
        push_npu(
            std::move(L),
            [this, op, a, y, core]() {
                return lower_maxpool_op(op, m_.tensors.at(a), m_.tensors.at(y), arena_, soc_, core);
            },
            false);
        return true;
    }

    /// Reshape/Flatten/Squeeze/Unsqueeze whose input and output have the same device image.
    bool view(size_t i) {
        const ir::Node& n = g_.nodes()[i];
        const ir::Value& x = g_.value(n.input(0));
        const ir::Value& y = g_.value(n.outputs.at(0));
        if (!is_q8(x.dtype) || x.dtype != y.dtype) return false;
        int c0, h0, w0, c1, h1, w1;
        if (!device_dims(x.shape, c0, h0, w0) || !device_dims(y.shape, c1, h1, w1))
            unsupported("reshape between shapes without a common device layout");
        if (!(c0 == c1 && h0 == h1 && w0 == w1))
            unsupported("reshape changes the device layout (only [1,C,1,1] <-> [1,C] is a view)");
        DeviceTensor& in = dev_q(n.input(0));
        DeviceTensor& out = dev_q(n.outputs[0]);
        if (in.scale != out.scale || in.zp != out.zp) unsupported("reshape changes the quantization");
        out.alias_of = in.name;
        Layer L = base_layer(i, n.op_type, Unit::View);
        L.note = fmt::format("same bytes as '{}'", in.name);
        pending_.push_back({std::move(L), nullptr, false});
        return true;
    }

    struct ConcatPart {
        std::string name;
        int c_off = 0;
        bool in_place = false;
    };

    /// The inputs of a QLinearConcat with their channel offsets and whether each can be written
    /// in place: same quantization as the output, C2-aligned slice (a partial last atom only at
    /// the end), produced by a node (not a graph input or output), not already placed in another
    /// buffer, not itself holding aliases, not listed twice.
    std::vector<ConcatPart> concat_parts(const ir::Node& n, const DeviceTensor& out) {
        std::vector<ConcatPart> parts;
        int c_off = 0;
        const size_t k = (n.inputs.size() - 2) / 3;
        for (size_t j = 0; j < k; ++j) {
            const std::string x = n.input(2 + 3 * j);
            if (g_.value(x).is_constant()) unsupported("QLinearConcat with a constant input");
            const DeviceTensor& t = dev(x, scalar_scale(g_, n, 3 + 3 * j), scalar_zp(g_, n, 4 + 3 * j));
            if (t.h != out.h || t.w != out.w) unsupported("QLinearConcat inputs differ in H/W");
            bool ok = t.scale == out.scale && t.zp == out.zp && c_off % t.c2 == 0 && (j + 1 == k || t.c % t.c2 == 0) &&
                      g_.producer(x) >= 0 && !aliased_.count(x) && t.alias_of.empty() &&
                      std::find(g_.outputs().begin(), g_.outputs().end(), x) == g_.outputs().end();
            for (const auto& [nm, dt] : m_.tensors) ok &= dt.alias_of != x;
            for (const auto& p : parts) ok &= p.name != x;
            parts.push_back({x, c_off, ok});
            c_off += t.c;
        }
        if (c_off != out.c) unsupported("QLinearConcat channel sum differs from the output");
        return parts;
    }

    bool concat(size_t i) {
        const ir::Node& n = g_.nodes()[i];
        const std::string y = n.outputs.at(0);
        const int64_t axis = ir::attr_int(n.attrs, "axis", 1);
        if (g_.value(y).shape.size() != 4 || (axis != 1 && axis != -3))
            unsupported("QLinearConcat not along channels of a 4-D tensor");
        if ((n.inputs.size() - 2) % 3 != 0 || n.inputs.size() < 5) unsupported("QLinearConcat input count");
        const DeviceTensor& out = dev(y, scalar_scale(g_, n, 0), scalar_zp(g_, n, 1));
        const std::vector<ConcatPart> parts = concat_parts(n, out);
        size_t copies = 0;
        for (const auto& p : parts) {
            if (!p.in_place) {
                ++copies;
                continue;
            }
            m_.tensors.at(p.name).alias_of = y;
            aliased_.insert(p.name);
            slice_off_[p.name] = p.c_off;
        }
        const size_t k = parts.size();
        Layer L = base_layer(i, "Concat", copies ? Unit::Npu : Unit::View);
        L.note = copies ? fmt::format("{} of {} inputs written in place, {} requantizing copies", k - copies, k, copies)
                        : fmt::format("concat by addressing: all {} inputs written in place", k);
        if (!copies) {
            pending_.push_back({std::move(L), nullptr, false});
            return true;
        }
        push_npu(
            std::move(L), [this, parts, y, name = n.name]() { return lower_concat_copies(name, parts, y); }, true);
        return true;
    }

    /// One requantizing DPU copy per input that is not written in place, into its slice.
    std::vector<TaskBody> lower_concat_copies(const std::string& name, const std::vector<ConcatPart>& parts,
                                              const std::string& y) {
        std::vector<TaskBody> out_tasks;
        const DeviceTensor& parent = m_.tensors.at(y);
        for (const auto& p : parts) {
            if (p.in_place) continue;
            const DeviceTensor& src = m_.tensors.at(p.name);
            const DeviceTensor dst = slice(parent, p.c_off, src.c);
            auto t = across_cores(dst.h, [&](int y0, int rows, int core) {
                return lower_affine_op(name, "concat copy", rows_of(src, y0, rows), rows_of(dst, y0, rows),
                                       {static_cast<double>(src.scale) / parent.scale}, {0.0}, arena_, soc_, core);
            });
            for (auto& b : t) {
                // Windows are in the layer output's coordinates (model.h): shift to the slice.
                b.meta.out_window.c0 += p.c_off, b.meta.out_window.c1 += p.c_off;
                out_tasks.push_back(std::move(b));
            }
        }
        return out_tasks;
    }

    /// Rows [y0, y0 + n) of a tensor (same strides).
    static DeviceTensor rows_of(const DeviceTensor& t, int y0, int n) {
        DeviceTensor r = t;
        r.offset = t.offset + static_cast<uint64_t>(y0) * t.line_stride;
        r.h = n;
        return r;
    }

    /// DPU-only layers on several cores (seed 001 lists Add, Concat, ... as multi-core capable):
    /// one band of output rows per core; windows shifted to the layer's rows. One core: one call.
    std::vector<TaskBody> across_cores(int h, const std::function<std::vector<TaskBody>(int, int, int)>& f) {
        const int n = static_cast<int>(m_.cores.size());
        if (n < 2 || h < n) return f(0, h, m_.cores.front());
        const int per = (h + n - 1) / n;
        std::vector<TaskBody> out;
        for (int k = 0; k < n && k * per < h; ++k) {
            const int y0 = k * per, rows = std::min(per, h - y0);
            for (auto& b : f(y0, rows, m_.cores[static_cast<size_t>(k)])) {
                for (NpuTask::Window* w : {&b.meta.out_window, &b.meta.in_window}) w->y0 += y0, w->y1 += y0;
                b.meta.what += fmt::format(" rows {}-{}", y0, y0 + rows - 1);
                out.push_back(std::move(b));
            }
        }
        return out;
    }

    static DeviceTensor slice(const DeviceTensor& parent, int c_off, int c) {
        if (c_off % parent.c2 != 0)
            throw std::invalid_argument(
                fmt::format("concat slice at channel {} of '{}' is not C2-aligned", c_off, parent.name));
        DeviceTensor t = parent;
        t.name = parent.name + "[" + std::to_string(c_off) + ":" + std::to_string(c_off + c) + "]";
        t.c = c;
        t.offset = parent.offset + static_cast<uint64_t>(c_off / parent.c2) * parent.surf_stride;
        t.bytes = static_cast<uint64_t>(parent.surf_stride) * static_cast<uint64_t>((c + t.c2 - 1) / t.c2);
        t.alias_of = parent.name;
        return t;
    }

    /// DequantizeLinear -> BatchNormalization -> QuantizeLinear as one per-channel affine task.
    bool bn(size_t i) {
        const ir::Node& dq = g_.nodes()[i];
        const std::string x = dq.input(0), f = dq.outputs.at(0);
        const auto c1 = g_.consumers(f);
        if (c1.size() != 1 || g_.nodes()[c1[0]].op_type != "BatchNormalization") return false;
        const ir::Node& bnn = g_.nodes()[c1[0]];
        if (bnn.input(0) != f) return false;
        const std::string f2 = bnn.outputs.at(0);
        const auto c2 = g_.consumers(f2);
        if (c2.size() != 1 || g_.nodes()[c2[0]].op_type != "QuantizeLinear") return false;
        const ir::Node& q = g_.nodes()[c2[0]];
        for (const auto& o : g_.outputs())
            if (o == f || o == f2) return false;
        if (c1[0] <= i || c2[0] <= c1[0]) return false;
        if (auto it = checker_cpu_.find(bnn.name); it != checker_cpu_.end()) unsupported(it->second);
        const std::string y = q.outputs.at(0);
        if (!is_q8(g_.value(y).dtype)) return false;
        const float xs = scalar_scale(g_, dq, 1), ys = scalar_scale(g_, q, 1);
        const DeviceTensor& in = dev(x, xs, scalar_zp(g_, dq, 2));
        dev(y, ys, scalar_zp(g_, q, 2));
        const float eps = ir::attr_float(bnn.attrs, "epsilon", 1e-5f);
        std::vector<std::vector<float>> prm;
        for (size_t k = 1; k <= 4; ++k) {
            const num::Tensor* t = const_of(g_, bnn, k);
            if (!t) unsupported("BatchNormalization parameters are not constant");
            prm.push_back(floats_of(*t));
            if (prm.back().size() != static_cast<size_t>(in.c)) unsupported("BatchNormalization parameter size");
        }
        std::vector<double> mul(static_cast<size_t>(in.c)), addv(static_cast<size_t>(in.c));
        for (size_t c = 0; c < mul.size(); ++c) {
            const double inv = 1.0 / std::sqrt(static_cast<double>(prm[3][c]) + eps);
            const double a = prm[0][c] * inv;
            mul[c] = a * xs / ys;
            addv[c] = (prm[1][c] - a * prm[2][c]) / ys;
        }
        Layer L = base_layer(i, "BatchNorm", Unit::Npu);
        L.outputs = {y};
        L.out_shape = shape_of(y);
        L.ir_nodes = {i, c1[0], c2[0]};
        L.note = "DequantizeLinear -> BatchNormalization -> QuantizeLinear as a DPU per-channel affine task";
        consumed_.insert(c1[0]);
        consumed_.insert(c2[0]);
        push_npu(
            std::move(L),
            [this, x, y, mul, addv, name = dq.name]() {
                const DeviceTensor &tx = m_.tensors.at(x), &ty = m_.tensors.at(y);
                return across_cores(ty.h, [&](int y0, int rows, int core) {
                    return lower_affine_op(name, "batchnorm", rows_of(tx, y0, rows), rows_of(ty, y0, rows), mul, addv,
                                           arena_, soc_, core);
                });
            },
            true);
        return true;
    }

    std::map<std::string, int> slice_off_;  ///< channel offset of values placed in a concat buffer

    /// CPU layers that only produce graph outputs nobody reads (the DequantizeLinear of each
    /// YOLO head) move to the end, so they do not split the NPU chain into several steps.
    void defer_output_cpu_layers() {
        std::vector<PendingLayer> keep, tail;
        for (auto& p : pending_) {
            bool sink = p.layer.unit == Unit::Cpu && !p.layer.outputs.empty();
            for (const auto& o : p.layer.outputs) sink &= g_.consumers(o).empty();
            (sink ? tail : keep).push_back(std::move(p));
        }
        for (auto& p : tail) keep.push_back(std::move(p));
        pending_ = std::move(keep);
    }

    // ---- memory plan ----------------------------------------------------------------------

    std::string root_of(const std::string& name) const {
        std::string r = name;
        for (int guard = 0; guard < 64; ++guard) {
            const auto& t = m_.tensors.at(r);
            if (t.alias_of.empty()) return r;
            r = t.alias_of;
        }
        throw std::logic_error("alias cycle at " + name);
    }

    /// Lifetime [first, last] layer index of every root buffer: any layer touching the tensor
    /// or an alias of it; graph inputs live from the start (-1), graph outputs to the end.
    std::map<std::string, std::pair<int, int>> lifetimes() const {
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
        for (const auto& out : g_.outputs()) touch(out, end);
        // Every device tensor needs a buffer, even one no layer lists (defensive).
        for (const auto& [name, t] : m_.tensors)
            if (!life.count(root_of(name))) touch(name, 0);
        return life;
    }

    void plan_memory() {
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
                live.erase(std::remove_if(live.begin(), live.end(), [&](const Live& x) { return x.last < lt.first; }),
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

    /// Provisional offsets: roots where the planner put them, aliases relative to their parent
    /// (concat slices at their channel offset, with the parent's surface stride).
    void assign_offsets(const std::map<std::string, uint64_t>& root_off) {
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
    uint64_t act_bytes_ = 0;
    uint64_t init_estimate_ = 0;  ///< expected initialised arena bytes (weights, operands)

    // ---- lowering -------------------------------------------------------------------------

    void lower_all() {
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
                p.layer.op = g_.nodes()[p.layer.ir_nodes[0]].op_type;
                p.layer.note = e.what();
            }
        }
    }

    // ---- steps ----------------------------------------------------------------------------

    void build_steps() {
        if (&g_ != &m_.graph) m_.graph = g_;
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
    std::vector<TaskBody> flat_bodies_;

    // ---- placement and linking ------------------------------------------------------------

    /// 64-byte task blocks: the body, the 4 ending entries, NOP padding.
    uint64_t entries(size_t t) const { return align_up(flat_bodies_[t].words.size() + hw::rknpu::kTaskEndEntries, 8); }

    void place() {
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

    /// Patches task t's provisional activation addresses, appends its ending entries (linking to
    /// task `next`, or 0 after the last), writes it at its regcmd offset and records relocations.
    void encode_task(size_t t, int64_t next, uint64_t act_base) {
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
};

}  // namespace

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
