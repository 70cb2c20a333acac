// SPDX-License-Identifier: MIT
// libFuzzer target: the compile-cache file parser (compiler/rknpu/model_cache.h, `npusim run
// --compile-cache`). Each input goes through check_cache_file (under the key its own header
// names, so that mutations reach the length and checksum checks) and, past the checksum that
// random mutations rarely satisfy, straight through decode_compiled_model. Every input must load
// or throw CacheError; anything else (another exception, a crash, a sanitizer report) is a
// finding. A model that loads must encode and load again to the same bytes (the codec is
// idempotent). Seeds: fuzz/corpus_model_cache (cache files of three small zoo nets, full and
// timing mode).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/rknpu/model_cache.h"
#include "numerics/limits.h"

namespace {

void decode_and_round_trip(const uint8_t* p, size_t n) {
    namespace rk = drv::rknpu;
    std::vector<std::string> extra, extra2;
    rk::CompiledModel m;
    try {
        m = rk::decode_compiled_model(p, n, extra);
    } catch (const rk::CacheError&) {
        return;
    }
    const std::vector<uint8_t> once = rk::encode_compiled_model(m, extra);
    std::vector<uint8_t> twice;
    try {
        twice = rk::encode_compiled_model(rk::decode_compiled_model(once.data(), once.size(), extra2), extra2);
    } catch (const rk::CacheError&) {
        std::abort();  // what the encoder wrote must load
    }
    if (once != twice) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    namespace rk = drv::rknpu;
    static const bool budget = [] {  // tensors without bytes in the file must not allocate gigabytes
        num::set_max_memory(uint64_t{16} << 20);
        return true;
    }();
    (void)budget;
    uint64_t key = 0;
    if (size >= 24) std::memcpy(&key, data + 16, 8);
    try {
        rk::check_cache_file(data, size, key);
        decode_and_round_trip(data + rk::kModelCacheHeaderBytes, size - rk::kModelCacheHeaderBytes);
    } catch (const rk::CacheError&) {
    }
    const size_t skip = size >= rk::kModelCacheHeaderBytes && std::memcmp(data, "NPUSIMCM", 8) == 0
                            ? rk::kModelCacheHeaderBytes : 0;
    decode_and_round_trip(data + skip, size - skip);
    return 0;
}
