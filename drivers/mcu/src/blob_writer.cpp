// SPDX-License-Identifier: MIT
// Graph IR -> MCU model blob (see blob_writer.h and firmware/runtime/mcu_blob.h).
#include "mcu/blob_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/ir/graph.h"
#include "mcu_blob.h"
#include "mk/mk_common.h"
#include "mk/mk_f32.h"
#include "numerics/ops.h"

namespace mcu {
namespace {

using drv::ir::Graph;
using drv::ir::Node;
using drv::ir::Value;

int32_t f2i(float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i;
}

uint32_t mk_dtype(num::DType d, const std::string& where) {
    switch (d) {
        case num::DType::F32: return MK_DT_F32;
        case num::DType::I8: return MK_DT_S8;
        case num::DType::I32:
        case num::DType::I64: return MK_DT_S32;  // int64 results (ArgMax) are produced as int32
        default: throw ConvertError(where + ": dtype " + num::dtype_name(d) + " is not supported on the MCU (int8/fp32)");
    }
}
size_t mk_elem(uint32_t dt) { return dt == MK_DT_S8 ? 1 : 4; }

/// ONNX shape -> NHWC dims (rank 4: N,C,H,W -> N,H,W,C; lower ranks right-aligned, no permutation).
std::vector<int32_t> dims4(const std::vector<int64_t>& s) {
    std::vector<int32_t> d(4, 1);
    if (s.size() == 4) {
        d = {int32_t(s[0]), int32_t(s[2]), int32_t(s[3]), int32_t(s[1])};
    } else {
        for (size_t i = 0; i < s.size() && i < 4; ++i) d[4 - s.size() + i] = int32_t(s[i]);
    }
    return d;
}

template <typename T>
std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
    std::vector<uint8_t> b(v.size() * sizeof(T));
    if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

/// NCHW bytes -> NHWC bytes for a rank-4 tensor.
std::vector<uint8_t> nchw_to_nhwc(const uint8_t* src, const std::vector<int64_t>& s, size_t elem) {
    const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
    std::vector<uint8_t> out(size_t(N * C * H * W) * elem);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t y = 0; y < H; ++y)
                for (int64_t x = 0; x < W; ++x)
                    std::memcpy(&out[size_t(((n * H + y) * W + x) * C + c) * elem], src + size_t(((n * C + c) * H + y) * W + x) * elem, elem);
    return out;
}

struct Tens {
    mk_blob_tensor rec{};
    std::vector<uint8_t> data;   // const payload (or input init payload)
    int first = 1 << 30, last = -1;
};

class Converter {
   public:
    Converter(const Graph& g, const ConvertOptions& o) : g_(g), opts_(o) {}
    Blob run(const std::map<std::string, num::Tensor>& inputs);

   private:
    // ---- tensors ----
    uint32_t act(const std::string& name);
    uint32_t add_const(uint32_t dt, std::vector<uint8_t> bytes, std::vector<int32_t> d);
    const num::Tensor& cval(const Node& n, size_t i) const;
    float cf(const Node& n, size_t i) const;
    int32_t czp(const Node& n, size_t i) const;
    std::vector<float> cfs(const Node& n, size_t i) const;
    void set_quant(uint32_t t, float s, int32_t z) { t_[t].rec.scale = s; t_[t].rec.zero_point = z; }
    // ---- layers ----
    mk_blob_layer& layer(const Node& n, uint32_t op, std::vector<uint32_t> in, uint32_t out, const char* kernel,
                         uint64_t macs = 0);
    void conv_s8(const Node& n);
    void gemm_s8(const Node& n, bool qgemm);
    void pool(const Node& n, bool max, bool s8);
    void gap_s8(const Node& n);
    void reshape(const Node& n);
    void quantize(const Node& n, bool q);
    void eltwise_s8(const Node& n, bool mul);
    void lut_s8(const Node& n);
    void conv_f32(const Node& n);
    void gemm_f32(const Node& n);
    void unary_f32(const Node& n, int op, float alpha, float beta);
    void binary_f32(const Node& n, int op);
    void softmax(const Node& n, bool log);
    void concat(const Node& n);
    void argmax(const Node& n);
    void transpose(const Node& n);
    void pad(const Node& n);
    void slice(const Node& n);
    void resize(const Node& n);
    void reduce(const Node& n, int op);
    void gap_f32(const Node& n);
    void qconcat(const Node& n);
    void gru(const Node& n);
    void batchnorm(const Node& n);
    uint32_t scratch_f32(uint32_t floats);
    std::vector<int64_t> const_ints(const Node& n, size_t i) const;
    void node(const Node& n);
    void bcast(mk_blob_layer& l, const std::string& a, const std::string& b, const std::string& out);
    void plan_arena();

