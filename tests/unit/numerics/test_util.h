// SPDX-License-Identifier: MIT
// Small helpers to build tensors and call run_op in the numerics unit tests.
#pragma once
#include <vector>

#include "numerics/ops.h"

namespace numtest {

template <typename T>
num::Tensor make(num::DType d, std::vector<int64_t> shape, const std::vector<T>& v) {
    num::Tensor t(d, std::move(shape));
    for (size_t i = 0; i < v.size() && i < t.numel(); ++i) t.data<T>()[i] = v[i];
    return t;
}
inline num::Tensor f32(std::vector<int64_t> s, const std::vector<float>& v) { return make(num::DType::F32, std::move(s), v); }
inline num::Tensor i64(const std::vector<int64_t>& v) { return make(num::DType::I64, {static_cast<int64_t>(v.size())}, v); }

template <typename T>
std::vector<T> values(const num::Tensor& t) {
    return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

inline std::vector<num::Tensor> run(const std::string& op, const num::Attributes& a, const std::vector<const num::Tensor*>& in,
                                    const std::string& domain = "") {
    return num::run_op(op, a, in, domain);
}

}  // namespace numtest
