// SPDX-License-Identifier: MIT
// Compile-cache file format (model_cache.h): the checksummed header and the CompiledModel payload.
#include "compiler/rknpu/model_cache.h"

#include <cstring>

#include <fmt/format.h>

#include "model_cache_io.h"

namespace drv::rknpu {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the cache payload is written in host byte order");

// Every field of these types is in the payload: a new field changes the size and stops the build
// here until it is encoded, decoded and kModelCacheFormat bumped (else a warm run would silently
// lose it). Sizes of the x86-64 / AArch64 libstdc++ ABI.
#if defined(__GLIBCXX__) && (defined(__x86_64__) || defined(__aarch64__))
static_assert(sizeof(DeviceTensor) == 160 && sizeof(NpuTask) == 152 && sizeof(NpuTask::Window) == 32 &&
                  sizeof(Layer) == 312 && sizeof(Step) == 80 && sizeof(NodeDecision) == 288 && sizeof(CompiledModel) == 488,
              "a CompiledModel type changed: update model_cache.cpp and bump kModelCacheFormat");
static_assert(sizeof(ir::Value) == 256 && sizeof(ir::Node) == 240 && sizeof(ir::Graph) == 192 &&
                  sizeof(check::NodeResult) == 248 && sizeof(check::Violation) == 72 && sizeof(num::QuantParams) == 56 &&
                  sizeof(num::Tensor) == 112,
              "a graph IR type changed: update model_cache_graph.cpp and bump kModelCacheFormat");
#endif

namespace {

constexpr char kMagic[8] = {'N', 'P', 'U', 'S', 'I', 'M', 'C', 'M'};
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull,
                   kP4 = 0x85EBCA77C2B2AE63ull, kP5 = 0x27D4EB2F165667C5ull;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
uint64_t load64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
uint64_t round_(uint64_t acc, uint64_t lane) { return rotl(acc + lane * kP2, 31) * kP1; }
uint64_t merge(uint64_t h, uint64_t acc) { return (h ^ round_(0, acc)) * kP1 + kP4; }

using cache_io::Reader;
using cache_io::Writer;

void write_window(Writer& w, const NpuTask::Window& x) {
    for (int v : {x.c0, x.c1, x.y0, x.y1, x.x0, x.x1, x.y_step, x.x_step}) w.i32(v);
}
NpuTask::Window read_window(Reader& r) {
    NpuTask::Window x;
    for (int* v : {&x.c0, &x.c1, &x.y0, &x.y1, &x.x0, &x.x1, &x.y_step, &x.x_step}) *v = r.i32();
    return x;
}

void write_tensor_info(Writer& w, const DeviceTensor& t) {
    w.str(t.name);
    for (int v : {t.c, t.h, t.w, t.c2}) w.i32(v);
    w.pods(t.ir_shape);
    w.u64(t.offset);
    w.u64(t.bytes);
    w.u32(t.line_stride);
    w.u32(t.surf_stride);
    w.f32(t.scale);
    w.i32(t.zp);
    w.b(t.graph_uint8);
    w.str(t.alias_of);
    w.b(t.fp16);
    w.b(t.row_major);
}
DeviceTensor read_tensor_info(Reader& r) {
    DeviceTensor t;
    t.name = r.str();
    for (int* v : {&t.c, &t.h, &t.w, &t.c2}) *v = r.i32();
    t.ir_shape = r.pods<int64_t>();
    t.offset = r.u64();
    t.bytes = r.u64();
    t.line_stride = r.u32();
    t.surf_stride = r.u32();
    t.scale = r.f32();
    t.zp = r.i32();
    t.graph_uint8 = r.b();
    t.alias_of = r.str();
    t.fp16 = r.b();
    t.row_major = r.b();
    return t;
}

void write_task(Writer& w, const NpuTask& t) {
    w.u64(t.regcmd_offset);
    for (uint32_t v : {t.regcfg_amount, t.enable_mask, t.int_mask}) w.u32(v);
    w.i32(t.core);
    w.i32(t.layer);
    w.str(t.what);
    w.u64(t.macs);
    write_window(w, t.out_window);
    write_window(w, t.in_window);
    w.b(t.intermediate);
    w.i32(t.cbuf_data_banks);
    w.i32(t.cbuf_weight_banks);
}
NpuTask read_task(Reader& r) {
    NpuTask t;
    t.regcmd_offset = r.u64();
    for (uint32_t* v : {&t.regcfg_amount, &t.enable_mask, &t.int_mask}) *v = r.u32();
    t.core = r.i32();
    t.layer = r.i32();
    t.what = r.str();
    t.macs = r.u64();
    t.out_window = read_window(r);
    t.in_window = read_window(r);
    t.intermediate = r.b();
    t.cbuf_data_banks = r.i32();
    t.cbuf_weight_banks = r.i32();
    return t;
}

void write_layer(Writer& w, const Layer& L) {
    w.str(L.name);
    w.str(L.op);
    w.u8(static_cast<uint8_t>(L.unit));
    w.strs(L.inputs);
    w.strs(L.outputs);
    w.str(L.in_shape);
    w.str(L.out_shape);
    w.u64(L.macs);
    w.pods(L.tasks);
    w.pods(L.ir_nodes);
    w.str(L.note);
    w.u8(static_cast<uint8_t>(L.cpu_reason));
    w.strs(L.rewrites);
    w.i32(L.tiles_h);
    w.i32(L.tiles_k);
}
Layer read_layer(Reader& r) {
    Layer L;
    L.name = r.str();
    L.op = r.str();
    L.unit = r.en<Unit>(static_cast<uint8_t>(Unit::View));
    L.inputs = r.strs();
    L.outputs = r.strs();
    L.in_shape = r.str();
    L.out_shape = r.str();
    L.macs = r.u64();
    L.tasks = r.pods<size_t>();
    L.ir_nodes = r.pods<size_t>();
    L.note = r.str();
    L.cpu_reason = r.en<CpuReason>(static_cast<uint8_t>(CpuReason::Forced));
    L.rewrites = r.strs();
    L.tiles_h = r.i32();
    L.tiles_k = r.i32();
    return L;
}

void write_decision(Writer& w, const NodeDecision& d) {
    w.str(d.node);
    const check::NodeResult& v = d.vendor;
    for (const std::string* s : {&v.node, &v.op_type, &v.spec_op, &v.heading, &v.fused_into}) w.str(*s);
    w.u8(static_cast<uint8_t>(v.verdict));
    w.str(v.reason);
    w.u64(v.violations.size());
    for (const check::Violation& x : v.violations) {
        w.str(x.text);
        w.str(x.op);
    }
    w.strs(v.rewrites);
    w.b(d.vendor_checked);
    w.i32(d.layer);
}
NodeDecision read_decision(Reader& r) {
    NodeDecision d;
    d.node = r.str();
    check::NodeResult& v = d.vendor;
    for (std::string* s : {&v.node, &v.op_type, &v.spec_op, &v.heading, &v.fused_into}) *s = r.str();
    v.verdict = r.en<check::Verdict>(static_cast<uint8_t>(check::Verdict::NotInSeed));
    v.reason = r.str();
    v.violations.resize(r.count(16));
    for (check::Violation& x : v.violations) {
        x.text = r.str();
        x.op = r.str();
    }
    v.rewrites = r.strs();
    d.vendor_checked = r.b();
    d.layer = r.i32();
    return d;
}

void write_step(Writer& w, const Step& s) {
    w.u8(static_cast<uint8_t>(s.unit));
    w.u64(s.chains.size());
    for (const auto& [core, chain] : s.chains) {
        w.i32(core);
        w.pods(chain);
    }
    w.pods(s.layers);
}
Step read_step(Reader& r) {
    Step s;
    s.unit = r.en<Unit>(static_cast<uint8_t>(Unit::View));
    for (size_t i = 0, c = r.count(12); i < c; ++i) {
        const int core = r.i32();
        s.chains[core] = r.pods<size_t>();
    }
    s.layers = r.pods<size_t>();
    return s;
}

/// Every index and arena range the runtime follows without checking, in bounds.
void validate(const CompiledModel& m) {
    auto bad = [](const char* what) { throw CacheError(fmt::format("inconsistent model ({})", what)); };
    const uint64_t init_end = m.arena_init_base + m.arena_init.size();
    if (init_end < m.arena_init_base || init_end > m.arena_bytes) bad("initialised arena");
    for (uint64_t off : m.relocs)
        if (off < m.arena_init_base || off - m.arena_init_base > m.arena_init.size() ||
            m.arena_init.size() - (off - m.arena_init_base) < 8)
            bad("relocation");
    for (const auto& [name, t] : m.tensors)
        if (t.offset > m.arena_bytes || t.bytes > m.arena_bytes - t.offset) bad("tensor range");
    const size_t nodes = m.graph.nodes().size();
    for (const NpuTask& t : m.tasks)
        if (t.layer < -1 || t.layer >= static_cast<int64_t>(m.layers.size()) || t.regcmd_offset >= m.arena_bytes) bad("task");
    for (const Layer& L : m.layers) {
        for (size_t ti : L.tasks)
            if (ti >= m.tasks.size()) bad("layer task");
        for (size_t ni : L.ir_nodes)
            if (ni >= nodes) bad("layer node");
    }
    for (const Step& s : m.steps) {
        for (const auto& [core, chain] : s.chains)
            for (size_t ti : chain)
                if (ti >= m.tasks.size()) bad("step task");
        for (size_t li : s.layers)
            if (li >= m.layers.size()) bad("step layer");
    }
    for (const NodeDecision& d : m.decisions)
        if (d.layer < -1 || d.layer >= static_cast<int64_t>(m.layers.size())) bad("decision");
}

}  // namespace

uint64_t cache_hash(const void* data, size_t n, uint64_t seed) {
    const auto* p = static_cast<const uint8_t*>(data);
    const uint8_t* const end = p + n;
    uint64_t h;
    if (n >= 32) {
        uint64_t a = seed + kP1 + kP2, b = seed + kP2, c = seed, d = seed - kP1;
        for (; end - p >= 32; p += 32) {
            a = round_(a, load64(p));
            b = round_(b, load64(p + 8));
            c = round_(c, load64(p + 16));
            d = round_(d, load64(p + 24));
        }
        h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18);
        h = merge(merge(merge(merge(h, a), b), c), d);
    } else {
        h = seed + kP5;
    }
    h += static_cast<uint64_t>(n);
    for (; end - p >= 8; p += 8) h = rotl(h ^ round_(0, load64(p)), 27) * kP1 + kP4;
    for (; p < end; ++p) h = rotl(h ^ (*p * kP5), 11) * kP1;
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
}

