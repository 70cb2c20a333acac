// SPDX-License-Identifier: MIT
// Internal to the model compiler (model_compiler*.cpp): the Compiler class that implements
// compile_model (phases in model_compiler.cpp) and the small helpers its phases share.
#pragma once
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include "checker/checker.h"
#include "compiler/ir/graph.h"
#include "drv/regcmd/builder.h"
#include "compiler/rknpu/lower.h"
#include "compiler/rknpu/model.h"
#include "hw/regcmd.h"
#include "lower_move.h"

namespace drv::rknpu::compiler_detail {

/// The graph the compiler partitions (model_compiler_units.cpp): the imported graph's nodes with
/// every QDQ unit onnxruntime left in float - DequantizeLinear inputs -> Conv / Gemm / MatMul /
/// Add / Mul / GlobalAveragePool / Concat -> [Relu / Clip] -> QuantizeLinear, as int8 activations,
/// float biases, Relu/Clip the Q does not make redundant or several quantized consumers leave it
/// (PyTorch FX, TensorRT-style, x86 int8) - replaced by the fused integer op the NPU runs
/// (QLinearConv, QGemm, ...; a float bias quantized as onnxruntime would, the Relu/Clip as integer
/// bounds in attributes npusim_clip_lo/hi). Values are the imported graph's (no copy of the
/// weights) plus the new int32 biases. Each node lists the imported nodes it covers: a layer's
/// IR nodes, which the runtime executes on the CPU or checks the NPU against.
class UnitGraph {
   public:
    explicit UnitGraph(const ir::Graph& ref);
    const ir::Graph& ref() const { return ref_; }
    const std::vector<ir::Node>& nodes() const { return nodes_; }
    const std::vector<std::string>& inputs() const { return ref_.inputs(); }
    const std::vector<std::string>& outputs() const { return ref_.outputs(); }
    const ir::Value* find_value(const std::string& name) const;
    const ir::Value& value(const std::string& name) const;
    int64_t opset(const std::string& domain = "") const { return ref_.opset(domain); }
    /// Index of the node producing `v`, -1 for graph inputs and constants.
    int producer(const std::string& v) const;
    /// Indices of the nodes reading `v`.
    std::vector<size_t> consumers(const std::string& v) const;
    /// Imported-graph nodes node i covers, ascending.
    const std::vector<size_t>& members(size_t i) const { return members_[i]; }
    /// How node i was formed ("DequantizeLinear -> Conv -> Relu -> QuantizeLinear as QLinearConv").
    const std::vector<std::string>& rewrites(size_t i) const { return rewrites_[i]; }
    /// The graph for the vendor checker: these nodes, large constants as shape-only stand-ins.
    ir::Graph checker_graph() const;

   private:
    const ir::Graph& ref_;
    std::vector<ir::Node> nodes_;
    std::vector<std::vector<size_t>> members_;
    std::vector<std::vector<std::string>> rewrites_;
    std::map<std::string, ir::Value> extra_;  // new constants (int32 biases)
    std::map<std::string, size_t> producer_;
    std::map<std::string, std::vector<size_t>> consumers_;
    std::map<std::string, size_t> uses_;  // imported graph: node inputs + graph outputs per value
    std::map<std::string, std::vector<size_t>> ref_consumers_;  // imported graph: readers per value
    void index();
    bool fuse(size_t q, std::vector<bool>& claimed, std::map<size_t, ir::Node>& fused,
              std::map<size_t, std::vector<size_t>>& unit, std::map<size_t, std::string>& how);
    /// DequantizeLinear (int8 activation) x DequantizeLinear (constant int8 weights) -> Conv / Gemm
    /// [+ float bias] whose float output no QuantizeLinear reads (TensorRT-style heads): the integer
    /// op with a float output (QLinearConv without y_scale / y_zero_point, QGemm without y_scale as
    /// onnxruntime's float-output QGemm; attribute npusim_float_out, the bias float or int32).
    bool fuse_float_out(size_t i, std::vector<bool>& claimed, std::map<size_t, ir::Node>& fused,
                        std::map<size_t, std::vector<size_t>>& unit, std::map<size_t, std::string>& how);
    /// An Add / Sub / Mul / Div that onnxruntime runs in float between a DequantizeLinear of an
    /// activation and the DequantizeLinear (per tensor, one reader) of a constant with more than one
    /// value: that DequantizeLinear folded into a float constant (extra_), so that the compiler sees
    /// the op by a constant (Compiler::const_affine) and no CPU layer computes the constant.
    bool fold_const_dq(size_t i, std::vector<bool>& claimed, std::map<size_t, ir::Node>& fused,
                       std::map<size_t, std::vector<size_t>>& unit, std::map<size_t, std::string>& how);
};

/// Provisional base of the activation region while lowering (above any initialised offset).
constexpr uint64_t kActVirtual = 0x80000000ull;

inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

struct NpuUnsupported : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};
[[noreturn]] inline void unsupported(const std::string& why) { throw NpuUnsupported(why); }