    const Graph& g_;
    ConvertOptions opts_;
    std::vector<Tens> t_;
    std::map<std::string, uint32_t> by_name_;
    std::vector<mk_blob_layer> layers_;
    std::vector<BlobLayerInfo> info_;
    uint32_t arena_bytes_ = 0;
};

const num::Tensor& Converter::cval(const Node& n, size_t i) const {
    const Value& v = g_.value(n.input(i), n.label());
    if (!v.is_constant()) throw ConvertError(n.label() + ": input " + std::to_string(i) + " ('" + v.name + "') must be a constant");
    return *v.data;
}
float Converter::cf(const Node& n, size_t i) const {
    const num::Tensor& t = cval(n, i);
    if (t.dtype() != num::DType::F32 || t.numel() != 1) throw ConvertError(n.label() + ": scale input " + std::to_string(i) + " must be a float scalar");
    return t.data<float>()[0];
}
int32_t Converter::czp(const Node& n, size_t i) const {
    if (!n.has_input(i)) return 0;
    const num::Tensor& t = cval(n, i);
    if (t.numel() != 1) throw ConvertError(n.label() + ": per-axis zero points are not supported here");
    if (t.dtype() == num::DType::I8) return t.data<int8_t>()[0];
    throw ConvertError(n.label() + ": zero point must be int8 (uint8 quantization is not an MCU path; seed 000 s1.4 rule 8)");
}
std::vector<float> Converter::cfs(const Node& n, size_t i) const {
    const num::Tensor& t = cval(n, i);
    if (t.dtype() != num::DType::F32) throw ConvertError(n.label() + ": scales must be float");
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

uint32_t Converter::act(const std::string& name) {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return it->second;
    const Value& v = g_.value(name);
    if (v.is_constant()) {
        // A constant used as an activation operand (e.g. Add's B): stored in the blob.
        const num::Tensor& c = *v.data;
        const uint32_t dt = mk_dtype(c.dtype(), "constant '" + name + "'");
        std::vector<uint8_t> bytes(c.raw(), c.raw() + c.nbytes());
        if (c.rank() == 4) bytes = nchw_to_nhwc(c.raw(), c.shape(), c.nbytes() / std::max<size_t>(1, c.numel()));
        const uint32_t idx = add_const(dt, std::move(bytes), dims4(c.shape()));
        if (!v.quant.empty() && !v.quant.per_axis()) set_quant(idx, v.quant.scale[0], v.quant.zero_point.empty() ? 0 : v.quant.zero_point[0]);
        by_name_[name] = idx;
        return idx;
    }
    for (int64_t d : v.shape)
        if (d <= 0) throw ConvertError("value '" + name + "' has an unknown/empty shape " + v.shape_str());
    Tens t;
    t.rec.dtype = mk_dtype(v.dtype, "value '" + name + "'");
    t.rec.storage = MK_ST_ARENA;
    t.rec.bytes = uint32_t(size_t(std::max<int64_t>(1, v.numel())) * mk_elem(t.rec.dtype));
    const auto d = dims4(v.shape);
    std::copy(d.begin(), d.end(), t.rec.dims);
    if (!v.quant.empty()) {
        if (v.quant.per_axis()) throw ConvertError("value '" + name + "': per-axis activation quantization is not supported (seed 000: activations per tensor)");
        t.rec.scale = v.quant.scale[0];
        t.rec.zero_point = v.quant.zero_point.empty() ? 0 : v.quant.zero_point[0];
    }
    t_.push_back(std::move(t));
    by_name_[name] = uint32_t(t_.size() - 1);
    return uint32_t(t_.size() - 1);
}

uint32_t Converter::add_const(uint32_t dt, std::vector<uint8_t> bytes, std::vector<int32_t> d) {
    Tens t;
    t.rec.dtype = dt;
    t.rec.storage = MK_ST_CONST;
    t.rec.bytes = uint32_t(bytes.size());
    std::copy(d.begin(), d.end(), t.rec.dims);
    t.data = std::move(bytes);
    t_.push_back(std::move(t));
    return uint32_t(t_.size() - 1);
}

mk_blob_layer& Converter::layer(const Node& n, uint32_t op, std::vector<uint32_t> in, uint32_t out, const char* kernel,
                                uint64_t macs) {
    mk_blob_layer l{};
    l.op = op;
    l.n_in = uint32_t(in.size());
    l.n_out = 1;
    for (size_t k = 0; k < in.size(); ++k) l.in[k] = in[k];
    l.out = out;
    std::strncpy(l.name, n.name.c_str(), sizeof l.name - 1);
    const int idx = int(layers_.size());
    for (uint32_t i : in) {
        t_[i].first = std::min(t_[i].first, idx);
        t_[i].last = std::max(t_[i].last, idx);
    }
    t_[out].first = std::min(t_[out].first, idx);
    t_[out].last = std::max(t_[out].last, idx);
    layers_.push_back(l);
    info_.push_back({n.name, n.op_type, kernel, macs});
    return layers_.back();
}

// Conv geometry from attributes; pads [t, l, b, r].
struct Geo {
    int32_t kh, kw, sh, sw, dh, dw, pt, pl;
};
Geo conv_geo(const Node& n, int64_t kh, int64_t kw) {
    const auto st = drv::ir::attr_ints(n.attrs, "strides", {1, 1});
    const auto dl = drv::ir::attr_ints(n.attrs, "dilations", {1, 1});
    const auto pd = drv::ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
    const std::string ap = drv::ir::attr_string(n.attrs, "auto_pad", "NOTSET");
    if (ap != "NOTSET" && ap != "VALID" && !n.attrs.has("pads"))
        throw ConvertError(n.label() + ": auto_pad=" + ap + " must be resolved to explicit pads by the importer");
    if (st.size() != 2 || dl.size() != 2 || pd.size() != 4) throw ConvertError(n.label() + ": only 2-D convolutions/pools are supported");
    return {int32_t(kh), int32_t(kw), int32_t(st[0]), int32_t(st[1]), int32_t(dl[0]), int32_t(dl[1]), int32_t(pd[0]), int32_t(pd[1])};
}

void Converter::conv_s8(const Node& n) {
    // QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const float xs = cf(n, 1), ys = cf(n, 6);
    const int32_t xz = czp(n, 2), yz = czp(n, 7);
    set_quant(x, xs, xz);
    set_quant(y, ys, yz);
    const num::Tensor& w = cval(n, 3);
    if (w.dtype() != num::DType::I8 || w.rank() != 4) throw ConvertError(n.label() + ": weights must be int8 [M, C/g, kh, kw]");
    if (n.has_input(5)) {
        const num::Tensor& wz = cval(n, 5);
        for (size_t i = 0; i < wz.numel(); ++i)
            if (wz.data<int8_t>()[i] != 0) throw ConvertError(n.label() + ": weight zero points must be 0 (symmetric int8 weights, seed 000 s1.4 rule 8)");
    }
    const int64_t M = w.dim(0), Cg = w.dim(1), kh = w.dim(2), kw = w.dim(3);
    const int64_t group = drv::ir::attr_int(n.attrs, "group", 1);
    const int64_t cin = t_[x].rec.dims[3];
    const bool dw = group > 1 && group == cin && Cg == 1 && M % cin == 0;
    if (group != 1 && !dw) throw ConvertError(n.label() + ": grouped convolution with group=" + std::to_string(group) + " is neither plain nor depthwise");
    const Geo geo = conv_geo(n, kh, kw);
    std::vector<int8_t> wk(size_t(M * Cg * kh * kw));
    const int8_t* src = w.data<int8_t>();
    for (int64_t o = 0; o < M; ++o)
        for (int64_t i = 0; i < Cg; ++i)
            for (int64_t ky = 0; ky < kh; ++ky)
                for (int64_t kx = 0; kx < kw; ++kx) {
                    const int8_t v = src[((o * Cg + i) * kh + ky) * kw + kx];
                    if (dw) wk[size_t((ky * kw + kx) * M + o)] = v;
                    else wk[size_t(((o * kh + ky) * kw + kx) * Cg + i)] = v;
                }
    const uint32_t wt = add_const(MK_DT_S8, as_bytes(wk), {int32_t(M), int32_t(kh), int32_t(kw), int32_t(Cg)});
    std::vector<int32_t> bias(size_t(M), 0);
    if (n.has_input(8)) {
        const num::Tensor& b = cval(n, 8);
        if (b.dtype() != num::DType::I32 || int64_t(b.numel()) != M) throw ConvertError(n.label() + ": bias must be int32[M]");
        std::copy(b.data<int32_t>(), b.data<int32_t>() + M, bias.begin());
    }
    const uint32_t bt = add_const(MK_DT_S32, as_bytes(bias), {1, 1, 1, int32_t(M)});
    const std::vector<float> ws = cfs(n, 4);
    if (ws.size() != 1 && int64_t(ws.size()) != M) throw ConvertError(n.label() + ": w_scale must be scalar or [M]");
    uint32_t rq, shift_t = 0;
    if (opts_.float_requant) {
        std::vector<float> fs(static_cast<size_t>(M));
        for (int64_t m = 0; m < M; ++m) fs[size_t(m)] = xs * ws[ws.size() > 1 ? size_t(m) : 0] / ys;  // num::QLinearConv's expression
        rq = add_const(MK_DT_F32, as_bytes(fs), {1, 1, 1, int32_t(M)});
    } else {
        std::vector<int32_t> mult(static_cast<size_t>(M)), sh(static_cast<size_t>(M));
        for (int64_t m = 0; m < M; ++m) {
            const mk_qscale q = mk_quantize_scale(double(xs) * double(ws[ws.size() > 1 ? size_t(m) : 0]) / double(ys));
            mult[size_t(m)] = q.multiplier;
            sh[size_t(m)] = q.shift;
        }
        rq = add_const(MK_DT_S32, as_bytes(mult), {1, 1, 1, int32_t(M)});
        shift_t = add_const(MK_DT_S32, as_bytes(sh), {1, 1, 1, int32_t(M)});
    }
    const auto& od = t_[y].rec.dims;
    const uint64_t macs = uint64_t(od[0]) * od[1] * od[2] * od[3] * uint64_t(kh * kw * Cg);
    mk_blob_layer& l = layer(n, dw ? MK_OP_DWCONV_S8 : MK_OP_CONV2D_S8, {x, wt, bt, rq}, y, dw ? "dwconv_s8" : "conv2d_s8", macs);
    const int32_t p[12] = {geo.sh, geo.sw, geo.dh, geo.dw, geo.pt, geo.pl, geo.kh, geo.kw, -128, 127, int32_t(shift_t), opts_.float_requant ? 1 : 0};
    std::copy(p, p + 12, l.p);
}

void Converter::gemm_s8(const Node& n, bool qgemm) {
    // QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp ; QLinearMatMul: a, as, az, b, bs, bz, ys, yz
    const size_t ys_i = qgemm ? 7 : 6, yz_i = qgemm ? 8 : 7;
    if (qgemm && !n.has_input(ys_i)) throw ConvertError(n.label() + ": QGemm with float output is not supported");
    if (qgemm && (drv::ir::attr_int(n.attrs, "transA", 0) != 0 || drv::ir::attr_float(n.attrs, "alpha", 1.0f) != 1.0f))
        throw ConvertError(n.label() + ": transA=1 / alpha != 1 are not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const float xs = cf(n, 1), ys = cf(n, ys_i);
    const int32_t xz = czp(n, 2), yz = czp(n, yz_i);
    set_quant(x, xs, xz);
    set_quant(y, ys, yz);
    const num::Tensor& w = cval(n, 3);
    if (w.dtype() != num::DType::I8 || w.rank() != 2) throw ConvertError(n.label() + ": B must be a constant int8 matrix");
    if (n.has_input(5)) {
        const num::Tensor& wz = cval(n, 5);
        for (size_t i = 0; i < wz.numel(); ++i)
            if (wz.data<int8_t>()[i] != 0) throw ConvertError(n.label() + ": b zero points must be 0 (symmetric weights)");
    }
    const bool transB = qgemm && drv::ir::attr_int(n.attrs, "transB", 0) != 0;
    const int64_t N = transB ? w.dim(0) : w.dim(1), K = transB ? w.dim(1) : w.dim(0);
    std::vector<int8_t> wk(size_t(N * K));
    for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < K; ++k) wk[size_t(j * K + k)] = transB ? w.data<int8_t>()[j * K + k] : w.data<int8_t>()[k * N + j];
    const uint32_t wt = add_const(MK_DT_S8, as_bytes(wk), {1, 1, int32_t(N), int32_t(K)});
    std::vector<int32_t> bias(size_t(N), 0);
    if (qgemm && n.has_input(6)) {
        const num::Tensor& b = cval(n, 6);
        if (b.dtype() != num::DType::I32 || int64_t(b.numel()) != N) throw ConvertError(n.label() + ": C must be int32[N]");
        std::copy(b.data<int32_t>(), b.data<int32_t>() + N, bias.begin());
    }
    const uint32_t bt = add_const(MK_DT_S32, as_bytes(bias), {1, 1, 1, int32_t(N)});
    const std::vector<float> ws = cfs(n, 4);
    uint32_t rq, shift_t = 0;
    if (opts_.float_requant) {
        std::vector<float> fs(static_cast<size_t>(N));
        for (int64_t j = 0; j < N; ++j) fs[size_t(j)] = xs * ws[ws.size() > 1 ? size_t(j) : 0] / ys;  // num's expression
        rq = add_const(MK_DT_F32, as_bytes(fs), {1, 1, 1, int32_t(N)});
    } else {
        std::vector<int32_t> mult(static_cast<size_t>(N)), sh(static_cast<size_t>(N));
        for (int64_t j = 0; j < N; ++j) {
            const mk_qscale q = mk_quantize_scale(double(xs) * double(ws[ws.size() > 1 ? size_t(j) : 0]) / double(ys));
            mult[size_t(j)] = q.multiplier;
            sh[size_t(j)] = q.shift;
        }
        rq = add_const(MK_DT_S32, as_bytes(mult), {1, 1, 1, int32_t(N)});
        shift_t = add_const(MK_DT_S32, as_bytes(sh), {1, 1, 1, int32_t(N)});
    }
    const uint64_t rows = t_[y].rec.bytes / uint64_t(N);
    mk_blob_layer& l = layer(n, MK_OP_FC_S8, {x, wt, bt, rq}, y, "fully_connected_s8", rows * uint64_t(N * K));
    l.p[0] = -128;
    l.p[1] = 127;
    l.p[2] = int32_t(shift_t);
    l.p[3] = opts_.float_requant ? 1 : 0;
}

void Converter::pool(const Node& n, bool max, bool s8) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (drv::ir::attr_int(n.attrs, "ceil_mode", 0) != 0) throw ConvertError(n.label() + ": ceil_mode=1 is not supported (seed 000: floor only)");
    if (!max && drv::ir::attr_int(n.attrs, "count_include_pad", 0) != 0) throw ConvertError(n.label() + ": count_include_pad=1 is not supported");
    const auto ks = drv::ir::attr_ints(n.attrs, "kernel_shape", {});
    if (ks.size() != 2) throw ConvertError(n.label() + ": 2-D pooling only");
    const Geo geo = conv_geo(n, ks[0], ks[1]);
    if (geo.dh != 1 || geo.dw != 1) throw ConvertError(n.label() + ": dilated pooling is not supported");
    uint32_t op;
    if (s8) {
        if (!max) {  // QLinearAveragePool: x, xs, xz, ys, yz - the kernel needs equal in/out quantization
            const float xs = cf(n, 1), ys = cf(n, 3);
            const int32_t xz = czp(n, 2), yz = czp(n, 4);
            if (xs != ys || xz != yz) throw ConvertError(n.label() + ": average pool with different in/out quantization is not supported");
            set_quant(x, xs, xz);
            set_quant(y, ys, yz);
        } else {
            t_[y].rec.scale = t_[x].rec.scale;
            t_[y].rec.zero_point = t_[x].rec.zero_point;
        }
        op = max ? MK_OP_MAXPOOL_S8 : MK_OP_AVGPOOL_S8;
    } else {
        op = max ? MK_OP_MAXPOOL_F32 : MK_OP_AVGPOOL_F32;
    }
    const auto& od = t_[y].rec.dims;
    mk_blob_layer& l = layer(n, op, {x}, y, max ? "max_pool" : "avg_pool", uint64_t(od[0]) * od[1] * od[2] * od[3] * uint64_t(geo.kh * geo.kw));
    const int32_t p[8] = {geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl, -128, 127};
    std::copy(p, p + 8, l.p);
}

void Converter::gap_s8(const Node& n) {
    if (drv::ir::attr_int(n.attrs, "channels_last", 0) != 0) throw ConvertError(n.label() + ": channels_last=1 is not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const float xs = cf(n, 1), ys = cf(n, 3);
    const int32_t xz = czp(n, 2), yz = czp(n, 4);
    set_quant(x, xs, xz);
    set_quant(y, ys, yz);
    const auto& d = t_[x].rec.dims;
    const int32_t hw = d[1] * d[2];
    mk_blob_layer& l = layer(n, MK_OP_GAP_S8, {x}, y, "global_avg_pool_s8", uint64_t(d[0]) * d[1] * d[2] * d[3]);
    const mk_qscale q = mk_quantize_scale(double(xs) / (double(ys) * hw));
    l.p[0] = q.multiplier;
    l.p[1] = q.shift;
    l.p[2] = opts_.float_requant ? f2i(xs / (ys * static_cast<float>(hw))) : 0;  // num::QLinearGlobalAveragePool's expression
}

void Converter::reshape(const Node& n) {
    const Value& in = g_.value(n.input(0), n.label());
    const Value& out = g_.value(n.outputs.at(0), n.label());
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    t_[y].rec.scale = t_[x].rec.scale;
    t_[y].rec.zero_point = t_[x].rec.zero_point;
    const auto& d = t_[x].rec.dims;
    const bool in_nhwc = in.shape.size() == 4 && d[3] > 1 && d[1] * d[2] > 1;
    const bool out_nhwc = out.shape.size() == 4 && out.shape[1] > 1 && out.shape[2] * out.shape[3] > 1;
    if (in_nhwc && out_nhwc && in.shape != out.shape) throw ConvertError(n.label() + ": 4-D to 4-D reshape that changes the layout is not supported");
    if (in_nhwc && !out_nhwc) {  // flatten in ONNX (NCHW) element order
        mk_blob_layer& l = layer(n, MK_OP_TRANSPOSE, {x}, y, "transpose");
        const int32_t p[5] = {0, 3, 1, 2, int32_t(mk_elem(t_[x].rec.dtype))};
        std::copy(p, p + 5, l.p);
        return;
    }
    if (!in_nhwc && out_nhwc) throw ConvertError(n.label() + ": reshape into a 4-D NCHW layout is not supported");
    layer(n, MK_OP_COPY, {x}, y, "copy");
}

void Converter::quantize(const Node& n, bool q) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const num::Tensor& s = cval(n, 1);
    if (s.numel() != 1) throw ConvertError(n.label() + ": per-axis (de)quantization of activations is not supported");
    const float sc = s.data<float>()[0];
    const int32_t zp = czp(n, 2);
    set_quant(q ? y : x, sc, zp);
    layer(n, q ? MK_OP_QUANTIZE : MK_OP_DEQUANTIZE, {x}, y, q ? "quantize" : "dequantize", t_[y].rec.bytes / (q ? 1 : 4));
}

void Converter::bcast(mk_blob_layer& l, const std::string& a, const std::string& b, const std::string& out) {
    const auto& os = g_.value(out).shape;
    auto strides = [&](const std::string& name, int32_t* st) {
        std::vector<int64_t> s = g_.value(name).shape;
        while (s.size() < os.size()) s.insert(s.begin(), 1);
        const bool four = os.size() == 4;
        // Element strides of the operand in its stored layout (NHWC for rank 4).
        std::vector<int32_t> dd = dims4(s), od = dims4(os);
        int32_t acc = 1;
        for (int i = 3; i >= 0; --i) {
            st[i] = dd[size_t(i)] == 1 && od[size_t(i)] != 1 ? 0 : acc;
            acc *= dd[size_t(i)];
        }
        (void)four;
    };
    strides(a, &l.p[5]);
    strides(b, &l.p[9]);
}

void Converter::eltwise_s8(const Node& n, bool mul) {
    // QLinearAdd / QLinearMul: A, As, Az, B, Bs, Bz, Cs, Cz
    const uint32_t a = act(n.input(0)), b = act(n.input(3)), y = act(n.outputs.at(0));
    const float as = cf(n, 1), bs = cf(n, 4), ys = cf(n, 6);
    const int32_t az = czp(n, 2), bz = czp(n, 5), yz = czp(n, 7);
    set_quant(a, as, az);
    set_quant(b, bs, bz);
    set_quant(y, ys, yz);
    mk_blob_layer& l = layer(n, mul ? MK_OP_MUL_S8 : MK_OP_ADD_S8, {a, b}, y, mul ? "mul_s8" : "add_s8", t_[y].rec.bytes);
    if (mul) {
        const mk_qscale q = mk_quantize_scale(double(as) * double(bs) / double(ys));
        l.p[0] = q.multiplier;
        l.p[1] = q.shift;
        l.p[2] = -128;
        l.p[3] = 127;
    } else {
        mk_eltwise_s8_params ep;
        mk_add_s8_prepare(as, az, bs, bz, ys, yz, 1, &ep);
        l.p[0] = ep.a_mult;
        l.p[1] = ep.b_mult;
        l.p[2] = ep.left;
        l.p[3] = -128;
        l.p[4] = 127;
    }
    bcast(l, n.input(0), n.input(3), n.outputs.at(0));
}

void Converter::lut_s8(const Node& n) {
    // QLinearSigmoid / QLinearLeakyRelu (x, xs, xz, ys, yz): the table is the reference operator
    // applied to all 256 codes, as the MSLite converter builds Selu's table (seed 000).
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    set_quant(x, cf(n, 1), czp(n, 2));
    set_quant(y, cf(n, 3), czp(n, 4));
    num::Tensor all(num::DType::I8, {256});
    for (int i = 0; i < 256; ++i) all.data<int8_t>()[i] = int8_t(i - 128);
    std::vector<const num::Tensor*> ins{&all};
    for (size_t i = 1; i < n.inputs.size(); ++i) ins.push_back(n.has_input(i) ? &cval(n, i) : nullptr);
    const num::Tensor lut = num::run_op(n.op_type, n.attrs, ins, n.domain).at(0);
    const uint32_t lt = add_const(MK_DT_S8, std::vector<uint8_t>(lut.raw(), lut.raw() + 256), {1, 1, 1, 256});
    layer(n, MK_OP_LUT_S8, {x, lt}, y, "lut_s8", t_[y].rec.bytes);
}

void Converter::conv_f32(const Node& n) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const num::Tensor& w = cval(n, 1);
    if (w.dtype() != num::DType::F32 || w.rank() != 4) throw ConvertError(n.label() + ": weights must be float [M, C/g, kh, kw]");
    const int64_t M = w.dim(0), Cg = w.dim(1), kh = w.dim(2), kw = w.dim(3);
    const int64_t group = drv::ir::attr_int(n.attrs, "group", 1), cin = t_[x].rec.dims[3];
    const bool dw = group > 1 && group == cin && Cg == 1 && M % cin == 0;
    if (group != 1 && !dw) throw ConvertError(n.label() + ": grouped convolution is neither plain nor depthwise");
    const Geo geo = conv_geo(n, kh, kw);
    std::vector<float> wk(size_t(M * Cg * kh * kw));
    for (int64_t o = 0; o < M; ++o)
        for (int64_t i = 0; i < Cg; ++i)
            for (int64_t ky = 0; ky < kh; ++ky)
                for (int64_t kx = 0; kx < kw; ++kx) {
                    const float v = w.data<float>()[((o * Cg + i) * kh + ky) * kw + kx];
                    if (dw) wk[size_t((ky * kw + kx) * M + o)] = v;
                    else wk[size_t(((o * kh + ky) * kw + kx) * Cg + i)] = v;
                }
    const uint32_t wt = add_const(MK_DT_F32, as_bytes(wk), {int32_t(M), int32_t(kh), int32_t(kw), int32_t(Cg)});
    std::vector<float> bias(size_t(M), 0.0f);
    if (n.has_input(2)) {
        const num::Tensor& b = cval(n, 2);
        std::copy(b.data<float>(), b.data<float>() + M, bias.begin());
    }
    const uint32_t bt = add_const(MK_DT_F32, as_bytes(bias), {1, 1, 1, int32_t(M)});
    const auto& od = t_[y].rec.dims;
    mk_blob_layer& l = layer(n, dw ? MK_OP_DWCONV_F32 : MK_OP_CONV2D_F32, {x, wt, bt}, y, dw ? "dwconv_f32" : "conv2d_f32",
                             uint64_t(od[0]) * od[1] * od[2] * od[3] * uint64_t(kh * kw * Cg));
    const int32_t p[10] = {geo.sh, geo.sw, geo.dh, geo.dw, geo.pt, geo.pl, geo.kh, geo.kw, f2i(-3.4e38f), f2i(3.4e38f)};
    std::copy(p, p + 10, l.p);
}