std::vector<uint8_t> encode_compiled_model(const CompiledModel& m, const std::vector<std::string>& extra) {
    Writer w;
    w.out.reserve(m.arena_init.size() + 4096);
    w.str(m.soc);
    w.pods(m.cores);
    w.pods(m.arena_init);
    w.u64(m.arena_init_base);
    w.b(m.timing_only);
    w.u64(m.arena_bytes);
    w.pods(m.relocs);
    w.u64(m.relocated_base);
    w.u64(m.tensors.size());
    for (const auto& [name, t] : m.tensors) {
        w.str(name);
        write_tensor_info(w, t);
    }
    w.u64(m.tasks.size());
    for (const NpuTask& t : m.tasks) write_task(w, t);
    w.u64(m.layers.size());
    for (const Layer& L : m.layers) write_layer(w, L);
    w.u64(m.steps.size());
    for (const Step& s : m.steps) write_step(w, s);
    w.u64(m.decisions.size());
    for (const NodeDecision& d : m.decisions) write_decision(w, d);
    cache_io::write_graph(w, m.graph);
    w.u64(m.weight_bytes);
    w.u64(m.regcmd_bytes);
    w.strs(extra);
    return std::move(w.out);
}

CompiledModel decode_compiled_model(const uint8_t* data, size_t n, std::vector<std::string>& extra) {
    Reader r(data, n);
    CompiledModel m;
    m.soc = r.str();
    m.cores = r.pods<int>();
    m.arena_init = r.pods<uint8_t>();
    m.arena_init_base = r.u64();
    m.timing_only = r.b();
    m.arena_bytes = r.u64();
    m.relocs = r.pods<uint64_t>();
    m.relocated_base = r.u64();
    for (size_t i = 0, c = r.count(80); i < c; ++i) {
        std::string name = r.str();
        m.tensors[name] = read_tensor_info(r);
    }
    m.tasks.resize(r.count(100));
    for (NpuTask& t : m.tasks) t = read_task(r);
    m.layers.resize(r.count(100));
    for (Layer& L : m.layers) L = read_layer(r);
    m.steps.resize(r.count(17));
    for (Step& s : m.steps) s = read_step(r);
    m.decisions.resize(r.count(70));
    for (NodeDecision& d : m.decisions) d = read_decision(r);
    m.graph = cache_io::read_graph(r);
    m.weight_bytes = r.u64();
    m.regcmd_bytes = r.u64();
    extra = r.strs();
    if (r.left()) throw CacheError("bytes after the payload");
    validate(m);
    return m;
}