inline const num::Tensor* const_of(const UnitGraph& g, const ir::Node& n, size_t i) {
    if (!n.has_input(i)) return nullptr;
    const ir::Value* v = g.find_value(n.input(i));
    return v && v->is_constant() ? &*v->data : nullptr;
}

inline std::vector<float> floats_of(const num::Tensor& t) {
    std::vector<float> out(t.numel());
    if (t.dtype() == num::DType::F32) {
        std::memcpy(out.data(), t.data<float>(), 4 * out.size());
        return out;
    }
    unsupported("scale is not float32");
}

inline std::vector<int32_t> ints_of(const num::Tensor& t) {
    std::vector<int32_t> out(t.numel());
    for (size_t i = 0; i < out.size(); ++i) {
        switch (t.dtype()) {
            case num::DType::U8:
                out[i] = t.data<uint8_t>()[i];
                break;
            case num::DType::I8:
                out[i] = t.data<int8_t>()[i];
                break;
            case num::DType::I32:
                out[i] = t.data<int32_t>()[i];
                break;
            default:
                unsupported(fmt::format("{} zero point / bias", num::dtype_name(t.dtype())));
        }
    }
    return out;
}

inline const num::Tensor& required(const UnitGraph& g, const ir::Node& n, size_t i) {
    const num::Tensor* t = const_of(g, n, i);
    if (!t) unsupported(fmt::format("input {} is not constant", i));
    return *t;
}

inline float scalar_scale(const UnitGraph& g, const ir::Node& n, size_t i) {
    const num::Tensor* t = const_of(g, n, i);
    if (!t) unsupported(fmt::format("input {} (scale) is not constant", i));
    const auto v = floats_of(*t);
    if (v.size() != 1) unsupported(fmt::format("input {} is a per-axis scale", i));
    if (!(v[0] > 0) || !std::isfinite(v[0])) unsupported(fmt::format("scale {} is not positive", v[0]));
    return v[0];
}

inline int32_t scalar_zp(const UnitGraph& g, const ir::Node& n, size_t i) {
    if (!n.has_input(i)) return 0;
    const num::Tensor* t = const_of(g, n, i);
    if (!t) unsupported(fmt::format("input {} (zero point) is not constant", i));
    const auto v = ints_of(*t);
    if (v.empty()) return 0;
    for (int32_t z : v)
        if (z != v[0]) unsupported("per-axis zero point");
    return v[0];
}

inline bool is_q8(num::DType t) { return t == num::DType::U8 || t == num::DType::I8; }

/// A real bound quantized as QuantizeLinear does (RNE(v / scale) + zp, saturated to the graph
/// dtype), in the device's int8 domain (uint8 shifted by -128); infinities give the type's ends.
inline int32_t device_bound(float v, float scale, int32_t graph_zp, bool u8) {
    const int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    int32_t q = v < 0 ? lo : hi;
    if (std::isfinite(v)) {
        const float r = std::nearbyint(v / scale) + static_cast<float>(graph_zp);
        q = static_cast<int32_t>(std::max(static_cast<float>(lo), std::min(static_cast<float>(hi), r)));
    }
    return u8 ? q - 128 : q;
}

