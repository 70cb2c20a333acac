// SPDX-License-Identifier: MIT
// Internal to drivers/mcu: the graph -> blob Converter shared by blob_writer.cpp (tensors, arena,
// dispatch, serialisation), blob_layers_s8.cpp (int8 layers) and blob_layers_f32.cpp (float and
// data-movement layers).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mcu/blob_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/ir/graph.h"
#include "mcu_blob.h"
#include "mk/mk_common.h"
#include "mk/mk_f32.h"
#include "numerics/ops.h"

namespace mcu::detail {

using drv::ir::Graph;
using drv::ir::Node;
using drv::ir::Value;

inline int32_t f2i(float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i;
}

inline uint32_t mk_dtype(num::DType d, const std::string& where) {
    switch (d) {
        case num::DType::F32: return MK_DT_F32;
        case num::DType::I8: return MK_DT_S8;
        case num::DType::I32:
        case num::DType::I64: return MK_DT_S32;  // int64 results (ArgMax) are produced as int32
        default: throw ConvertError(where + ": dtype " + num::dtype_name(d) + " is not supported on the MCU (int8/fp32)");
    }
}
inline size_t mk_elem(uint32_t dt) { return dt == MK_DT_S8 ? 1 : 4; }

/// ONNX shape -> NHWC dims (rank 4: N,C,H,W -> N,H,W,C; lower ranks right-aligned, no permutation).
/// The blob's tensors have four dims: a higher rank is refused (issue 23: it used to index before
/// the vector), as is a dimension beyond int32.
inline std::vector<int32_t> dims4(const std::vector<int64_t>& s, bool nhwc = false) {
    if (s.size() > 4) throw ConvertError("rank " + std::to_string(s.size()) + " tensors have no MCU kernel yet (the MCU runtime holds up to 4 dims)");
    for (int64_t v : s)
        if (v < 0 || v > INT32_MAX) throw ConvertError("dimension " + std::to_string(v) + " out of range for the MCU runtime");
    std::vector<int32_t> d(4, 1);
    if (nhwc) {
        for (size_t i = 0; i < s.size(); ++i) d[4 - s.size() + i] = int32_t(s[i]);
        return d;
    }
    if (s.size() == 4) {
        d = {int32_t(s[0]), int32_t(s[2]), int32_t(s[3]), int32_t(s[1])};
    } else {
        for (size_t i = 0; i < s.size() && i < 4; ++i) d[4 - s.size() + i] = int32_t(s[i]);
    }
    return d;
}

template <typename T>
inline std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
    std::vector<uint8_t> b(v.size() * sizeof(T));
    if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

/// NCHW bytes -> NHWC bytes for a rank-4 tensor.
inline std::vector<uint8_t> nchw_to_nhwc(const uint8_t* src, const std::vector<int64_t>& s, size_t elem) {
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
    Converter(const Graph& g, const ConvertOptions& o) : g_(g), opts_(o), nhwc_(g.opset("tflite") > 0) {}
    Blob run(const std::map<std::string, num::Tensor>& inputs);
    /// Converts node by node, collecting the refusals instead of stopping at the first.
    std::vector<std::pair<std::string, std::string>> gaps();

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
    void gather(const Node& n);
    void tile(const Node& n);
    void transpose(const Node& n);
    void pad(const Node& n);
    void slice(const Node& n);
    void resize(const Node& n);
    void reduce(const Node& n, int op);
    void gap_f32(const Node& n);
    void qconcat(const Node& n);
    void recurrent(const Node& n, int gates);
    void batchnorm(const Node& n);
    uint32_t scratch_f32(uint32_t floats);
    std::vector<int64_t> const_ints(const Node& n, size_t i) const;
    void node(const Node& n);
    void bcast(mk_blob_layer& l, const std::string& a, const std::string& b, const std::string& out);
    void plan_arena();
    // ---- TFLite builtins (domain "tflite": NHWC tensors, OHWI filters, TFLite arithmetic) ----
    void tfl_node(const Node& n);
    void tfl_conv(const Node& n, bool depthwise);
    void tfl_fc(const Node& n);
    void tfl_binary(const Node& n);
    void tfl_pool(const Node& n, bool max);
    void tfl_mean(const Node& n);
    void tfl_softmax(const Node& n);
    void tfl_unary(const Node& n);
    void tfl_copy(const Node& n);
    void tfl_concat(const Node& n);
    void tfl_pad(const Node& n);
    void tfl_quantize(const Node& n);
    void tfl_transpose(const Node& n);
    void tfl_slice(const Node& n);
    void tfl_split(const Node& n);
    void tfl_pack(const Node& n);
    void tfl_argmax(const Node& n);
    void tfl_prelu(const Node& n);
    void tfl_reduce(const Node& n);
    void tfl_resize(const Node& n, bool bilinear);
    void tfl_batch_matmul(const Node& n);
    void tfl_transpose_conv(const Node& n);
    void tfl_gather(const Node& n);
    void copy_quant_or_refuse(const Node& n, uint32_t x, uint32_t y);
    void tfl_tile(const Node& n);
    void conv_transpose_f32(const Node& n);
    void matmul_rt(const Node& n);  ///< ONNX MatMul whose B is a runtime tensor (or rank > 2): batched
    void clamp_f32(const Node& n, uint32_t t, const std::string& act);
    void same_quant(uint32_t from, uint32_t to);
    std::vector<int32_t> sdims(const std::vector<int64_t>& s) const { return dims4(s, nhwc_); }

    const Graph& g_;
    ConvertOptions opts_;
    bool nhwc_ = false;  ///< TFLite graph: tensors are stored as they are (already NHWC)
    std::vector<Tens> t_;
    std::map<std::string, uint32_t> by_name_;
    std::vector<mk_blob_layer> layers_;
    std::vector<BlobLayerInfo> info_;
    uint32_t arena_bytes_ = 0;
};

// Conv geometry from attributes; pads [t, l, b, r].
struct Geo {
    int32_t kh, kw, sh, sw, dh, dw, pt, pl;
};
Geo conv_geo(const Node& n, int64_t kh, int64_t kw);

/// Stored axis of logical axis `a` of a rank-r tensor (rank 4: NCHW -> NHWC; else right-aligned).
int stored_axis(int64_t a, size_t r);

}  // namespace mcu::detail
