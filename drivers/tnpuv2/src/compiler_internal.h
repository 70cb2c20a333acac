// SPDX-License-Identifier: MIT
// The tnpuv2 compiler's shared state and the per-operator lowerings (one file per family).
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "drv/tnpuv2/model.h"
#include "hw/tnpuv2_cmds.h"
#include "stream_builder.h"

namespace drv::tnpuv2::detail {

namespace F = hw::tnpuv2::enums::FORMAT;
namespace S = hw::tnpuv2::enums::SLOT;
using hw::tnpuv2::Command;
using hw::tnpuv2::set_field;
using hw::tnpuv2::set_field_f32;

/// A tensor seen through logical dims (IR order): extent and byte stride per dim, from an offset.
struct View {
    std::vector<int64_t> ext, stride;
    uint64_t offset = 0;
    uint32_t format = 0;
    int bits = 8;
    int32_t zp = 0;
};

/// (multiplier, shift) with multiplier / 2^shift == `s` exactly when s is a float (its 24-bit
/// significand); std::invalid_argument when it cannot be represented with a 31-bit multiplier.
void exact_scale(double s, int32_t& mult, int32_t& shift);
/// Nearest (multiplier, shift) for a real scale with a `bits`-bit multiplier.
void fixed_scale(double s, int bits, int32_t& mult, int32_t& shift);

class Compiler {
   public:
    Compiler(CompiledModel& m, const hw::tnpuv2::Profile& p, const CompileOptions& o) : m_(m), p_(p), o_(o) {}
    void run();

    // ---- used by the lowerings
    const ir::Graph& g() const { return m_.graph; }
    const hw::tnpuv2::Profile& profile() const { return p_; }
    const Widths& widths() const { return o_.widths; }
    DeviceTensor& dt(const std::string& value);
    bool has_dt(const std::string& value) const { return m_.tensors.count(value) != 0; }
    /// The full logical view of a device tensor.
    View view(const DeviceTensor& t) const;
    /// Descriptor of a [N,H,W,C] feature map (NHWC device tensor, or a row-major one as N,1,1,C...).
    Desc fm_desc(const DeviceTensor& t) const;
    /// Descriptor over a view's dims in the order given (outermost first; at most six).
    Desc desc_of(const View& v, const std::vector<size_t>& order) const;
    /// Initialised arena bytes (weights, tables, parameter blocks); returns the arena offset.
    uint64_t blob(const std::vector<uint8_t>& bytes, uint64_t align = 64);
    /// A blob of packed conv/MatMul weights (counted in CompiledModel::weight_bytes).
    uint64_t weight_blob(const std::vector<uint8_t>& bytes) {
        m_.weight_bytes += bytes.size();
        return blob(bytes);
    }
    /// Zero-initialised arena bytes a layer uses as on-chip-state scratch (GRU gates and state);
    /// the layer's commands write them before reading them on every inference.
    uint64_t scratch(uint64_t bytes) { return blob(std::vector<uint8_t>(bytes, 0)); }
    /// Arena offsets of 32-bit address pairs inside blobs (GENBOX parameter blocks).
    void blob_reloc(uint64_t lo_offset, uint64_t hi_offset) { blob_relocs_.emplace_back(lo_offset, hi_offset); }
    StreamBuilder& sb() { return sb_; }
    /// Appends an engine command to the current layer's commands.
    uint32_t emit(const Command& c, std::initializer_list<std::pair<hw::tnpuv2::Field, hw::tnpuv2::Field>> addrs = {});
    Layer& layer() { return m_.layers.at(cur_); }
    [[noreturn]] void refuse(const std::string& why) const;
    /// Constant tensor of a node input (nullptr when absent or not constant).
    const num::Tensor* constant(const ir::Node& n, size_t i) const;
    float scalar_f(const ir::Node& n, size_t i) const;
    int32_t scalar_zp(const ir::Node& n, size_t i) const;

   private:
    void partition();
    void plan_tensors();
    void lower_layer(size_t li);
    void finish();

