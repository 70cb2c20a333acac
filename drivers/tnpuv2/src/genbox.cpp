// SPDX-License-Identifier: MIT
// The YOLO decodes (YOLOv5 and YOLOv3 per head below, YOLOv8 in decode_v8), recognised in the
// graph and run on the GENBOX unit (seed 003 GenerateBox). The YOLOv5 pattern is the ultralytics
// YOLOv5 v7.0 export of Detect (models/yolo.py): per head Reshape [1, na*no, ny, nx] ->
// [1, na, no, ny, nx], Transpose (0,1,3,4,2), Sigmoid, Split (2, 2, no - 4) on the last axis;
// xy = (s * 2 + grid) * stride; wh = (s * 2)^2 * anchor_grid; Concat (xy, wh, conf), Reshape [1, na*ny*nx, no]; the heads concatenated on axis 1.
// The grid, stride and anchor constants are read from the graph and checked against the form the
// unit computes (grid = cell + offset, anchors constant over the cells), so the unit reproduces
// exactly what the decode nodes compute.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "compiler_internal.h"

namespace drv::tnpuv2::detail {
namespace {

struct Walk {
    const ir::Graph& g;
    int only(const std::string& v) const {
        const std::vector<size_t> cs = g.consumers(v);
        return cs.size() == 1 ? static_cast<int>(cs[0]) : -1;
    }
    const ir::Node* node(int i) const { return i < 0 ? nullptr : &g.nodes()[static_cast<size_t>(i)]; }
    const num::Tensor* cst(const std::string& v) const {
        const ir::Value* x = g.find_value(v);
        return x && x->is_constant() && x->data->dtype() == num::DType::F32 ? &*x->data : nullptr;
    }
    /// For a binary node reading `from` and a float constant: the constant (nullptr otherwise).
    const num::Tensor* other_const(const ir::Node& n, const std::string& from) const {
        if (n.inputs.size() != 2) return nullptr;
        if (n.input(0) == from) return cst(n.input(1));
        if (n.input(1) == from) return cst(n.input(0));
        return nullptr;
    }
    static bool scalar(const num::Tensor* t, float v) { return t && t->numel() == 1 && t->data<float>()[0] == v; }
};

/// Split sizes from the input or the attribute (empty when not constant).
std::vector<int64_t> split_sizes(const Walk& w, const ir::Node& sp) {
    std::vector<int64_t> sizes = ir::attr_ints(sp.attrs, "split", {});
    if (sp.has_input(1)) {
        const ir::Value* sv = w.g.find_value(sp.input(1));
        sizes.clear();
        if (!sv || !sv->is_constant() || sv->data->dtype() != num::DType::I64) return {};
        for (size_t i = 0; i < sv->data->numel(); ++i) sizes.push_back(sv->data->data<int64_t>()[i]);
    }
    return sizes;
}

/// The grid and anchor constants in the unit's form: grid = cell + offset, anchors constant over
/// the cells. Sets the match's grid offset and appends the head's anchors.
bool grid_and_anchors(const num::Tensor& grid, const num::Tensor& ag, int64_t na, int64_t ny, int64_t nx,
                      DecodeMatch& m) {
    const float off = grid.data<float>()[0];
    const bool per_anchor_grid = grid.numel() == static_cast<size_t>(na * ny * nx * 2);
    for (int64_t a = 0; a < (per_anchor_grid ? na : 1); ++a)
        for (int64_t y = 0; y < ny; ++y)
            for (int64_t x = 0; x < nx; ++x) {
                const float* gp = grid.data<float>() + ((a * ny + y) * nx + x) * 2;
                if (gp[0] != static_cast<float>(x) + off || gp[1] != static_cast<float>(y) + off) return false;
            }
    std::vector<float> anchors;
    const bool full = ag.numel() == static_cast<size_t>(na * ny * nx * 2);
    if (!full && ag.numel() != static_cast<size_t>(na * 2)) return false;
    for (int64_t a = 0; a < na; ++a) {
        const float* base = ag.data<float>() + (full ? a * ny * nx * 2 : a * 2);
        anchors.push_back(base[0]);
        anchors.push_back(base[1]);
        if (full)
            for (int64_t k = 0; k < ny * nx; ++k)
                if (base[k * 2] != base[0] || base[k * 2 + 1] != base[1]) return false;
    }
    m.grid_offset = off;
    m.anchor_wh.push_back(anchors);
    return true;
}

bool head(const Walk& w, size_t r1i, DecodeMatch& m, std::vector<size_t>& nodes, std::string& head_out) {
    const ir::Node& r1 = w.g.nodes()[r1i];
    const ir::Value& in = w.g.value(r1.input(0));
    const ir::Value& o5 = w.g.value(r1.outputs[0]);
    if (in.dtype != num::DType::F32 || in.shape.size() != 4 || o5.shape.size() != 5) return false;
    const int64_t na = o5.shape[1], no = o5.shape[2], ny = o5.shape[3], nx = o5.shape[4];
    if (na * no != in.shape[1] || ny != in.shape[2] || nx != in.shape[3] || no < 6 || na > 4) return false;
    const ir::Node* t = w.node(w.only(r1.outputs[0]));
    if (!t || t->op_type != "Transpose" || ir::attr_ints(t->attrs, "perm", {}) != std::vector<int64_t>{0, 1, 3, 4, 2})
        return false;
    const ir::Node* s = w.node(w.only(t->outputs[0]));
    if (!s || s->op_type != "Sigmoid") return false;
    const ir::Node* sp = w.node(w.only(s->outputs[0]));
    if (!sp || sp->op_type != "Split" || sp->outputs.size() != 3) return false;
    const int64_t ax = ir::attr_int(sp->attrs, "axis", 0);
    if (ax != 4 && ax != -1) return false;
    if (split_sizes(w, *sp) != std::vector<int64_t>{2, 2, no - 4}) return false;
    // xy branch
    const ir::Node* m1 = w.node(w.only(sp->outputs[0]));
    if (!m1 || m1->op_type != "Mul" || !Walk::scalar(w.other_const(*m1, sp->outputs[0]), 2.0f)) return false;
    const ir::Node* a1 = w.node(w.only(m1->outputs[0]));
    const num::Tensor* grid = a1 && a1->op_type == "Add" ? w.other_const(*a1, m1->outputs[0]) : nullptr;
    if (!grid ||
        (grid->numel() != static_cast<size_t>(na * ny * nx * 2) && grid->numel() != static_cast<size_t>(ny * nx * 2)))
        return false;
    const ir::Node* m2 = w.node(w.only(a1->outputs[0]));
    const num::Tensor* stride = m2 && m2->op_type == "Mul" ? w.other_const(*m2, a1->outputs[0]) : nullptr;
    if (!stride || stride->numel() != 1) return false;
    // wh branch
    const ir::Node* m3 = w.node(w.only(sp->outputs[1]));
    if (!m3 || m3->op_type != "Mul" || !Walk::scalar(w.other_const(*m3, sp->outputs[1]), 2.0f)) return false;
    const ir::Node* pw = w.node(w.only(m3->outputs[0]));
    if (!pw || pw->op_type != "Pow" || pw->input(0) != m3->outputs[0] || !Walk::scalar(w.cst(pw->input(1)), 2.0f))
        return false;
    const ir::Node* m4 = w.node(w.only(pw->outputs[0]));
    const num::Tensor* ag = m4 && m4->op_type == "Mul" ? w.other_const(*m4, pw->outputs[0]) : nullptr;
    if (!ag) return false;
    // concat + reshape
    const ir::Node* cc = w.node(w.only(m2->outputs[0]));
    if (!cc || cc->op_type != "Concat" ||
        cc->inputs != std::vector<std::string>{m2->outputs[0], m4->outputs[0], sp->outputs[2]})
        return false;
    if (w.only(m4->outputs[0]) < 0 || w.only(sp->outputs[2]) < 0) return false;
    const int64_t cax = ir::attr_int(cc->attrs, "axis", 0);
    if (cax != 4 && cax != -1) return false;
    const ir::Node* r2 = w.node(w.only(cc->outputs[0]));
    if (!r2 || r2->op_type != "Reshape" || w.g.value(r2->outputs[0]).shape != std::vector<int64_t>{1, na * ny * nx, no})
        return false;
    if (!grid_and_anchors(*grid, *ag, na, ny, nx, m)) return false;
    m.classes = static_cast<int>(no - 5);
    m.anchors = static_cast<int>(na);
    m.strides.push_back(stride->data<float>()[0]);
    m.grid_h.push_back(ny);
    m.grid_w.push_back(nx);
    m.head_inputs.push_back(r1.input(0));
    const ir::Node* all[] = {&r1, t, s, sp, m1, a1, m2, m3, pw, m4, cc, r2};
    for (const ir::Node* n : all) nodes.push_back(static_cast<size_t>(n - w.g.nodes().data()));
    head_out = r2->outputs[0];
    return true;
}

/// The YOLOv3 (darknet) form of one head (Redmon & Farhadi, "YOLOv3: An Incremental Improvement",
/// 2018, sec. 2.1: b_x = sigmoid(t_x) + c_x, b_w = p_w e^(t_w)), as a graph writes it: Reshape
/// [1, na, no, ny, nx], Transpose (0,1,3,4,2), Split (2, 2, no - 4) of the raw values; xy =
/// (Sigmoid + grid) * stride, wh = Exp * anchor_grid (pixels), conf = Sigmoid; Concat, Reshape
/// [1, na*ny*nx, no].
bool head_v3(const Walk& w, size_t r1i, DecodeMatch& m, std::vector<size_t>& nodes, std::string& head_out) {
    const ir::Node& r1 = w.g.nodes()[r1i];
    const ir::Value& in = w.g.value(r1.input(0));
    const ir::Value& o5 = w.g.value(r1.outputs[0]);
    if (in.dtype != num::DType::F32 || in.shape.size() != 4 || o5.shape.size() != 5) return false;
    const int64_t na = o5.shape[1], no = o5.shape[2], ny = o5.shape[3], nx = o5.shape[4];
    if (na * no != in.shape[1] || ny != in.shape[2] || nx != in.shape[3] || no < 6 || na > 4) return false;
    const ir::Node* t = w.node(w.only(r1.outputs[0]));
    if (!t || t->op_type != "Transpose" || ir::attr_ints(t->attrs, "perm", {}) != std::vector<int64_t>{0, 1, 3, 4, 2})
        return false;
    const ir::Node* sp = w.node(w.only(t->outputs[0]));
    if (!sp || sp->op_type != "Split" || sp->outputs.size() != 3) return false;
    const int64_t ax = ir::attr_int(sp->attrs, "axis", 0);
    if (ax != 4 && ax != -1) return false;
    if (split_sizes(w, *sp) != std::vector<int64_t>{2, 2, no - 4}) return false;
    const ir::Node* s1 = w.node(w.only(sp->outputs[0]));
    if (!s1 || s1->op_type != "Sigmoid") return false;
    const ir::Node* a1 = w.node(w.only(s1->outputs[0]));
    const num::Tensor* grid = a1 && a1->op_type == "Add" ? w.other_const(*a1, s1->outputs[0]) : nullptr;
    if (!grid ||
        (grid->numel() != static_cast<size_t>(na * ny * nx * 2) && grid->numel() != static_cast<size_t>(ny * nx * 2)))
        return false;
    const ir::Node* m2 = w.node(w.only(a1->outputs[0]));
    const num::Tensor* stride = m2 && m2->op_type == "Mul" ? w.other_const(*m2, a1->outputs[0]) : nullptr;
    if (!stride || stride->numel() != 1) return false;
    const ir::Node* ex = w.node(w.only(sp->outputs[1]));
    if (!ex || ex->op_type != "Exp") return false;
    const ir::Node* m4 = w.node(w.only(ex->outputs[0]));
    const num::Tensor* ag = m4 && m4->op_type == "Mul" ? w.other_const(*m4, ex->outputs[0]) : nullptr;
    if (!ag) return false;
    const ir::Node* s3 = w.node(w.only(sp->outputs[2]));
    if (!s3 || s3->op_type != "Sigmoid") return false;
    const ir::Node* cc = w.node(w.only(m2->outputs[0]));
    if (!cc || cc->op_type != "Concat" ||
        cc->inputs != std::vector<std::string>{m2->outputs[0], m4->outputs[0], s3->outputs[0]})
        return false;
    if (w.only(m4->outputs[0]) < 0 || w.only(s3->outputs[0]) < 0) return false;
    const int64_t cax = ir::attr_int(cc->attrs, "axis", 0);
    if (cax != 4 && cax != -1) return false;
    const ir::Node* r2 = w.node(w.only(cc->outputs[0]));
    if (!r2 || r2->op_type != "Reshape" || w.g.value(r2->outputs[0]).shape != std::vector<int64_t>{1, na * ny * nx, no})
        return false;
    if (!grid_and_anchors(*grid, *ag, na, ny, nx, m)) return false;
    m.version = 3;
    m.classes = static_cast<int>(no - 5);
    m.anchors = static_cast<int>(na);
    m.strides.push_back(stride->data<float>()[0]);
    m.grid_h.push_back(ny);
    m.grid_w.push_back(nx);
    m.head_inputs.push_back(r1.input(0));
    const ir::Node* all[] = {&r1, t, sp, s1, a1, m2, ex, m4, s3, cc, r2};
    for (const ir::Node* n : all) nodes.push_back(static_cast<size_t>(n - w.g.nodes().data()));
    head_out = r2->outputs[0];
    return true;
}

/// The YOLOv8 anchor-free decode as the ultralytics v8 ONNX export writes it (ultralytics
/// nn/modules/head.py Detect._inference, DFL in nn/modules/block.py, dist2bbox(xywh=True) and
/// make_anchors(offset 0.5) in utils/tal.py), starting at its Concat (axis 2) of the heads' Reshape
/// [1, no, ny*nx]: Split (4 reg_max, nc) on axis 1; DFL Reshape [1, 4, reg_max, A], Transpose
/// (0,2,1,3), Softmax axis 1, 1x1 Conv with weights 0..reg_max-1 (no bias), Reshape [1, 4, A];
/// Split (2, 2); x1y1 = anchors - lt, x2y2 = anchors + rb; Concat((x1y1 + x2y2) / 2, x2y2 - x1y1)
/// * strides; Sigmoid of the classes; Concat (dbox, classes) on axis 1 -> [1, 4 + nc, A]. The
/// anchor and stride constants must be the unit's (cell + 0.5, one stride per head).
bool decode_v8(const Walk& w, size_t xi, DecodeMatch& m) {
    const ir::Graph& g = w.g;
    const ir::Node& xc = g.nodes()[xi];
    const int64_t xax = ir::attr_int(xc.attrs, "axis", 0);
    if (xc.op_type != "Concat" || (xax != 2 && xax != -1) || xc.inputs.empty() || xc.inputs.size() > 4) return false;
    std::vector<size_t> nodes{xi};
    int64_t no = 0, A = 0;
    for (const std::string& in : xc.inputs) {
        const ir::Node* r = nullptr;
        for (const ir::Node& n : g.nodes())
            if (!n.outputs.empty() && n.outputs[0] == in) r = &n;
        if (!r || r->op_type != "Reshape" || w.only(in) < 0) return false;
        const ir::Value& hv = g.value(r->input(0));
        const ir::Value& rv = g.value(in);
        if (hv.dtype != num::DType::F32 || hv.shape.size() != 4 || hv.shape[0] != 1 || rv.shape.size() != 3) return false;
        if (no && hv.shape[1] != no) return false;
        no = hv.shape[1];
        if (rv.shape != std::vector<int64_t>{1, no, hv.shape[2] * hv.shape[3]}) return false;
        m.head_inputs.push_back(r->input(0));
        m.grid_h.push_back(hv.shape[2]);
        m.grid_w.push_back(hv.shape[3]);
        A += hv.shape[2] * hv.shape[3];
        nodes.push_back(static_cast<size_t>(r - g.nodes().data()));
    }
    const ir::Node* sp = w.node(w.only(xc.outputs[0]));
    if (!sp || sp->op_type != "Split" || sp->outputs.size() != 2 || ir::attr_int(sp->attrs, "axis", 0) != 1) return false;
    const std::vector<int64_t> sz = split_sizes(w, *sp);
    if (sz.size() != 2 || sz[0] % 4 || sz[0] < 4 || sz[1] < 1 || sz[0] + sz[1] != no) return false;
    const int64_t R = sz[0] / 4, nc = sz[1];
    // DFL
    const ir::Node* r4 = w.node(w.only(sp->outputs[0]));
    if (!r4 || r4->op_type != "Reshape" || g.value(r4->outputs[0]).shape != std::vector<int64_t>{1, 4, R, A}) return false;
    const ir::Node* tr = w.node(w.only(r4->outputs[0]));
    if (!tr || tr->op_type != "Transpose" || ir::attr_ints(tr->attrs, "perm", {}) != std::vector<int64_t>{0, 2, 1, 3})
        return false;
    const ir::Node* sm = w.node(w.only(tr->outputs[0]));
    if (!sm || sm->op_type != "Softmax" || ir::attr_int(sm->attrs, "axis", -1) != 1) return false;
    const ir::Node* cv = w.node(w.only(sm->outputs[0]));
    if (!cv || cv->op_type != "Conv" || cv->input(0) != sm->outputs[0] || cv->has_input(2)) return false;
    const num::Tensor* wt = w.cst(cv->input(1));
    if (!wt || wt->numel() != static_cast<size_t>(R) || wt->shape() != std::vector<int64_t>{1, R, 1, 1}) return false;
    for (int64_t i = 0; i < R; ++i)
        if (wt->data<float>()[i] != static_cast<float>(i)) return false;
    for (int64_t k : ir::attr_ints(cv->attrs, "strides", {1, 1}))
        if (k != 1) return false;
    for (int64_t k : ir::attr_ints(cv->attrs, "pads", {0, 0, 0, 0}))
        if (k != 0) return false;
    if (ir::attr_int(cv->attrs, "group", 1) != 1) return false;
    const ir::Node* r3 = w.node(w.only(cv->outputs[0]));
    if (!r3 || r3->op_type != "Reshape" || g.value(r3->outputs[0]).shape != std::vector<int64_t>{1, 4, A}) return false;
    // dist2bbox
    const ir::Node* s2 = w.node(w.only(r3->outputs[0]));
    if (!s2 || s2->op_type != "Split" || s2->outputs.size() != 2 || ir::attr_int(s2->attrs, "axis", 0) != 1 ||
        split_sizes(w, *s2) != std::vector<int64_t>{2, 2})
        return false;
    const ir::Node* sub = w.node(w.only(s2->outputs[0]));
    const ir::Node* add = w.node(w.only(s2->outputs[1]));
    if (!sub || sub->op_type != "Sub" || sub->input(1) != s2->outputs[0] || !add || add->op_type != "Add") return false;
    const num::Tensor* anc = w.cst(sub->input(0));
    if (!anc || anc != w.other_const(*add, s2->outputs[1]) || anc->numel() != static_cast<size_t>(2 * A)) return false;
    const std::vector<size_t> cs1 = g.consumers(sub->outputs[0]), cs2 = g.consumers(add->outputs[0]);
    if (cs1.size() != 2 || cs2.size() != 2) return false;
    const ir::Node *csum = nullptr, *wh = nullptr;
    for (size_t c : cs2) {
        const ir::Node& n = g.nodes()[c];
        if (n.op_type == "Add" && n.inputs == std::vector<std::string>{sub->outputs[0], add->outputs[0]}) csum = &n;
        if (n.op_type == "Sub" && n.inputs == std::vector<std::string>{add->outputs[0], sub->outputs[0]}) wh = &n;
    }
    if (!csum || !wh || std::find(cs1.begin(), cs1.end(), static_cast<size_t>(csum - g.nodes().data())) == cs1.end() ||
        std::find(cs1.begin(), cs1.end(), static_cast<size_t>(wh - g.nodes().data())) == cs1.end())
        return false;
    const ir::Node* dv = w.node(w.only(csum->outputs[0]));
    if (!dv || dv->op_type != "Div" || dv->input(0) != csum->outputs[0] || !Walk::scalar(w.cst(dv->input(1)), 2.0f))
        return false;
    const ir::Node* bc = w.node(w.only(dv->outputs[0]));
    if (!bc || bc->op_type != "Concat" || ir::attr_int(bc->attrs, "axis", 0) != 1 ||
        bc->inputs != std::vector<std::string>{dv->outputs[0], wh->outputs[0]} || w.only(wh->outputs[0]) < 0)
        return false;
    const ir::Node* ms = w.node(w.only(bc->outputs[0]));
    const num::Tensor* st = ms && ms->op_type == "Mul" ? w.other_const(*ms, bc->outputs[0]) : nullptr;
    if (!st || st->numel() != static_cast<size_t>(A)) return false;
    // classes and the output
    const ir::Node* sg = w.node(w.only(sp->outputs[1]));
    if (!sg || sg->op_type != "Sigmoid") return false;
    const ir::Node* oc = w.node(w.only(ms->outputs[0]));
    if (!oc || oc->op_type != "Concat" || ir::attr_int(oc->attrs, "axis", 0) != 1 ||
        oc->inputs != std::vector<std::string>{ms->outputs[0], sg->outputs[0]} || w.only(sg->outputs[0]) < 0)
        return false;
    // The constants in the unit's form: anchor = cell + 0.5, one stride per head.
    int64_t a0 = 0;
    for (size_t h = 0; h < m.head_inputs.size(); ++h) {
        const float s = st->data<float>()[a0];
        for (int64_t y = 0; y < m.grid_h[h]; ++y)
            for (int64_t x = 0; x < m.grid_w[h]; ++x, ++a0)
                if (anc->data<float>()[a0] != static_cast<float>(x) + 0.5f ||
                    anc->data<float>()[A + a0] != static_cast<float>(y) + 0.5f || st->data<float>()[a0] != s)
                    return false;
        m.strides.push_back(s);
        m.anchor_wh.emplace_back();
    }
    m.version = 8;
    m.classes = static_cast<int>(nc);
    m.anchors = 1;
    m.reg_max = static_cast<int>(R);
    m.grid_offset = 0.5f;
    const ir::Node* all[] = {sp, r4, tr, sm, cv, r3, s2, sub, add, csum, wh, dv, bc, ms, sg, oc};
    for (const ir::Node* n : all) nodes.push_back(static_cast<size_t>(n - g.nodes().data()));
    std::sort(nodes.begin(), nodes.end());
    m.nodes = nodes;
    m.output = oc->outputs[0];
    return true;
}

}  // namespace

std::vector<DecodeMatch> find_yolo_decodes(const ir::Graph& g) {
    const Walk w{g};
    // Every head decode, by the tensor its final Reshape writes.
    struct Head1 {
        DecodeMatch m;
        std::vector<size_t> nodes;
    };
    std::map<std::string, Head1> heads;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        if (g.nodes()[i].op_type != "Reshape") continue;
        Head1 h;
        std::string out;
        if (head(w, i, h.m, h.nodes, out) || head_v3(w, i, h.m = DecodeMatch{}, h.nodes, out))
            heads[out] = std::move(h);
    }
    std::vector<DecodeMatch> found;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        DecodeMatch m;
        if (g.nodes()[i].op_type == "Concat" && decode_v8(w, i, m)) found.push_back(std::move(m));
    }
    for (size_t i = 0; i < g.nodes().size() && !heads.empty(); ++i) {
        const ir::Node& fc = g.nodes()[i];
        if (fc.op_type != "Concat" || ir::attr_int(fc.attrs, "axis", 0) != 1 || fc.inputs.empty()) continue;
        DecodeMatch m;
        bool ok = true;
        for (const std::string& in : fc.inputs) {
            auto it = heads.find(in);
            if (it == heads.end() || w.only(in) < 0) {
                ok = false;
                break;
            }
            const DecodeMatch& h = it->second.m;
            if (m.classes && (m.classes != h.classes || m.anchors != h.anchors || m.grid_offset != h.grid_offset ||
                              m.version != h.version)) {
                ok = false;
                break;
            }
            m.classes = h.classes;
            m.version = h.version;
            m.anchors = h.anchors;
            m.grid_offset = h.grid_offset;
            m.strides.push_back(h.strides[0]);
            m.anchor_wh.push_back(h.anchor_wh[0]);
            m.grid_h.push_back(h.grid_h[0]);
            m.grid_w.push_back(h.grid_w[0]);
            m.head_inputs.push_back(h.head_inputs[0]);
            m.nodes.insert(m.nodes.end(), it->second.nodes.begin(), it->second.nodes.end());
        }
        if (!ok) continue;
        m.nodes.push_back(i);
        m.output = fc.outputs[0];
        std::sort(m.nodes.begin(), m.nodes.end());
        found.push_back(std::move(m));
    }
    return found;
}

