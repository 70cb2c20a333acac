// SPDX-License-Identifier: MIT
// npusim-import: loads a model through the front end and prints the graph IR (one line per node),
// an operator histogram and the parameter/MAC totals; exit code 3 with "error: ..." on bad input.
// Used by the zoo tests and for debugging importer issues without running anything.
#include <CLI/CLI.hpp>
#include <iostream>

#include "compiler/model_loader.h"

namespace {

int64_t macs_of(const drv::ir::Graph& g, const drv::ir::Node& n) {
    auto numel = [&](const std::string& v) { return g.value(v).numel(); };
    bool conv = n.op_type == "Conv" || n.op_type == "QLinearConv" || n.op_type == "ConvInteger";
    if (conv) {
        const auto& w = g.value(n.input(n.op_type == "QLinearConv" ? 3 : 1));
        return numel(n.outputs[0]) * (w.numel() / w.shape[0]);
    }
    if (n.op_type == "Gemm" || n.op_type == "QGemm" || n.op_type == "MatMul" || n.op_type == "QLinearMatMul" ||
        n.op_type == "MatMulInteger") {
        const auto& a = g.value(n.input(0));
        bool ta = drv::ir::attr_int(n.attrs, "transA", 0) != 0;
        int64_t k = ta ? a.shape[a.shape.size() - 2] : a.shape.back();
        return numel(n.outputs[0]) * k;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"npusim-import: import a model and print its graph IR"};
    std::string model;
    std::vector<std::string> shapes;
    bool keep_qdq = false, quiet = false;
    app.add_option("model", model, "model file (.onnx)")->required();
    app.add_option("--input-shape", shapes, "fix dynamic dims: name=1x3x224x224");
    app.add_flag("--keep-qdq", keep_qdq, "do not rewrite QDQ units into integer ops");
    app.add_flag("--summary", quiet, "print only the summary");
    CLI11_PARSE(app, argc, argv);
    try {
        drv::importer::ImportOptions o;
        for (const auto& s : shapes) drv::importer::parse_input_shape(s, o);
        o.qdq = keep_qdq ? drv::importer::QdqMode::Fold : drv::importer::QdqMode::Rewrite;
        o.ort_cpu = drv::importer::OrtCpu::X86_64;
        drv::ir::Graph g = drv::importer::load_model(model, o);
        if (!quiet) std::cout << g.dump();
        std::map<std::string, int> hist;
        int64_t macs = 0, params = 0;
        for (const auto& n : g.nodes()) {
            ++hist[(n.domain.empty() ? "" : n.domain + ".") + n.op_type];
            macs += macs_of(g, n);
        }
        for (const auto& [name, v] : g.values())
            if (v.is_constant() && v.numel() > 1) params += v.numel();
        std::cout << "nodes " << g.nodes().size() << ", constants' elements " << params << ", MACs " << macs << "\n";
        for (const auto& [op, c] : hist) std::cout << "  " << op << " " << c << "\n";
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 3;
    }
    return 0;
}
