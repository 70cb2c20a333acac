// SPDX-License-Identifier: MIT
// ONNX ModelProto -> graph IR: opset check (7-17), initializers, Constant nodes, graph inputs with
// --input-shape overrides, nodes with decoded attributes, then validation, shape inference and the
// QDQ pass.
#include <google/protobuf/io/coded_stream.h>

#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "compiler/ir/qdq.h"
#include "numerics/limits.h"
#include "compiler/ir/shape_inference.h"
#include "onnx_internal.h"

namespace drv::importer {

namespace {

constexpr int64_t kMinOpset = 7;   // issue 3: opsets 7-17
constexpr int64_t kMaxOpset = 17;

ir::Graph build_graph(const ::onnx::ModelProto& m, const std::vector<RawSpan>& raw, const ImportOptions& opts,
                      const std::string& src);

void import_opsets(const ::onnx::ModelProto& m, ir::Graph& g, const std::string& src) {
    if (m.opset_import_size() == 0) throw ImportError(src + ": model has no opset_import");
    for (const auto& o : m.opset_import()) {
        std::string d = o.domain() == "ai.onnx" ? std::string() : o.domain();
        if (d.empty() && (o.version() < kMinOpset || o.version() > kMaxOpset))
            throw ImportError(src + ": ai.onnx opset " + std::to_string(o.version()) + " is not supported (supported: " +
                              std::to_string(kMinOpset) + "-" + std::to_string(kMaxOpset) + ")");
        g.set_opset(d, o.version());
    }
    if (g.opset("") == 0) throw ImportError(src + ": model imports no ai.onnx opset");
}

/// Constant node (any of its value* attributes) -> constant value.
num::Tensor constant_node_value(const ::onnx::NodeProto& n, const std::string& where) {
    for (const auto& a : n.attribute()) {
        num::AttrValue v = attribute_from_proto(a, where);
        if (auto* t = std::get_if<num::Tensor>(&v)) return std::move(*t);
        if (a.name() == "value_float" || a.name() == "value_floats") {
            auto f = a.name() == "value_float" ? std::vector<float>{a.f()} : std::vector<float>(a.floats().begin(), a.floats().end());
            num::Tensor t(num::DType::F32, a.name() == "value_float" ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(f.size())});
            std::copy(f.begin(), f.end(), t.data<float>());
            return t;
        }
        if (a.name() == "value_int" || a.name() == "value_ints") {
            auto i = a.name() == "value_int" ? std::vector<int64_t>{a.i()} : std::vector<int64_t>(a.ints().begin(), a.ints().end());
            num::Tensor t(num::DType::I64, a.name() == "value_int" ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(i.size())});
            std::copy(i.begin(), i.end(), t.data<int64_t>());
            return t;
        }
    }
    throw ImportError(where + ": Constant node has no supported value attribute");
}

void add_constant(ir::Graph& g, const std::string& name, num::Tensor t, const std::string& where) {
    if (g.find_value(name)) throw ImportError(where + ": '" + name + "' is defined more than once");
    ir::Value v;
    v.name = name;
    v.dtype = t.dtype();
    v.shape = t.shape();
    v.shape_known = true;
    v.data = std::move(t);
    g.add_value(std::move(v));
}

void import_inputs(const ::onnx::GraphProto& gp, ir::Graph& g, const ImportOptions& opts, const std::string& src) {
    std::vector<const ::onnx::ValueInfoProto*> real;
    for (const auto& in : gp.input())
        if (!g.find_value(in.name())) real.push_back(&in);  // IR < 4 lists initializers as inputs too
    std::set<std::string> used;
    for (const auto* in : real) {
        const std::vector<int64_t>* ov = nullptr;
        auto it = opts.input_shapes.find(in->name());
        if (it == opts.input_shapes.end() && real.size() == 1) it = opts.input_shapes.find("");
        if (it != opts.input_shapes.end()) {
            ov = &it->second;
            used.insert(it->first);
        }
        if (in->name().empty()) throw ImportError(src + ": graph input with an empty name");
        g.add_value(value_from_info(*in, src + ": graph input", ov));
        g.inputs().push_back(in->name());
    }
    for (const auto& [name, s] : opts.input_shapes)
        if (!used.count(name))
            throw ImportError(src + ": --input-shape names '" + name + "', which is not a graph input" +
                              (name.empty() ? " (the model has " + std::to_string(real.size()) + " inputs; name one)" : ""));
}

constexpr int kMaxSubgraphDepth = 16;  // nested If branches; deeper nesting is refused

void import_nodes(const ::onnx::GraphProto& gp, ir::Graph& g, const std::string& src, int depth = 0);

