// SPDX-License-Identifier: MIT
// The on-disk form of a CompiledModel (issue 25, `npusim run --compile-cache DIR`): a repeated run
// of the same model on the same profile with the same options loads the compiled model instead of
// importing and compiling it again.
//
// A cache file is a 48-byte header followed by the payload, every integer little-endian:
//   0  magic "NPUSIMCM"            8 bytes
//   8  format version              u32 (kModelCacheFormat; any other value is a miss)
//  12  header bytes               u32 (48)
//  16  key                        u64 (what the model was compiled from: the caller's hash)
//  24  payload bytes              u64 (file size - 48)
//  32  payload checksum           u64 (cache_hash of the payload)
//  40  header checksum            u64 (cache_hash of bytes 0..40)
// The payload is the CompiledModel field by field (strings and vectors length-prefixed, enums one
// byte, floats as their bit patterns), then the caller's extra strings. check_cache_file and
// decode_compiled_model never trust a length: every read is bounds-checked against the bytes
// left, so a damaged, truncated or crafted file gives CacheError, never a crash.
//
// Not stored: check::Violation::rule (a pointer into the spec DB) is null in a loaded model; only
// `npusim check` reads it, and check compiles afresh. Values whose contents are unspecified (a
// timing-only import) are stored without their bytes.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/rknpu/model.h"

namespace drv::rknpu {

/// Bump when the payload layout or the meaning of a CompiledModel field changes.
inline constexpr uint32_t kModelCacheFormat = 1;
inline constexpr size_t kModelCacheHeaderBytes = 48;

/// A cache file that cannot be used (the message says why, in a few words).
class CacheError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// 64-bit non-cryptographic hash (four-lane multiply-rotate rounds over 32-byte stripes, the
/// structure of xxHash64), for the checksums and for cache keys. Deterministic across runs.
uint64_t cache_hash(const void* data, size_t n, uint64_t seed = 0);

/// The payload of a cache file: `m` and `extra` (strings the caller needs back, e.g. its notes).
std::vector<uint8_t> encode_compiled_model(const CompiledModel& m, const std::vector<std::string>& extra);

/// Inverse of encode_compiled_model; checks that every index and arena range in the model is in
/// bounds. Throws CacheError.
CompiledModel decode_compiled_model(const uint8_t* data, size_t n, std::vector<std::string>& extra);

/// The header for `payload` stored under `key`.
std::array<uint8_t, kModelCacheHeaderBytes> cache_file_header(uint64_t key, const uint8_t* payload, size_t n);

/// Checks a whole cache file (header + payload) read for `key`: magic, format, key, length and
/// both checksums. Throws CacheError naming the first problem; on return the payload is
/// file + kModelCacheHeaderBytes, n - kModelCacheHeaderBytes bytes.
void check_cache_file(const uint8_t* file, size_t n, uint64_t key);

}  // namespace drv::rknpu
