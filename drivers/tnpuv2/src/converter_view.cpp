// SPDX-License-Identifier: MIT
// converter_view (model.h): the graph as the tnpuv2 converter hands it to its rule check. Each
// rewrite is one a deployment converter does before it looks the operators up (seed 003 lists
// the operators of the converted graph; "converter-inserted conversions are not listed"):
//  - Relu/Clip bounded by their QuantizeLinear are absorbed (onnxruntime ReluQuantFusion/
//    ClipQuantFusion, the same rule the QDQ rewrite applies);
//  - Gemm with a constant B -> MatMul (B as [K, N], the bias fused into the MAC array's bias);
//  - BatchNormalization with constant parameters -> Mul (per-channel scale) + Add (per-channel
//    shift), the seed's channel-broadcast Mul and channel-constant Add;
//  - Flatten -> Reshape;
//  - x * Sigmoid(x) -> Swish (seed 003 Swish: fixed table);
//  - a YOLOv5 Detect decode or a YOLOv3 (darknet) decode -> GenerateBox (seed 003 GenerateBox);
//  - Gather of a constant table by runtime INT32 indices -> Embedding (seed 003 Embedding);
//  - a nearest Resize of 16-bit data by an integer factor f in H and W -> Concat of f^2 copies
//    along C + DepthToSpace(f) (the same values; seed 003 allows nearest Resize at 4/8 bits only,
//    Concat and DepthToSpace at 8/16).
#include <algorithm>

#include "compiler/ir/qdq.h"
#include "compiler_internal.h"

