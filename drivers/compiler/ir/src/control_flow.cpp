// SPDX-License-Identifier: MIT
// If with a condition that is constant once the input shapes are fixed (exporters emit
// `If(Equal(Shape(x)[k], ...))` for shape-dependent branches: PaddleOCR, Silero VAD): the chosen
// branch is inlined into the graph, as onnxruntime's constant folding + If inlining do. A condition
// that depends on input values is refused: a static compile has no place for it.
#include <set>

#include "shape_internal.h"

namespace drv::ir::shape {
namespace {

/// Copy of `sub` whose references to outer values go through `ren` (values the subgraph defines
/// itself keep their names); nested subgraphs are rewritten the same way.
std::shared_ptr<const Graph> rename_outer(const Graph& sub, const std::map<std::string, std::string>& ren) {
    std::set<std::string> own;
    for (const auto& [name, v] : sub.values())
        if (v.is_constant()) own.insert(name);
    for (const auto& n : sub.nodes())
        for (const auto& o : n.outputs) own.insert(o);
    auto map = [&](const std::string& v) {
        if (v.empty() || own.count(v)) return v;
        auto it = ren.find(v);
        return it == ren.end() ? v : it->second;
    };
    auto out = std::make_shared<Graph>();
    for (const auto& [name, v] : sub.values()) out->add_value(v);
    for (Node n : sub.nodes()) {
        for (auto& in : n.inputs) in = map(in);
        for (auto& [attr, sg] : n.subgraphs) sg = rename_outer(*sg, ren);
        out->add_node(std::move(n));
    }
    for (const auto& o : sub.outputs()) out->outputs().push_back(map(o));
    for (const auto& [d, ver] : sub.opsets()) out->set_opset(d, ver);
    return out;
}

bool condition_value(const Graph& g, const Node& n) {
    const Value* c = n.has_input(0) ? g.find_value(n.input(0)) : nullptr;
    if (!c || !c->is_constant())
        throw GraphError(n.label() + ": condition '" + n.input(0) +
                         "' is not a constant for the given input shapes; a data-dependent If cannot be compiled to a "
                         "static graph (fix the input shapes with --input-shape, or export the model without control flow)");
    const num::Tensor& t = *c->data;
    if (t.numel() != 1) throw GraphError(n.label() + ": condition '" + n.input(0) + "' must have one element, has " + t.shape_str());
    switch (t.dtype()) {
        case num::DType::Bool:
        case num::DType::U8: return t.data<uint8_t>()[0] != 0;
        case num::DType::I8: return t.data<int8_t>()[0] != 0;
        case num::DType::I32: return t.data<int32_t>()[0] != 0;
        case num::DType::I64: return t.data<int64_t>()[0] != 0;
        case num::DType::F32: return t.data<float>()[0] != 0.0f;
        default: throw GraphError(n.label() + ": condition of type " + num::dtype_name(t.dtype()));
    }
}

}  // namespace

void inline_if(Graph& g, size_t index) {
    const Node n = g.nodes()[index];  // copied: the node list changes below
    const bool then = condition_value(g, n);
    const char* which = then ? "then_branch" : "else_branch";
    auto it = n.subgraphs.find(which);
    if (it == n.subgraphs.end() || !it->second) throw GraphError(n.label() + ": no " + which);
    const Graph& br = *it->second;
    if (br.outputs().size() != n.outputs.size())
        throw GraphError(n.label() + ": " + which + " has " + std::to_string(br.outputs().size()) + " outputs, the node " +
                         std::to_string(n.outputs.size()));
    const std::string prefix = n.name + (then ? "/then/" : "/else/");
    std::set<std::string> names;
    for (const auto& m : g.nodes()) names.insert(m.name);
    auto fresh_value = [&](const std::string& base) {
        std::string s = prefix + base;
        for (int k = 1; g.find_value(s); ++k) s = prefix + base + "_" + std::to_string(k);
        return s;
    };
    // Local names -> graph names: branch constants and node outputs get the prefix, except node
    // outputs that are branch outputs, which take the If's output names.
    std::map<std::string, std::string> ren;
    std::set<std::string> produced;
    for (const auto& m : br.nodes())
        for (const auto& o : m.outputs) produced.insert(o);
    std::vector<Node> extra;  // Identity for outputs that are constants, outer values or repeated
    for (size_t k = 0; k < br.outputs().size(); ++k) {
        const std::string& local = br.outputs()[k];
        if (n.outputs[k].empty()) continue;
        if (produced.count(local) && !ren.count(local)) {
            ren[local] = n.outputs[k];
        } else {
            Node id;
            id.name = prefix + "output_" + std::to_string(k);
            id.op_type = "Identity";
            id.inputs = {local};
            id.outputs = {n.outputs[k]};
            extra.push_back(std::move(id));
        }
    }
    for (const auto& [name, v] : br.values()) {
        if (!v.is_constant()) continue;
        Value c = v;
        c.name = fresh_value(name);
        ren[name] = c.name;
        g.add_value(std::move(c));
    }
    for (const auto& m : br.nodes())
        for (const auto& o : m.outputs)
            if (!o.empty() && !ren.count(o)) ren[o] = fresh_value(o);
    auto map = [&](const std::string& v) {
        auto f = ren.find(v);
        return v.empty() || f == ren.end() ? v : f->second;
    };
    std::vector<Node> inlined;
    for (Node m : br.nodes()) {
        std::string nm = prefix + m.name;
        for (int k = 1; names.count(nm); ++k) nm = prefix + m.name + "_" + std::to_string(k);
        names.insert(nm);
        m.name = nm;
        for (auto& in : m.inputs) in = map(in);
        for (auto& o : m.outputs) o = map(o);
        for (auto& [attr, sg] : m.subgraphs) sg = rename_outer(*sg, ren);
        inlined.push_back(std::move(m));
    }
    for (Node& id : extra) {
        id.inputs[0] = map(id.inputs[0]);
        inlined.push_back(std::move(id));
    }
    g.rewrites().push_back(n.label() + " inlined (condition constant for the given input shapes: " +
                           (then ? "then" : "else") + " branch)");
    auto& nodes = g.nodes();
    nodes.erase(nodes.begin() + static_cast<long>(index));
    nodes.insert(nodes.begin() + static_cast<long>(index), inlined.begin(), inlined.end());
}

}  // namespace drv::ir::shape
