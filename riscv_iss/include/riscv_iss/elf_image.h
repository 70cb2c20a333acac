// SPDX-License-Identifier: MIT
// Loads an RV32 ELF executable into the standalone Bus through libelf (Debian libelf-dev).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace iss {

class Bus;

struct ElfSymbol {
    std::string name;
    uint32_t addr = 0;
    uint32_t size = 0;
};

struct ElfImage {
    uint32_t entry = 0;
    uint32_t tohost = 0, fromhost = 0;  ///< HTIF symbols, 0 when absent
    /// riscv-arch-test signature bounds (model_test.h RVMODEL_DATA_BEGIN/END labels), 0 when absent.
    uint32_t begin_signature = 0, end_signature = 0;
    bool has_signature = false;
    std::vector<ElfSymbol> functions;  ///< STT_FUNC symbols sorted by address (profiler)
};

/// Copies every PT_LOAD segment into `bus` (zero-filling .bss) and collects symbols. Throws
/// std::runtime_error with a one-line reason ("not an ELF file", "segment 0x... outside memory", ...).
ElfImage load_elf(const std::string& path, Bus& bus);
/// The same from an in-memory image (`data` must stay valid during the call; `name` is for messages).
ElfImage load_elf_image(char* data, std::size_t size, const std::string& name, Bus& bus);

}  // namespace iss
