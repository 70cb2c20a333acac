// SPDX-License-Identifier: MIT
// Limits on sizes that come from input (issue 23): tensor shapes, element and byte counts, file
// lengths. Every allocation sized by input goes through checked_bytes() (overflow-safe products
// against the memory budget) and every input file through read_input_file() (regular files only,
// at most the budget), so a crafted size gives a one-line error, never a small buffer with a large
// write, an exhausted machine or std::bad_alloc.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "numerics/tensor.h"

namespace num {

/// Default memory budget of a run: 16 GiB (README "Memory budget"; `--max-memory` sets another).
constexpr uint64_t kDefaultMaxMemory = uint64_t{16} << 30;

/// The budget: the largest tensor (each one is checked when it is made) and the largest input
/// file. Process-wide.
uint64_t max_memory();
void set_max_memory(uint64_t bytes);
/// Parses a --max-memory value: a byte count with an optional K/M/G/T suffix (binary, 1K = 1024).
/// Throws std::invalid_argument naming the option for anything else, 0, or more than 2^50.
uint64_t parse_memory_size(const std::string& text, const std::string& option = "--max-memory");
/// "16 GiB", "1.5 MiB", "12 bytes".
std::string format_bytes(uint64_t bytes);

/// A size from input that overflows or exceeds the budget. Its what() is one line that names the
/// object, its size and the limit.
class SizeError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// a * b in *out; false (and *out untouched) when the product overflows 64 bits.
inline bool mul_u64(uint64_t a, uint64_t b, uint64_t* out) {
    uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return false;
    *out = r;
    return true;
}

/// Element count of `shape`; SizeError naming `what` when a dimension is negative or the product
/// overflows 64 bits.
uint64_t checked_numel(const std::vector<int64_t>& shape, const std::string& what);
/// Byte size of dtype x shape: SizeError naming `what` on a negative dimension, an overflowing
/// product or more bytes than the budget.
uint64_t checked_bytes(DType dtype, const std::vector<int64_t>& shape, const std::string& what = "tensor");
/// `bytes` against the budget (SizeError naming `what` when above it).
void check_budget(uint64_t bytes, const std::string& what);

/// The one-line text of an exception for an error message: e.what(), except that std::bad_alloc
/// (whose what() is "std::bad_alloc") becomes a sentence naming the budget.
std::string error_text(const std::exception& e);

/// Throws the SizeError for an allocation of `bytes` the machine refused (std::bad_alloc).
[[noreturn]] void out_of_memory(uint64_t bytes, const std::string& what);

/// The whole contents of an input file: std::runtime_error "PATH: ..." when it cannot be opened,
/// is not a regular file (device, FIFO, directory: /dev/zero would read forever) or is larger
/// than `limit` bytes (default: the budget).
std::vector<char> read_input_file(const std::string& path, uint64_t limit = 0);
/// The same checks without reading: the file's size in bytes.
uint64_t check_input_file(const std::string& path, uint64_t limit = 0);

}  // namespace num
