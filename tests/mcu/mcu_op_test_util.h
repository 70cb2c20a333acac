// SPDX-License-Identifier: MIT
// Helpers of the MCU one-node tests: a one-operator graph in the IR (TFLite or ONNX domain,
// quantization on the values as the TFLite importer records it, seeded data) and the check of the
// converted blob run by the host build of the firmware runtime against the reference executor
// (int8 bit-exact, float32 within 1e-5 relative).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compiler/ref/reference.h"
#include "mcu/blob_writer.h"

namespace mcut {

using Ints = std::vector<int64_t>;
namespace ir = drv::ir;

inline uint64_t g_seed = 1;
inline uint64_t next() {
    g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
    return g_seed >> 33;
}

/// A one-operator TFLite graph in the IR, quantization on the values as the importer records it.
class T {
   public:
    explicit T(bool int8, bool tflite = true) : int8_(int8), domain_(tflite ? "tflite" : "") {
        if (tflite) g_.set_opset("tflite", 3);
        else g_.set_opset("", 13);
    }
    T& in(const std::string& n, Ints s, float scale = 0.05f, int32_t zp = 3) {
        ir::Value& v = add(n, s, act_type(), false);
        if (int8_) v.quant = q(scale, zp);
        g_.inputs().push_back(n);
        return *this;
    }
    T& out(const std::string& n, Ints s, float scale = 0.08f, int32_t zp = -5, num::DType d = num::DType::F32) {
        ir::Value& v = add(n, s, int8_ && d == num::DType::F32 ? num::DType::I8 : d, false);
        if (int8_ && v.dtype == num::DType::I8) v.quant = q(scale, zp);
        g_.outputs().push_back(n);
        return *this;
    }
    /// Weights: int8 symmetric per channel along `axis` (or per tensor) in int8 graphs, else float.
    T& weight(const std::string& n, Ints s, int axis = 0, bool per_channel = true) {
        ir::Value& v = add(n, s, int8_ ? num::DType::I8 : num::DType::F32, true);
        if (int8_) {
            const int64_t ch = per_channel ? s[size_t(axis)] : 1;
            v.quant.axis = per_channel ? axis : -1;
            for (int64_t c = 0; c < ch; ++c) {
                v.quant.scale.push_back(0.01f + 0.003f * float(c));
                v.quant.zero_point.push_back(0);
            }
            for (size_t i = 0; i < v.data->numel(); ++i) v.data->data<int8_t>()[i] = int8_t(int(next() % 255) - 127);
        } else {  // float weights in [-0.5, 0.5]
            for (size_t i = 0; i < v.data->numel(); ++i) v.data->data<float>()[i] = float(int(next() % 1001) - 500) / 1000.0f;
        }
        v.data->quant = v.quant;
        return *this;
    }
    T& bias(const std::string& n, int64_t c) {
        ir::Value& v = add(n, {c}, int8_ ? num::DType::I32 : num::DType::F32, true);
        for (int64_t i = 0; i < c; ++i) {
            if (int8_) v.data->data<int32_t>()[i] = int32_t(next() % 4001) - 2000;
            else v.data->data<float>()[i] = float(int(next() % 201) - 100) / 100.0f;
        }
        return *this;
    }
    T& ints(const std::string& n, Ints s, const std::vector<int32_t>& vals) {
        ir::Value& v = add(n, s, num::DType::I32, true);
        std::memcpy(v.data->raw(), vals.data(), vals.size() * 4);
        return *this;
    }
    /// `outs`: the node's outputs in order ("" = absent), default every graph output.
    T& op(const std::string& op, std::vector<std::string> ins, std::vector<std::pair<std::string, num::AttrValue>> attrs = {},
          std::vector<std::string> outs = {}) {
        ir::Node n;
        n.op_type = op;
        n.domain = domain_;
        n.name = op;
        n.inputs = std::move(ins);
        n.outputs = outs.empty() ? g_.outputs() : outs;  // default: every graph output (SPLIT, UNPACK write them all)
        for (auto& [k, v] : attrs) n.attrs.set(k, v);
        const ir::Value& o = g_.value(g_.outputs()[0]);
        n.attrs.set("_output_dtype", std::string(num::dtype_name(o.dtype)));
        if (!o.quant.empty()) {
            n.attrs.set("_output_scale", o.quant.scale);
            n.attrs.set("_output_zero_point", Ints(o.quant.zero_point.begin(), o.quant.zero_point.end()));
        }
        g_.add_node(std::move(n));
        return *this;
    }
    ir::Graph& graph() { return g_; }
    bool int8() const { return int8_; }

   private:
    num::DType act_type() const { return int8_ ? num::DType::I8 : num::DType::F32; }
    static num::QuantParams q(float s, int32_t z) {
        num::QuantParams p;
        p.scale = {s};
        p.zero_point = {z};
        return p;
    }
    ir::Value& add(const std::string& n, Ints s, num::DType d, bool constant) {
        ir::Value v;
        v.name = n;
        v.dtype = d;
        v.shape = s;
        v.shape_known = true;
        if (constant) v.data = num::Tensor(d, s);
        return g_.add_value(std::move(v));
    }
    bool int8_;
    std::string domain_;
    ir::Graph g_;
};

/// Reference vs host runtime of the converted blob; returns "" when they agree.
inline std::string run(T& t) {
    ir::Graph& g = t.graph();
    std::map<std::string, num::Tensor> inputs;
    for (size_t i = 0; i < g.inputs().size(); ++i) inputs[g.inputs()[i]] = drv::ref::random_input(g.value(g.inputs()[i]), 21, i);
    std::map<std::string, num::Tensor> ref;
    try {
        ref = drv::ref::execute(g, inputs);
    } catch (const std::exception& e) {
        return std::string("reference: ") + e.what();
    }
    mcu::Blob b;
    try {
        b = mcu::convert_graph(g, inputs);
    } catch (const std::exception& e) {
        return std::string("convert: ") + e.what();
    }
    std::string err;
    const auto outs = mcu::run_blob_on_host(b, err);
    if (!err.empty()) return "host runtime: " + err;
    for (size_t k = 0; k < b.outputs.size(); ++k) {
        const num::Tensor got = mcu::output_tensor(b.outputs[k], outs[k]);
        const num::Tensor& want = ref.at(b.outputs[k].value);
        if (got.nbytes() != want.nbytes()) return "size differs";
        size_t bad = 0;
        for (size_t i = 0; i < want.numel(); ++i) {
            if (want.dtype() == num::DType::F32) {
                const float a = got.data<float>()[i], w = want.data<float>()[i];
                if (!(std::fabs(a - w) <= 1e-5f * std::max(1.0f, std::fabs(w))) && !(std::isnan(a) && std::isnan(w))) ++bad;
            } else if (std::memcmp(got.raw() + i * num::dtype_size(want.dtype()), want.raw() + i * num::dtype_size(want.dtype()),
                                   num::dtype_size(want.dtype())) != 0) {
                ++bad;
            }
        }
        if (bad) return std::to_string(bad) + " of " + std::to_string(want.numel()) + " values differ";
    }
    return "";
}

using A = std::vector<std::pair<std::string, num::AttrValue>>;
inline std::string S(const char* s) { return s; }

}  // namespace mcut