std::array<uint8_t, kModelCacheHeaderBytes> cache_file_header(uint64_t key, const uint8_t* payload, size_t n) {
    std::array<uint8_t, kModelCacheHeaderBytes> h{};
    const uint32_t format = kModelCacheFormat, header = kModelCacheHeaderBytes;
    const uint64_t len = n, sum = cache_hash(payload, n);
    std::memcpy(h.data(), kMagic, 8);
    std::memcpy(h.data() + 8, &format, 4);
    std::memcpy(h.data() + 12, &header, 4);
    std::memcpy(h.data() + 16, &key, 8);
    std::memcpy(h.data() + 24, &len, 8);
    std::memcpy(h.data() + 32, &sum, 8);
    const uint64_t hsum = cache_hash(h.data(), 40);
    std::memcpy(h.data() + 40, &hsum, 8);
    return h;
}

void check_cache_file(const uint8_t* file, size_t n, uint64_t key) {
    if (n < kModelCacheHeaderBytes) throw CacheError(fmt::format("truncated header ({} bytes)", n));
    if (std::memcmp(file, kMagic, 8) != 0) throw CacheError("not a compile-cache file (bad magic)");
    if (load64(file + 40) != cache_hash(file, 40)) throw CacheError("header checksum mismatch");
    uint32_t format = 0, header = 0;
    std::memcpy(&format, file + 8, 4);
    std::memcpy(&header, file + 12, 4);
    if (format != kModelCacheFormat || header != kModelCacheHeaderBytes)
        throw CacheError(fmt::format("format {} (this npusim reads format {})", format, kModelCacheFormat));
    if (load64(file + 16) != key) throw CacheError("key mismatch");
    const uint64_t len = load64(file + 24);
    if (len != n - kModelCacheHeaderBytes)
        throw CacheError(fmt::format("payload of {} bytes, the header says {}", n - kModelCacheHeaderBytes, len));
    if (load64(file + 32) != cache_hash(file + kModelCacheHeaderBytes, len)) throw CacheError("payload checksum mismatch");
}

}  // namespace drv::rknpu