void lower_genbox(Compiler& c, const std::vector<const ir::Node*>& nodes) {
    (void)nodes;
    const std::vector<DecodeMatch> all = find_yolo_decodes(c.g());
    const Layer& L0 = c.layer();
    const DecodeMatch* m = nullptr;
    for (const DecodeMatch& d : all)
        if (!L0.outputs.empty() && d.output == L0.outputs[0]) m = &d;
    if (!m) c.refuse("internal: the decode pattern is no longer matched");
    std::vector<uint32_t> words(m->head_inputs.size() * hw::tnpuv2::kGenboxHeadWords, 0);
    std::vector<std::pair<size_t, size_t>> addr_words;
    for (size_t h = 0; h < m->head_inputs.size(); ++h) {
        const DeviceTensor& x = c.dt(m->head_inputs[h]);
        if (x.format != F::F32 || !x.nhwc)
            c.refuse("GenerateBox reads FP32 head tensors (seed 003: FP32 or 16-bit input)");
        uint32_t* w = words.data() + h * hw::tnpuv2::kGenboxHeadWords;
        const int64_t pix = x.strides[3], row = x.strides[2];
        w[0] = static_cast<uint32_t>(x.offset);
        w[1] = static_cast<uint32_t>(x.offset >> 32);
        w[2] = static_cast<uint32_t>(m->grid_h[h]);
        w[3] = static_cast<uint32_t>(m->grid_w[h]);
        w[4] = static_cast<uint32_t>(pix);
        w[5] = static_cast<uint32_t>(row);
        std::memcpy(&w[6], &m->strides[h], 4);
        for (size_t k = 0; k < m->anchor_wh[h].size() && k < 8; ++k) std::memcpy(&w[7 + k], &m->anchor_wh[h][k], 4);
        w[15] = F::F32;
        const float one = 1.0f;
        std::memcpy(&w[16], &one, 4);
        addr_words.emplace_back(h * hw::tnpuv2::kGenboxHeadWords, h * hw::tnpuv2::kGenboxHeadWords + 1);
        if (m->version == 8) {  // the class channels follow the 4 reg_max box channels of the same map
            const int64_t cls = x.offset + 4 * m->reg_max * x.strides[1];
            w[18] = static_cast<uint32_t>(cls);
            w[19] = static_cast<uint32_t>(cls >> 32);
            w[20] = static_cast<uint32_t>(pix);
            w[21] = static_cast<uint32_t>(row);
            addr_words.emplace_back(h * hw::tnpuv2::kGenboxHeadWords + 18, h * hw::tnpuv2::kGenboxHeadWords + 19);
        }
    }
    std::vector<uint8_t> bytes(words.size() * 4);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    const uint64_t poff = c.blob(bytes);
    for (const auto& [lo, hi] : addr_words) c.blob_reloc(poff + lo * 4, poff + hi * 4);
    const DeviceTensor& y = c.dt(m->output);
    if (y.format != F::F32 || y.shape.size() != 3) c.refuse("the decode output must be FP32 [1, boxes, fields]");
    // YOLOv8's output is channels first ([1, 4 + nc, boxes]): the unit writes it through the strides.
    c.sb().tensor(S::OFM, c.desc_of(c.view(y), m->version == 8 ? std::vector<size_t>{0, 2, 1} : std::vector<size_t>{0, 1, 2}));
    Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::GENBOX);
    namespace G = hw::tnpuv2::GENBOX;
    namespace V = hw::tnpuv2::enums::GENBOX_VERSION;
    set_field(cmd, G::VERSION, m->version == 3 ? V::YOLOV3 : m->version == 8 ? V::YOLOV8 : V::YOLOV5);
    if (m->version == 8) set_field(cmd, G::REG_MAX, m->reg_max);
    set_field(cmd, G::HEADS, static_cast<int64_t>(m->head_inputs.size()));
    set_field(cmd, G::NUM_CLASSES, m->classes);
    set_field(cmd, G::NUM_ANCHORS, m->anchors);
    hw::tnpuv2::set_addr(cmd, G::PARAM_ADDR_LO, G::PARAM_ADDR_HI, poff);
    set_field(cmd, G::PARAM_WORDS, static_cast<int64_t>(words.size()));
    set_field_f32(cmd, G::CONF_THRESHOLD, 0.0f);
    set_field_f32(cmd, G::NMS_THRESHOLD, 0.0f);
    set_field_f32(cmd, G::GRID_OFFSET, m->grid_offset);
    c.emit(cmd, {{G::PARAM_ADDR_LO, G::PARAM_ADDR_HI}});
    Layer& L = c.layer();
    L.op = "GenerateBox";
    L.note =
        m->version == 8
            ? fmt::format("YOLOv8 decode, {} heads, {} classes, reg_max {}", m->head_inputs.size(), m->classes, m->reg_max)
            : fmt::format("YOLOv{} decode, {} heads, {} classes, {} anchors", m->version, m->head_inputs.size(), m->classes,
                          m->anchors);
    if (m->version == 8) {
        // The unit sums the DFL expectation in bin order with fused multiply-adds, as the reference
        // library's AVX-512 GEMM sums the 1x1 DFL Conv (exact there); its portable GEMM rounds each
        // product first: at most (reg_max + 1) u (reg_max - 1) per distance (u = 2^-24, Higham eq.
        // 4.4), which after the anchor add (one ulp of the grid extent) and the stride multiply
        // bounds the difference. This is the isolated check's unit for the boxes.
        float smax = 0;
        int64_t gmax = 0;
        for (size_t h = 0; h < m->strides.size(); ++h) {
            smax = std::max(smax, m->strides[h]);
            gmax = std::max({gmax, m->grid_h[h], m->grid_w[h]});
        }
        const double u = std::ldexp(1.0, -24);
        L.float_lsb[m->output] = 4.0 * smax * ((m->reg_max + 1.0) * (m->reg_max - 1.0) * u + 2.0 * u * double(gmax + m->reg_max));
    }
}

}  // namespace drv::tnpuv2::detail

namespace drv::tnpuv2 {

std::vector<std::string> decode_node_names(const ir::Graph& g) {
    std::vector<std::string> names;
    for (const detail::DecodeMatch& d : detail::find_yolo_decodes(g))
        for (size_t i : d.nodes) names.push_back(g.nodes()[i].name);
    return names;
}

}  // namespace drv::tnpuv2