/// Narrows [lo, hi] to the real interval a Relu / Clip keeps (model_compiler_units.cpp); false when
/// the node is neither or its bounds are not constant scalars.
bool clamp_of(const ir::Graph& g, const ir::Node& n, float& lo, float& hi);

/// The slopes of a LeakyRelu (alpha) or a PRelu with a constant per-tensor or per-channel slope
/// (model_compiler_units.cpp); false for other nodes.
bool prelu_slopes(const ir::Graph& g, const ir::Node& n, std::vector<float>& slopes);

/// The integer bounds of a Relu/Clip folded into a unit (UnitGraph: attributes npusim_clip_lo/hi),
/// as Act::Clip on the conv lowering; no attributes: no activation stage.
inline void fused_clip(const ir::Node& n, float out_scale, int32_t graph_zp, bool u8, ConvOp& op) {
    if (!n.attrs.has("npusim_clip_lo")) return;
    op.act = Act::Clip;
    op.clip_lo = device_bound(ir::attr_float(n.attrs, "npusim_clip_lo", 0.0f), out_scale, graph_zp, u8);
    op.clip_hi = device_bound(ir::attr_float(n.attrs, "npusim_clip_hi", 0.0f), out_scale, graph_zp, u8);
}

/// (c, h, w) of an IR shape the device layout supports: [1,C,H,W], [1,C] (a vector as channels).
inline bool device_dims(const std::vector<int64_t>& s, int& c, int& h, int& w) {
    if (s.size() == 4 && s[0] == 1) {
        c = static_cast<int>(s[1]), h = static_cast<int>(s[2]), w = static_cast<int>(s[3]);
    } else if (s.size() == 2 && s[0] == 1) {
        c = static_cast<int>(s[1]), h = 1, w = 1;
    } else {
        return false;
    }
    return c > 0 && h > 0 && w > 0;
}

struct PendingLayer {
    Layer layer;
    std::function<std::vector<TaskBody>()> lower;  ///< NPU layers
    bool multicore = false;                        ///< split across the cores (conv family)
    size_t unit_node = 0;                          ///< the UnitGraph node the layer was made from
};

class Compiler {
   public:
    Compiler(const ir::Graph& g, const hw::SocProfile& soc, const CompileOptions& opts, CompiledModel& m)
        : ref_(g), g_(g), soc_(soc), opts_(opts), m_(m) {}

    void run();

   private:
    const ir::Graph& ref_;  ///< the imported graph: layers' ir_nodes index it (CompiledModel::graph)
    const UnitGraph g_;     ///< what is partitioned and lowered
    const hw::SocProfile& soc_;
    const CompileOptions& opts_;
    CompiledModel& m_;
    ArenaBuilder arena_;
    std::vector<PendingLayer> pending_;
    std::vector<std::vector<TaskBody>> bodies_;  ///< per layer
    std::set<size_t> consumed_;                  ///< nodes folded into an earlier layer
    /// Undo record of one classify attempt: the tensors dev() created and the earlier value of each
    /// existing one it handed out (a copy of the whole tensor map per node made the compile
    /// quadratic in graph size, issue 23).
    bool journal_on_ = false;
    std::vector<std::string> journal_new_;
    std::map<std::string, DeviceTensor> journal_old_;
    void rollback_attempt();
    size_t cur_unit_ = 0;                        ///< the node classify() is placing
    std::set<std::string> aliased_;              ///< values already placed inside a concat buffer

    // ---- device tensors -------------------------------------------------------------------

    /// `dims` (c, h, w): the device layout of a value whose IR shape has none (exMatMul's [1,N,M]).
    DeviceTensor& dev(const std::string& name, float scale, int32_t graph_zp, const int* dims = nullptr);