void Converter::gemm_f32(const Node& n) {
    const bool gemm = n.op_type == "Gemm";
    if (gemm && (drv::ir::attr_int(n.attrs, "transA", 0) != 0 || drv::ir::attr_float(n.attrs, "alpha", 1.0f) != 1.0f ||
                 drv::ir::attr_float(n.attrs, "beta", 1.0f) != 1.0f))
        throw ConvertError(n.label() + ": transA/alpha/beta other than the defaults are not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const num::Tensor& w = cval(n, 1);
    if (w.dtype() != num::DType::F32 || w.rank() != 2) throw ConvertError(n.label() + ": B must be a constant float matrix");
    const bool transB = gemm && drv::ir::attr_int(n.attrs, "transB", 0) != 0;
    const int64_t N = transB ? w.dim(0) : w.dim(1), K = transB ? w.dim(1) : w.dim(0);
    std::vector<float> wk(size_t(N * K));
    for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < K; ++k) wk[size_t(j * K + k)] = transB ? w.data<float>()[j * K + k] : w.data<float>()[k * N + j];
    std::vector<uint32_t> ins{x, add_const(MK_DT_F32, as_bytes(wk), {1, 1, int32_t(N), int32_t(K)})};
    if (gemm && n.has_input(2)) {
        const num::Tensor& b = cval(n, 2);
        if (int64_t(b.numel()) != N) throw ConvertError(n.label() + ": only a per-output bias C[N] is supported");
        ins.push_back(add_const(MK_DT_F32, std::vector<uint8_t>(b.raw(), b.raw() + b.nbytes()), {1, 1, 1, int32_t(N)}));
    }
    mk_blob_layer& l = layer(n, MK_OP_FC_F32, ins, y, "fully_connected_f32", t_[y].rec.bytes / 4 * uint64_t(K));
    l.p[0] = f2i(-3.4e38f);
    l.p[1] = f2i(3.4e38f);
}