/// Names a subgraph reads but does not define (outer-scope captures), nested subgraphs included.
std::vector<std::string> free_values(const ir::Graph& sub) {
    std::set<std::string> defined, seen;
    for (const auto& [name, v] : sub.values())
        if (v.is_constant()) defined.insert(name);
    for (const auto& in : sub.inputs()) defined.insert(in);
    for (const auto& n : sub.nodes())
        for (const auto& o : n.outputs) defined.insert(o);
    std::vector<std::string> out;
    auto use = [&](const std::string& v) {
        if (!v.empty() && !defined.count(v) && seen.insert(v).second) out.push_back(v);
    };
    for (const auto& n : sub.nodes()) {
        for (const auto& in : n.inputs) use(in);
        for (const auto& [attr, sg] : n.subgraphs)
            for (const auto& v : free_values(*sg)) use(v);
    }
    for (const auto& o : sub.outputs()) use(o);
    return out;
}

/// A graph attribute (If then_branch / else_branch) as an IR graph: its initializers, Constant
/// nodes and nodes, outputs by name; nothing inferred (it refers to outer values).
std::shared_ptr<const ir::Graph> import_subgraph(const ::onnx::GraphProto& gp, const std::string& where, int depth) {
    if (depth >= kMaxSubgraphDepth)
        throw ImportError(where + ": subgraphs nested more than " + std::to_string(kMaxSubgraphDepth) + " deep");
    auto sub = std::make_shared<ir::Graph>();
    for (const auto& t : gp.initializer()) {
        if (t.name().empty()) throw ImportError(where + ": subgraph initializer with an empty name");
        add_constant(*sub, t.name(), tensor_from_proto(t, where + " initializer"), where);
    }
    if (gp.input_size() > 0) throw ImportError(where + ": an If branch must not declare inputs");
    import_nodes(gp, *sub, where, depth + 1);
    for (const auto& o : gp.output()) {
        if (o.name().empty()) throw ImportError(where + ": subgraph output with an empty name");
        sub->outputs().push_back(o.name());
    }
    return sub;
}

void import_nodes(const ::onnx::GraphProto& gp, ir::Graph& g, const std::string& src, int depth) {
    std::set<std::string> names;
    for (int i = 0; i < gp.node_size(); ++i) {
        const auto& np = gp.node(i);
        ir::Node n;
        n.op_type = np.op_type();
        n.domain = np.domain() == "ai.onnx" ? std::string() : np.domain();
        n.name = np.name().empty() ? n.op_type + "_" + std::to_string(i) : np.name();
        while (!names.insert(n.name).second) n.name += "_" + std::to_string(i);  // unique labels for messages
        std::string where = src + ": node " + std::to_string(i) + " " + n.label();
        if (n.op_type.empty()) throw ImportError(where + ": empty op_type");
        if (!n.domain.empty() && n.domain != "com.microsoft")
            throw ImportError(where + ": operator domain '" + n.domain + "' is not supported (ai.onnx, com.microsoft)");
        if (n.domain.empty() && n.op_type == "Constant") {
            if (np.output_size() != 1) throw ImportError(where + ": Constant must have one output");
            add_constant(g, np.output(0), constant_node_value(np, where), where);
            continue;
        }
        n.inputs.assign(np.input().begin(), np.input().end());
        n.outputs.assign(np.output().begin(), np.output().end());
        for (const auto& a : np.attribute()) {
            if (a.name().empty()) throw ImportError(where + ": attribute with an empty name");
            if (n.attrs.has(a.name()) || n.subgraphs.count(a.name()))
                throw ImportError(where + ": attribute '" + a.name() + "' given twice");
            if (a.type() == ::onnx::AttributeProto::GRAPH || a.type() == ::onnx::AttributeProto::GRAPHS) {
                if (n.op_type != "If" || !n.domain.empty() || a.type() != ::onnx::AttributeProto::GRAPH)
                    throw ImportError(where + ": attribute '" + a.name() + "' is a subgraph; control flow other than If " +
                                      "(Loop, Scan) is not supported");
                n.subgraphs[a.name()] = import_subgraph(a.g(), where + " " + a.name(), depth);
                continue;
            }
            n.attrs.set(a.name(), attribute_from_proto(a, where));
        }
        if (n.op_type == "If" && n.domain.empty()) {
            if (!n.subgraphs.count("then_branch") || !n.subgraphs.count("else_branch"))
                throw ImportError(where + ": If needs both then_branch and else_branch");
            // Outer values the branches read become extra inputs (ordering, liveness); the
            // condition stays input 0.
            std::set<std::string> listed(n.inputs.begin(), n.inputs.end());
            for (const char* b : {"then_branch", "else_branch"})
                for (const auto& v : free_values(*n.subgraphs.at(b)))
                    if (listed.insert(v).second) n.inputs.push_back(v);
        }
        g.add_node(std::move(n));
    }
}

}  // namespace

