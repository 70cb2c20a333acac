// SPDX-License-Identifier: MIT
// Internal interface of the model compiler (compile_model, model.h): the arena being built and
// the per-operator lowerings that turn one layer into task bodies. A task body is a regcmd
// stream without its 4 task-ending entries; compile_model links bodies into per-core chains
// (ending entries, 64-byte padding), places them in the arena and records the relocations.
//
// Address convention: every device address a lowering writes into a register is an ARENA OFFSET
// (arena base 0); the lowering lists the indices of those words in TaskBody::addr_words so that
// relocate() can add the real base later.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "drv/regcmd/builder.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"

namespace drv::rknpu {

/// The arena under construction: initialised bytes first (weights, operands, regcmd), then
/// activations reserved by the memory planner.
class ArenaBuilder {
   public:
    /// Append initialised bytes (aligned); returns their arena offset.
    uint64_t add_init(const std::vector<uint8_t>& bytes, uint64_t align = 64);
    /// Reserve uninitialised bytes after everything else (activations); returns the offset.
    uint64_t reserve(uint64_t bytes, uint64_t align = 64);
    /// Append `bytes` zero-filled initialised bytes, returns their offset; the caller may fill them
    /// in place (init()[offset - init_base()]). In placeholder mode they are only laid out.
    uint64_t add_placeholder(uint64_t bytes, uint64_t align = 64);
    /// Timing-only compile (CompileOptions::timing_only): while on, initialised bytes get their
    /// offsets but are not kept (no data moves in timing mode); init() then starts at init_base().
    /// Every placeholder precedes every kept byte (the regcmd, added after the lowerings).
    void set_placeholders(bool on) { placeholders_ = on; }
    bool placeholders() const { return placeholders_; }
    /// Arena offset of init()[0] (0 unless placeholders were laid out first).
    uint64_t init_base() const { return base_; }
    /// End of the initialised part (init_base() + init().size()).
    uint64_t init_end() const { return base_ + init_.size(); }
    std::vector<uint8_t>& init() { return init_; }
    uint64_t size() const { return size_; }
    /// Room for `bytes` initialised bytes without regrowth, backed by transparent huge pages
    /// where the kernel allows (first touch of 25 MB of 4 KiB pages dominated packing ResNet50).
    void reserve_init(uint64_t bytes);

