// SPDX-License-Identifier: MIT
#include "numerics/tensor.h"

#include <limits>
#include <stdexcept>

#include "numerics/limits.h"

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
    const uint64_t n = checked_bytes(dtype_, shape_);
    try {
        bytes_.assign(static_cast<size_t>(n), 0);
    } catch (const std::bad_alloc&) {
        out_of_memory(n, "a " + shape_str() + " tensor");
    }
}

Tensor Tensor::uninitialized(DType dtype, std::vector<int64_t> shape) {
    Tensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    const uint64_t n = checked_bytes(dtype, t.shape_);
    try {
        t.bytes_.resize(static_cast<size_t>(n));  // default-init: no zeroing
    } catch (const std::bad_alloc&) {
        out_of_memory(n, "a " + t.shape_str() + " tensor");
    }
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