    /// The device tensor of a value that carries its own per-tensor quantization (fold_qdq).
    DeviceTensor& dev_q(const std::string& name);

    std::string shape_of(const std::string& name) const;

    Layer base_layer(size_t i, const std::string& op, Unit unit) const;

    // ---- constraint checker ---------------------------------------------------------------

    /// CPU-fallback notes by node name, from the constraint checker for this SoC's platform.
    /// An unsupported node rejects the model (the vendor toolchain would not convert it).
    std::map<std::string, std::string> checker_cpu_;
    /// The vendor verdict of every node of g_ (check::check_model), empty without a spec.
    std::vector<check::NodeResult> vendor_;
    bool vendor_checked_ = false;

    /// Imported-graph nodes a set of g_ nodes covers, ascending.
    std::vector<size_t> ref_nodes(const std::vector<size_t>& unit_nodes) const;
    /// Per imported node: vendor verdict and the layer it ended in (CompiledModel::decisions).
    void record_decisions();

    void consult_checker();

    // ---- classification -------------------------------------------------------------------

    bool forced_cpu(const ir::Node& n) const;

    void add_cpu(size_t i, const std::string& note, CpuReason why);

    void classify();

    /// Returns false when the op has no NPU lowering at all; throws NpuUnsupported for a
    /// lowering whose preconditions fail.
    bool classify_npu(size_t i);

    /// A unit with several identical QuantizeLinear outputs (UnitGraph): outputs 1.. alias output 0.
    void alias_extra_outputs(size_t i);

    void push_npu(Layer L, std::function<std::vector<TaskBody>()> f, bool multicore);

    bool conv(size_t i);

    /// `fill` produces the OIHW weights at lowering time, and they are released right after, so
    /// that only one layer's copy is alive at a time (ResNet50: 25 MB of weights).
    void push_conv(Layer L, ConvOp op, const std::string& in, const std::string& out,
                   std::function<void(ConvOp&)> fill);
    /// npusim.QLinearConvTranspose: stride phases (lower_conv_phase.cpp, assumption A-CONVT), one core.
    bool conv_transpose(size_t i);
    /// ConvTranspose attributes, channels and the output size checked (int8 unit and fp16 node).
    ConvTransposeOp convtranspose_geometry(const ir::Node& n, const num::Tensor& w);
    /// The layer-internal scratch tensors and the deferred lower_conv_transpose_op (w: the graph's int8
    /// or float weights).
    void push_conv_transpose(Layer L, ConvTransposeOp ct, const std::string& in, const std::string& y,
                             const num::Tensor* w);
    bool conv_transpose_f16(size_t i);  ///< a float ConvTranspose on the fp16 path
    /// A dilated conv whose rows exceed the CBUF as row phases (lower_conv_phase.cpp), one core.
    void push_conv_phases(Layer L, ConvOp op, const std::string& in, const std::string& out, const int8_t* w);

    /// QGemm (a, as, az, B, bs, bz, [C], [ys, yz]) or QLinearMatMul (a, as, az, B, bs, bz, ys, yz)
    /// with a [1, K] input and a constant int8 B: a 1x1 convolution on a 1x1xK input.
    /// `flat` >= 0: the Flatten / Reshape node (to [1, C H W]) that alone feeds this QGemm; the
    /// layer covers both and runs as an H x W convolution of the 4-D tensor (flatten_gemm).
    bool gemm(size_t i, bool matmul, int flat = -1);
    bool flatten_gemm(size_t i);  ///< Flatten of [1,C,H,W] (H W > 1) -> QGemm with constant B
    /// The Flatten node `flat` joins the FullyConnected layer L, which reads its 4-D input x_in.
    void absorb_flatten(Layer& L, size_t flat, const std::string& x_in);

    bool gap(size_t i);

    bool add(size_t i);

    bool maxpool(size_t i);

    /// Reshape/Flatten/Squeeze/Unsqueeze whose input and output have the same device image.
    bool view(size_t i);

    struct ConcatPart {
        std::string name;
        int c_off = 0;
        bool in_place = false;
    };

