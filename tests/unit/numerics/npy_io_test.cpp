// SPDX-License-Identifier: MIT
// .npy writer/reader round trips and a byte-level check of the header numpy expects.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "numerics/npy.h"

namespace {

std::string temp_path(const char* name) {
    return (std::filesystem::temp_directory_path() / (std::string("npusim_npy_") + std::to_string(::getpid()) + name)).string();
}

template <typename T>
void round_trip(num::DType d, std::vector<int64_t> shape) {
    num::Tensor t(d, shape);
    for (size_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = static_cast<T>(static_cast<int>(i * 37) - 50);
    const std::string p = temp_path(num::dtype_name(d));
    num::write_npy(p, t);
    const num::Tensor r = num::read_npy(p);
    std::remove(p.c_str());
    EXPECT_EQ(r.dtype(), d);
    EXPECT_EQ(r.shape(), shape);
    for (size_t i = 0; i < t.numel(); ++i) EXPECT_EQ(r.data<T>()[i], t.data<T>()[i]);
}

TEST(Npy, RoundTripsEveryDtype) {
    round_trip<float>(num::DType::F32, {2, 3});
    round_trip<int8_t>(num::DType::I8, {5});
    round_trip<uint8_t>(num::DType::U8, {1, 2, 2});
    round_trip<int32_t>(num::DType::I32, {});
    round_trip<int64_t>(num::DType::I64, {3, 1});
}

TEST(Npy, HeaderIsPaddedTo64BytesWithNumpyDict) {
    num::Tensor t(num::DType::F32, {2, 3});
    const std::string p = temp_path("hdr");
    num::write_npy(p, t);
    std::ifstream f(p, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::remove(p.c_str());
    ASSERT_GE(all.size(), 64u);
    EXPECT_EQ(all.substr(1, 5), "NUMPY");
    const size_t hlen = static_cast<unsigned char>(all[8]) | (static_cast<unsigned char>(all[9]) << 8);
    EXPECT_EQ((10 + hlen) % 64, 0u);
    EXPECT_NE(all.find("'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"), std::string::npos);
    EXPECT_EQ(all.size(), 10 + hlen + 24);
}

TEST(Npy, MissingFileThrowsWithPath) {
    try {
        num::read_npy("/nonexistent/x.npy");
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/x.npy"), std::string::npos);
    }
}

}  // namespace
