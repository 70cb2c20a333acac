// SPDX-License-Identifier: MIT
// Driver for the ISS fuzz targets without libFuzzer (the ctest smoke run, also under ASan/UBSan): runs
// every given file (or every file in a given directory) through LLVMFuzzerTestOneInput, then as many
// deterministic mutations of them as --iterations asks (bit flips, byte changes, inserts, deletes,
// truncation, chunk copies; xorshift seeded by --seed). A finding aborts, which fails the test.
//   iss_fuzz_smoke_<target> [--iterations N] [--seed S] FILE_OR_DIR...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {
uint64_t state = 88172645463325252ull;
uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

std::vector<uint8_t> mutate(std::vector<uint8_t> v) {
    const int rounds = 1 + static_cast<int>(next() % 8);
    for (int r = 0; r < rounds; ++r) {
        const std::size_t n = v.size();
        switch (next() % 6) {
            case 0:
                if (n) v[next() % n] ^= static_cast<uint8_t>(1u << (next() % 8));
                break;
            case 1:
                if (n) v[next() % n] = static_cast<uint8_t>(next());
                break;
            case 2:
                v.insert(v.begin() + static_cast<long>(n ? next() % (n + 1) : 0), static_cast<uint8_t>(next()));
                break;
            case 3:
                if (n) v.erase(v.begin() + static_cast<long>(next() % n));
                break;
            case 4:
                if (n) v.resize(next() % n);
                break;
            default:
                if (n > 1) {
                    const std::size_t from = next() % n, len = 1 + next() % std::min<std::size_t>(64, n - from);
                    const std::size_t to = next() % n;
                    std::vector<uint8_t> chunk(v.begin() + static_cast<long>(from),
                                               v.begin() + static_cast<long>(from + len));
                    v.insert(v.begin() + static_cast<long>(to), chunk.begin(), chunk.end());
                }
        }
    }
    return v;
}
}  // namespace

int main(int argc, char** argv) {
    uint64_t iterations = 0;
    std::vector<std::vector<uint8_t>> inputs;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--iterations" && i + 1 < argc) {
            iterations = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--seed" && i + 1 < argc) {
            state = std::strtoull(argv[++i], nullptr, 10) | 1;
        } else {
            std::vector<std::filesystem::path> files;
            if (std::filesystem::is_directory(a)) {
                for (const auto& e : std::filesystem::directory_iterator(a))
                    if (e.is_regular_file()) files.push_back(e.path());
                std::sort(files.begin(), files.end());
            } else {
                files.push_back(a);
            }
            for (const auto& f : files) {
                std::ifstream in(f, std::ios::binary);
                if (!in) {
                    std::fprintf(stderr, "smoke: cannot read %s\n", f.string().c_str());
                    return 2;
                }
                inputs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
            }
        }
    }
    if (inputs.empty()) {
        std::fprintf(stderr, "usage: %s [--iterations N] [--seed S] FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    for (const auto& in : inputs) LLVMFuzzerTestOneInput(in.data(), in.size());
    for (uint64_t i = 0; i < iterations; ++i) {
        const std::vector<uint8_t> m = mutate(inputs[next() % inputs.size()]);
        LLVMFuzzerTestOneInput(m.data(), m.size());
    }
    std::printf("smoke: %zu inputs and %llu mutations ran clean\n", inputs.size(),
                static_cast<unsigned long long>(iterations));
    return 0;
}
