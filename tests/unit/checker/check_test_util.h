// SPDX-License-Identifier: MIT
// Test helpers: build small graphs directly in the IR (no importer), check one node on one
// platform of the real spec DB and read back its verdict and violations. Boundary values live in
// the tests themselves (quoted from the seed text), never read from the DB files.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checker/checker.h"
#include "checker/spec_db.h"

namespace drv::check::testing {

inline const SpecDb& db() {
    static const SpecDb d = SpecDb::load_dir(CHECKER_SPECS_DIR);
    return d;
}

inline const PlatformSpec& platform(const std::string& id) {
    const PlatformSpec* p = db().find(id);
    if (!p) throw std::runtime_error("test: unknown platform " + id);
    return *p;
}

/// Small graph builder: every value gets a static shape; constants get zero-filled data.
class G {
   public:
    G& in(const std::string& name, std::vector<int64_t> shape, num::DType dt = num::DType::F32) {
        add(name, std::move(shape), dt, false);
        g_.inputs().push_back(name);
        return *this;
    }
    G& cst(const std::string& name, std::vector<int64_t> shape, num::DType dt = num::DType::F32,
           std::vector<double> vals = {}) {
        ir::Value& v = add(name, shape, dt, true);
        fill(*v.data, vals);
        return *this;
    }
    G& val(const std::string& name, std::vector<int64_t> shape, num::DType dt = num::DType::F32) {
        add(name, std::move(shape), dt, false);
        return *this;
    }
    G& quant(const std::string& name, size_t scales) {
        ir::Value& v = g_.value(name);
        v.quant.scale.assign(scales, 0.1f);
        v.quant.zero_point.assign(scales, 0);
        v.quant.axis = scales > 1 ? 0 : -1;
        return *this;
    }
    G& node(const std::string& op, const std::string& name, std::vector<std::string> ins,
            std::vector<std::string> outs, num::Attributes attrs = {}, const std::string& domain = "") {
        ir::Node n;
        n.op_type = op;
        n.name = name;
        n.domain = domain;
        n.inputs = std::move(ins);
        n.outputs = std::move(outs);
        n.attrs = std::move(attrs);
        g_.add_node(std::move(n));
        return *this;
    }
    G& out(const std::string& name) {
        g_.outputs().push_back(name);
        return *this;
    }
    G& opset(int64_t v) {
        g_.set_opset("", v);
        return *this;
    }
    ir::Graph& graph() { return g_; }

   private:
    ir::Value& add(const std::string& name, std::vector<int64_t> shape, num::DType dt, bool constant) {
        ir::Value v;
        v.name = name;
        v.dtype = dt;
        v.shape = shape;
        v.shape_known = true;
        if (constant) v.data = num::Tensor(dt, shape);
        return g_.add_value(std::move(v));
    }
    static void fill(num::Tensor& t, const std::vector<double>& vals) {
        for (size_t i = 0; i < vals.size() && i < t.numel(); ++i) {
            switch (t.dtype()) {
                case num::DType::F32: t.data<float>()[i] = static_cast<float>(vals[i]); break;
                case num::DType::I64: t.data<int64_t>()[i] = static_cast<int64_t>(vals[i]); break;
                case num::DType::I32: t.data<int32_t>()[i] = static_cast<int32_t>(vals[i]); break;
                case num::DType::I8: t.data<int8_t>()[i] = static_cast<int8_t>(vals[i]); break;
                default: break;
            }
        }
    }
    ir::Graph g_;
};

inline num::Attributes attrs(std::initializer_list<std::pair<const char*, num::AttrValue>> kv) {
    num::Attributes a;
    for (const auto& [k, v] : kv) a.set(k, v);
    return a;
}
using Ints = std::vector<int64_t>;

/// Result for node `node` of `g` on platform `pid`.
inline NodeResult check_node(ir::Graph& g, const std::string& pid, const std::string& node,
                             const CheckOptions& o = {}) {
    CheckResult r = check_graph(g, platform(pid), o);
    for (auto& n : r.nodes)
        if (n.node == node) return n;
    throw std::runtime_error("test: node not found " + node);
}

inline std::string describe(const NodeResult& n) {
    std::string s = n.node + " -> " + std::to_string(static_cast<int>(n.verdict)) + " [" + n.spec_op + "] " + n.reason;
    for (const auto& v : n.violations) s += "\n  " + v.text + " (" + v.rule->source.text() + ")";
    return s;
}

inline bool passes(const NodeResult& n) { return n.verdict == Verdict::Target || n.verdict == Verdict::Fused; }

/// True when some violation text contains `needle`.
inline bool violates(const NodeResult& n, const std::string& needle) {
    for (const auto& v : n.violations)
        if (v.text.find(needle) != std::string::npos) return true;
    return false;
}

}  // namespace drv::check::testing
