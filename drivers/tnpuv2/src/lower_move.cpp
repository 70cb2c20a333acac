// SPDX-License-Identifier: MIT
// Data movement -> MOVE commands: every operator is expressed as strided copies between two views
// of the same logical index space (the IR shape, in the tensors' own layouts): Transpose permutes
// the input strides, Reshape copies over the common refinement of the two shapes, Concat writes
// each input into its slice of the output, Slice offsets the input, Pad fills then copies,
// nearest Resize and DepthToSpace / SpaceToDepth split dims and use zero or interleaved strides,
// Gather picks indices along one dim. Inputs with other quantization parameters are requantized.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "compiler_internal.h"
#include "numerics/ops.h"

namespace drv::tnpuv2::detail {
namespace {

namespace MV = hw::tnpuv2::MOVE;
namespace MODE = hw::tnpuv2::enums::MOVE_MODE;

bool is4(uint32_t f) { return f == F::S4 || f == F::U4; }

std::vector<int64_t> ints_of(const num::Tensor& t) {
    std::vector<int64_t> v(t.numel());
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = t.dtype() == num::DType::I64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i];
    return v;
}

/// Emits MOVE COPY (or COPY with REQUANT) from `in` to `out` over their shared logical dims.
void copy(Compiler& c, View out, View in, bool requant, int32_t mult, int32_t shift) {
    if (out.ext != in.ext) c.refuse("internal: copy views differ in shape");
    // Drop size-1 dims, order by the output's strides (outermost first), merge dims contiguous in both.
    std::vector<size_t> dims;
    for (size_t i = 0; i < out.ext.size(); ++i)
        if (out.ext[i] != 1) dims.push_back(i);
    const bool packed = is4(out.format);
    std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) {
        const int64_t sa = out.stride[a] == 0 && packed ? -1 : out.stride[a];
        const int64_t sb = out.stride[b] == 0 && packed ? -1 : out.stride[b];
        return sa > sb;
    });
    if (packed && !dims.empty() && (out.stride[dims.back()] != 0 || in.stride[dims.back()] != 0))
        c.refuse("4-bit data move only along the packed innermost dim (no transposes of 4-bit data)");
    View o, i;
    o.offset = out.offset;
    i.offset = in.offset;
    o.format = out.format;
    o.bits = out.bits;
    o.zp = out.zp;
    i.format = in.format;
    i.bits = in.bits;
    i.zp = in.zp;
    for (size_t d : dims) {
        if (!o.ext.empty() && !packed) {
            const size_t k = o.ext.size() - 1;
            if (o.stride[k] == out.stride[d] * out.ext[d] && i.stride[k] == in.stride[d] * in.ext[d]) {
                o.ext[k] *= out.ext[d];
                i.ext[k] *= in.ext[d];
                o.stride[k] = out.stride[d];
                i.stride[k] = in.stride[d];
                continue;
            }
        }
        o.ext.push_back(out.ext[d]);
        o.stride.push_back(out.stride[d]);
        i.ext.push_back(in.ext[d]);
        i.stride.push_back(in.stride[d]);
    }
    if (o.ext.empty()) {
        o.ext = {1};
        o.stride = {1};
        i.ext = {1};
        i.stride = {1};
    }
    std::vector<size_t> order(o.ext.size());
    std::iota(order.begin(), order.end(), 0);
    c.sb().tensor(S::IFM, c.desc_of(i, order));
    c.sb().tensor(S::OFM, c.desc_of(o, order));
    Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::MOVE);
    set_field(cmd, MV::MODE, MODE::COPY);
    set_field(cmd, MV::REQUANT, requant ? 1 : 0);
    set_field(cmd, MV::MULT, mult);
    set_field(cmd, MV::SHIFT, shift);
    c.emit(cmd);
}