void Converter::unary_f32(const Node& n, int op, float alpha, float beta) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": int8 " + n.op_type + " outside a QLinear op is not supported");
    mk_blob_layer& l = layer(n, MK_OP_UNARY_F32, {x}, y, "unary_f32", t_[y].rec.bytes / 4);
    l.p[0] = op;
    l.p[1] = f2i(alpha);
    l.p[2] = f2i(beta);
}

void Converter::binary_f32(const Node& n, int op) {
    const uint32_t a = act(n.input(0)), b = act(n.input(1)), y = act(n.outputs.at(0));
    if (t_[a].rec.dtype != MK_DT_F32 || t_[b].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": float inputs expected");
    mk_blob_layer& l = layer(n, MK_OP_BINARY_F32, {a, b}, y, "binary_f32", t_[y].rec.bytes / 4);
    l.p[0] = op;
    bcast(l, n.input(0), n.input(1), n.outputs.at(0));
}

void Converter::softmax(const Node& n, bool log) {
    const Value& v = g_.value(n.input(0), n.label());
    const int64_t axis = drv::ir::attr_int(n.attrs, "axis", -1);
    if (axis != -1 && axis != int64_t(v.shape.size()) - 1) throw ConvertError(n.label() + ": softmax over the last axis only (seed 000 Softmax)");
    if (v.shape.size() == 4 && v.shape[2] * v.shape[3] > 1) throw ConvertError(n.label() + ": softmax over W of an NCHW tensor is not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": int8 softmax outside QDQ is not supported");
    mk_blob_layer& l = layer(n, MK_OP_SOFTMAX_F32, {x}, y, "softmax_f32", t_[y].rec.bytes / 4);
    l.p[0] = log ? 1 : 0;
}

void Converter::concat(const Node& n) {
    const Value& out = g_.value(n.outputs.at(0), n.label());
    int64_t axis = drv::ir::attr_int(n.attrs, "axis", 1);
    const int64_t r = int64_t(out.shape.size());
    if (axis < 0) axis += r;
    if (n.inputs.size() > MK_BLOB_MAX_IN) throw ConvertError(n.label() + ": more than 4 inputs");
    // Axis in the stored layout: NCHW axis 1 (C) is NHWC axis 3, H is 1, W is 2.
    int64_t saxis = axis;
    std::vector<int32_t> od = dims4(out.shape);
    if (r == 4) saxis = axis == 1 ? 3 : (axis == 2 ? 1 : (axis == 3 ? 2 : 0));
    else saxis = axis + (4 - r);
    const uint32_t y = act(n.outputs.at(0));
    std::vector<uint32_t> ins;
    int32_t outer = 1, inner = 1;
    for (int64_t i = 0; i < saxis; ++i) outer *= od[size_t(i)];
    for (int64_t i = saxis + 1; i < 4; ++i) inner *= od[size_t(i)];
    for (const auto& in : n.inputs) {
        const uint32_t t = act(in);
        if (t_[t].rec.dtype != t_[y].rec.dtype) throw ConvertError(n.label() + ": mixed dtypes");
        if (t_[t].rec.dtype == MK_DT_S8 && (t_[t].rec.scale != t_[y].rec.scale || t_[t].rec.zero_point != t_[y].rec.zero_point))
            throw ConvertError(n.label() + ": int8 concat needs equal quantization on all inputs");
        ins.push_back(t);
    }
    mk_blob_layer& l = layer(n, MK_OP_CONCAT, ins, y, "concat");
    l.p[0] = outer;
    l.p[1] = inner;
    l.p[2] = int32_t(mk_elem(t_[y].rec.dtype));
    for (size_t k = 0; k < ins.size(); ++k) l.p[3 + k] = t_[ins[k]].rec.dims[saxis];
}

void Converter::argmax(const Node& n) {
    const Value& v = g_.value(n.input(0), n.label());
    const int64_t axis = drv::ir::attr_int(n.attrs, "axis", 0);
    if (!(axis == -1 || axis == int64_t(v.shape.size()) - 1) || v.shape.size() == 4)
        throw ConvertError(n.label() + ": ArgMax over the last axis of a rank <= 3 tensor only");
    if (drv::ir::attr_int(n.attrs, "select_last_index", 0) != 0) throw ConvertError(n.label() + ": select_last_index=1 is not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    layer(n, MK_OP_ARGMAX, {x}, y, "argmax");
}

/// Stored axis of logical axis `a` of a rank-r tensor (rank 4: NCHW -> NHWC; else right-aligned).
int stored_axis(int64_t a, size_t r) {
    if (r == 4) {
        static const int kMap[4] = {0, 3, 1, 2};
        return kMap[a];
    }
    return int(a + int64_t(4 - r));
}

std::vector<int64_t> Converter::const_ints(const Node& n, size_t i) const {
    const num::Tensor& t = cval(n, i);
    std::vector<int64_t> v(t.numel());
    for (size_t k = 0; k < v.size(); ++k)
        v[k] = t.dtype() == num::DType::I64 ? t.data<int64_t>()[k] : t.data<int32_t>()[k];
    return v;
}

void Converter::transpose(const Node& n) {
    const Value& in = g_.value(n.input(0), n.label());
    const size_t r = in.shape.size();
    std::vector<int64_t> perm = drv::ir::attr_ints(n.attrs, "perm", {});
    if (perm.empty())
        for (size_t i = 0; i < r; ++i) perm.push_back(int64_t(r - 1 - i));
    const Value& outv = g_.value(n.outputs.at(0), n.label());
    if (r > 4 || outv.shape.size() != r) throw ConvertError(n.label() + ": rank > 4 transpose");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    t_[y].rec.scale = t_[x].rec.scale;
    t_[y].rec.zero_point = t_[x].rec.zero_point;
    // out_stored[j] = in_stored[q[j]]: the output's stored axis j holds logical axis perm[logical(j)].
    int32_t q[4] = {0, 1, 2, 3};
    for (int j = 0; j < 4; ++j) {
        int64_t logical_out = -1;
        for (size_t a = 0; a < r; ++a)
            if (stored_axis(int64_t(a), r) == j) logical_out = int64_t(a);
        q[j] = logical_out < 0 ? j : stored_axis(perm[size_t(logical_out)], r);
    }
    mk_blob_layer& l = layer(n, MK_OP_TRANSPOSE, {x}, y, "transpose");
    for (int j = 0; j < 4; ++j) l.p[j] = q[j];
    l.p[4] = int32_t(mk_elem(t_[x].rec.dtype));
}

void Converter::pad(const Node& n) {
    const Value& in = g_.value(n.input(0), n.label());
    const size_t r = in.shape.size();
    if (drv::ir::attr_string(n.attrs, "mode", "constant") != "constant") throw ConvertError(n.label() + ": only constant padding");
    const std::vector<int64_t> pads = n.has_input(1) ? const_ints(n, 1) : drv::ir::attr_ints(n.attrs, "pads", {});
    if (pads.size() != 2 * r || (n.has_input(3) && !n.input(3).empty())) throw ConvertError(n.label() + ": pads must cover every axis (no 'axes' input)");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    t_[y].rec.scale = t_[x].rec.scale;
    t_[y].rec.zero_point = t_[x].rec.zero_point;
    std::vector<uint8_t> value(mk_elem(t_[x].rec.dtype), 0);
    if (n.has_input(2)) {
        const num::Tensor& v = cval(n, 2);
        std::memcpy(value.data(), v.raw(), std::min(value.size(), v.nbytes()));
    }
    mk_blob_layer& l = layer(n, MK_OP_PAD, {x, add_const(t_[x].rec.dtype, value, {1, 1, 1, 1})}, y, "pad");
    for (size_t a = 0; a < r; ++a) {
        if (pads[a] < 0 || pads[a + r] < 0) throw ConvertError(n.label() + ": negative pads are not supported");
        l.p[stored_axis(int64_t(a), r)] = int32_t(pads[a]);
        l.p[4 + stored_axis(int64_t(a), r)] = int32_t(pads[a + r]);
    }
    l.p[8] = int32_t(mk_elem(t_[x].rec.dtype));
}

void Converter::slice(const Node& n) {
    const Value& in = g_.value(n.input(0), n.label());
    const size_t r = in.shape.size();
    const std::vector<int64_t> starts = const_ints(n, 1), ends = const_ints(n, 2);
    std::vector<int64_t> axes = n.has_input(3) ? const_ints(n, 3) : std::vector<int64_t>();
    std::vector<int64_t> steps = n.has_input(4) ? const_ints(n, 4) : std::vector<int64_t>(starts.size(), 1);
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    t_[y].rec.scale = t_[x].rec.scale;
    t_[y].rec.zero_point = t_[x].rec.zero_point;
    mk_blob_layer& l = layer(n, MK_OP_SLICE, {x}, y, "slice");
    for (int j = 0; j < 4; ++j) {
        l.p[j] = 0;      // begin
        l.p[4 + j] = 1;  // step
    }
    for (size_t k = 0; k < axes.size(); ++k) {
        const int64_t a = axes[k] < 0 ? axes[k] + int64_t(r) : axes[k];
        const int64_t dim = in.shape[size_t(a)], st = steps[k];
        if (st == 0) throw ConvertError(n.label() + ": step 0");
        int64_t b = starts[k] < 0 ? starts[k] + dim : starts[k];
        b = st > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, 0, dim - 1);
        const int j = stored_axis(a, r);
        l.p[j] = int32_t(b);
        l.p[4 + j] = int32_t(st);
    }
    (void)ends;  // the output shape (shape inference) fixes the element count per axis
}

void Converter::resize(const Node& n) {
    const Value& in = g_.value(n.input(0), n.label());
    const Value& outv = g_.value(n.outputs.at(0), n.label());
    if (in.shape.size() != 4 || in.shape[0] != outv.shape[0] || in.shape[1] != outv.shape[1])
        throw ConvertError(n.label() + ": Resize of H/W of a 4-D tensor only (seed 000: N/C scale 1)");
    const std::string mode = drv::ir::attr_string(n.attrs, "mode", "nearest");
    const std::string ct = drv::ir::attr_string(n.attrs, "coordinate_transformation_mode", "half_pixel");
    const std::string nm = drv::ir::attr_string(n.attrs, "nearest_mode", "round_prefer_floor");
    if (mode != "nearest" && mode != "linear") throw ConvertError(n.label() + ": mode " + mode + " not supported (seed 000: nearest, linear)");
    if (mode == "nearest" && nm != "round_prefer_floor") throw ConvertError(n.label() + ": nearest_mode " + nm + " not supported");
    const int coord = ct == "half_pixel" ? 0 : ct == "align_corners" ? 1 : ct == "asymmetric" ? 2 : -1;
    if (coord < 0) throw ConvertError(n.label() + ": coordinate_transformation_mode " + ct + " not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": int8 Resize is not supported (seed 000: int8 without scales)");
    mk_blob_layer& l = layer(n, MK_OP_RESIZE_F32, {x}, y, "resize_f32", t_[y].rec.bytes / 4);
    l.p[0] = mode == "nearest" ? 0 : 1;
    l.p[1] = coord;
}

void Converter::reduce(const Node& n, int op) {
    const Value& in = g_.value(n.input(0), n.label());
    const size_t r = in.shape.size();
    std::vector<int64_t> axes = n.has_input(1) ? const_ints(n, 1) : drv::ir::attr_ints(n.attrs, "axes", {});
    if (axes.empty()) throw ConvertError(n.label() + ": empty axes (reduce all) is not supported (seed 000)");
    std::vector<int> st;
    for (int64_t a : axes) st.push_back(stored_axis(a < 0 ? a + int64_t(r) : a, r));
    std::sort(st.begin(), st.end());
    for (size_t k = 1; k < st.size(); ++k)
        if (st[k] != st[k - 1] + 1) throw ConvertError(n.label() + ": reduced axes must be adjacent in the NHWC layout");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": int8 reductions outside QLinear ops are not supported");
    const auto& d = t_[x].rec.dims;
    int32_t outer = 1, axis = 1, inner = 1;
    for (int j = 0; j < 4; ++j) (j < st.front() ? outer : j > st.back() ? inner : axis) *= d[j];
    mk_blob_layer& l = layer(n, MK_OP_REDUCE_F32, {x}, y, "reduce_f32", t_[x].rec.bytes / 4);
    l.p[0] = op;
    l.p[1] = outer;
    l.p[2] = axis;
    l.p[3] = inner;
}

void Converter::gap_f32(const Node& n) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": float input expected");
    const auto& d = t_[x].rec.dims;
    mk_blob_layer& l = layer(n, MK_OP_REDUCE_F32, {x}, y, "reduce_f32", t_[x].rec.bytes / 4);
    l.p[0] = MK_RED_MEAN;
    l.p[1] = d[0];
    l.p[2] = d[1] * d[2];
    l.p[3] = d[3];
}

