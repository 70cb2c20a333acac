// SPDX-License-Identifier: MIT
// Issue 4 acceptance 4: checking a 500-node model takes under 50 ms. Builds a 500-node CNN-like
// graph in the IR (Conv -> Relu -> Add residual blocks, Concat, pools) and times check_graph on
// every platform (median of runs), plus the one-time spec-DB load.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "checker/checker.h"
#include "checker/spec_db.h"

namespace {

using drv::ir::Graph;
using drv::ir::Node;
using drv::ir::Value;

Value val(const std::string& n, std::vector<int64_t> s, bool cst = false) {
    Value v;
    v.name = n;
    v.shape = s;
    v.shape_known = true;
    if (cst) v.data = num::Tensor(num::DType::F32, s);
    return v;
}

void node(Graph& g, const std::string& op, const std::string& name, std::vector<std::string> in,
          std::vector<std::string> out, num::Attributes a = {}) {
    Node n;
    n.op_type = op;
    n.name = name;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attrs = std::move(a);
    g.add_node(std::move(n));
}

/// 125 blocks of 4 nodes: Conv(3x3, pads 1) -> Relu -> Add(residual) -> (every 5th: MaxPool 1x1
/// stride 1, else Sigmoid).
Graph build(size_t nodes) {
    Graph g;
    g.set_opset("", 13);
    const int64_t c = 32, h = 28;
    std::vector<int64_t> s = {1, c, h, h};
    g.add_value(val("x", s));
    g.inputs().push_back("x");
    std::string cur = "x";
    size_t k = 0;
    for (size_t b = 0; k + 4 <= nodes; ++b) {
        std::string p = "b" + std::to_string(b) + "_";
        g.add_value(val(p + "w", {c, c, 3, 3}, true));
        g.add_value(val(p + "conv", s));
        g.add_value(val(p + "relu", s));
        g.add_value(val(p + "add", s));
        g.add_value(val(p + "out", s));
        num::Attributes ca;
        ca.set("pads", std::vector<int64_t>{1, 1, 1, 1});
        ca.set("kernel_shape", std::vector<int64_t>{3, 3});
        node(g, "Conv", p + "conv", {cur, p + "w"}, {p + "conv"}, ca);
        node(g, "Relu", p + "relu", {p + "conv"}, {p + "relu"});
        node(g, "Add", p + "add", {p + "relu", cur}, {p + "add"});
        if (b % 5 == 0) {
            num::Attributes pa;
            pa.set("kernel_shape", std::vector<int64_t>{1, 1});
            node(g, "MaxPool", p + "pool", {p + "add"}, {p + "out"}, pa);
        } else {
            node(g, "Sigmoid", p + "sig", {p + "add"}, {p + "out"});
        }
        cur = p + "out";
        k += 4;
    }
    g.outputs().push_back(cur);
    return g;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
    auto t0 = std::chrono::steady_clock::now();
    drv::check::SpecDb db = drv::check::SpecDb::load_dir(BENCH_SPECS_DIR);
    double load_ms = ms_since(t0);
    Graph g = build(500);
    std::printf("graph: %zu nodes; spec DB load (all %zu platforms): %.2f ms\n", g.nodes().size(),
                db.platforms().size(), load_ms);
    double worst = 0;
    for (const auto& p : db.platforms()) {
        std::vector<double> runs;
        size_t npu = 0;
        for (int i = 0; i < 15; ++i) {
            auto t = std::chrono::steady_clock::now();
            drv::check::CheckResult r = drv::check::check_graph(g, p);
            runs.push_back(ms_since(t));
            npu = r.count(drv::check::Verdict::Target) + r.count(drv::check::Verdict::Fused);
        }
        std::sort(runs.begin(), runs.end());
        double med = runs[runs.size() / 2];
        worst = std::max(worst, med);
        std::printf("%-16s check_graph median %.3f ms (min %.3f, max %.3f), %zu/%zu nodes on target\n", p.id.c_str(),
                    med, runs.front(), runs.back(), npu, g.nodes().size());
    }
    std::printf("worst platform median: %.3f ms (budget 50 ms)\n", worst);
    return worst < 50.0 ? 0 : 1;
}