   private:
    uint64_t place(uint64_t bytes, uint64_t align);
    std::vector<uint8_t> init_;
    uint64_t base_ = 0;
    uint64_t size_ = 0;
    bool placeholders_ = false;
};

/// One task before linking.
struct TaskBody {
    std::vector<uint64_t> words;     ///< register entries only (no ending entries)
    std::vector<size_t> addr_words;  ///< indices into words whose value field is an arena offset
    NpuTask meta;                    ///< enable_mask, int_mask, what, macs, windows, banks (offsets filled at link)
};

/// Helper for lowerings: a Builder that also remembers which entries carry arena offsets.
struct BodyBuilder {
    regcmd::Builder b;
    std::vector<size_t> addr_words;
    void write(const std::string& reg, uint32_t v) { b.write(reg, v); }
    void write_fields(const std::string& reg, std::initializer_list<regcmd::FieldValue> f) { b.write_fields(reg, f); }
    /// Write an arena offset into an address register and record it for relocation.
    void write_addr(const std::string& reg, uint64_t arena_offset);
    TaskBody finish(const NpuTask& meta) const;
};

/// A float function y = f(x) sampled for the DPU float path's LUT (fp16_lut.cpp), both tables:
/// LO (257 fp16 entries) on [-range/4, range/4] in steps of 2^lo_index_select, preferred where it
/// covers x; LE (65 fp16 entries) on [-range, range] in steps of 2^index_select elsewhere; linear
/// interpolation between entries; below / above LE the first / last LE entry extrapolated with the
/// slope scale x 2^-shift (int16 scale, 5-bit shift: the DPU_LUT_LE_SLOPE_* fields).
struct Fp16Lut {
    float start = 0;             ///< LE start (-range)
    int index_select = 0;        ///< log2 of the LE entry step
    float lo_start = 0;          ///< LO start (-range / 4)
    int lo_index_select = 0;     ///< log2 of the LO entry step (negative: steps below 1)
    std::vector<uint16_t> le;    ///< 65 fp16 entries
    std::vector<uint16_t> lo;    ///< 257 fp16 entries
    int16_t uflow_scale = 0, oflow_scale = 0;
    uint8_t uflow_shift = 0, oflow_shift = 0;
    float end() const;     ///< LE end (range)
    float lo_end() const;  ///< LO end (range / 4)
};
/// The tables of f for [-range, range] (range a power of two, 2^-4..2^12): `f` maps the 257 LO
/// grid points, the 65 LE grid points, then -2 range and 2 range to their values; the
/// extrapolation slopes are the secants over [-2 range, -range] and [range, 2 range]. Throws
/// std::invalid_argument when a value is not finite or out of the fp16 range.
Fp16Lut make_fp16_lut(float range, const std::function<std::vector<float>(const std::vector<float>&)>& f);
/// The value the DPU's float path computes for x from `t` (the lookup of npu_models' engine on the
/// same fields; for the compiler's own checks and tests).
float fp16_lut_eval(const Fp16Lut& t, float x);

/// Fused activation after a conv / eltwise op, in the int8 output domain.
/// Lut: the conv's requantized int8 output code (saturated) indexes `ConvOp::lut` in the EW stage
/// (a fused Sigmoid / Swish / ... after the convolution, lower_act.cpp); on the fp16 path the fp32
/// value indexes `ConvOp::lut_f` (fp16_lut.cpp).
/// Prelu: a LeakyRelu / PRelu after the convolution with no quantization between (onnxruntime's
/// QDQ DQ -> Conv -> LeakyRelu -> Q): negative values times `ConvOp::prelu` (one slope, or one per
/// output channel) in the EW stage's PReLU multiply before the output convert (conv_prelu.cpp).
enum class Act { None, Relu, Clip, Lut, Prelu };

/// The image of runtime weights (ConvOp::runtime_weights): `offset` (set by the caller: activation
/// memory of out_c x taps x padded channels bytes, written by earlier tasks); lower_conv_op fills
/// the rest: kernel group [k0, k0 + kg) of its tiling at `offset + k0 * per_kernel`, elements
/// placed by hw::rknpu::weight_element(blocks, kernels in the group, taps, cpad, k - k0, tap, channel).
struct RuntimeWeights {
    uint64_t offset = 0, per_kernel = 0;
    int kg = 0, cpad = 0, taps = 0;
};

/// A quantized convolution as the compiler hands it to the conv lowering (from QLinearConv /
/// QGemm-as-1x1-conv / GlobalAveragePool-as-depthwise). Input and output quantization are in the
/// int8 domain of the DeviceTensors (uint8 graph tensors already shifted).
struct ConvOp {
    std::string name;
    int in_c = 0, out_c = 0;
    int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
    int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    bool depthwise = false;             ///< group == in_c == out_c
    std::vector<int8_t> weights;        ///< OIHW (depthwise: C x 1 x KH x KW), weight zero point 0
    /// Instead of `weights`: the same OIHW values owned elsewhere (the compiler's graph constant),
    /// alive during the lowering; saves a copy of every layer's weights. Null: `weights` is used.
    const int8_t* weights_ref = nullptr;
    std::vector<float> w_scales;        ///< per output channel (size out_c) or one value
    std::vector<int32_t> bias;          ///< per output channel (scale in_scale * w_scale[c]) or empty
    float in_scale = 1.f, out_scale = 1.f;
    int32_t in_zp = 0, out_zp = 0;      ///< int8 domain
    Act act = Act::None;
    int32_t clip_lo = -128, clip_hi = 127;  ///< int8 output domain, for Act::Clip
    /// The fp16 path (issue 14): fp16 input/weights/output tensors (DeviceTensor::fp16), fp32
    /// accumulation, the DPU's float path adding an fp32 bias; the int8 fields above are unused.
    bool fp16 = false;
    std::vector<float> weights_f;         ///< OIHW float weights (rounded to fp16 when packed)
    const float* weights_f_ref = nullptr; ///< instead of weights_f: the graph constant's values
    /// per output channel, or empty. fp16 and float_out: the float bias. int8 (float_ref): the
    /// float bias in real units, `bias` then empty.
    std::vector<float> bias_f;
    float clip_lo_f = 0.f, clip_hi_f = 0.f;  ///< Act::Clip bounds in real values (either may be +-inf)
    /// An int8 convolution with a float output (a QDQ conv whose output no QuantizeLinear reads: the
    /// TensorRT-style heads): the int8 fields above for the input and weights (out_scale / out_zp and
    /// `bias` unused), `bias_f` the float bias in real units; the int32 accumulator goes through the
    /// DPU's float path (assumption A-I2F): (acc - in_zp sum(w) + bias_f / m) x m with m = in_scale x
    /// w_scale[c], written as fp16 (an fp16 output tensor, DeviceTensor::fp16).
    bool float_out = false;
    /// An int8 conv that onnxruntime runs in float (a QDQ unit its fusions leave unfused: TensorRT's
    /// per-consumer input quantizers, a Relu its Q does not imply, several Qs of the output), so
    /// the reference is Q(sum(x w) in_scale w_scale[c] + bias_f[c]): the float bias is not rounded
    /// to an int32 of scale in_scale w_scale[c] (its integer part is the BS ALU add, the fraction
    /// the BN ALU add after the BS multiply) and the requantization multiplier in_scale w_scale[c] /
    /// out_scale is formed in double, not in float32 as QLinearConv forms it.
    bool float_ref = false;
    /// Act::Lut on the fp16 path (fp16): the float-path table of the fused function (fp16_lut.cpp).
    Fp16Lut lut_f;
    /// Act::Lut: the layer's output code per conv output code + 128 (256 entries); out_scale and
    /// out_zp are then the conv's own output quantization, the output tensor's is the table's.
    std::vector<int8_t> lut;
    std::vector<float> prelu;  ///< Act::Prelu: negative slope, one value or out_c values
    /// Weights written at run time by earlier tasks (exMatMul, lower_matmul.cpp) at the offset given
    /// here: not packed, no bias and no zero-point fold (the accumulator is requantized as it is;
    /// PAD_VALUE = in_zp). Null: the weights above.
    RuntimeWeights* runtime_weights = nullptr;
};

/// Lower one conv to tasks: splits along output rows (with the kernel's halo rows re-read) and
/// along output channels so that every task fits the CBUF, assigns tasks round-robin by row band
/// to `cores` (one core = all tasks on it), packs weights/bias/operands into the arena.
/// Throws std::invalid_argument naming the op when no tiling exists.
std::vector<TaskBody> lower_conv_op(const ConvOp& op, const DeviceTensor& in, const DeviceTensor& out,
                                    ArenaBuilder& arena, const hw::SocProfile& soc, const std::vector<int>& cores);

}  // namespace drv::rknpu