uint32_t Converter::scratch_f32(uint32_t floats) {
    Tens t;
    t.rec.dtype = MK_DT_F32;
    t.rec.storage = MK_ST_ARENA;
    t.rec.bytes = floats * 4u;
    t.rec.dims[0] = t.rec.dims[1] = t.rec.dims[2] = 1;
    t.rec.dims[3] = int32_t(floats);
    t_.push_back(std::move(t));
    return uint32_t(t_.size() - 1);
}

void Converter::gru(const Node& n) {
    // ONNX GRU, forward, linear_before_reset = 1 (PyTorch export), batch 1, no sequence_lens /
    // initial_h (seed 000 GRU: float only, sequence_lens not supported).
    const Value& xv = g_.value(n.input(0), n.label());
    if (drv::ir::attr_string(n.attrs, "direction", "forward") != "forward") throw ConvertError(n.label() + ": only direction=forward");
    if (drv::ir::attr_int(n.attrs, "linear_before_reset", 0) != 1) throw ConvertError(n.label() + ": only linear_before_reset=1 is implemented");
    if (n.attrs.has("activations") || n.attrs.has("clip") || drv::ir::attr_int(n.attrs, "layout", 0) != 0)
        throw ConvertError(n.label() + ": activations/clip/layout are not configurable (seed 000 GRU)");
    if (n.has_input(4) || n.has_input(5)) throw ConvertError(n.label() + ": sequence_lens / initial_h are not supported");
    if (xv.shape.size() != 3 || xv.shape[1] != 1) throw ConvertError(n.label() + ": X must be [T, 1, I] (batch 1)");
    const int64_t H = drv::ir::attr_int(n.attrs, "hidden_size", 0), T = xv.shape[0];
    const uint32_t x = act(n.input(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": GRU is float only (seed 000)");
    auto cbytes = [&](size_t i) {
        const num::Tensor& c = cval(n, i);
        return std::vector<uint8_t>(c.raw(), c.raw() + c.nbytes());
    };
    const uint32_t w = add_const(MK_DT_F32, cbytes(1), {1, 1, int32_t(3 * H), int32_t(xv.shape[2])});
    const uint32_t r = add_const(MK_DT_F32, cbytes(2), {1, 1, int32_t(3 * H), int32_t(H)});
    const uint32_t b = n.has_input(3) ? add_const(MK_DT_F32, cbytes(3), {1, 1, 1, int32_t(6 * H)})
                                      : add_const(MK_DT_F32, std::vector<uint8_t>(size_t(24 * H), 0), {1, 1, 1, int32_t(6 * H)});
    const bool want_y = !n.outputs.empty() && !n.outputs[0].empty();
    uint32_t y;
    if (want_y) {
        y = act(n.outputs[0]);
    } else {
        y = scratch_f32(uint32_t(T * H));
        t_[y].rec.dims[1] = int32_t(T);
        t_[y].rec.dims[3] = int32_t(H);
    }
    const uint32_t scr = scratch_f32(uint32_t(7 * H));
    mk_blob_layer& l = layer(n, MK_OP_GRU_F32, {x, w, r, b}, y, "gru_f32", uint64_t(T) * uint64_t(3 * H) * uint64_t(xv.shape[2] + H));
    l.p[0] = int32_t(H);
    l.p[1] = int32_t(scr);
    t_[scr].first = std::min(t_[scr].first, int(layers_.size() - 1));
    t_[scr].last = std::max(t_[scr].last, int(layers_.size() - 1));
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) {  // Y_h = the last step of Y
        const uint32_t yh = act(n.outputs[1]);
        mk_blob_layer& c = layer(n, MK_OP_COPY, {y}, yh, "copy");
        c.p[0] = int32_t((T - 1) * H * 4);
    }
}

