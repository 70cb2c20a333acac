// SPDX-License-Identifier: MIT
// Internal helpers of the ONNX importer (not installed): protobuf message decoding.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "compiler/onnx/onnx_importer.h"

namespace drv::importer {

num::DType dtype_from_onnx(int32_t code, const std::string& where);
/// Decodes an initializer/attribute tensor; throws ImportError naming `where` and the tensor.
num::Tensor tensor_from_proto(const ::onnx::TensorProto& p, const std::string& where);
num::AttrValue attribute_from_proto(const ::onnx::AttributeProto& a, const std::string& where);
/// Graph input/output declaration; `override_shape` (from --input-shape) replaces declared dims.
ir::Value value_from_info(const ::onnx::ValueInfoProto& vi, const std::string& where,
                          const std::vector<int64_t>* override_shape);

}  // namespace drv::importer
