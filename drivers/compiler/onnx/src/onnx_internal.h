// SPDX-License-Identifier: MIT
// Internal helpers of the ONNX importer (not installed): protobuf message decoding.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "compiler/onnx/onnx_importer.h"

namespace drv::importer {

num::DType dtype_from_onnx(int32_t code, const std::string& where);
/// A tensor's raw_data left in the model buffer by the split parse (parse_model_split): the
/// message itself has no raw_data then. present: the field occurred (proto2 presence).
struct RawSpan {
    const char* data = nullptr;
    size_t size = 0;
    bool present = false;
    bool contents = true;  ///< false: the size is checked, the tensor's contents left unspecified
};
/// Decodes an initializer/attribute tensor; throws ImportError naming `where` and the tensor.
/// `raw`: its raw_data as kept out of the message by the split parse (null: the message's own).
num::Tensor tensor_from_proto(const ::onnx::TensorProto& p, const std::string& where, const RawSpan* raw = nullptr);
/// Parses a ModelProto from `data` like ParseFromArray, except that every graph initializer's
/// raw_data stays in `data` (spans[i] for initializer i) instead of being copied into the message
/// (ResNet50: 25 MB not copied, allocated and freed). Returns false on any wire-format problem or
/// construct it does not follow (groups); the caller then parses the usual way for the diagnosis.
bool parse_model_split(const uint8_t* data, size_t size, ::onnx::ModelProto& m, std::vector<RawSpan>& spans);
num::AttrValue attribute_from_proto(const ::onnx::AttributeProto& a, const std::string& where);
/// Graph input/output declaration; `override_shape` (from --input-shape) replaces declared dims.
ir::Value value_from_info(const ::onnx::ValueInfoProto& vi, const std::string& where,
                          const std::vector<int64_t>* override_shape);

}  // namespace drv::importer