void fill(Compiler& c, const DeviceTensor& t, int64_t value) {
    View v = c.view(t);
    std::vector<size_t> order = t.nhwc ? std::vector<size_t>{0, 2, 3, 1} : std::vector<size_t>();
    if (!t.nhwc) {
        order.resize(v.ext.size());
        std::iota(order.begin(), order.end(), 0);
    }
    c.sb().tensor(S::OFM, c.desc_of(v, order));
    Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::MOVE);
    set_field(cmd, MV::MODE, MODE::FILL);
    set_field(cmd, MV::FILL_VALUE, value);
    c.emit(cmd);
}

/// Common refinement of two shapes (reshape): atom extents from the innermost, with each atom's
/// stride in both tensors. Refuses when the dim boundaries do not nest.
void reshape_views(Compiler& c, const View& a, const View& b, View& ia, View& ob) {
    std::vector<int64_t> ext, sa, sb;
    int i = static_cast<int>(a.ext.size()) - 1, j = static_cast<int>(b.ext.size()) - 1;
    int64_t ra = i >= 0 ? a.ext[static_cast<size_t>(i)] : 1, rb = j >= 0 ? b.ext[static_cast<size_t>(j)] : 1;
    int64_t ta = 1, tb = 1;  // elements already taken from the current dims
    while (i >= 0 || j >= 0) {
        if (i >= 0 && ra == 1) {
            if (--i >= 0) ra = a.ext[static_cast<size_t>(i)];
            ta = 1;
            continue;
        }
        if (j >= 0 && rb == 1) {
            if (--j >= 0) rb = b.ext[static_cast<size_t>(j)];
            tb = 1;
            continue;
        }
        if (i < 0 || j < 0) break;
        const int64_t atom = ra % rb == 0 ? rb : (rb % ra == 0 ? ra : 0);
        if (!atom)
            c.refuse(fmt::format("reshape {} -> {} is not a strided rearrangement", ir::shape_to_string(a.ext),
                                 ir::shape_to_string(b.ext)));
        ext.push_back(atom);
        sa.push_back(a.stride[static_cast<size_t>(i)] * ta);
        sb.push_back(b.stride[static_cast<size_t>(j)] * tb);
        ra /= atom;
        rb /= atom;
        ta *= atom;
        tb *= atom;
    }
    std::reverse(ext.begin(), ext.end());
    std::reverse(sa.begin(), sa.end());
    std::reverse(sb.begin(), sb.end());
    ia = a;
    ob = b;
    ia.ext = ob.ext = ext;
    ia.stride = sa;
    ob.stride = sb;
}

/// Requantization between the input's and output's parameters (1.0 ratio: none).
bool requant_of(const DeviceTensor& x, const DeviceTensor& y, int32_t& mult, int32_t& shift) {
    if (x.format == F::F32 || (x.scale == y.scale && x.zp == y.zp && x.format == y.format)) return false;
    exact_scale(static_cast<double>(x.scale) / static_cast<double>(y.scale), mult, shift);
    return true;
}

}  // namespace