    /// The inputs of a QLinearConcat with their channel offsets and whether each can be written
    /// in place: same quantization as the output, C2-aligned slice (a partial last atom only at
    /// the end), produced by a node (not a graph input or output), not already placed in another
    /// buffer, not itself holding aliases, not listed twice.
    std::vector<ConcatPart> concat_parts(const ir::Node& n, const DeviceTensor& out);
    /// The parts written in place become channel slices (aliases) of the concat output `y`; returns
    /// how many inputs need a copy instead (int8 and fp16 Concat along channels).
    size_t alias_in_place(const std::vector<ConcatPart>& parts, const std::string& y);

    bool concat(size_t i);
    /// A channel concat with an input starting inside an atom (ShuffleNet's 24 + 24 channels on a
    /// 16-channel C2): each input copied (requantized to the output's quantization) to its own
    /// C2-aligned slice of a layer-internal scratch, then one 1x1 selection convolution (0/1
    /// weights, scale ratio 1: exact) from the scratch to the output.
    bool concat_gather(size_t i, const std::vector<ConcatPart>& parts, const std::string& y);

    /// One requantizing DPU copy per input that is not written in place, into its slice.
    std::vector<TaskBody> lower_concat_copies(const std::string& name, const std::vector<ConcatPart>& parts,
                                              const std::string& y);

    /// Rows [y0, y0 + n) of a tensor (same strides).
    static DeviceTensor rows_of(const DeviceTensor& t, int y0, int n);

    /// DPU-only layers on several cores (seed 001 lists Add, Concat, ... as multi-core capable):
    /// one band of output rows per core; windows shifted to the layer's rows. One core: one call.
    std::vector<TaskBody> across_cores(int h, const std::function<std::vector<TaskBody>(int, int, int)>& f);

    static DeviceTensor slice(const DeviceTensor& parent, int c_off, int c);

    /// DequantizeLinear -> BatchNormalization -> QuantizeLinear as one per-channel affine task.
    bool bn(size_t i);
    /// The end of a DQ -> op unit whose op is chain.back(): Relu / Clip readers of its output (one
    /// each, appended to `chain`, narrowing [lo, hi]), then the QuantizeLinear(s) reading the result
    /// (`qs`: one, or several of one quantization, TensorRT style; outputs 1.. alias the first).
    /// Throws the vendor rule's reason for a chain node the checker sends to the CPU; false when
    /// the nodes are not of that shape.
    bool act_q_tail(std::vector<size_t>& chain, float& lo, float& hi, std::vector<size_t>& qs);
    /// The layer of a DQ (node i) -> op -> [Relu / Clip] -> Q(s) unit (chain and qs from act_q_tail)
    /// as lower_affine_op's per-channel affine task `task_op` (mul / addv in output LSB units, the
    /// activation's [lo, hi] as integer bounds); `note` gets the activations (" -> Relu" ...).
    void push_affine_layer(size_t i, const std::string& layer_op, const std::string& task_op, std::vector<size_t> chain,
                           const std::vector<size_t>& qs, const std::string& x, float lo, float hi,
                           std::vector<double> mul, std::vector<double> addv,
                           const std::function<std::string(const std::string&)>& note);
    /// DequantizeLinear -> Add / Sub / Mul / Div by a per-channel constant ([1,C,1,1], [C,1,1];
    /// a float initializer or the DequantizeLinear of an int8 / uint8 one) -> [Relu / Clip] ->
    /// QuantizeLinear, which onnxruntime runs in float (its QDQ binary-op rule needs the constant's
    /// type to be the activation's: uint8 activations with int8 weights, quantize_static's default,
    /// miss it), as the per-channel affine task (model_compiler_affine.cpp).
    bool const_affine(size_t i);
    /// QLinearAdd / QLinearMul with a constant per-channel or scalar operand (the QOperator format,
    /// or onnxruntime's fusion where the types matched): the same affine task.
    bool const_affine_qlinear(size_t i);