namespace drv::rknpu {

/// GLOBAL.OPERATION_ENABLE bits of a task (the values of npu::rknpu::enable; the driver does not
/// link the NPU model).
inline constexpr uint32_t kEnableCna = 1u << 0, kEnableCore = 1u << 2, kEnableDpu = 1u << 3,
                          kEnableDpuRdma = 1u << 4, kEnablePpu = 1u << 5, kEnablePpuRdma = 1u << 6;

/// DPU-only and PPU lowerings (helper B: lower_eltwise.cpp, lower_pool.cpp). All run on one
/// core, one task (the DPU/PPU cube fields hold every tensor of the zoo models); they throw
/// std::invalid_argument naming the op when a value does not fit a register field, and the
/// compiler then falls back to the CPU for that layer.

/// out = sat(round(ra * (a - a.zp) + rb * (b - b.zp)) + out.zp), ra = a.scale / out.scale,
/// rb = b.scale / out.scale (QLinearAdd): MRDMA reads a, ERDMA reads b.
std::vector<TaskBody> lower_add_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                   const DeviceTensor& out, ArenaBuilder& arena, const hw::SocProfile& soc, int core);

/// out = sat(round(rb * (b - b.zp) - ra * (a - a.zp)) + out.zp) (Sub with the MRDMA input a subtracted:
/// b - a; the BS multiplier carries the sign, the EW convert scale stays positive).
std::vector<TaskBody> lower_rsub_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                    const DeviceTensor& out, ArenaBuilder& arena, const hw::SocProfile& soc, int core);

/// out = sat(round(max / min(ra * (a - a.zp), rb * (b - b.zp))) + out.zp): the EW ALU's MAX / MIN of the
/// two scaled terms (Max / Min of two int8 tensors, b may be [1,C,1,1]).
std::vector<TaskBody> lower_max_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                   const DeviceTensor& out, ArenaBuilder& arena, const hw::SocProfile& soc, int core);
std::vector<TaskBody> lower_min_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                   const DeviceTensor& out, ArenaBuilder& arena, const hw::SocProfile& soc, int core);

/// out = sat(round(sa * sb / so * (a - a.zp) * (b - b.zp)) + out.zp) (QLinearMul): the EW stage
/// multiplies the two zero-point-corrected cubes, the output convert applies the scale.
std::vector<TaskBody> lower_mul_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                   const DeviceTensor& out, ArenaBuilder& arena, const hw::SocProfile& soc, int core);

