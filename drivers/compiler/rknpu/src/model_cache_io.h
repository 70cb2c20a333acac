// SPDX-License-Identifier: MIT
// Byte writer and bounds-checked reader of the compile-cache payload (model_cache.h), and the
// graph codec model_cache.cpp shares with model_cache_graph.cpp.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/rknpu/model_cache.h"

namespace drv::rknpu::cache_io {

/// Appends little-endian fields (the host is little-endian: x86-64, AArch64; checked below).
class Writer {
   public:
    std::vector<uint8_t> out;
    void bytes(const void* p, size_t n) {
        const auto* b = static_cast<const uint8_t*>(p);
        out.insert(out.end(), b, b + n);
    }
    void u8(uint8_t v) { out.push_back(v); }
    void b(bool v) { out.push_back(v ? 1 : 0); }
    void u32(uint32_t v) { bytes(&v, 4); }
    void i32(int32_t v) { bytes(&v, 4); }
    void u64(uint64_t v) { bytes(&v, 8); }
    void i64(int64_t v) { bytes(&v, 8); }
    void f32(float v) { bytes(&v, 4); }
    void str(const std::string& s) {
        u64(s.size());
        bytes(s.data(), s.size());
    }
    void strs(const std::vector<std::string>& v) {
        u64(v.size());
        for (const std::string& s : v) str(s);
    }
    template <typename T>
    void pods(const std::vector<T>& v) {  // i32/i64/u64/f32 vectors
        u64(v.size());
        bytes(v.data(), v.size() * sizeof(T));
    }
};

/// Reads what Writer wrote; any read beyond the end, or a count that the bytes left cannot hold,
/// throws CacheError.
class Reader {
   public:
    Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
    size_t left() const { return static_cast<size_t>(end_ - p_); }
    const uint8_t* take(size_t n) {
        if (n > left()) throw CacheError("payload truncated");
        const uint8_t* at = p_;
        p_ += n;
        return at;
    }
    template <typename T>
    T pod() {
        T v;
        std::memcpy(&v, take(sizeof(T)), sizeof(T));
        return v;
    }
    uint8_t u8() { return pod<uint8_t>(); }
    bool b() {
        const uint8_t v = u8();
        if (v > 1) throw CacheError("bad boolean");
        return v != 0;
    }
    uint32_t u32() { return pod<uint32_t>(); }
    int32_t i32() { return pod<int32_t>(); }
    uint64_t u64() { return pod<uint64_t>(); }
    int64_t i64() { return pod<int64_t>(); }
    float f32() { return pod<float>(); }
    /// An enum stored as one byte, at most `max`.
    template <typename E>
    E en(uint8_t max) {
        const uint8_t v = u8();
        if (v > max) throw CacheError("bad enum value");
        return static_cast<E>(v);
    }
    /// A count of items each at least `min_bytes` long: never more than the bytes left allow.
    size_t count(size_t min_bytes) {
        const uint64_t c = u64();
        if (c > left() / (min_bytes ? min_bytes : 1)) throw CacheError("count beyond the payload");
        return static_cast<size_t>(c);
    }
    std::string str() {
        const size_t n = count(1);
        const uint8_t* at = take(n);
        return std::string(reinterpret_cast<const char*>(at), n);
    }
    std::vector<std::string> strs() {
        std::vector<std::string> v(count(8));
        for (std::string& s : v) s = str();
        return v;
    }
    template <typename T>
    std::vector<T> pods() {
        std::vector<T> v(count(sizeof(T)));
        if (!v.empty()) std::memcpy(v.data(), take(v.size() * sizeof(T)), v.size() * sizeof(T));
        return v;
    }

   private:
    const uint8_t* p_;
    const uint8_t* end_;
};

void write_graph(Writer& w, const ir::Graph& g);
/// `depth`: nesting of subgraphs so far (bounded, so that a crafted file cannot recurse deeply).
ir::Graph read_graph(Reader& r, int depth = 0);

}  // namespace drv::rknpu::cache_io
