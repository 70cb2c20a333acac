// SPDX-License-Identifier: MIT
// .npy reader/writer round trips and malformed files.
#include <gtest/gtest.h>

#include "compiler/ref/npy_io.h"

using drv::ref::NpyError;

TEST(Npy, RoundTripKeepsShapeDtypeAndBytes) {
    for (auto shape : {std::vector<int64_t>{}, std::vector<int64_t>{5}, std::vector<int64_t>{2, 3, 4}}) {
        num::Tensor t(num::DType::I8, shape);
        for (size_t i = 0; i < t.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(i * 7 - 50);
        std::string b = drv::ref::encode_npy(t);
        EXPECT_EQ(b.size() % 64, t.nbytes() % 64);  // header padded to 64 bytes
        num::Tensor u = drv::ref::parse_npy(b, "t.npy");
        EXPECT_EQ(u.shape(), shape);
        EXPECT_EQ(u.dtype(), num::DType::I8);
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(u.raw()), u.nbytes()),
                  std::string(reinterpret_cast<const char*>(t.raw()), t.nbytes()));
    }
}

TEST(Npy, HeaderMatchesNumpy) {
    num::Tensor t(num::DType::F32, {3});
    std::string b = drv::ref::encode_npy(t);
    EXPECT_NE(b.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
}

TEST(Npy, MalformedFilesGiveClearErrors) {
    num::Tensor t(num::DType::F32, {2, 2});
    std::string b = drv::ref::encode_npy(t);
    EXPECT_THROW(drv::ref::parse_npy(b.substr(0, b.size() - 1), "x.npy"), NpyError);
    EXPECT_THROW(drv::ref::parse_npy("hello", "x.npy"), NpyError);
    std::string f8 = b;
    f8.replace(f8.find("<f4"), 3, "<f8");
    try {
        drv::ref::parse_npy(f8, "x.npy");
        FAIL();
    } catch (const NpyError& e) {
        EXPECT_NE(std::string(e.what()).find("'<f8'"), std::string::npos);
    }
}
