// SPDX-License-Identifier: MIT
// SHA-256 (FIPS 180-4) for the sweep's point ids: content hashes of model and profile bytes and of
// the canonical point key. Not for security; for identity that is stable across machines.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace sweep {

class Sha256 {
   public:
    Sha256();
    void update(const void* data, size_t len);
    void update(std::string_view s) { update(s.data(), s.size()); }
    /// The digest as 64 lower-case hex digits; the object is spent afterwards.
    std::string hex();

   private:
    void block(const uint8_t* p);
    uint32_t h_[8];
    uint8_t buf_[64];
    size_t buf_len_ = 0;
    uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view s);
/// Digest of a file's bytes; std::runtime_error naming the file when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace sweep
