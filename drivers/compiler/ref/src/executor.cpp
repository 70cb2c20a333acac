// SPDX-License-Identifier: MIT
// Graph execution over num::run_op: values live in an ordered map, nodes run in the importer's
// topological order, intermediate tensors are freed after their last use.
#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "compiler/ref/reference.h"
#include "numerics/npy.h"
#include "numerics/ops.h"

namespace drv::ref {

namespace {

uint64_t splitmix64(uint64_t& s) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

std::map<std::string, size_t> last_uses(const ir::Graph& g) {
    std::map<std::string, size_t> last;
    for (size_t i = 0; i < g.nodes().size(); ++i)
        for (const auto& in : g.nodes()[i].inputs) last[in] = i;
    return last;
}

}  // namespace

std::map<std::string, num::Tensor> model_inputs(const ir::Graph& g, const std::vector<std::string>& paths,
                                                uint64_t seed) {
    if (!paths.empty() && paths.size() != g.inputs().size())
        throw std::invalid_argument(fmt::format("{} --input file(s) given, the model has {} input(s)", paths.size(),
                                                g.inputs().size()));
    std::map<std::string, num::Tensor> inputs;
    for (size_t k = 0; k < g.inputs().size(); ++k) {
        const ir::Value& v = g.value(g.inputs()[k]);
        if (paths.empty()) {
            inputs[v.name] = random_input(v, seed, k);
            continue;
        }
        num::Tensor x;
        try {
            x = num::read_npy(paths[k]);
        } catch (const std::exception& e) {
            throw std::invalid_argument(fmt::format("--input '{}': {}", paths[k], e.what()));
        }
        if (x.dtype() != v.dtype || x.shape() != v.shape)
            throw std::invalid_argument(fmt::format("--input '{}' is {} {}, input '{}' of the model is {} {}", paths[k],
                                                    num::dtype_name(x.dtype()), x.shape_str(), v.name,
                                                    num::dtype_name(v.dtype), v.shape_str()));
        x.quant = v.quant;
        inputs[v.name] = std::move(x);
    }
    return inputs;
}

num::Tensor random_input(const ir::Value& v, uint64_t seed, size_t position) {
    num::Tensor t(v.dtype, v.shape);
    uint64_t s = seed * 0x100000001B3ull + position;
    for (size_t i = 0; i < t.numel(); ++i) {
        uint64_t r = splitmix64(s);
        switch (v.dtype) {
            case num::DType::F32: t.data<float>()[i] = static_cast<float>(static_cast<double>(r >> 40) / double(1 << 23) - 1.0); break;
            case num::DType::I8: t.data<int8_t>()[i] = static_cast<int8_t>(r & 0xff); break;
            case num::DType::U8: t.data<uint8_t>()[i] = static_cast<uint8_t>(r & 0xff); break;
            case num::DType::I16: t.data<int16_t>()[i] = static_cast<int16_t>(r & 0xffff); break;
            case num::DType::U16: t.data<uint16_t>()[i] = static_cast<uint16_t>(r & 0xffff); break;
            case num::DType::I32: t.data<int32_t>()[i] = static_cast<int32_t>(r & 0xffffffffu); break;
            case num::DType::I64: t.data<int64_t>()[i] = static_cast<int64_t>(r); break;
            case num::DType::Bool: t.data<uint8_t>()[i] = static_cast<uint8_t>(r & 1); break;
            case num::DType::F16: t.data<uint16_t>()[i] = 0x3c00; break;  // 1.0: no F16 randomness needed yet
        }
    }
    t.quant = v.quant;
    return t;
}

std::vector<num::Tensor> run_node(const ir::Graph& g, const ir::Node& n,
                                  const std::function<const num::Tensor*(const std::string&)>& lookup) {
    std::vector<const num::Tensor*> args;
    for (const auto& in : n.inputs) {
        if (in.empty()) {
            args.push_back(nullptr);
            continue;
        }
        const ir::Value& v = g.value(in, n.label());
        const num::Tensor* t = v.is_constant() ? &*v.data : lookup(in);
        if (!t) throw ir::GraphError(n.label() + ": input '" + in + "' has not been computed");
        args.push_back(t);
    }
    try {
        return num::run_op(n.op_type, n.attrs, args, n.domain);
    } catch (const num::OpError& e) {
        throw num::OpError("node " + n.label() + ": " + e.what());
    }
}

std::map<std::string, num::Tensor> execute(const ir::Graph& g, const std::map<std::string, num::Tensor>& inputs) {
    return execute(g, inputs, ValueObserver());
}

std::map<std::string, num::Tensor> execute(const ir::Graph& g, const std::map<std::string, num::Tensor>& inputs,
                                           const ValueObserver& observe) {
    std::map<std::string, num::Tensor> env;
    for (const auto& name : g.inputs()) {
        const ir::Value& v = g.value(name);
        auto it = inputs.find(name);
        if (it == inputs.end()) throw ir::GraphError("no data for graph input '" + name + "'");
        if (it->second.dtype() != v.dtype || it->second.shape() != v.shape)
            throw ir::GraphError("input '" + name + "' is " + num::dtype_name(it->second.dtype()) + " " + it->second.shape_str() +
                                 ", the model expects " + num::dtype_name(v.dtype) + " " + v.shape_str());
        env[name] = it->second;
        if (observe) observe(name, env[name]);
    }
    for (const auto& [name, t] : inputs)
        if (!g.find_value(name) || std::find(g.inputs().begin(), g.inputs().end(), name) == g.inputs().end())
            throw ir::GraphError("'" + name + "' is not a graph input");
    auto last = last_uses(g);
    std::set<std::string> keep(g.outputs().begin(), g.outputs().end());
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const ir::Node& n = g.nodes()[i];
        std::vector<num::Tensor> out = run_node(g, n, [&](const std::string& in) -> const num::Tensor* {
            auto it = env.find(in);
            return it == env.end() ? nullptr : &it->second;
        });
        if (out.size() < n.outputs.size() && !(out.size() >= 1 && n.op_type == "Dropout"))
            throw num::OpError("node " + n.label() + ": operator returned " + std::to_string(out.size()) + " outputs, graph expects " + std::to_string(n.outputs.size()));
        for (size_t k = 0; k < n.outputs.size() && k < out.size(); ++k) {
            if (n.outputs[k].empty()) continue;
            const ir::Value& v = g.value(n.outputs[k]);
            if (out[k].shape() != v.shape || out[k].dtype() != v.dtype)
                throw num::OpError("node " + n.label() + ": output '" + v.name + "' is " + num::dtype_name(out[k].dtype()) + " " + out[k].shape_str() +
                                   ", shape inference said " + num::dtype_name(v.dtype) + " " + v.shape_str());
            out[k].quant = v.quant;
            num::Tensor& stored = env[n.outputs[k]] = std::move(out[k]);
            if (observe) observe(n.outputs[k], stored);
        }
        for (const auto& in : n.inputs) {
            auto it = last.find(in);
            if (it != last.end() && it->second == i && !keep.count(in)) env.erase(in);
        }
    }
    std::map<std::string, num::Tensor> result;
    for (const auto& o : g.outputs()) {
        const ir::Value& v = g.value(o);
        if (v.is_constant()) result[o] = *v.data;
        else if (env.count(o)) result[o] = env.at(o);
        else throw ir::GraphError("graph output '" + o + "' was not computed");
    }
    return result;
}

}  // namespace drv::ref
