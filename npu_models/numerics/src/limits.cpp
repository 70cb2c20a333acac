// SPDX-License-Identifier: MIT
// Input size limits and the memory budget (numerics/limits.h).
#include "numerics/limits.h"

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>

namespace num {
namespace {
std::atomic<uint64_t> g_budget{kDefaultMaxMemory};
constexpr uint64_t kMaxSettable = uint64_t{1} << 50;
std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
    return s + "]";
}
}  // namespace

uint64_t max_memory() { return g_budget.load(std::memory_order_relaxed); }
void set_max_memory(uint64_t bytes) { g_budget.store(bytes, std::memory_order_relaxed); }

std::string format_bytes(uint64_t b) {
    static const char* const kUnit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (b < 1024) return std::to_string(b) + (b == 1 ? " byte" : " bytes");
    double v = static_cast<double>(b);
    int u = -1;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        ++u;
    }
    char s[32];
    std::snprintf(s, sizeof s, v == static_cast<double>(static_cast<uint64_t>(v)) ? "%.0f %s" : "%.1f %s", v, kUnit[u]);
    return s;
}

uint64_t parse_memory_size(const std::string& text, const std::string& option) {
    const auto bad = [&] {
        return std::invalid_argument(option + " '" + text + "' is not a memory size (a byte count with an optional K, M, G or T suffix, 1 .. 2^50)");
    };
    size_t i = 0;
    uint64_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        if (!mul_u64(v, 10, &v) || v + static_cast<uint64_t>(text[i] - '0') < v) throw bad();
        v += static_cast<uint64_t>(text[i++] - '0');
    }
    if (i == 0) throw bad();
    int shift = 0;
    if (i < text.size()) {
        switch (text[i] | 0x20) {
            case 'k': shift = 10; break;
            case 'm': shift = 20; break;
            case 'g': shift = 30; break;
            case 't': shift = 40; break;
            default: throw bad();
        }
        ++i;
        if (i < text.size() && (text[i] | 0x20) == 'i') ++i;
        if (i < text.size() && (text[i] | 0x20) == 'b') ++i;
    }
    if (i != text.size() || v == 0 || v > (kMaxSettable >> shift)) throw bad();
    return v << shift;
}

void check_budget(uint64_t bytes, const std::string& what) {
    if (bytes > max_memory())
        throw SizeError(what + " needs " + format_bytes(bytes) + ", more than the memory budget of " +
                        format_bytes(max_memory()) + " (--max-memory)");
}

uint64_t checked_numel(const std::vector<int64_t>& shape, const std::string& what) {
    uint64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0) throw SizeError(what + ": negative dimension " + std::to_string(d));
    }
    for (int64_t d : shape) {
        if (d == 0) return 0;
        if (!mul_u64(n, static_cast<uint64_t>(d), &n)) {
            throw SizeError(what + ": shape " + shape_text(shape) + " has more elements than 2^64");
        }
    }
    return n;
}

uint64_t checked_bytes(DType dtype, const std::vector<int64_t>& shape, const std::string& what) {
    const uint64_t n = checked_numel(shape, what);
    uint64_t b = 0;
    if (!mul_u64(n, dtype_size(dtype), &b))
        throw SizeError(what + ": " + std::to_string(n) + " " + dtype_name(dtype) + " elements overflow a 64-bit byte count");
    if (b > max_memory()) check_budget(b, what + " " + shape_text(shape) + " " + dtype_name(dtype));
    return b;
}

void out_of_memory(uint64_t n, const std::string& what) {
    throw SizeError("out of memory allocating " + format_bytes(n) + " for " + what +
                    " (the machine has less than the memory budget of " + format_bytes(max_memory()) + "; --max-memory)");
}

std::string error_text(const std::exception& e) {
    if (dynamic_cast<const std::bad_alloc*>(&e))
        return "out of memory (the machine gave less than the run needs; the memory budget is " + format_bytes(max_memory()) +
               ", --max-memory)";
    return e.what();
}

uint64_t check_input_file(const std::string& path, uint64_t limit) {
    if (!limit) limit = max_memory();
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
    if (S_ISDIR(st.st_mode)) throw std::runtime_error(path + ": is a directory, not a file");
    if (!S_ISREG(st.st_mode))
        throw std::runtime_error(path + ": not a regular file (a device, FIFO or socket has no size to check)");
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > limit)
        throw SizeError(path + ": " + format_bytes(size) + " is larger than the limit of " + format_bytes(limit) +
                        (limit == max_memory() ? " (--max-memory)" : ""));
    return size;
}

std::vector<char> read_input_file(const std::string& path, uint64_t limit) {
    const uint64_t size = check_input_file(path, limit);
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(path + ": cannot open");
    std::vector<char> bytes(static_cast<size_t>(size));
    if (size && !f.read(bytes.data(), static_cast<std::streamsize>(size))) throw std::runtime_error(path + ": read failed");
    return bytes;
}

}  // namespace num
