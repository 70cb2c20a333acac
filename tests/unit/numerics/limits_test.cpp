// SPDX-License-Identifier: MIT
// The checked-size helper and memory budget (numerics/limits.h, issue 23). Expectations are plain
// 64-bit arithmetic done here: 3037000500^2 = 9223372037000250000 > 2^63, (2^32)^2 = 2^64 wraps to
// 0, and the .npy format (NumPy's format.py: magic, version, little-endian header length, dict).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "numerics/limits.h"
#include "numerics/npy.h"

namespace {

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("npusim_limits_" + std::to_string(::getpid()) + name)).string();
}

/// A v1.0 .npy file: header dict padded to 64 bytes, then `data_bytes` zero bytes.
std::string write_npy_bytes(const std::string& name, const std::string& shape, size_t data_bytes) {
    std::string hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    hdr.append((64 - (10 + hdr.size() + 1) % 64) % 64, ' ');
    hdr += '\n';
    const std::string p = temp_path(name);
    std::ofstream f(p, std::ios::binary);
    f.write("\x93NUMPY\x01\x00", 8);
    const char hl[2] = {static_cast<char>(hdr.size() & 0xff), static_cast<char>(hdr.size() >> 8)};
    f.write(hl, 2);
    f << hdr << std::string(data_bytes, '\0');
    return p;
}

/// Restores the default budget whatever a test set.
struct Budget {
    explicit Budget(uint64_t b) { num::set_max_memory(b); }
    ~Budget() { num::set_max_memory(num::kDefaultMaxMemory); }
};

TEST(Limits, ProductsThatOverflowAreRefusedNotWrapped) {
    uint64_t r = 0;
    EXPECT_TRUE(num::mul_u64(3037000499ull, 3037000499ull, &r));
    EXPECT_EQ(r, 9223372030926249001ull);
    EXPECT_FALSE(num::mul_u64(uint64_t{1} << 32, uint64_t{1} << 32, &r));  // 2^64 wraps to 0
    EXPECT_THROW(num::checked_numel({4294967296, 4294967296}, "x"), num::SizeError);
    EXPECT_THROW(num::checked_numel({4294967296, 4294967296, 0}, "x"), num::SizeError) << "a later 0 must not hide the overflow";
    EXPECT_THROW(num::checked_bytes(num::DType::F32, {3037000500, 3037000500}, "x"), num::SizeError);
    EXPECT_THROW(num::checked_bytes(num::DType::F32, {(int64_t{1} << 62) + 1}, "x"), num::SizeError);
    EXPECT_THROW(num::checked_numel({2, -3}, "x"), num::SizeError);
    EXPECT_EQ(num::checked_numel({0, 4294967296}, "x"), 0u);
    EXPECT_EQ(num::checked_bytes(num::DType::I64, {3, 5}, "x"), 120u);
}

TEST(Limits, BudgetBoundsEveryTensor) {
    EXPECT_EQ(num::max_memory(), uint64_t{16} << 30);
    EXPECT_NO_THROW(num::checked_bytes(num::DType::F32, {int64_t{1} << 32}, "x"));  // 16 GiB exactly
    EXPECT_THROW(num::checked_bytes(num::DType::F32, {(int64_t{1} << 32) + 1}, "x"), num::SizeError);
    Budget b(1000);
    EXPECT_NO_THROW(num::Tensor(num::DType::F32, {250}));
    try {
        num::Tensor t(num::DType::F32, {251});
        FAIL() << "a 1004-byte tensor passed a 1000-byte budget";
    } catch (const num::SizeError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("1004 bytes"), std::string::npos) << m;
        EXPECT_NE(m.find("--max-memory"), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
}

TEST(Limits, ParsesMemorySizes) {
    EXPECT_EQ(num::parse_memory_size("16G"), uint64_t{16} << 30);
    EXPECT_EQ(num::parse_memory_size("512MiB"), uint64_t{512} << 20);
    EXPECT_EQ(num::parse_memory_size("4096"), 4096u);
    EXPECT_EQ(num::parse_memory_size("2k"), 2048u);
    for (const char* bad : {"", "0", "-1", "1.5G", "12Q", "G", "99999999999999999999", "2048T"})
        EXPECT_THROW(num::parse_memory_size(bad), std::invalid_argument) << bad;
    EXPECT_EQ(num::format_bytes(uint64_t{16} << 30), "16 GiB");
    EXPECT_EQ(num::format_bytes(1536), "1.5 KiB");
    EXPECT_EQ(num::format_bytes(12), "12 bytes");
}

TEST(Limits, InputFilesAreRegularAndWithinTheBudget) {
    EXPECT_THROW(num::check_input_file("/dev/zero"), std::runtime_error);
    EXPECT_THROW(num::check_input_file(std::filesystem::temp_directory_path().string()), std::runtime_error);
    EXPECT_THROW(num::check_input_file(temp_path("missing")), std::runtime_error);
    const std::string p = write_npy_bytes("small.npy", "(2,)", 8);
    EXPECT_EQ(num::check_input_file(p), 136u);  // 10-byte preamble + 118-byte header + 8 data bytes
    EXPECT_THROW(num::read_input_file(p, 100), num::SizeError);
    EXPECT_EQ(num::read_input_file(p).size(), 136u);
    std::remove(p.c_str());
}

TEST(Npy, HeaderClaimsAreCheckedAgainstTheFileBeforeAllocating) {
    // 2^30 float32 = 4 GiB claimed by a file that holds none of it: refused without allocating.
    const std::string big = write_npy_bytes("claims4g.npy", "(1073741824,)", 0);
    try {
        num::read_npy(big);
        FAIL() << "a 4 GiB claim in a 128-byte file loaded";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("4294967296 bytes"), std::string::npos) << e.what();
    }
    std::remove(big.c_str());
    const std::string ovf = write_npy_bytes("ovf.npy", "(4294967296, 4294967296)", 0);
    EXPECT_THROW(num::read_npy(ovf), std::runtime_error);
    std::remove(ovf.c_str());
    const std::string digits = write_npy_bytes("digits.npy", "(99999999999999999999999,)", 0);
    EXPECT_THROW(num::read_npy(digits), std::runtime_error);  // not std::out_of_range from stoll
    std::remove(digits.c_str());
    const std::string shortd = write_npy_bytes("short.npy", "(3,)", 11);  // 12 bytes needed
    EXPECT_THROW(num::read_npy(shortd), std::runtime_error);
    std::remove(shortd.c_str());
    const std::string ok = write_npy_bytes("ok.npy", "(3,)", 12);
    EXPECT_EQ(num::read_npy(ok).shape(), (std::vector<int64_t>{3}));
    std::remove(ok.c_str());
    // Header length past the end of the file (v2.0: 4-byte length 0xffffffff).
    const std::string v2 = temp_path("v2.npy");
    std::ofstream(v2, std::ios::binary).write("\x93NUMPY\x02\x00\xff\xff\xff\xff{", 13);
    EXPECT_THROW(num::read_npy(v2), std::runtime_error);
    std::remove(v2.c_str());
}

}  // namespace
