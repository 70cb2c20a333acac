// SPDX-License-Identifier: MIT
// ISS runs of the MCU firmware and the memory-fit check (see firmware_runner.h).
#include "mcu/firmware_runner.h"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "npusim/datadir.h"
#include "riscv_iss/bus.h"
#include "riscv_iss/core_preset.h"
#include "riscv_iss/elf_image.h"
#include "riscv_iss/hart.h"
#include "riscv_iss/semihost.h"

namespace mcu {

std::string firmware_dir() {
    return npusim::data_path("firmware", "NPUSIM_MCU_FIRMWARE_DIR");
}

std::string firmware_elf(const McuTarget& t, const std::string& program) {
    return firmware_dir() + "/mcu_" + program + "_" + t.name + ".elf";
}

namespace {

std::vector<uint8_t> unhex(const std::string& s) {
    std::vector<uint8_t> v(s.size() / 2);
    for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(std::stoul(s.substr(2 * i, 2), nullptr, 16));
    return v;
}

}  // namespace

void parse_firmware_console(FirmwareRun& r) {
    std::istringstream in(r.console);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string tag;
        ls >> tag;
        if (tag == "L") {
            LayerCycles l;
            ls >> l.index >> l.op >> l.cycles >> l.instret;
            std::getline(ls, l.name);
            if (!l.name.empty() && l.name[0] == ' ') l.name.erase(0, 1);
            r.layers.push_back(l);
        } else if (tag == "O") {
            uint32_t k = 0, idx = 0, bytes = 0;
            std::string hex;
            ls >> k >> idx >> bytes >> hex;
            r.outputs.push_back(unhex(hex));
            if (r.outputs.back().size() != bytes) r.error = "truncated output line";
        } else if (tag == "T") {
            ls >> r.schedule_cycles >> r.schedule_instret;
        } else if (tag == "E") {
            int status = 0, layer = 0;
            ls >> status >> layer;
            r.error = "firmware runtime error " + std::to_string(status) + " at layer " + std::to_string(layer) +
                      (status == 2 ? " (arena larger than the SRAM left for it)" : status == 1 ? " (invalid blob)" : "");
        }
    }
}

FirmwareRun run_firmware(const McuTarget& t, const std::string& elf, const std::vector<uint8_t>& blob, uint64_t max_insns) {
    FirmwareRun r;
    try {
        const iss::CorePreset preset = iss::load_preset(t.iss_preset, iss::default_preset_dir());
        iss::Bus bus(preset);
        const iss::ElfImage img = iss::load_elf(elf, bus);
        if (!blob.empty()) {
            if (blob.size() > t.blob_bytes) throw std::runtime_error("blob larger than the flash blob region");
            uint8_t* dst = bus.host_ptr(t.blob_base, uint32_t(blob.size()));
            if (!dst) throw std::runtime_error("blob region is not mapped in the ISS preset");
            std::memcpy(dst, blob.data(), blob.size());
        }
        iss::IsaConfig isa = preset.isa;
        isa.reset_pc = img.entry;
        iss::Hart hart(isa, preset.cycles, bus, preset.devices);
        bus.attach(&hart);
        iss::Semihost semihost(elf, preset.cycles.clock_hz);
        hart.set_semihost(&semihost);
        hart.set_tohost(img.tohost, img.fromhost);
        hart.console_out = [&r](const char* s, size_t n) { r.console.append(s, n); };
        hart.reset(img.entry);
        const std::clock_t c0 = std::clock();
        iss::StopReason stop = iss::StopReason::kNone;
        while (hart.instret_ < max_insns) {
            stop = hart.run(std::min<uint64_t>(max_insns - hart.instret_, 1ull << 26));
            if (stop != iss::StopReason::kInsnLimit) break;
        }
        r.host_cpu_seconds = double(std::clock() - c0) / CLOCKS_PER_SEC;
        r.total_cycles = hart.cycles_;
        r.total_instret = hart.instret_;
        if (stop == iss::StopReason::kExit) r.exit_code = hart.exit_code();
        else if (stop == iss::StopReason::kFatal) r.error = "ISS: " + hart.stop_message();
        else r.error = "ISS stopped without exit (instruction limit or WFI deadlock)";
    } catch (const std::exception& e) {
        r.error = std::string("ISS load: ") + e.what();
        return r;
    }
    parse_firmware_console(r);
    if (r.error.empty() && r.exit_code != 0) r.error = "firmware exit code " + std::to_string(r.exit_code);
    return r;
}

