// SPDX-License-Identifier: MIT
// QDQ models seen as quantized graphs (see quantized_view in checker.h). Works on a copy; the
// importer's graph is never modified.
#include <map>

#include "checker/checker.h"

namespace drv::check {

namespace {

bool is_int(num::DType t) {
    return t == num::DType::I8 || t == num::DType::U8 || t == num::DType::I16 || t == num::DType::U16 ||
           t == num::DType::I32;
}

std::string resolve(const std::map<std::string, std::string>& ren, std::string n) {
    for (int guard = 0; guard < 64; ++guard) {
        auto it = ren.find(n);
        if (it == ren.end()) break;
        n = it->second;
    }
    return n;
}

}  // namespace

ir::Graph quantized_view(const ir::Graph& in, size_t* folded) {
    std::map<std::string, std::string> ren;
    std::vector<bool> drop(in.nodes().size(), false);
    std::map<std::string, const ir::Value*> quantize_to;  // Q input -> its quantized output
    for (size_t i = 0; i < in.nodes().size(); ++i) {
        const ir::Node& n = in.nodes()[i];
        // ai.onnx or com.microsoft Q/DQ (the same semantics; onnxruntime's 16-bit QDQ below opset 21
        // uses the latter, as the importer's QDQ fold accepts both).
        if ((!n.domain.empty() && n.domain != "com.microsoft") || n.outputs.size() != 1 || n.inputs.empty()) continue;
        if (n.op_type == "DequantizeLinear") {
            const ir::Value* q = in.find_value(n.inputs[0]);
            if (q && is_int(q->dtype) && q->is_quantized()) {
                ren[n.outputs[0]] = n.inputs[0];
                drop[i] = true;
            }
        } else if (n.op_type == "QuantizeLinear") {
            const ir::Value* q = in.find_value(n.outputs[0]);
            if (q && is_int(q->dtype) && q->is_quantized()) {
                ren[n.outputs[0]] = n.inputs[0];
                quantize_to[n.inputs[0]] = q;
                drop[i] = true;
            }
        }
    }
    ir::Graph g;
    for (const auto& [name, v] : in.values()) {
        ir::Value c = v;
        auto it = quantize_to.find(name);
        if (it != quantize_to.end()) {
            c.dtype = it->second->dtype;
            c.quant = it->second->quant;
        }
        g.add_value(std::move(c));
    }
    size_t removed = 0;
    for (size_t i = 0; i < in.nodes().size(); ++i) {
        if (drop[i]) {
            ++removed;
            continue;
        }
        ir::Node n = in.nodes()[i];
        for (auto& s : n.inputs)
            if (!s.empty()) s = resolve(ren, s);
        g.add_node(std::move(n));
    }
    for (const auto& s : in.inputs()) g.inputs().push_back(s);
    for (const auto& s : in.outputs()) g.outputs().push_back(resolve(ren, s));
    for (const auto& [d, v] : in.opsets()) g.set_opset(d, v);
    if (folded) *folded = removed;
    return g;
}

}  // namespace drv::check
