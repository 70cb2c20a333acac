// SPDX-License-Identifier: MIT
// TensorProto / AttributeProto / ValueInfoProto decoding (onnx.proto field semantics): raw_data or
// typed fields, size checks against the dims, external data rejected.
#include "onnx_internal.h"

#include <cstring>
#include <limits>

namespace drv::importer {

namespace {
constexpr int64_t kMaxElements = ir::kMaxTensorElements;

template <typename Src, typename Dst>
void copy_typed(const Src& src, num::Tensor& t) {
    Dst* d = t.data<Dst>();
    for (int i = 0; i < src.size(); ++i) d[i] = static_cast<Dst>(src.Get(i));
}
}  // namespace

num::DType dtype_from_onnx(int32_t code, const std::string& where) {
    switch (code) {
        case ::onnx::TensorProto::FLOAT: return num::DType::F32;
        case ::onnx::TensorProto::UINT8: return num::DType::U8;
        case ::onnx::TensorProto::INT8: return num::DType::I8;
        case ::onnx::TensorProto::UINT16: return num::DType::U16;
        case ::onnx::TensorProto::INT16: return num::DType::I16;
        case ::onnx::TensorProto::INT32: return num::DType::I32;
        case ::onnx::TensorProto::INT64: return num::DType::I64;
        case ::onnx::TensorProto::BOOL: return num::DType::Bool;
        case ::onnx::TensorProto::FLOAT16: return num::DType::F16;
        default: break;
    }
    throw ImportError(where + ": unsupported tensor data type " + std::to_string(code) +
                      (::onnx::TensorProto::DataType_IsValid(code)
                           ? " (" + ::onnx::TensorProto::DataType_Name(static_cast<::onnx::TensorProto::DataType>(code)) + ")"
                           : std::string(" (invalid code)")));
}

num::Tensor tensor_from_proto(const ::onnx::TensorProto& p, const std::string& where, const RawSpan* raw) {
    if (p.data_location() == ::onnx::TensorProto::EXTERNAL || p.external_data_size() > 0)
        throw ImportError(where + ": tensor '" + p.name() + "' uses external data, which is not supported (embed the weights in the .onnx file)");
    if (p.has_segment()) throw ImportError(where + ": tensor '" + p.name() + "' is segmented, not supported");
    num::DType dt = dtype_from_onnx(p.data_type(), where + " tensor '" + p.name() + "'");
    std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
    int64_t n = 1;
    for (int64_t d : dims) {
        if (d < 0) throw ImportError(where + ": tensor '" + p.name() + "' has negative dimension " + std::to_string(d));
        if (d > 0 && n > kMaxElements / d) throw ImportError(where + ": tensor '" + p.name() + "' is too large (" + ir::shape_to_string(dims) + ")");
        n *= d;
    }
    const size_t esz = num::dtype_size(dt);
    const size_t need = static_cast<size_t>(n) * esz;
    auto check = [&](int count, const char* field) {
        if (count != n)
            throw ImportError(where + ": tensor '" + p.name() + "' has " + std::to_string(count) + " values in " + field + ", dims " + ir::shape_to_string(dims) + " need " + std::to_string(n));
    };
    // Sizes are checked before allocating, so a forged dims field cannot trigger a huge allocation.
    const bool split = raw && raw->present;
    if (split || p.has_raw_data()) {
        const char* bytes = split ? raw->data : p.raw_data().data();
        const size_t have = split ? raw->size : p.raw_data().size();
        if (have != need)
            throw ImportError(where + ": tensor '" + p.name() + "' raw_data has " + std::to_string(have) + " bytes, dims " +
                              ir::shape_to_string(dims) + " x " + std::to_string(esz) + " need " + std::to_string(need));
        num::Tensor t = num::Tensor::uninitialized(dt, dims);  // every byte written below
        if (need && (!split || raw->contents)) std::memcpy(t.raw(), bytes, need);  // little-endian host
        return t;
    }
    switch (dt) {
        case num::DType::F32: check(p.float_data_size(), "float_data"); break;
        case num::DType::I64: check(p.int64_data_size(), "int64_data"); break;
        default: check(p.int32_data_size(), "int32_data"); break;
    }
    num::Tensor t(dt, dims);
    switch (dt) {
        case num::DType::F32: copy_typed<decltype(p.float_data()), float>(p.float_data(), t); break;
        case num::DType::I64: copy_typed<decltype(p.int64_data()), int64_t>(p.int64_data(), t); break;
        case num::DType::I32: copy_typed<decltype(p.int32_data()), int32_t>(p.int32_data(), t); break;
        case num::DType::I16: copy_typed<decltype(p.int32_data()), int16_t>(p.int32_data(), t); break;
        case num::DType::U16:
        case num::DType::F16: copy_typed<decltype(p.int32_data()), uint16_t>(p.int32_data(), t); break;
        case num::DType::I8: copy_typed<decltype(p.int32_data()), int8_t>(p.int32_data(), t); break;
        case num::DType::U8:
        case num::DType::Bool: copy_typed<decltype(p.int32_data()), uint8_t>(p.int32_data(), t); break;
    }
    return t;
}

num::AttrValue attribute_from_proto(const ::onnx::AttributeProto& a, const std::string& where) {
    using A = ::onnx::AttributeProto;
    A::AttributeType type = a.type();
    if (type == A::UNDEFINED) {  // pre-IR-3 files omit the type: infer it from the populated field
        if (a.has_f()) type = A::FLOAT;
        else if (a.has_i()) type = A::INT;
        else if (a.has_s()) type = A::STRING;
        else if (a.has_t()) type = A::TENSOR;
        else if (a.floats_size()) type = A::FLOATS;
        else if (a.ints_size()) type = A::INTS;
        else if (a.strings_size()) type = A::STRINGS;
    }
    switch (type) {
        case A::FLOAT: return a.f();
        case A::INT: return a.i();
        case A::STRING: return a.s();
        case A::TENSOR: return tensor_from_proto(a.t(), where + " attribute '" + a.name() + "'");
        case A::FLOATS: return std::vector<float>(a.floats().begin(), a.floats().end());
        case A::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
        case A::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
        case A::GRAPH:
        case A::GRAPHS: throw ImportError(where + ": attribute '" + a.name() + "' is a subgraph; control flow (If/Loop/Scan) is not supported");
        default: break;
    }
    throw ImportError(where + ": attribute '" + a.name() + "' has unsupported type " + std::to_string(static_cast<int>(type)));
}

ir::Value value_from_info(const ::onnx::ValueInfoProto& vi, const std::string& where,
                          const std::vector<int64_t>* override_shape) {
    ir::Value v;
    v.name = vi.name();
    if (!vi.has_type() || !vi.type().has_tensor_type())
        throw ImportError(where + " '" + vi.name() + "': only tensor types are supported");
    const auto& tt = vi.type().tensor_type();
    v.dtype = dtype_from_onnx(tt.elem_type(), where + " '" + vi.name() + "'");
    if (override_shape) {
        if (tt.has_shape() && tt.shape().dim_size() != static_cast<int>(override_shape->size()))
            throw ImportError(where + " '" + vi.name() + "': --input-shape gives rank " + std::to_string(override_shape->size()) + " but the model declares rank " + std::to_string(tt.shape().dim_size()));
        v.shape = *override_shape;
    } else {
        if (!tt.has_shape())
            throw ImportError(where + " '" + vi.name() + "' has no shape; fix it with --input-shape " + vi.name() + "=AxBxC...");
        for (int i = 0; i < tt.shape().dim_size(); ++i) {
            const auto& d = tt.shape().dim(i);
            if (!d.has_dim_value() || d.dim_value() <= 0) {
                std::string why = d.has_dim_param() ? "dynamic ('" + d.dim_param() + "')" : "unknown";
                throw ImportError(where + " '" + vi.name() + "' dimension " + std::to_string(i) + " is " + why + "; fix it with --input-shape " + vi.name() + "=AxBxC...");
            }
            v.shape.push_back(d.dim_value());
        }
    }
    int64_t n = 1;
    for (int64_t d : v.shape) {
        if (d > 0 && n > kMaxElements / d)
            throw ImportError(where + " '" + vi.name() + "' shape " + ir::shape_to_string(v.shape) +
                              " has more than 2^31 elements (limit of the importer)");
        n *= d;
    }
    v.shape_known = true;
    return v;
}

}  // namespace drv::importer