// Inference BatchNormalization folded at conversion time into y = x * a + b per channel
// (a = gamma / sqrt(var + eps), b = beta - mean * a, in double), run as two broadcast fp32 layers.
void Converter::batchnorm(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    if (xv.shape.size() != 4 && xv.shape.size() != 2) throw ConvertError(n.label() + ": BatchNormalization on NCHW or NC only");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": float input expected");
    const int64_t C = xv.shape[1];
    const float eps = drv::ir::attr_float(n.attrs, "epsilon", 1e-5f);
    const num::Tensor &g = cval(n, 1), &bt = cval(n, 2), &mu = cval(n, 3), &var = cval(n, 4);
    std::vector<float> a(static_cast<size_t>(C)), b(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
        const double ac = double(g.data<float>()[c]) / std::sqrt(double(var.data<float>()[c]) + double(eps));
        a[size_t(c)] = float(ac);
        b[size_t(c)] = float(double(bt.data<float>()[c]) - double(mu.data<float>()[c]) * ac);
    }
    const uint32_t at = add_const(MK_DT_F32, as_bytes(a), {1, 1, 1, int32_t(C)});
    const uint32_t bt_i = add_const(MK_DT_F32, as_bytes(b), {1, 1, 1, int32_t(C)});
    Tens tmp;
    tmp.rec = t_[y].rec;
    tmp.rec.storage = MK_ST_ARENA;
    t_.push_back(std::move(tmp));
    const uint32_t mid = uint32_t(t_.size() - 1);
    auto strides = [&](mk_blob_layer& l) {
        const auto& d = t_[y].rec.dims;
        const int32_t nat[4] = {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
        for (int i = 0; i < 4; ++i) {
            l.p[5 + i] = nat[i];
            l.p[9 + i] = i == 3 ? 1 : 0;
        }
    };
    mk_blob_layer& l1 = layer(n, MK_OP_BINARY_F32, {x, at}, mid, "binary_f32", t_[y].rec.bytes / 4);
    l1.p[0] = MK_BIN_MUL;
    strides(l1);
    mk_blob_layer& l2 = layer(n, MK_OP_BINARY_F32, {mid, bt_i}, y, "binary_f32", t_[y].rec.bytes / 4);
    l2.p[0] = MK_BIN_ADD;
    strides(l2);
}

