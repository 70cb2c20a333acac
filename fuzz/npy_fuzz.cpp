// SPDX-License-Identifier: MIT
// libFuzzer target: the .npy reader (numerics/npy.h) on arbitrary bytes, through a real file (the
// reader checks the header against the file's size before allocating). Every input must load or
// throw std::runtime_error (num::SizeError included); anything else is a finding. A loaded tensor's
// byte size must be what its shape and dtype say.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "numerics/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string path = [] {
        const char* dir = std::getenv("TMPDIR");
        return std::string(dir && *dir ? dir : "/tmp") + "/npy_fuzz_" + std::to_string(::getpid()) + ".npy";
    }();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    if (size && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    try {
        const num::Tensor t = num::read_npy(path);
        if (t.nbytes() != t.numel() * num::dtype_size(t.dtype())) std::abort();
        if (t.nbytes() > size) std::abort();  // the data must have come from the file
    } catch (const std::runtime_error&) {
    }
    std::remove(path.c_str());
    return 0;
}
