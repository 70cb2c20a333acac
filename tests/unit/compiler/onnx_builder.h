// SPDX-License-Identifier: MIT
// Test helper: builds small ONNX ModelProtos in memory (libonnx protobuf classes) so importer tests
// need no files on disk.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace test_onnx {

class ModelBuilder {
   public:
    explicit ModelBuilder(int64_t opset = 13) {
        m_.set_ir_version(8);
        auto* o = m_.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        m_.mutable_graph()->set_name("test");
    }
    ::onnx::GraphProto& graph() { return *m_.mutable_graph(); }
    ::onnx::ModelProto& model() { return m_; }

    /// dims: negative = dynamic (dim_param "N").
    void input(const std::string& name, int32_t elem, const std::vector<int64_t>& dims) {
        add_info(graph().add_input(), name, elem, dims);
    }
    void output(const std::string& name, int32_t elem = 1) { add_info(graph().add_output(), name, elem, {}, false); }

    ::onnx::TensorProto& init_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
        auto* t = graph().add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        for (auto d : dims) t->add_dims(d);
        t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
        return *t;
    }
    ::onnx::TensorProto& init_i64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
        auto* t = graph().add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::INT64);
        for (auto d : dims) t->add_dims(d);
        for (auto x : v) t->add_int64_data(x);
        return *t;
    }
    ::onnx::TensorProto& init_int(const std::string& name, int32_t elem, const std::vector<int64_t>& dims,
                                  const std::vector<int32_t>& v) {
        auto* t = graph().add_initializer();
        t->set_name(name);
        t->set_data_type(elem);
        for (auto d : dims) t->add_dims(d);
        for (auto x : v) t->add_int32_data(x);
        return *t;
    }
    /// x -> QuantizeLinear -> DequantizeLinear into y (an activation's fake quantization as the QDQ
    /// exporters write it; onnxruntime quantize_static), scale and zero point initializers P_s, P_z.
    void qdq(const std::string& x, const std::string& q, const std::string& y, const std::string& p, float scale,
             int32_t zp_elem, int32_t zp);
    /// A constant weight and its per-tensor DequantizeLinear into y (int8, zero point 0, scale W_s).
    void dq_weight(const std::string& w, const std::vector<int64_t>& dims, const std::vector<int32_t>& v, float scale,
                   const std::string& y);
    ::onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                            const std::string& name = {}, const std::string& domain = {}) {
        auto* n = graph().add_node();
        n->set_op_type(op);
        n->set_name(name.empty() ? op + std::to_string(graph().node_size()) : name);
        if (!domain.empty()) n->set_domain(domain);
        for (auto& s : in) n->add_input(s);
        for (auto& s : out) n->add_output(s);
        return *n;
    }
    static void attr_ints(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INTS);
        for (auto x : v) a->add_ints(x);
    }
    static void attr_int(::onnx::NodeProto& n, const std::string& name, int64_t v) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INT);
        a->set_i(v);
    }
    static void attr_string(::onnx::NodeProto& n, const std::string& name, const std::string& v) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::STRING);
        a->set_s(v);
    }
    static void attr_float(::onnx::NodeProto& n, const std::string& name, float v) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }
    /// Graph-valued attribute (If then_branch / else_branch).
    static void attr_graph(::onnx::NodeProto& n, const std::string& name, const ::onnx::GraphProto& g) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::GRAPH);
        *a->mutable_g() = g;
    }
    std::string bytes() const { return m_.SerializeAsString(); }

   private:
    static void add_info(::onnx::ValueInfoProto* vi, const std::string& name, int32_t elem,
                         const std::vector<int64_t>& dims, bool with_shape = true) {
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elem);
        if (!with_shape) return;
        auto* sh = tt->mutable_shape();
        for (auto d : dims) {
            auto* dim = sh->add_dim();
            if (d < 0) dim->set_dim_param("N");
            else dim->set_dim_value(d);
        }
    }
    ::onnx::ModelProto m_;
};

inline void ModelBuilder::qdq(const std::string& x, const std::string& q, const std::string& y, const std::string& p,
                              float scale, int32_t zp_elem, int32_t zp) {
    init_f32(p + "_s", {}, {scale});
    init_int(p + "_z", zp_elem, {}, {zp});
    node("QuantizeLinear", {x, p + "_s", p + "_z"}, {q});
    node("DequantizeLinear", {q, p + "_s", p + "_z"}, {y});
}
inline void ModelBuilder::dq_weight(const std::string& w, const std::vector<int64_t>& dims, const std::vector<int32_t>& v,
                                    float scale, const std::string& y) {
    init_int(w, ::onnx::TensorProto::INT8, dims, v);
    init_f32(w + "_s", {}, {scale});
    init_int(w + "_z", ::onnx::TensorProto::INT8, {}, {0});
    node("DequantizeLinear", {w, w + "_s", w + "_z"}, {y});
}

/// n deterministic integers in [lo, hi] (an LCG from `seed`): weights and codes of test graphs.
inline std::vector<int32_t> ramp(size_t n, int lo, int hi, uint32_t seed) {
    std::vector<int32_t> v(n);
    uint32_t s = seed;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = lo + static_cast<int>((s >> 8) % static_cast<uint32_t>(hi - lo + 1));
    }
    return v;
}

}  // namespace test_onnx