void Converter::qconcat(const Node& n) {
    // QLinearConcat: Y_scale, Y_zp, then (X, X_scale, X_zp) per input; equal quantization only.
    const float ys = cf(n, 0);
    const int32_t yz = czp(n, 1);
    Node plain = n;
    plain.inputs.clear();
    for (size_t i = 2; i + 3 <= n.inputs.size(); i += 3) {
        if (cf(n, i + 1) != ys || czp(n, i + 2) != yz) throw ConvertError(n.label() + ": QLinearConcat with requantizing inputs is not supported");
        set_quant(act(n.input(i)), ys, yz);
        plain.inputs.push_back(n.input(i));
    }
    set_quant(act(n.outputs.at(0)), ys, yz);
    concat(plain);
}

void Converter::node(const Node& n) {
    const std::string& op = n.op_type;
    const bool ms = n.domain == "com.microsoft";
    auto in_dtype = [&](size_t i) { return g_.value(n.input(i), n.label()).dtype; };
    if (op == "QLinearConv") return conv_s8(n);
    if (op == "QGemm" && ms) return gemm_s8(n, true);
    if (op == "QLinearMatMul") return gemm_s8(n, false);
    if (op == "MaxPool") return pool(n, true, in_dtype(0) == num::DType::I8);
    if (op == "QLinearAveragePool" && ms) return pool(n, false, true);
    if (op == "AveragePool") return pool(n, false, false);
    if (op == "QLinearGlobalAveragePool" && ms) return gap_s8(n);
    if (op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity" || op == "Dropout") return reshape(n);
    if (op == "QuantizeLinear") return quantize(n, true);
    if (op == "DequantizeLinear") return quantize(n, false);
    if ((op == "QLinearAdd" || op == "QLinearMul") && ms) return eltwise_s8(n, op == "QLinearMul");
    if ((op == "QLinearSigmoid" || op == "QLinearLeakyRelu") && ms) return lut_s8(n);
    if (op == "Conv") return conv_f32(n);
    if (op == "Gemm" || op == "MatMul") return gemm_f32(n);
    if (op == "Relu" && in_dtype(0) == num::DType::I8) {  // int8 ReLU on codes: clamp at the zero point
        const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
        t_[y].rec.scale = t_[x].rec.scale;
        t_[y].rec.zero_point = t_[x].rec.zero_point;
        mk_blob_layer& l = layer(n, MK_OP_CLAMP_S8, {x}, y, "clamp_s8", t_[y].rec.bytes);
        l.p[0] = t_[x].rec.zero_point;
        l.p[1] = 127;
        return;
    }
    const float alpha = drv::ir::attr_float(n.attrs, "alpha", op == "LeakyRelu" ? 0.01f : (op == "HardSigmoid" ? 0.2f : 1.0f));
    if (op == "Relu") return unary_f32(n, MK_UN_RELU, 0, 0);
    if (op == "LeakyRelu") return unary_f32(n, MK_UN_LEAKY_RELU, alpha, 0);
    if (op == "HardSwish") return unary_f32(n, MK_UN_HARD_SWISH, 0, 0);
    if (op == "Sigmoid") return unary_f32(n, MK_UN_SIGMOID, 0, 0);
    if (op == "Tanh") return unary_f32(n, MK_UN_TANH, 0, 0);
    if (op == "Elu") return unary_f32(n, MK_UN_ELU, alpha, 0);
    if (op == "Abs") return unary_f32(n, MK_UN_ABS, 0, 0);
    if (op == "Neg") return unary_f32(n, MK_UN_NEG, 0, 0);
    if (op == "Exp") return unary_f32(n, MK_UN_EXP, 0, 0);
    if (op == "HardSigmoid") return unary_f32(n, MK_UN_HARD_SIGMOID, alpha, drv::ir::attr_float(n.attrs, "beta", 0.5f));
    if (op == "Add") return binary_f32(n, MK_BIN_ADD);
    if (op == "Sub") return binary_f32(n, MK_BIN_SUB);
    if (op == "Mul") return binary_f32(n, MK_BIN_MUL);
    if (op == "Div") return binary_f32(n, MK_BIN_DIV);
    if (op == "Max" && n.inputs.size() == 2) return binary_f32(n, MK_BIN_MAX);
    if (op == "Min" && n.inputs.size() == 2) return binary_f32(n, MK_BIN_MIN);
    if (op == "Softmax" || op == "LogSoftmax") return softmax(n, op == "LogSoftmax");
    if (op == "Concat") return concat(n);
    if (op == "QLinearConcat" && ms) return qconcat(n);
    if (op == "Transpose") return transpose(n);
    if (op == "Pad") return pad(n);
    if (op == "Slice") return slice(n);
    if (op == "Resize") return resize(n);
    if (op == "ReduceMean") return reduce(n, MK_RED_MEAN);
    if (op == "ReduceSum") return reduce(n, MK_RED_SUM);
    if (op == "ReduceMax") return reduce(n, MK_RED_MAX);
    if (op == "ReduceMin") return reduce(n, MK_RED_MIN);
    if (op == "GlobalAveragePool") return gap_f32(n);
    if (op == "GRU") return gru(n);
    if (op == "BatchNormalization") return batchnorm(n);
    if (op == "ArgMax") return argmax(n);
    throw ConvertError(n.label() + ": operator " + (n.domain.empty() ? "" : n.domain + ".") + op +
                       " has no MCU kernel in this runtime");
}

// First-fit arena placement by decreasing size over layer-index lifetimes (deterministic).
void Converter::plan_arena() {
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < t_.size(); ++i)
        if (t_[i].rec.storage == MK_ST_ARENA) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return t_[a].rec.bytes > t_[b].rec.bytes; });
    std::vector<uint32_t> placed;
    for (uint32_t i : order) {
        Tens& t = t_[i];
        if (t.last < 0) t.first = t.last = 0;  // never used: still gets a slot
        std::vector<std::pair<uint32_t, uint32_t>> busy;
        for (uint32_t j : placed) {
            const Tens& o = t_[j];
            if (o.first <= t.last && t.first <= o.last) busy.push_back({o.rec.offset, o.rec.offset + o.rec.bytes});
        }
        std::sort(busy.begin(), busy.end());
        uint32_t off = 0;
        for (const auto& b : busy) {
            if (off + t.rec.bytes <= b.first) break;
            off = std::max(off, (b.second + 15u) & ~15u);
        }
        t.rec.offset = off;
        arena_bytes_ = std::max(arena_bytes_, (off + t.rec.bytes + 15u) & ~15u);
        placed.push_back(i);
    }
}