    // ---- the fp16 path (model_compiler_fp16.cpp, CompileOptions::fp16) -------------------

    /// The fp16 device tensor of a float32 value.
    DeviceTensor& dev_f16(const std::string& name, const int* dims = nullptr);  ///< dims: c, h, w of a rank-3 value
    /// A float node the fp16 path lowers; false: not one (the int8 dispatch continues).
    bool classify_fp16(size_t i);
    /// The Relu / Clip (constant bounds) that alone reads `y`, not a graph output: its node and bounds.
    std::optional<size_t> fusable_act_f16(const std::string& y, float& lo, float& hi) const;
    /// Folds activation node `act` into layer L (outputs, IR nodes, op name) and the conv's DPU.
    void fuse_act_f16(Layer& L, size_t act, ConvOp* op, float lo, float hi);
    /// A float-output int8 conv / Gemm (ConvOp::float_out): the Relu / Clip alone reading its output
    /// fused (fusable_act_f16), then its fp16 output tensor made.
    void float_out_act(Layer& L, ConvOp& op);
    void push_conv_f16(Layer L, ConvOp op, const std::string& in, const std::string& out,
                       std::function<void(ConvOp&)> fill);
    void push_dpu_f16(Layer L, Fp16DpuOp op, const std::string& a, const std::string& b, const std::string& y);
    bool conv_f16(size_t i);
    bool gemm_f16(size_t i, bool matmul, int flat = -1);  ///< `flat`: as gemm's (flatten_gemm)
    bool gap_f16(size_t i);
    bool avgpool_f16(size_t i);
    bool eltwise_f16(size_t i);
    bool bn_f16(size_t i);
    bool act_f16(size_t i);
    bool concat_f16(size_t i);
    /// Softmax along W of a [1,C,H,W] tensor, row by row (model_compiler_softmax.cpp, A-SOFTMAX-F16).
    bool softmax_f16(size_t i);
    bool softmax_channels_f16(size_t i);  ///< its axis-1 form: a channel max tree of EW max
    /// A region of element-wise float nodes of one tensor (Sigmoid, SiLU, HardSwish, ...) as the
    /// DPU float-path LUT (model_compiler_fp16_act.cpp); false: not one.
    bool lut_f16(size_t i);
    struct LutPlanF16 {
        std::string x, y, op, note;
        std::vector<size_t> nodes;  ///< the region's unit nodes, ascending
        Fp16Lut table;
    };
    std::optional<LutPlanF16> plan_lut_f16(size_t i) const;
    /// A conv whose output only such a region reads: the table in the conv's EW stage (Act::Lut).
    bool fuse_conv_lut_f16(ConvOp& op, Layer& L);
    /// Add / Sub / Mul / Div by a scalar or per-channel constant as the affine task; false: not one.
    bool const_arith_f16(size_t i);
    /// PRelu with one slope per channel: the EW PReLU multiply (fp16 slopes from the ERDMA).
    bool prelu_f16(size_t i);
    /// A float32 value as a flat fp16 image [1, numel, 1, 1] (row-major order: a recurrent layer's
    /// x_t and h_t are channel slices); an existing device tensor must already be one.
    DeviceTensor& flat_f16(const std::string& name);
    /// LSTM / GRU unrolled over the sequence (model_compiler_rnn.cpp, assumption A-RNN).
    bool rnn_f16(size_t i);

    // ---- element-wise tables (lower_act.cpp) -----------------------------------------------