namespace drv::tnpuv2 {

namespace {

/// The value before any Q -> DQ round trips.
std::string canonical(const ir::Graph& g, std::string v) {
    for (int guard = 0; guard < 8; ++guard) {
        const int p = g.producer(v);
        if (p < 0 || g.nodes()[static_cast<size_t>(p)].op_type != "DequantizeLinear") break;
        const int q = g.producer(g.nodes()[static_cast<size_t>(p)].input(0));
        if (q < 0 || g.nodes()[static_cast<size_t>(q)].op_type != "QuantizeLinear") break;
        v = g.nodes()[static_cast<size_t>(q)].input(0);
    }
    return v;
}

ir::Value float_like(const ir::Value& like, const std::string& name, std::vector<int64_t> shape) {
    ir::Value v;
    v.name = name;
    v.dtype = like.dtype;
    v.shape = std::move(shape);
    v.shape_known = true;
    return v;
}

ir::Value const_stand_in(const std::string& name, num::DType dt, std::vector<int64_t> shape) {
    ir::Value v;
    v.name = name;
    v.dtype = dt;
    v.shape = shape;
    v.shape_known = true;
    v.data = num::Tensor(dt, {1});  // shape for the rules; contents never read
    return v;
}

}  // namespace

ir::Graph converter_view(const ir::Graph& in, std::vector<std::string>* notes) {
    ir::Graph g = in;
    ir::remove_clamps_before_q(g);
    auto note = [&](const std::string& s) {
        if (notes) notes->push_back(s);
    };
    // YOLO decode -> GenerateBox.
    for (const detail::DecodeMatch& d : detail::find_yolo_decodes(g)) {
        std::vector<bool> drop(g.nodes().size(), false);
        for (size_t i : d.nodes) drop[i] = true;
        ir::Node gb;
        gb.name = g.nodes()[d.nodes.back()].name.empty() ? "generatebox" : g.nodes()[d.nodes.back()].name;
        gb.op_type = "GenerateBox";
        gb.domain = "tnpuv2";
        gb.inputs = d.head_inputs;
        gb.outputs = {d.output};
        gb.attrs.set("version", static_cast<int64_t>(d.version));
        gb.attrs.set("num_classes", static_cast<int64_t>(d.classes));
        gb.attrs.set("num_anchors", static_cast<int64_t>(d.anchors));
        std::vector<ir::Node> kept;
        for (size_t i = 0; i < g.nodes().size(); ++i)
            if (!drop[i]) kept.push_back(std::move(g.nodes()[i]));
        kept.push_back(gb);
        // The heads reach the unit as FP32: the DequantizeLinear in front of it stays a node (the
        // converter's Dequantize, domain tnpuv2, so the Q/DQ fold of the check keeps it).
        for (ir::Node& k : kept)
            if (k.op_type == "DequantizeLinear" &&
                std::find(d.head_inputs.begin(), d.head_inputs.end(), k.outputs[0]) != d.head_inputs.end())
                k.domain = "tnpuv2";
        g.nodes() = std::move(kept);
        g.sort_topologically();
        note(fmt::format("YOLOv{} decode ({} heads) -> GenerateBox '{}'", d.version, d.head_inputs.size(), gb.name));
    }
    std::vector<ir::Node> out;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        ir::Node n = g.nodes()[i];
        if (n.op_type == "Flatten") {
            ir::Node r = n;
            r.op_type = "Reshape";
            r.attrs = num::Attributes();
            const std::string shp = n.name + ".shape";
            const ir::Value& y = g.value(n.outputs[0]);
            num::Tensor t(num::DType::I64, {static_cast<int64_t>(y.shape.size())});
            for (size_t k = 0; k < y.shape.size(); ++k) t.data<int64_t>()[k] = y.shape[k];
            ir::Value sv;
            sv.name = shp;
            sv.dtype = num::DType::I64;
            sv.shape = {static_cast<int64_t>(y.shape.size())};
            sv.shape_known = true;
            sv.data = t;
            if (!g.find_value(shp)) g.add_value(sv);
            r.inputs = {n.input(0), shp};
            out.push_back(r);
            note(fmt::format("Flatten '{}' -> Reshape", n.name));
            continue;
        }
        if (n.op_type == "Gemm" && ir::attr_float(n.attrs, "alpha", 1.0f) == 1.0f &&
            ir::attr_float(n.attrs, "beta", 1.0f) == 1.0f && ir::attr_int(n.attrs, "transA", 0) == 0) {
            const std::string b = canonical(g, n.input(1));
            const ir::Value* bv = g.find_value(b);
            const bool bconst =
                bv && (bv->is_constant() ||
                       (g.producer(n.input(1)) >= 0 &&
                        g.nodes()[static_cast<size_t>(g.producer(n.input(1)))].op_type == "DequantizeLinear" &&
                        g.value(g.nodes()[static_cast<size_t>(g.producer(n.input(1)))].input(0)).is_constant()));
            const ir::Value& bn = g.value(n.input(1));
            if (bconst && bn.shape.size() == 2) {
                const bool tb = ir::attr_int(n.attrs, "transB", 0) != 0;
                const std::string kn = n.name + ".B_kn";
                ir::Value w =
                    const_stand_in(kn, bn.dtype, {tb ? bn.shape[1] : bn.shape[0], tb ? bn.shape[0] : bn.shape[1]});
                w.quant = bn.quant;
                if (!g.find_value(kn)) g.add_value(w);
                ir::Node mm;
                mm.name = n.name;
                mm.op_type = "MatMul";
                mm.inputs = {n.input(0), kn};
                mm.outputs = n.outputs;
                out.push_back(mm);
                note(fmt::format("Gemm '{}' (constant B) -> MatMul with fused bias", n.name));
                continue;
            }
        }
        if (n.op_type == "BatchNormalization" && n.outputs.size() == 1) {
            bool params = true;
            for (size_t k = 1; k <= 4; ++k)
                params = params && g.find_value(n.input(k)) && g.value(n.input(k)).is_constant();
            const ir::Value& x = g.value(n.input(0));
            if (params && x.shape.size() >= 2) {
                std::vector<int64_t> cs(x.shape.size(), 1);
                cs[1] = x.shape[1];
                const std::string k = n.name + ".scale_c", b = n.name + ".shift_c", mid = n.name + ".scaled";
                if (!g.find_value(k)) g.add_value(const_stand_in(k, num::DType::F32, cs));
                if (!g.find_value(b)) g.add_value(const_stand_in(b, num::DType::F32, cs));
                if (!g.find_value(mid)) g.add_value(float_like(x, mid, x.shape));
                ir::Node mul, add;
                mul.name = n.name;
                mul.op_type = "Mul";
                mul.inputs = {n.input(0), k};
                mul.outputs = {mid};
                add.name = n.name + "_shift";
                add.op_type = "Add";
                add.inputs = {mid, b};
                add.outputs = n.outputs;
                out.push_back(mul);
                out.push_back(add);
                note(fmt::format("BatchNormalization '{}' -> per-channel Mul + Add", n.name));
                continue;
            }
        }
        if (n.op_type == "Gather" && n.inputs.size() == 2) {
            const ir::Value& idx = g.value(n.input(1));
            const std::string table = canonical(g, n.input(0));
            const int dq = g.producer(n.input(0));
            const bool const_table = g.value(table).is_constant() ||
                                     (dq >= 0 && g.nodes()[static_cast<size_t>(dq)].op_type == "DequantizeLinear" &&
                                      g.value(g.nodes()[static_cast<size_t>(dq)].input(0)).is_constant());
            if (!idx.is_constant() && const_table) {
                ir::Node e = n;
                e.op_type = "Embedding";
                e.domain = "tnpuv2";
                out.push_back(e);
                note(fmt::format("Gather '{}' of a constant table by runtime indices -> Embedding", n.name));
                continue;
            }
        }
        if ((n.op_type == "Resize" || n.op_type == "Upsample") &&
            ir::attr_string(n.attrs, "mode", "nearest") == "nearest") {
            const int dq = g.producer(n.input(0));
            const ir::Value& x = g.value(n.input(0));
            const ir::Value& y = g.value(n.outputs[0]);
            const num::DType qt = dq >= 0 && g.nodes()[static_cast<size_t>(dq)].op_type == "DequantizeLinear"
                                      ? g.value(g.nodes()[static_cast<size_t>(dq)].input(0)).dtype
                                      : x.dtype;
            if ((qt == num::DType::I16 || qt == num::DType::U16) && x.shape.size() == 4 && y.shape.size() == 4 &&
                y.shape[2] % x.shape[2] == 0 && y.shape[2] / x.shape[2] == y.shape[3] / x.shape[3] &&
                y.shape[3] % x.shape[3] == 0 && y.shape[2] > x.shape[2]) {
                const int64_t f = y.shape[2] / x.shape[2];
                const std::string rep = n.name + ".copies";
                if (!g.find_value(rep))
                    g.add_value(float_like(x, rep, {x.shape[0], x.shape[1] * f * f, x.shape[2], x.shape[3]}));
                ir::Node cc, d2s;
                cc.name = n.name + "_copies";
                cc.op_type = "Concat";
                cc.inputs.assign(static_cast<size_t>(f * f), n.input(0));
                cc.outputs = {rep};
                cc.attrs.set("axis", int64_t{1});
                d2s.name = n.name;
                d2s.op_type = "DepthToSpace";
                d2s.inputs = {rep};
                d2s.outputs = n.outputs;
                d2s.attrs.set("blocksize", f);
                d2s.attrs.set("mode", std::string("DCR"));
                out.push_back(cc);
                out.push_back(d2s);
                note(fmt::format("16-bit nearest Resize '{}' x{} -> Concat of {} copies + DepthToSpace", n.name, f,
                                 f * f));
                continue;
            }
        }
        if (n.op_type == "Mul" && n.inputs.size() == 2) {
            // x * Sigmoid(x), also through Q -> DQ pairs.
            bool swish = false;
            for (int k = 0; k < 2 && !swish; ++k) {
                const std::string s = canonical(g, n.input(static_cast<size_t>(k)));
                const int sp = g.producer(s);
                if (sp < 0 || g.nodes()[static_cast<size_t>(sp)].op_type != "Sigmoid") continue;
                const ir::Node& sig = g.nodes()[static_cast<size_t>(sp)];
                if (canonical(g, sig.input(0)) != canonical(g, n.input(static_cast<size_t>(1 - k)))) continue;
                ir::Node sw;
                sw.name = n.name;
                sw.op_type = "Swish";
                sw.inputs = {n.input(static_cast<size_t>(1 - k))};
                sw.outputs = n.outputs;
                out.push_back(sw);
                swish = true;
                note(fmt::format("Mul '{}' of x and Sigmoid(x) -> Swish", n.name));
            }
            if (swish) continue;
        }
        out.push_back(n);
    }
    g.nodes() = std::move(out);
    g.remove_dead_nodes();
    g.sort_topologically();
    return g;
}

}  // namespace drv::tnpuv2