/// lower_affine_op with the output clamped to [clip_lo, clip_hi] (int8 device domain) in the same
/// task: a Relu / Clip after the affine map (DequantizeLinear -> BatchNormalization -> Relu -> Q, as
/// TensorRT-style exports write it), exact since the clamp commutes with the rounding shift.
std::vector<TaskBody> lower_affine_op(const std::string& name, const std::string& op, const DeviceTensor& in,
                                      const DeviceTensor& out, const std::vector<double>& mul,
                                      const std::vector<double>& add, int32_t clip_lo, int32_t clip_hi,
                                      ArenaBuilder& arena, const hw::SocProfile& soc, int core);

/// Per-channel affine map in output LSB units: out = sat(round(mul[c] * (x - in.zp) + add[c]) + out.zp).
/// One value in mul/add applies to every channel. BatchNormalization between DQ and Q, and the
/// requantizing copy of a concat input (mul = in.scale / out.scale, add = 0). `op` names the task.
std::vector<TaskBody> lower_affine_op(const std::string& name, const std::string& op, const DeviceTensor& in,
                                      const DeviceTensor& out, const std::vector<double>& mul,
                                      const std::vector<double>& add, ArenaBuilder& arena, const hw::SocProfile& soc,
                                      int core);

/// out[e] = table[in[e] + 128] (int8 device codes): the EW stage's LO table holds one entry per
/// input code, the output convert is the identity (lower_act.cpp). `op` names the task.
std::vector<TaskBody> lower_lut_op(const std::string& name, const std::string& op, const DeviceTensor& in,
                                   const DeviceTensor& out, const std::vector<int8_t>& table, ArenaBuilder& arena,
                                   const hw::SocProfile& soc, int core);

/// Max pooling of an int8 tensor on the PPU (PPU_RDMA input), padding reads -128; of an fp16 tensor
/// (DeviceTensor::fp16) in fp16, padding -inf.
struct PoolOp {
    std::string name;
    int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
    int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};
std::vector<TaskBody> lower_maxpool_op(const PoolOp& op, const DeviceTensor& in, const DeviceTensor& out,
                                       ArenaBuilder& arena, const hw::SocProfile& soc, int core);

}  // namespace drv::rknpu

namespace drv::rknpu {

/// A DPU-only operation of the fp16 path (lower_fp16.cpp): fp16 tensors (DeviceTensor::fp16) read
/// by the MRDMA (and the ERDMA for Add/Mul), computed on the DPU's float path, written as fp16.
/// Add/Mul: out = a + b / a * b (b the same shape, or [1,C,1,1]: the ERDMA per channel), then the
/// clamp [lo, hi] with lo 0 or -inf (EW ReLU / RELUX).
/// Affine: out = mul[c] * x + add[c] (one value: every channel; BS MUL by an fp16 operand, BN ALU
/// add of an fp32 operand), then the clamp (lo 0 or -inf; BN ReLU / RELUX): BatchNormalization,
/// a standalone Relu/Clip(0, hi) (mul 1, add 0), Add/Sub/Mul/Div by a scalar or per-channel
/// constant and a concat copy (identity: every stage bypassed).
/// Lut: out = lut(x) (EW LUT, float path): Sigmoid, Tanh, SiLU, HardSwish, ... (fp16_lut.cpp).
/// Prelu: out = x < 0 ? mul[c] x : x (EW PReLU multiply by fp16 slopes, ERDMA per channel).
struct Fp16DpuOp {
    enum class Kind { Add, Mul, Affine, Lut, Prelu };
    Kind kind = Kind::Affine;
    std::string what;  ///< task description ("add", "batchnorm", "concat copy", ...)
    std::vector<float> mul, add;
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    Fp16Lut lut;
    /// Kind::Add: the EW ALU algorithm (regdb alu_algo: 0 max, 1 min, 2 add, 3 div, 4 minus) of the
    /// task input x against the ERDMA operand y (x / y, x - y: COMPILER.md A-EWALU).
    uint32_t alu_algo = 2;
};
/// Throws std::invalid_argument naming the op when a tensor does not fit (then the layer runs on
/// the CPU). `b` is the second input of Add/Mul (nullptr for Affine and Lut).
std::vector<TaskBody> lower_fp16_dpu_op(const std::string& name, const Fp16DpuOp& op, const DeviceTensor& a,
                                        const DeviceTensor* b, const DeviceTensor& out, ArenaBuilder& arena,
                                        const hw::SocProfile& soc, int core);

}  // namespace drv::rknpu
