// SPDX-License-Identifier: MIT
// ONNX writer (onnx_writer.h): ir::Graph -> onnx::ModelProto (onnx.proto field semantics).
#include "compiler/quantize/onnx_writer.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <set>
#include <stdexcept>
#include <variant>

namespace drv::quant {

namespace {

int32_t onnx_dtype(num::DType t) {
    switch (t) {
        case num::DType::F32:
            return ::onnx::TensorProto::FLOAT;
        case num::DType::F16:
            return ::onnx::TensorProto::FLOAT16;
        case num::DType::I8:
            return ::onnx::TensorProto::INT8;
        case num::DType::U8:
            return ::onnx::TensorProto::UINT8;
        case num::DType::I16:
            return ::onnx::TensorProto::INT16;
        case num::DType::U16:
            return ::onnx::TensorProto::UINT16;
        case num::DType::I32:
            return ::onnx::TensorProto::INT32;
        case num::DType::I64:
            return ::onnx::TensorProto::INT64;
        case num::DType::Bool:
            return ::onnx::TensorProto::BOOL;
    }
    return ::onnx::TensorProto::UNDEFINED;
}

void fill_tensor(::onnx::TensorProto& p, const std::string& name, const num::Tensor& t) {
    p.set_name(name);
    p.set_data_type(onnx_dtype(t.dtype()));
    for (int64_t d : t.shape()) p.add_dims(d);
    p.set_raw_data(reinterpret_cast<const char*>(t.raw()), t.nbytes());  // little-endian host, as the importer
}

void fill_value_info(::onnx::ValueInfoProto& vi, const ir::Value& v) {
    vi.set_name(v.name);
    auto* tt = vi.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx_dtype(v.dtype));
    auto* sh = tt->mutable_shape();
    for (int64_t d : v.shape) sh->add_dim()->set_dim_value(d);
}

void fill_attribute(::onnx::AttributeProto& a, const std::string& name, const num::AttrValue& v,
                    const std::string& where) {
    using A = ::onnx::AttributeProto;
    if (!name.empty() && name[0] == '_')
        throw std::invalid_argument(where + ": internal attribute '" + name + "' has no ONNX form");
    a.set_name(name);
    if (auto* i = std::get_if<int64_t>(&v)) {
        a.set_type(A::INT);
        a.set_i(*i);
    } else if (auto* f = std::get_if<float>(&v)) {
        a.set_type(A::FLOAT);
        a.set_f(*f);
    } else if (auto* s = std::get_if<std::string>(&v)) {
        a.set_type(A::STRING);
        a.set_s(*s);
    } else if (auto* is = std::get_if<std::vector<int64_t>>(&v)) {
        a.set_type(A::INTS);
        for (int64_t x : *is) a.add_ints(x);
    } else if (auto* fs = std::get_if<std::vector<float>>(&v)) {
        a.set_type(A::FLOATS);
        for (float x : *fs) a.add_floats(x);
    } else if (auto* ss = std::get_if<std::vector<std::string>>(&v)) {
        a.set_type(A::STRINGS);
        for (const auto& x : *ss) a.add_strings(x);
    } else if (auto* t = std::get_if<num::Tensor>(&v)) {
        a.set_type(A::TENSOR);
        fill_tensor(*a.mutable_t(), "", *t);
    }
}

}  // namespace

std::string onnx_bytes(const ir::Graph& g, const OnnxWriteOptions& o) {
    ::onnx::ModelProto m;
    m.set_ir_version(8);  // IR v8 carries ai.onnx opsets up to 18; the importer reads 7-17
    m.set_producer_name(o.producer_name);
    if (!o.producer_version.empty()) m.set_producer_version(o.producer_version);
    if (!o.doc.empty()) m.set_doc_string(o.doc);
    for (const auto& [domain, version] : g.opsets()) {
        auto* op = m.add_opset_import();
        op->set_domain(domain);
        op->set_version(version);
    }
    ::onnx::GraphProto& gp = *m.mutable_graph();
    gp.set_name(o.graph_name);
    std::set<std::string> referenced(g.outputs().begin(), g.outputs().end());
    for (const ir::Node& n : g.nodes()) {
        if (n.domain == "tflite")
            throw std::invalid_argument("node " + n.label() + ": TFLite operators have no ONNX form");
        auto* np = gp.add_node();
        np->set_name(n.name);
        np->set_op_type(n.op_type);
        if (!n.domain.empty()) np->set_domain(n.domain);
        for (const auto& in : n.inputs) {
            np->add_input(in);
            if (!in.empty()) referenced.insert(in);
        }
        for (const auto& out : n.outputs) np->add_output(out);
        for (const auto& [name, v] : n.attrs.all()) fill_attribute(*np->add_attribute(), name, v, "node " + n.label());
    }
    for (const auto& [name, v] : g.values())  // ordered by name: deterministic bytes
        if (v.is_constant() && referenced.count(name)) fill_tensor(*gp.add_initializer(), name, *v.data);
    for (const std::string& in : g.inputs()) fill_value_info(*gp.add_input(), g.value(in));
    for (const std::string& out : g.outputs()) fill_value_info(*gp.add_output(), g.value(out));
    std::string bytes;
    if (!m.SerializeToString(&bytes)) throw std::invalid_argument("ONNX serialisation failed (model over 2 GiB?)");
    return bytes;
}

void write_onnx(const ir::Graph& g, const std::string& path, const OnnxWriteOptions& o) {
    const std::string bytes = onnx_bytes(g, o);
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace drv::quant