void lower_move(Compiler& c, const ir::Node& n) {
    const std::string& op = n.op_type;
    Layer& L = c.layer();
    L.op = op;
    if (op == "QLinearConcat" || op == "Concat") {
        const bool q = op == "QLinearConcat";
        const DeviceTensor& y = c.dt(n.outputs[0]);
        const int64_t ax = [&] {
            const int64_t a = ir::attr_int(n.attrs, "axis", 0);
            return a < 0 ? a + static_cast<int64_t>(y.shape.size()) : a;
        }();
        View yv = c.view(y);
        int64_t at = 0;
        for (size_t k = q ? 2 : 0; k < n.inputs.size(); k += q ? 3 : 1) {
            const DeviceTensor& x = c.dt(n.inputs[k]);
            View o = yv;
            o.ext[static_cast<size_t>(ax)] = x.shape[static_cast<size_t>(ax)];
            if (is4(y.format) && o.stride[static_cast<size_t>(ax)] == 0) {
                if (at % 2) c.refuse("4-bit concat along the packed channel dim at an odd offset");
                o.offset += static_cast<uint64_t>(at / 2);
            } else {
                o.offset += static_cast<uint64_t>(at * yv.stride[static_cast<size_t>(ax)]);
            }
            int32_t mult = 0, shift = 0;
            const bool rq = requant_of(x, y, mult, shift);
            copy(c, o, c.view(x), rq, mult, shift);
            at += x.shape[static_cast<size_t>(ax)];
        }
        L.op = "Concat";
        return;
    }
    const DeviceTensor& x = c.dt(n.input(0));
    const DeviceTensor& y = c.dt(n.outputs[0]);
    int32_t mult = 0, shift = 0;
    const bool rq = requant_of(x, y, mult, shift);
    View xv = c.view(x), yv = c.view(y);
    const size_t r = x.shape.size();
    if (op == "Transpose") {
        std::vector<int64_t> perm = ir::attr_ints(n.attrs, "perm", {});
        if (perm.empty())
            for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(r - 1 - i));
        View iv = yv;
        for (size_t j = 0; j < perm.size(); ++j) iv.stride[j] = xv.stride[static_cast<size_t>(perm[j])];
        iv.offset = xv.offset;
        iv.format = xv.format;
        iv.bits = xv.bits;
        iv.zp = xv.zp;
        return copy(c, yv, iv, rq, mult, shift);
    }
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity") {
        View ia, ob;
        reshape_views(c, xv, yv, ia, ob);
        L.op = op;
        return copy(c, ob, ia, rq, mult, shift);
    }
    if (op == "Slice") {
        std::vector<int64_t> st, en, axes, steps;
        if (c.constant(n, 1)) {
            st = ints_of(*c.constant(n, 1));
            en = ints_of(*c.constant(n, 2));
            if (c.constant(n, 3)) axes = ints_of(*c.constant(n, 3));
            if (c.constant(n, 4)) steps = ints_of(*c.constant(n, 4));
        } else {
            st = ir::attr_ints(n.attrs, "starts", {});
            en = ir::attr_ints(n.attrs, "ends", {});
            axes = ir::attr_ints(n.attrs, "axes", {});
        }
        if (axes.empty())
            for (size_t i = 0; i < st.size(); ++i) axes.push_back(static_cast<int64_t>(i));
        View iv = xv;
        iv.ext = y.shape;
        for (size_t k = 0; k < axes.size(); ++k) {
            const size_t a = static_cast<size_t>(axes[k] < 0 ? axes[k] + static_cast<int64_t>(r) : axes[k]);
            if (!steps.empty() && steps[k] != 1) c.refuse("Slice step must be 1 (seed 003)");
            const int64_t dim = x.shape[a];
            int64_t s = st[k] < 0 ? st[k] + dim : st[k];
            s = std::max<int64_t>(0, std::min(s, dim));
            if (is4(x.format) && xv.stride[a] == 0) {
                if (s % 2) c.refuse("4-bit slice of the packed channel dim at an odd start");
                iv.offset += static_cast<uint64_t>(s / 2);
            } else {
                iv.offset += static_cast<uint64_t>(s * xv.stride[a]);
            }
        }
        return copy(c, yv, iv, rq, mult, shift);
    }
    if (op == "Pad") {
        const std::string mode = ir::attr_string(n.attrs, "mode", "constant");
        if (mode != "constant") c.refuse("Pad mode " + mode + " (seed 003: Constant only)");
        std::vector<int64_t> pads = c.constant(n, 1) ? ints_of(*c.constant(n, 1)) : ir::attr_ints(n.attrs, "pads", {});
        if (pads.size() != 2 * r) c.refuse("Pad needs begin/end pads for every dim");
        int64_t code = y.zp;  // constant_value 0 (the default) is the zero point's code
        if (const num::Tensor* cv = c.constant(n, 2); cv && cv->numel() == 1) {
            switch (cv->dtype()) {
                case num::DType::I8:
                    code = cv->data<int8_t>()[0];
                    break;
                case num::DType::U8:
                    code = cv->data<uint8_t>()[0];
                    break;
                case num::DType::I16:
                    code = cv->data<int16_t>()[0];
                    break;
                case num::DType::U16:
                    code = cv->data<uint16_t>()[0];
                    break;
                case num::DType::F32:  // DQ -> Pad -> Q: the float pad value quantized as Q does
                    code = std::llround(std::nearbyint(cv->data<float>()[0] / y.scale)) + y.zp;
                    break;
                default:
                    c.refuse("Pad value type");
            }
        }
        fill(c, y, code);
        View o = yv;
        o.ext = x.shape;
        for (size_t a = 0; a < r; ++a) {
            if (pads[a] < 0 || pads[a + r] < 0) c.refuse("negative pads");
            if (is4(y.format) && yv.stride[a] == 0) {
                if (pads[a] % 2) c.refuse("4-bit channel padding at an odd offset (seed 003: channel pads 8-aligned)");
                o.offset += static_cast<uint64_t>(pads[a] / 2);
            } else {
                o.offset += static_cast<uint64_t>(pads[a] * yv.stride[a]);
            }
        }
        return copy(c, o, xv, rq, mult, shift);
    }
    if (op == "Resize" || op == "Upsample") {
        if (ir::attr_string(n.attrs, "mode", "nearest") != "nearest")
            c.refuse("linear Resize runs through the vector unit");
        if (r != 4 || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1] || y.shape[2] % x.shape[2] ||
            y.shape[3] % x.shape[3])
            c.refuse("nearest Resize by positive integer factors of H and W (seed 003)");
        const int64_t fh = y.shape[2] / x.shape[2], fw = y.shape[3] / x.shape[3];
        // Output [N, C, H, fh, W, fw]; the input repeats along fh and fw (zero strides).
        View o, i;
        o.ext = i.ext = {x.shape[0], x.shape[1], x.shape[2], fh, x.shape[3], fw};
        o.stride = {yv.stride[0], yv.stride[1], fh * yv.stride[2], yv.stride[2], fw * yv.stride[3], yv.stride[3]};
        i.stride = {xv.stride[0], xv.stride[1], xv.stride[2], 0, xv.stride[3], 0};
        o.offset = yv.offset;
        i.offset = xv.offset;
        o.format = y.format, o.bits = y.bits, o.zp = y.zp;
        i.format = x.format, i.bits = x.bits, i.zp = x.zp;
        L.note = fmt::format("nearest x{} x{}", fh, fw);
        return copy(c, o, i, rq, mult, shift);
    }
    if (op == "DepthToSpace" || op == "SpaceToDepth") {
        const int64_t b = ir::attr_int(n.attrs, "blocksize", 0);
        if (r != 4 || b < 2) c.refuse("needs a 4-D tensor and blocksize > 1");
        View o, i;
        o.offset = yv.offset;
        i.offset = xv.offset;
        o.format = y.format, o.bits = y.bits, o.zp = y.zp;
        i.format = x.format, i.bits = x.bits, i.zp = x.zp;
        if (op == "DepthToSpace") {
            const int64_t C = y.shape[1], H = x.shape[2], W = x.shape[3];
            const bool crd = ir::attr_string(n.attrs, "mode", "DCR") == "CRD";
            // out[n][c][h*b+i][w*b+j] = in[n][DCR: (i*b+j)*C+c | CRD: c*b*b+i*b+j][h][w]
            o.ext = i.ext = {x.shape[0], C, H, b, W, b};
            o.stride = {yv.stride[0], yv.stride[1], b * yv.stride[2], yv.stride[2], b * yv.stride[3], yv.stride[3]};
            const int64_t sc = xv.stride[1];
            i.stride = {xv.stride[0], crd ? b * b * sc : sc, xv.stride[2], crd ? b * sc : b * C * sc,
                        xv.stride[3], crd ? sc : C * sc};
        } else {
            const int64_t C = x.shape[1], H = y.shape[2], W = y.shape[3];
            // out[n][(i*b+j)*C+c][h][w] = in[n][c][h*b+i][w*b+j]
            o.ext = i.ext = {x.shape[0], b, b, C, H, W};
            const int64_t sc = yv.stride[1];
            o.stride = {yv.stride[0], b * C * sc, C * sc, sc, yv.stride[2], yv.stride[3]};
            i.stride = {xv.stride[0], xv.stride[2], xv.stride[3], xv.stride[1], b * xv.stride[2], b * xv.stride[3]};
        }
        return copy(c, o, i, rq, mult, shift);
    }
    if (op == "Gather") {
        const int64_t ax0 = ir::attr_int(n.attrs, "axis", 0);
        const size_t ax = static_cast<size_t>(ax0 < 0 ? ax0 + static_cast<int64_t>(r) : ax0);
        const ir::Value& iv = c.g().value(n.input(1));
        int64_t count = std::max<int64_t>(1, iv.numel());
        // The index tensor (S32): constant indices normalised (negative counts from the end).
        DeviceTensor idx = c.dt(n.input(1));
        if (iv.is_constant()) {
            std::vector<int64_t> v = ints_of(*iv.data);
            num::Tensor t(num::DType::I32, {count});
            for (int64_t k = 0; k < count; ++k) {
                const int64_t e =
                    v[static_cast<size_t>(k)] < 0 ? v[static_cast<size_t>(k)] + x.shape[ax] : v[static_cast<size_t>(k)];
                t.data<int32_t>()[k] = static_cast<int32_t>(e);
            }
            std::vector<uint8_t> bytes(t.nbytes());
            std::memcpy(bytes.data(), t.raw(), bytes.size());
            idx.offset = c.blob(bytes);
        } else if (iv.dtype != num::DType::I32) {
            c.refuse("runtime indices must be INT32 (seed 003 Embedding)");
        }
        View o = xv;
        o.ext[ax] = count;
        // The output's bytes in the data tensor's memory order with `count` entries on `ax`.
        if (y.nhwc != x.nhwc && !(y.shape.size() == x.shape.size())) c.refuse("Gather changing the tensor layout");
        o.offset = yv.offset;
        o.format = y.format, o.bits = y.bits, o.zp = y.zp;
        {
            const std::vector<size_t> xo = x.nhwc ? std::vector<size_t>{0, 2, 3, 1} : [&] {
                std::vector<size_t> t(r);
                std::iota(t.begin(), t.end(), 0);
                return t;
            }();
            int64_t s =
                y.format == F::F32 || y.format == F::S32 ? 4 : (y.format == F::S16 || y.format == F::U16 ? 2 : 1);
            for (size_t k = xo.size(); k-- > 0;) {
                o.stride[xo[k]] = s;
                s *= o.ext[xo[k]];
            }
            if (static_cast<uint64_t>(s) > y.bytes + 3) c.refuse("Gather output layout");
            const size_t pos = 6 - xo.size() + static_cast<size_t>(std::find(xo.begin(), xo.end(), ax) - xo.begin());
            Desc ad;
            ad.format = F::S32;
            ad.bits = 20;
            ad.offset = idx.offset;
            ad.rank = 1;
            ad.dims[5] = count;
            ad.strides[5] = 4;
            c.sb().tensor(S::AUX, ad);
            c.sb().tensor(S::IFM, c.desc_of(xv, xo));
            c.sb().tensor(S::OFM, c.desc_of(o, xo));
            Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::MOVE);
            set_field(cmd, MV::MODE, MODE::GATHER);
            set_field(cmd, MV::AXIS, static_cast<int64_t>(pos));
            set_field(cmd, MV::REQUANT, rq ? 1 : 0);
            set_field(cmd, MV::MULT, mult);
            set_field(cmd, MV::SHIFT, shift);
            c.emit(cmd);
        }
        L.op = iv.is_constant() ? "Gather" : "Embedding";
        return;
    }
    c.refuse("no data-movement lowering for " + op);
}

}  // namespace drv::tnpuv2::detail