// ELF32 program headers only (no libelf needed here): PT_LOAD p_filesz in flash, p_memsz in SRAM.
ElfFootprint elf_footprint(const std::string& elf, const McuTarget& t) {
    ElfFootprint f;
    std::ifstream in(elf, std::ios::binary);
    std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto u16 = [&](size_t o) { return uint32_t(b[o] | (b[o + 1] << 8)); };
    auto u32 = [&](size_t o) { return uint32_t(b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (uint32_t(b[o + 3]) << 24)); };
    if (b.size() < 52 || std::memcmp(b.data(), "\x7f" "ELF", 4) != 0 || b[4] != 1) {
        f.error = elf + ": not an ELF32 file (firmware not built? scripts/deps.sh installs the RISC-V toolchain)";
        return f;
    }
    const uint32_t phoff = u32(28), phentsize = u16(42), phnum = u16(44);
    for (uint32_t i = 0; i < phnum; ++i) {
        const size_t o = phoff + size_t(i) * phentsize;
        if (o + 32 > b.size()) break;
        if (u32(o) != 1) continue;  // PT_LOAD
        const uint32_t vaddr = u32(o + 8), paddr = u32(o + 12), filesz = u32(o + 16), memsz = u32(o + 20);
        if (paddr >= t.flash_base && paddr < t.flash_base + t.flash_bytes) f.flash_bytes += filesz;
        if (vaddr >= t.sram_base && vaddr < t.sram_base + t.sram_bytes) f.sram_bytes += memsz;
    }
    f.ok = true;
    return f;
}

FitReport check_fit(const McuTarget& t, const ElfFootprint& fw, uint32_t blob_bytes, uint32_t arena_bytes) {
    FitReport r;
    r.fw_flash = fw.flash_bytes;
    r.blob_bytes = blob_bytes;
    r.flash_used = fw.flash_bytes + blob_bytes;
    r.flash_total = t.flash_bytes;
    r.blob_region = t.blob_bytes;
    r.fw_sram = fw.sram_bytes;
    r.arena_bytes = arena_bytes;
    r.sram_used = fw.sram_bytes + arena_bytes + 16;  // + arena alignment
    r.sram_total = t.sram_bytes;
    if (blob_bytes > t.blob_bytes)
        r.problems.push_back("flash: model blob needs " + std::to_string(blob_bytes) + " bytes, the blob region has " +
                             std::to_string(t.blob_bytes) + " (firmware " + std::to_string(fw.flash_bytes) + " + blob = " +
                             std::to_string(r.flash_used) + " of " + std::to_string(t.flash_bytes) + " bytes of flash)");
    if (r.sram_used > t.sram_bytes)
        r.problems.push_back("SRAM: activations need " + std::to_string(arena_bytes) + " bytes + firmware " +
                             std::to_string(fw.sram_bytes) + " (data, bss, stack) = " + std::to_string(r.sram_used) +
                             " of " + std::to_string(t.sram_bytes) + " bytes");
    r.fits = r.problems.empty();
    return r;
}

std::string FitReport::text() const {
    std::ostringstream o;
    auto pct = [](uint32_t a, uint32_t b) { return b ? 100.0 * a / b : 0.0; };
    o.setf(std::ios::fixed);
    o.precision(1);
    o << "flash: " << flash_used << " / " << flash_total << " bytes (" << pct(flash_used, flash_total) << "%): firmware "
      << fw_flash << ", model blob " << blob_bytes << " (blob region " << blob_region << ")\n";
    o << "SRAM:  " << sram_used << " / " << sram_total << " bytes (" << pct(sram_used, sram_total) << "%): firmware data/bss/stack "
      << fw_sram << ", activation arena " << arena_bytes << "\n";
    for (const auto& p : problems) o << "does not fit: " << p << "\n";
    return o.str();
}

}  // namespace mcu
