// SPDX-License-Identifier: MIT
// run_op() dispatch, the operator table and num::Attributes accessors.
#include <algorithm>

#include "op_common.h"
#include "../tflite/tfl_common.h"

namespace num {

const AttrValue* Attributes::find(const std::string& name) const {
    auto it = map_.find(name);
    return it == map_.end() ? nullptr : &it->second;
}

int64_t Attributes::get_int(const std::string& name, int64_t dflt) const {
    const AttrValue* v = find(name);
    if (!v) return dflt;
    if (auto p = std::get_if<int64_t>(v)) return *p;
    throw OpError("attribute '" + name + "' is not an int");
}

float Attributes::get_float(const std::string& name, float dflt) const {
    const AttrValue* v = find(name);
    if (!v) return dflt;
    if (auto p = std::get_if<float>(v)) return *p;
    if (auto p = std::get_if<int64_t>(v)) return static_cast<float>(*p);
    throw OpError("attribute '" + name + "' is not a float");
}

std::string Attributes::get_string(const std::string& name, const std::string& dflt) const {
    const AttrValue* v = find(name);
    if (!v) return dflt;
    if (auto p = std::get_if<std::string>(v)) return *p;
    throw OpError("attribute '" + name + "' is not a string");
}

std::vector<int64_t> Attributes::get_ints(const std::string& name, const std::vector<int64_t>& dflt) const {
    const AttrValue* v = find(name);
    if (!v) return dflt;
    if (auto p = std::get_if<std::vector<int64_t>>(v)) return *p;
    if (auto p = std::get_if<int64_t>(v)) return {*p};
    throw OpError("attribute '" + name + "' is not an int list");
}

std::vector<float> Attributes::get_floats(const std::string& name, const std::vector<float>& dflt) const {
    const AttrValue* v = find(name);
    if (!v) return dflt;
    if (auto p = std::get_if<std::vector<float>>(v)) return *p;
    if (auto p = std::get_if<float>(v)) return {*p};
    throw OpError("attribute '" + name + "' is not a float list");
}

namespace {

const ops::OpTable& table() {
    static const ops::OpTable t = [] {
        ops::OpTable m;
        ops::register_elementwise(m);
        ops::register_activation(m);
        ops::register_conv(m);
        ops::register_qconv(m);
        ops::register_matmul(m);
        ops::register_pool(m);
        ops::register_quant(m);
        ops::register_qlinear(m);
        ops::register_shape(m);
        ops::register_layout(m);
        ops::register_reduce(m);
        ops::register_resize(m);
        ops::register_rnn(m);
        ops::register_index(m);
        ops::register_space_norm(m);
        // TFLite builtins (domain "tflite", NHWC, TFLite's quantized arithmetic).
        tfl::register_conv(m);
        tfl::register_elementwise(m);
        tfl::register_pool(m);
        tfl::register_shape(m);
        tfl::register_more(m);
        tfl::register_resize_matmul(m);
        return m;
    }();
    return t;
}

// onnxruntime also accepts the QLinear*/contrib ops registered under the ai.onnx name (e.g.
// QuantizeLinear exists in both domains); fall back from com.microsoft to ai.onnx and back.
const ops::OpFn* lookup(const std::string& op_type, const std::string& domain) {
    const std::string d = (domain == "ai.onnx") ? "" : domain;
    auto it = table().find(d + ":" + op_type);
    if (it != table().end()) return &it->second;
    if (d == "com.microsoft") it = table().find(":" + op_type);
    else if (d.empty()) it = table().find("com.microsoft:" + op_type);
    return it == table().end() ? nullptr : &it->second;
}

}  // namespace

std::vector<Tensor> run_op(const std::string& op_type, const Attributes& attrs, const std::vector<const Tensor*>& inputs,
                           const std::string& domain) {
    const ops::OpFn* fn = lookup(op_type, domain);
    if (!fn) throw OpError(op_type + ": operator not supported in domain '" + domain + "'");
    return (*fn)(attrs, inputs);
}

bool op_supported(const std::string& op_type, const std::string& domain) { return lookup(op_type, domain) != nullptr; }

std::vector<std::string> supported_ops() {
    std::vector<std::string> v;
    for (const auto& kv : table()) v.push_back(kv.first[0] == ':' ? kv.first.substr(1) : kv.first);
    std::sort(v.begin(), v.end());
    return v;
}

}  // namespace num
