// SPDX-License-Identifier: MIT
// The graph IR in the compile-cache payload (model_cache.h): values (with their constant tensors
// and quantization), nodes (attributes, If subgraphs), graph inputs/outputs, opsets, rewrites.
#include <variant>

#include "model_cache_io.h"
#include "numerics/limits.h"

namespace drv::rknpu::cache_io {

namespace {

constexpr int kMaxSubgraphDepth = 16;
constexpr uint8_t kMaxDType = static_cast<uint8_t>(num::DType::Bool);

void write_quant(Writer& w, const num::QuantParams& q) {
    w.pods(q.scale);
    w.pods(q.zero_point);
    w.i32(q.axis);
}

num::QuantParams read_quant(Reader& r) {
    num::QuantParams q;
    q.scale = r.pods<float>();
    q.zero_point = r.pods<int32_t>();
    q.axis = r.i32();
    return q;
}

/// `with_bytes` false: the tensor's contents are unspecified (Value::contents_unspecified) and
/// only its dtype and shape are stored.
void write_tensor(Writer& w, const num::Tensor& t, bool with_bytes) {
    w.u8(static_cast<uint8_t>(t.dtype()));
    w.pods(t.shape());
    write_quant(w, t.quant);
    w.b(with_bytes);
    if (with_bytes) w.bytes(t.raw(), t.nbytes());
}

num::Tensor read_tensor(Reader& r) {
    const auto dtype = r.en<num::DType>(kMaxDType);
    std::vector<int64_t> shape = r.pods<int64_t>();
    num::QuantParams q = read_quant(r);
    const bool with_bytes = r.b();
    uint64_t nbytes = 0;
    try {
        nbytes = num::checked_bytes(dtype, shape, "cached tensor");
        if (!with_bytes) num::check_budget(nbytes, "cached tensor");
    } catch (const std::exception& e) {
        throw CacheError(std::string("bad tensor: ") + e.what());
    }
    if (with_bytes && nbytes > r.left()) throw CacheError("payload truncated");
    num::Tensor t = num::Tensor::uninitialized(dtype, std::move(shape));
    if (t.nbytes() != nbytes) throw CacheError("bad tensor size");
    if (with_bytes && nbytes) std::memcpy(t.raw(), r.take(nbytes), nbytes);
    t.quant = std::move(q);
    return t;
}

void write_attr(Writer& w, const num::AttrValue& v) {
    w.u8(static_cast<uint8_t>(v.index()));
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, int64_t>) w.i64(x);
            else if constexpr (std::is_same_v<T, float>) w.f32(x);
            else if constexpr (std::is_same_v<T, std::string>) w.str(x);
            else if constexpr (std::is_same_v<T, std::vector<std::string>>) w.strs(x);
            else if constexpr (std::is_same_v<T, num::Tensor>) write_tensor(w, x, true);
            else w.pods(x);  // int64 / float vectors
        },
        v);
}

num::AttrValue read_attr(Reader& r) {
    switch (r.en<uint8_t>(6)) {
        case 0: return r.i64();
        case 1: return r.f32();
        case 2: return r.str();
        case 3: return r.pods<int64_t>();
        case 4: return r.pods<float>();
        case 5: return r.strs();
        default: return read_tensor(r);
    }
}
static_assert(std::variant_size_v<num::AttrValue> == 7, "a new attribute kind: extend read_attr/write_attr, bump kModelCacheFormat");

void write_value(Writer& w, const ir::Value& v) {
    w.str(v.name);
    w.u8(static_cast<uint8_t>(v.dtype));
    w.pods(v.shape);
    w.b(v.shape_known);
    write_quant(w, v.quant);
    w.b(v.contents_unspecified);
    w.b(v.data.has_value());
    if (v.data) write_tensor(w, *v.data, !v.contents_unspecified);
}

ir::Value read_value(Reader& r) {
    ir::Value v;
    v.name = r.str();
    v.dtype = r.en<num::DType>(kMaxDType);
    v.shape = r.pods<int64_t>();
    v.shape_known = r.b();
    v.quant = read_quant(r);
    v.contents_unspecified = r.b();
    if (r.b()) v.data = read_tensor(r);
    return v;
}

void write_node(Writer& w, const ir::Node& n) {
    w.str(n.name);
    w.str(n.op_type);
    w.str(n.domain);
    w.strs(n.inputs);
    w.strs(n.outputs);
    w.u64(n.attrs.all().size());
    for (const auto& [name, v] : n.attrs.all()) {
        w.str(name);
        write_attr(w, v);
    }
    w.u64(n.subgraphs.size());
    for (const auto& [name, g] : n.subgraphs) {
        w.str(name);
        write_graph(w, *g);
    }
}

ir::Node read_node(Reader& r, int depth) {
    ir::Node n;
    n.name = r.str();
    n.op_type = r.str();
    n.domain = r.str();
    n.inputs = r.strs();
    n.outputs = r.strs();
    for (size_t i = 0, c = r.count(10); i < c; ++i) {
        std::string name = r.str();
        n.attrs.set(name, read_attr(r));
    }
    for (size_t i = 0, c = r.count(8); i < c; ++i) {
        std::string name = r.str();
        n.subgraphs[name] = std::make_shared<const ir::Graph>(read_graph(r, depth + 1));
    }
    return n;
}

}  // namespace

void write_graph(Writer& w, const ir::Graph& g) {
    w.u64(g.values().size());
    for (const auto& [name, v] : g.values()) write_value(w, v);
    w.u64(g.nodes().size());
    for (const ir::Node& n : g.nodes()) write_node(w, n);
    w.strs(g.inputs());
    w.strs(g.outputs());
    w.u64(g.opsets().size());
    for (const auto& [domain, version] : g.opsets()) {
        w.str(domain);
        w.i64(version);
    }
    w.strs(g.rewrites());
}

ir::Graph read_graph(Reader& r, int depth) {
    if (depth > kMaxSubgraphDepth) throw CacheError("subgraphs nested too deeply");
    ir::Graph g;
    try {
        for (size_t i = 0, c = r.count(16); i < c; ++i) g.add_value(read_value(r));
    } catch (const ir::GraphError& e) {
        throw CacheError(e.what());
    }
    for (size_t i = 0, c = r.count(56); i < c; ++i) g.add_node(read_node(r, depth));
    g.inputs() = r.strs();
    g.outputs() = r.strs();
    for (size_t i = 0, c = r.count(16); i < c; ++i) {
        std::string domain = r.str();
        g.set_opset(domain, r.i64());
    }
    g.rewrites() = r.strs();
    return g;
}

}  // namespace drv::rknpu::cache_io
