// SPDX-License-Identifier: MIT
#include "numerics/tensor.h"

#include <limits>
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

namespace {
/// Byte size of a dtype x shape, refusing products that overflow (a crafted shape must give an
/// error, not a small buffer and a large write).
size_t checked_bytes(DType dtype, const std::vector<int64_t>& shape) {
    size_t n = dtype_size(dtype);
    for (int64_t d : shape) {
        if (d < 0) throw std::invalid_argument("Tensor: negative dimension");
        const size_t u = static_cast<size_t>(d);
        if (u && n > std::numeric_limits<size_t>::max() / 2 / u) throw std::length_error("Tensor: size overflows");
        n *= u;
    }
    return n;
}
}  // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
    bytes_.assign(checked_bytes(dtype_, shape_), 0);
}

Tensor Tensor::uninitialized(DType dtype, std::vector<int64_t> shape) {
    Tensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.bytes_.resize(checked_bytes(dtype, t.shape_));  // default-init: no zeroing
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
