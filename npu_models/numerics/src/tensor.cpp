// SPDX-License-Identifier: MIT
#include "numerics/tensor.h"

#include <stdexcept>

namespace num {

size_t dtype_size(DType t) {
    switch (t) {
        case DType::F32: return 4;
        case DType::F16: return 2;
        case DType::I8: return 1;
        case DType::U8: return 1;
        case DType::I16: return 2;
        case DType::U16: return 2;
        case DType::I32: return 4;
        case DType::I64: return 8;
        case DType::Bool: return 1;
    }
    return 0;
}

const char* dtype_name(DType t) {
    switch (t) {
        case DType::F32: return "float32";
        case DType::F16: return "float16";
        case DType::I8: return "int8";
        case DType::U8: return "uint8";
        case DType::I16: return "int16";
        case DType::U16: return "uint16";
        case DType::I32: return "int32";
        case DType::I64: return "int64";
        case DType::Bool: return "bool";
    }
    return "?";
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
    for (int64_t d : shape_)
        if (d < 0) throw std::invalid_argument("Tensor: negative dimension");
    bytes_.assign(numel() * dtype_size(dtype_), 0);
}

Tensor Tensor::uninitialized(DType dtype, std::vector<int64_t> shape) {
    Tensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    for (int64_t d : t.shape_)
        if (d < 0) throw std::invalid_argument("Tensor: negative dimension");
    t.bytes_.resize(t.numel() * dtype_size(dtype));  // default-init: no zeroing
    return t;
}

size_t Tensor::numel() const {
    size_t n = 1;
    for (int64_t d : shape_) n *= static_cast<size_t>(d);
    return n;
}

std::string Tensor::shape_str() const {
    std::string s = "[";
    for (size_t i = 0; i < shape_.size(); ++i) s += (i ? "x" : "") + std::to_string(shape_[i]);
    return s + "]";
}

}  // namespace num
