// SPDX-License-Identifier: MIT
// Dense tensors with optional quantization parameters: the data type shared by the graph IR, the
// reference executor, the NPU lowering and the MCU code generator.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace num {

enum class DType : uint8_t { F32, F16, I8, U8, I16, U16, I32, I64, Bool };

size_t dtype_size(DType t);
const char* dtype_name(DType t);

/// Per-tensor (axis = -1, one scale) or per-axis quantization, onnxruntime/ONNX semantics:
/// real = (q - zero_point) * scale.
struct QuantParams {
    std::vector<float> scale;
    std::vector<int32_t> zero_point;
    int axis = -1;
    bool empty() const { return scale.empty(); }
    bool per_axis() const { return scale.size() > 1; }
};

/// Allocator whose value-less construct() leaves bytes uninitialised (resize without zeroing).
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
        using other = DefaultInitAllocator<U>;
    };
    using std::allocator<T>::allocator;
    template <typename U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

/// Row-major dense tensor owning its bytes.
class Tensor {
   public:
    Tensor() = default;
    /// Zero-filled tensor.
    Tensor(DType dtype, std::vector<int64_t> shape);
    /// Tensor whose contents are unspecified: for producers that write every element (operator
    /// outputs), saving a memset of the whole buffer.
    static Tensor uninitialized(DType dtype, std::vector<int64_t> shape);

    DType dtype() const { return dtype_; }
    const std::vector<int64_t>& shape() const { return shape_; }
    int rank() const { return static_cast<int>(shape_.size()); }
    int64_t dim(int i) const { return shape_.at(static_cast<size_t>(i < 0 ? i + rank() : i)); }
    size_t numel() const;
    size_t nbytes() const { return bytes_.size(); }

    template <typename T>
    T* data() { return reinterpret_cast<T*>(bytes_.data()); }
    template <typename T>
    const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }
    uint8_t* raw() { return bytes_.data(); }
    const uint8_t* raw() const { return bytes_.data(); }

    QuantParams quant;

    std::string shape_str() const;

   private:
    DType dtype_ = DType::F32;
    std::vector<int64_t> shape_;
    std::vector<uint8_t, DefaultInitAllocator<uint8_t>> bytes_;
};

}  // namespace num
