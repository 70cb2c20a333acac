// SPDX-License-Identifier: MIT
// Internal interface of the TFLite importer (not installed).
#pragma once
#include <string>

#include "compiler/tflite/tflite_importer.h"
#include "npusim_tflite_generated.h"

namespace drv::importer::tfl {

using namespace npusim::tflite;  // generated from schema/npusim_tflite.fbs

/// Builtin options of `op` as attributes with TFLite field names.
void decode_options(const Operator& op, num::Attributes& a);
/// Name of a BuiltinOperator code (public enum spelling), or "" when unknown to us.
const char* builtin_name(int32_t code);

}  // namespace drv::importer::tfl