    /// The imported nodes `ref_idx` (ascending) evaluated by the reference library on all 256
    /// codes of `x`: the device code of `y` per input device code + 128.
    std::vector<int8_t> lut_table(const std::vector<size_t>& ref_idx, const std::string& x, const std::string& y) const;
    void push_lut(Layer L, const std::string& x, const std::string& y, std::vector<int8_t> table);
    /// A table layer: the unit nodes it covers, input and output values with their quantization.
    struct LutPlan {
        std::vector<size_t> units;
        std::vector<size_t> feed;  ///< constant-only nodes the table reads but other layers own
        std::string x, y, op, note, name;
        float xs = 1, ys = 1;
        int32_t xz = 0, yz = 0;  ///< graph zero points
    };
    bool lut_allowed(size_t u) const;  ///< not forced to / kept on the CPU, not yet consumed
    /// QLinearSigmoid / QLinearLeakyRelu (Swish when a QLinearMul(x, sigmoid(x)) reads it), and
    /// QLinearAdd / QLinearMul with a scalar constant input; nothing: not such a node.
    std::optional<LutPlan> plan_lut_unit(size_t i) const;
    /// DequantizeLinear -> element-wise float ops with scalar constants -> QuantizeLinear.
    std::optional<LutPlan> plan_lut_region(size_t dq) const;
    /// The table layer reading value v when it is v's only reader (fusion into v's producer).
    std::optional<LutPlan> plan_lut_after(const std::string& v) const;
    void push_lut_plan(size_t i, const LutPlan& p);
    std::vector<size_t> eval_nodes(const LutPlan& p) const;  ///< imported nodes the table evaluates
    bool lut_unit(size_t i);
    bool lut_region(size_t dq);
    /// A conv whose output only a table layer reads: the table in the conv's EW stage (Act::Lut,
    /// the seed's ConvolutionSigmoid / -Swish / ... fused forms); `out` becomes the table's output.
    bool fuse_conv_lut(ConvOp& op, Layer& L, std::string& out);

    // ---- data movement (model_compiler_move.cpp, issue 15) ----
    bool slice_node(size_t i);   ///< int8 Slice: channel view, PPU window copy or 1x1 selection conv
    bool split_node(size_t i);   ///< int8 Split along channels: C2-aligned views
    bool resize_node(size_t i);  ///< int8 nearest Resize by integer factors: DPU copies
    bool pad_node(size_t i);     ///< int8 constant Pad of H / W: DPU fills and a notched copy
    /// int8 / fp16 Tile and Expand of a [1,C,H,W] tensor (issue 15): a channel selection conv when C
    /// grows, then the spatial tile's DPU copies (lower_tile_op; a broadcast from 1 is a tile).
    bool tile_node(size_t i);
    /// A layer-internal scratch tensor (scratch_) of `like`'s quantization and precision, c x h x w.
    std::string scratch_like(const DeviceTensor& like, const std::string& name, int c, int h, int w);
    /// The tasks that tile `x` into `y` (y's dims whole multiples of x's): out channel k = in
    /// channel k % x.c by a 1x1 selection conv into `chan` (a scratch of y.c x x.h x x.w; empty: the
    /// conv writes y, which then has x's H and W), then lower_tile_op. `intermediate`: every task
    /// writes a layer-internal scratch (a broadcast operand of Add / Mul / ...).
    std::vector<TaskBody> tile_tasks(const std::string& name, const std::string& x, const std::string& y,
                                     const std::string& chan, int core, bool intermediate);
    /// Bilinear Resize by integer factors (lower_resize.cpp), from resize_node.
    bool resize_bilinear_node(size_t i, const std::string& ctm, int64_t sh, int64_t sw);
    bool concat_spatial(size_t i, int64_t axis);  ///< QLinearConcat along H (2) or W (3): DPU copies
    bool avgpool_node(size_t i);  ///< QLinearAveragePool: depthwise conv, all-ones kernel
    /// AveragePool attributes checked (one divisor for every window) as a depthwise ConvOp (int8 and fp16).
    ConvOp avgpool_op(const ir::Node& n);
    bool global_maxpool_node(size_t i);  ///< int8 GlobalMaxPool: PPU max pool over the whole image
    // ---- sequence operators (model_compiler_seq.cpp, issue 15) ----
    bool gather_node(size_t i);  ///< int8 Gather, constant indices: selection conv / PPU row copies
    /// The layer L as a 1x1 selection conv from x to y (device tensors already made): output
    /// channel k = input channel idx[k], exact (int8 or fp16).
    void push_selection_conv(Layer L, const std::string& name, const std::string& x, const std::string& y,
                             const std::vector<int64_t>& idx, bool f16);
    /// The channel shuffle Reshape [1,g,C/g,H,W] -> Transpose (0,2,1,3,4) -> Reshape [1,C,H,W] at
    /// its first Reshape: one int8 channel permutation, a 1x1 selection conv (A-SHUFFLE).
    bool channel_shuffle_node(size_t i);
    /// The exMatMul pattern a Reshape / Transpose node i starts (QLinearMatMul of A [1,K,1,N] through
    /// Reshape [1,K,N] + Transpose (0,2,1) and B [1,K,1,M] through Reshape [1,K,M]): one NPU layer
    /// at the pattern's first node, the CNA reading A as run-time weights (lower_matmul.cpp).
    bool exmatmul_node(size_t i);