Blob Converter::run(const std::map<std::string, num::Tensor>& inputs) {
    std::vector<uint32_t> in_idx, out_idx;
    for (const auto& name : g_.inputs()) {
        auto it = inputs.find(name);
        if (it == inputs.end()) throw ConvertError("no data for graph input '" + name + "'");
        const uint32_t t = act(name);
        const num::Tensor& d = it->second;
        if (d.nbytes() != t_[t].rec.bytes) throw ConvertError("graph input '" + name + "' has " + std::to_string(d.nbytes()) + " bytes, expected " + std::to_string(t_[t].rec.bytes));
        t_[t].data = d.rank() == 4 ? nchw_to_nhwc(d.raw(), d.shape(), mk_elem(t_[t].rec.dtype)) : std::vector<uint8_t>(d.raw(), d.raw() + d.nbytes());
        t_[t].first = -1;
        in_idx.push_back(t);
    }
    for (const Node& n : g_.nodes()) node(n);
    Blob blob;
    for (const auto& name : g_.outputs()) {
        const uint32_t t = act(name);
        t_[t].last = int(layers_.size());
        out_idx.push_back(t);
        const Value& v = g_.value(name);
        blob.outputs.push_back({name, t, v.dtype, v.shape, t_[t].rec.scale});
    }
    for (auto& t : t_) t.first = std::max(t.first, 0);
    plan_arena();

    // Serialise: header | tensors | layers | io | data.
    mk_blob_header h{};
    h.magic = MK_BLOB_MAGIC;
    h.version = MK_BLOB_VERSION;
    h.n_tensors = uint32_t(t_.size());
    h.n_layers = uint32_t(layers_.size());
    h.n_inputs = uint32_t(in_idx.size());
    h.n_outputs = uint32_t(out_idx.size());
    h.tensors_off = sizeof(mk_blob_header);
    h.layers_off = h.tensors_off + h.n_tensors * uint32_t(sizeof(mk_blob_tensor));
    h.io_off = h.layers_off + h.n_layers * uint32_t(sizeof(mk_blob_layer));
    uint32_t data = (h.io_off + (h.n_inputs + h.n_outputs) * 4u + 15u) & ~15u;
    for (auto& t : t_) {
        if (t.data.empty()) continue;
        if (t.rec.storage == MK_ST_CONST) t.rec.offset = data;
        else t.rec.init_off = data;
        data = (data + uint32_t(t.data.size()) + 15u) & ~15u;
        blob.const_bytes += uint32_t(t.data.size());
    }
    h.total_bytes = data;
    h.arena_bytes = arena_bytes_;
    std::vector<uint8_t>& b = blob.bytes;
    b.assign(data, 0);
    std::memcpy(b.data(), &h, sizeof h);
    for (size_t i = 0; i < t_.size(); ++i) {
        std::memcpy(&b[h.tensors_off + i * sizeof(mk_blob_tensor)], &t_[i].rec, sizeof(mk_blob_tensor));
        if (!t_[i].data.empty()) {
            const uint32_t off = t_[i].rec.storage == MK_ST_CONST ? t_[i].rec.offset : t_[i].rec.init_off;
            std::memcpy(&b[off], t_[i].data.data(), t_[i].data.size());
        }
    }
    for (size_t i = 0; i < layers_.size(); ++i) std::memcpy(&b[h.layers_off + i * sizeof(mk_blob_layer)], &layers_[i], sizeof(mk_blob_layer));
    std::vector<uint32_t> io = in_idx;
    io.insert(io.end(), out_idx.begin(), out_idx.end());
    if (!io.empty()) std::memcpy(&b[h.io_off], io.data(), io.size() * 4);
    blob.arena_bytes = arena_bytes_;
    blob.layers = info_;
    return blob;
}

}  // namespace

Blob convert_graph(const drv::ir::Graph& g, const std::map<std::string, num::Tensor>& inputs, const ConvertOptions& opts) {
    return Converter(g, opts).run(inputs);
}

num::Tensor output_tensor(const BlobOutput& o, const std::vector<uint8_t>& bytes) {
    num::Tensor t(o.dtype, o.shape);
    const size_t n = t.numel();
    if (o.dtype == num::DType::I64) {  // the kernel wrote int32 indices
        if (bytes.size() != n * 4) throw ConvertError("output '" + o.value + "': size mismatch");
        for (size_t i = 0; i < n; ++i) {
            int32_t v;
            std::memcpy(&v, &bytes[i * 4], 4);
            t.data<int64_t>()[i] = v;
        }
        return t;
    }
    if (bytes.size() != t.nbytes()) throw ConvertError("output '" + o.value + "': " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(t.nbytes()));
    if (o.shape.size() != 4) {
        std::memcpy(t.raw(), bytes.data(), bytes.size());
        return t;
    }
    const int64_t N = o.shape[0], C = o.shape[1], H = o.shape[2], W = o.shape[3];
    const size_t e = t.nbytes() / std::max<size_t>(1, n);
    for (int64_t a = 0; a < N; ++a)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t y = 0; y < H; ++y)
                for (int64_t x = 0; x < W; ++x)
                    std::memcpy(t.raw() + size_t(((a * C + c) * H + y) * W + x) * e, &bytes[size_t(((a * H + y) * W + x) * C + c) * e], e);
    return t;
}

const char* op_name(uint32_t op) {
    switch (op) {
        case MK_OP_CONV2D_S8: return "conv2d_s8";
        case MK_OP_DWCONV_S8: return "dwconv_s8";
        case MK_OP_FC_S8: return "fc_s8";
        case MK_OP_ADD_S8: return "add_s8";
        case MK_OP_MUL_S8: return "mul_s8";
        case MK_OP_MAXPOOL_S8: return "maxpool_s8";
        case MK_OP_AVGPOOL_S8: return "avgpool_s8";
        case MK_OP_CLAMP_S8: return "clamp_s8";
        case MK_OP_LUT_S8: return "lut_s8";
        case MK_OP_SOFTMAX_S8: return "softmax_s8";
        case MK_OP_GAP_S8: return "gap_s8";
        case MK_OP_QUANTIZE: return "quantize";
        case MK_OP_DEQUANTIZE: return "dequantize";
        case MK_OP_COPY: return "copy";
        case MK_OP_TRANSPOSE: return "transpose";
        case MK_OP_CONCAT: return "concat";
        case MK_OP_CONV2D_F32: return "conv2d_f32";
        case MK_OP_DWCONV_F32: return "dwconv_f32";
        case MK_OP_FC_F32: return "fc_f32";
        case MK_OP_BINARY_F32: return "binary_f32";
        case MK_OP_UNARY_F32: return "unary_f32";
        case MK_OP_MAXPOOL_F32: return "maxpool_f32";
        case MK_OP_AVGPOOL_F32: return "avgpool_f32";
        case MK_OP_SOFTMAX_F32: return "softmax_f32";
        case MK_OP_GRU_F32: return "gru_f32";
        case MK_OP_ARGMAX: return "argmax";
        case MK_OP_PAD: return "pad";
        case MK_OP_SLICE: return "slice";
        case MK_OP_RESIZE_F32: return "resize_f32";
        case MK_OP_REDUCE_F32: return "reduce_f32";
        default: return "?";
    }
}

}  // namespace mcu