    CompiledModel& m_;
    const hw::tnpuv2::Profile& p_;
    const CompileOptions& o_;
    StreamBuilder sb_;
    std::vector<uint8_t> blobs_;
    uint64_t blob_base_ = 0;
    std::vector<std::pair<uint64_t, uint64_t>> blob_relocs_;
    size_t cur_ = 0;
    struct Group {
        std::vector<size_t> nodes;
        std::string kind;  ///< "node", "dq_op_q", "dq_op_f", "dq_conv_f", "swish", "genbox", "gru"
    };
    std::vector<Group> groups_;
};

/// Weight rows of `inner` values packed at `fmt` (S4 two per byte), appended to `out` (lower_conv.cpp).
void pack_rows(const std::vector<int32_t>& v, int64_t inner, uint32_t fmt, std::vector<uint8_t>& out);
/// The CONV QTABLE: one 16-byte record per output channel (float scale for FP32 output).
std::vector<uint8_t> qtable(const std::vector<int64_t>& bias, const std::vector<float>& scale, bool fp32_out);
/// Bytes of one element of a FORMAT (4-bit formats: 1, packed along DIM5).
int elem_bytes(uint32_t fmt);

/// Lowerings: each emits the commands of one layer (the group's nodes) through `c`.
void lower_conv(Compiler& c, const ir::Node& n, bool fp32_out = false);    // QLinearConv
void lower_conv_fp32(Compiler& c, const std::vector<const ir::Node*>& unit);  // DQ(x, W, b) -> Conv (FP32 out)
void lower_matmul(Compiler& c, const ir::Node& n);                         // QLinearMatMul, QGemm
void lower_eltwise(Compiler& c, const ir::Node& n);                        // QLinearAdd, QLinearMul
void lower_affine(Compiler& c, const std::vector<const ir::Node*>& unit);  // DQ -> BatchNormalization -> Q
void lower_relu(Compiler& c, const ir::Node& n);                           // Relu / Clip on codes
void lower_pool(Compiler& c, const ir::Node& n);  // MaxPool, QLinearAveragePool, QLinearGlobalAveragePool
void lower_lut(Compiler& c, const std::vector<const ir::Node*>& nodes);  // QLinearSigmoid/LeakyRelu, Swish, DQ->Pow->Q
void lower_quant(Compiler& c, const ir::Node& n);                        // QuantizeLinear / DequantizeLinear
void lower_fp32(Compiler& c, const ir::Node& n);                         // Erf, Sqrt, Pow on FP32 tensors
void lower_dq_op_q(Compiler& c, const std::vector<const ir::Node*>& unit);  // Softmax, Reduce*, norms, linear Resize
void lower_move(Compiler& c,
                const ir::Node& n);  // Transpose, Reshape, Concat, Slice, Pad, Resize nearest, D2S/S2D, Gather
void lower_genbox(Compiler& c, const std::vector<const ir::Node*>& nodes);
void lower_gru(Compiler& c, const std::vector<const ir::Node*>& unit);  // DQ(X, W, R, B) -> GRU -> Q(Y, Y_h)

/// The GenerateBox decode recognised in a graph: its nodes and parameters (genbox.cpp).
struct DecodeMatch {
    std::vector<size_t> nodes;             ///< node indices of the decode subgraph
    std::vector<std::string> head_inputs;  ///< per head, the tensor entering the decode (float)
    std::string output;                    ///< the decoded [1, boxes, 5 + classes] tensor
    int version = 5, classes = 0, anchors = 0;
    int reg_max = 0;  ///< YOLOv8: DFL bins per box side (the box channels are 4 reg_max, then the classes)
    float grid_offset = 0;
    std::vector<float> strides;                 ///< per head
    std::vector<std::vector<float>> anchor_wh;  ///< per head, 2 x anchors (pixels)
    std::vector<int64_t> grid_h, grid_w;
};
/// Finds the YOLOv5 (ultralytics v7.0 export), YOLOv3 (darknet) and YOLOv8 (ultralytics v8 export) decodes in `g`.
std::vector<DecodeMatch> find_yolo_decodes(const ir::Graph& g);

}  // namespace drv::tnpuv2::detail