void parse_input_shape(const std::string& spec, ImportOptions& opts) {
    std::string name, dims = spec;
    auto eq = spec.rfind('=');
    if (eq != std::string::npos) {
        name = spec.substr(0, eq);
        dims = spec.substr(eq + 1);
    }
    std::vector<int64_t> shape;
    std::stringstream ss(dims);
    std::string tok;
    while (std::getline(ss, tok, 'x')) {
        size_t pos = 0;
        long long v = 0;
        try {
            v = std::stoll(tok, &pos);
        } catch (const std::exception&) {
            pos = 0;
        }
        if (tok.empty() || pos != tok.size() || v <= 0)
            throw ImportError("--input-shape '" + spec + "': dimension '" + tok + "' is not a positive integer");
        shape.push_back(v);
    }
    if (shape.empty()) throw ImportError("--input-shape '" + spec + "': no dimensions (expected name=1x3x224x224)");
    opts.input_shapes[name] = shape;
}

bool looks_like_tflite(const void* data, size_t size) {
    return size >= 8 && std::string(static_cast<const char*>(data) + 4, 4) == "TFL3";
}

ir::Graph import_onnx_bytes(const void* data, size_t size, const ImportOptions& opts, const std::string& src) {
    ::onnx::ModelProto m;
    if (size > static_cast<size_t>(INT32_MAX)) throw ImportError(src + ": file larger than 2 GiB");
    // Initializer bytes stay in `data` (no 25 MB copy for ResNet50); anything the split parse does
    // not follow is parsed the ordinary way, which also gives the diagnosis of a broken file.
    std::vector<RawSpan> raw;
    if (!parse_model_split(static_cast<const uint8_t*>(data), size, m, raw)) {
        m.Clear();
        raw.clear();
        google::protobuf::io::CodedInputStream cis(static_cast<const uint8_t*>(data), static_cast<int>(size));
        cis.SetRecursionLimit(64);
        if (!m.ParseFromCodedStream(&cis) || !cis.ConsumedEntireMessage())
            throw ImportError(src + ": not a valid ONNX model (protobuf parse failed at or before byte offset " +
                              std::to_string(cis.CurrentPosition()) + " of " + std::to_string(size) +
                              "; truncated or not an .onnx file)");
    }
    if (!m.has_graph()) throw ImportError(src + ": ModelProto has no graph");
    try {
        return build_graph(m, raw, opts, src);
    } catch (const ImportError&) {
        throw;
    } catch (const ir::GraphError& e) {  // structural errors found while building (e.g. duplicate names)
        throw ImportError(src + ": " + e.what());
    }
}

namespace {

ir::Graph build_graph(const ::onnx::ModelProto& m, const std::vector<RawSpan>& raw, const ImportOptions& opts,
                      const std::string& src) {
    const auto& gp = m.graph();
    ir::Graph g;
    import_opsets(m, g, src);
    for (int i = 0; i < gp.initializer_size(); ++i) {
        const auto& t = gp.initializer(i);
        if (t.name().empty()) throw ImportError(src + ": initializer with an empty name");
        RawSpan r = static_cast<size_t>(i) < raw.size() ? raw[static_cast<size_t>(i)] : RawSpan{};
        if (opts.skip_data_from_bytes && r.size >= opts.skip_data_from_bytes) r.contents = false;
        add_constant(g, t.name(), tensor_from_proto(t, src + ": initializer", &r), src + ": initializer");
        if (!r.contents) g.value(t.name()).contents_unspecified = true;
    }
    if (gp.sparse_initializer_size()) throw ImportError(src + ": sparse initializers are not supported");
    import_inputs(gp, g, opts, src);
    import_nodes(gp, g, src);
    for (const auto& o : gp.output()) {
        if (o.name().empty()) throw ImportError(src + ": graph output with an empty name");
        g.outputs().push_back(o.name());
    }
    if (g.outputs().empty()) throw ImportError(src + ": graph has no outputs");
    g.validate();
    ir::infer_shapes(g);
    if (opts.qdq != QdqMode::Keep) ir::fold_qdq(g, opts.qdq == QdqMode::Rewrite, opts.ort_cpu == OrtCpu::X86_64);
    if (opts.qdq != QdqMode::Rewrite) g.remove_dead_nodes();  // the rewrite ends with it (a pass over 10^6 nodes)
    g.validate();
    return g;
}

}  // namespace

ir::Graph import_onnx_file(const std::string& path, const ImportOptions& opts) {
    std::vector<char> bytes;
    try {
        bytes = num::read_input_file(path);
    } catch (const std::runtime_error& e) {
        throw ImportError(e.what());
    }
    if (looks_like_tflite(bytes.data(), bytes.size()))
        throw ImportError(path + ": this is a TFLite flatbuffer, not an ONNX model");
    return import_onnx_bytes(bytes.data(), bytes.size(), opts, path);
}

}  // namespace drv::importer
