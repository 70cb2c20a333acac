// SPDX-License-Identifier: MIT
// Reference operator library: ONNX-semantics operators on host tensors, bit-exact for the integer
// ops (seed 002 arithmetic). The reference executor, the oracle tests and the NPU/MCU comparisons
// all call run_op(); nothing else computes reference answers.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "numerics/tensor.h"

namespace num {

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                               std::vector<std::string>, Tensor>;

/// Node attributes by name (ONNX AttributeProto, decoded).
class Attributes {
   public:
    void set(const std::string& name, AttrValue v) { map_[name] = std::move(v); }
    bool has(const std::string& name) const { return map_.count(name) != 0; }
    int64_t get_int(const std::string& name, int64_t dflt) const;
    float get_float(const std::string& name, float dflt) const;
    std::string get_string(const std::string& name, const std::string& dflt) const;
    std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& dflt) const;
    std::vector<float> get_floats(const std::string& name, const std::vector<float>& dflt) const;
    const AttrValue* find(const std::string& name) const;
    const std::map<std::string, AttrValue>& all() const { return map_; }

   private:
    std::map<std::string, AttrValue> map_;  // ordered: deterministic iteration
};

/// Bad operator input (wrong dtype, rank, attribute): message names the op and the problem.
class OpError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// Run one operator. `domain` is "" (ai.onnx) or "com.microsoft". Absent optional inputs are
/// nullptr. Throws OpError on invalid input, never crashes on it.
std::vector<Tensor> run_op(const std::string& op_type, const Attributes& attrs,
                           const std::vector<const Tensor*>& inputs, const std::string& domain = "");

/// Whether run_op implements op_type in domain.
bool op_supported(const std::string& op_type, const std::string& domain = "");

/// All implemented operators as "domain:op" (domain empty for ai.onnx), sorted.
std::vector<std::string> supported_ops();

}  // namespace num