    // ---- channel-last layouts (model_compiler_layout.cpp, issue 15) ----
    /// int8 Transpose (0, 2, 3, 1) of a [1,C,H,W] tensor: a DPU copy writing it channel-last
    /// (TP_EN, assumption A-TP) into a row-major tensor (DeviceTensor::row_major).
    bool transpose_node(size_t i);
    /// Reshape / Flatten / Squeeze / Unsqueeze of a row-major tensor: a view (same bytes);
    /// false when the input is not row-major (view() decides).
    bool row_major_view(size_t i);
    /// The row-major device tensor of a quantized value (created, or the existing row-major one).
    DeviceTensor& dev_row_major(const std::string& name);
    bool row_major_ok_ = false;  ///< dev() may hand out a row-major tensor (only to the code above)
    /// DequantizeLinear -> QuantizeLinear (nothing between): a per-tensor affine DPU task
    /// (model_compiler_requant.cpp).
    bool requant_node(size_t i);
    /// DequantizeLinear -> PRelu (one slope per channel) -> QuantizeLinear: lower_prelu_op.
    bool prelu_node(size_t i);
    /// Layer-internal scratch tensors (not graph values) by name, with the unit node whose layer
    /// uses them: planned like activations, live during that layer only.
    std::map<std::string, size_t> scratch_;

    std::map<std::string, int> slice_off_;  ///< channel offset of values placed in a concat buffer

    /// CPU layers that only produce graph outputs nobody reads (the DequantizeLinear of each
    /// YOLO head) move to the end, so they do not split the NPU chain into several steps.
    void defer_output_cpu_layers();

    // ---- memory plan ----------------------------------------------------------------------

    std::string root_of(const std::string& name) const;

    /// Lifetime [first, last] layer index of every root buffer: any layer touching the tensor
    /// or an alias of it; graph inputs live from the start (-1), graph outputs to the end.
    std::map<std::string, std::pair<int, int>> lifetimes() const;

    void plan_memory();

    /// Provisional offsets: roots where the planner put them, aliases relative to their parent
    /// (concat slices at their channel offset, with the parent's surface stride).
    void assign_offsets(const std::map<std::string, uint64_t>& root_off);
    uint64_t act_bytes_ = 0;
    uint64_t init_estimate_ = 0;  ///< expected initialised arena bytes (weights, operands)

    // ---- lowering -------------------------------------------------------------------------

    void lower_all();

    // ---- steps ----------------------------------------------------------------------------

    void build_steps();
    std::vector<TaskBody> flat_bodies_;

    // ---- placement and linking ------------------------------------------------------------

    /// 64-byte task blocks: the body, the 4 ending entries, NOP padding.
    uint64_t entries(size_t t) const { return align_up(flat_bodies_[t].words.size() + hw::rknpu::kTaskEndEntries, 8); }

    void place();

    /// Patches task t's provisional activation addresses, appends its ending entries (linking to
    /// task `next`, or 0 after the last), writes it at its regcmd offset and records relocations.
    void encode_task(size_t t, int64_t next, uint64_t act_base);
};

}  // namespace drv::rknpu::compiler_detail
