// SPDX-License-Identifier: MIT
// ELF loading through libelf: header checks, PT_LOAD segments, symbol table.
#include "riscv_iss/elf_image.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "riscv_iss/bus.h"

namespace iss {
namespace {

/// The largest ELF file loaded (MCU programs are a few MiB; larger files are not programs for these cores).
constexpr uint64_t kMaxElfBytes = 256ull << 20;

/// Owns the libelf handle over an in-memory image (the bytes must outlive it).
class ElfFile {
   public:
    ElfFile(const std::string& path, char* data, std::size_t size) : path_(path) {
        if (elf_version(EV_CURRENT) == EV_NONE) fail("libelf initialisation failed");
        elf_ = elf_memory(data, size);
        if (elf_ == nullptr || elf_kind(elf_) != ELF_K_ELF) {
            release();  // a throwing constructor gets no destructor call
            fail("not an ELF file");
        }
    }
    ~ElfFile() { release(); }
    ElfFile(const ElfFile&) = delete;
    ElfFile& operator=(const ElfFile&) = delete;
    Elf* get() const { return elf_; }
    [[noreturn]] void fail(const std::string& why) const {
        throw std::runtime_error("bad ELF '" + path_ + "': " + why);
    }

   private:
    void release() {
        if (elf_ != nullptr) elf_end(elf_);
        elf_ = nullptr;
    }
    std::string path_;
    Elf* elf_ = nullptr;
};

void load_segments(const ElfFile& f, Bus& bus) {
    std::size_t phnum = 0;
    if (elf_getphdrnum(f.get(), &phnum) != 0) f.fail("cannot read program headers");
    std::size_t file_size = 0;
    const char* raw = elf_rawfile(f.get(), &file_size);
    if (raw == nullptr) f.fail("cannot map file contents");
    std::size_t loaded = 0;
    for (std::size_t i = 0; i < phnum; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(f.get(), static_cast<int>(i), &ph) == nullptr) f.fail("corrupt program header");
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
        if (ph.p_filesz > ph.p_memsz) f.fail(fmt::format("segment {} has filesz > memsz", i));
        if (ph.p_offset > file_size || ph.p_filesz > file_size - ph.p_offset)
            f.fail(fmt::format("segment {} extends beyond the end of the file", i));
        const uint64_t addr = ph.p_paddr;
        uint8_t* dst = addr + ph.p_memsz <= (1ull << 32)
                           ? bus.host_ptr(static_cast<uint32_t>(addr), static_cast<uint32_t>(ph.p_memsz))
                           : nullptr;
        if (dst == nullptr)
            f.fail(fmt::format("segment {} [0x{:08x}, 0x{:08x}) is outside the core's memory map", i, addr,
                               addr + ph.p_memsz));
        std::memcpy(dst, raw + ph.p_offset, ph.p_filesz);
        std::memset(dst + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
        ++loaded;
    }
    if (loaded == 0) f.fail("no loadable segments");
}

void read_symbols(const ElfFile& f, ElfImage& img) {
    Elf_Scn* scn = nullptr;
    bool sig_begin = false, sig_end = false;
    while ((scn = elf_nextscn(f.get(), scn)) != nullptr) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0) continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (data == nullptr) continue;
        const std::size_t count = sh.sh_size / sh.sh_entsize;
        for (std::size_t i = 0; i < count; ++i) {
            GElf_Sym sym;
            if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
            const char* name = elf_strptr(f.get(), sh.sh_link, sym.st_name);
            if (name == nullptr || *name == '\0') continue;
            const auto addr = static_cast<uint32_t>(sym.st_value);
            if (std::strcmp(name, "tohost") == 0) img.tohost = addr;
            if (std::strcmp(name, "fromhost") == 0) img.fromhost = addr;
            if (std::strcmp(name, "begin_signature") == 0) img.begin_signature = addr, sig_begin = true;
            if (std::strcmp(name, "end_signature") == 0) img.end_signature = addr, sig_end = true;
            if (GELF_ST_TYPE(sym.st_info) == STT_FUNC)
                img.functions.push_back({name, addr, static_cast<uint32_t>(sym.st_size)});
        }
    }
    img.has_signature = sig_begin && sig_end;
    std::sort(img.functions.begin(), img.functions.end(), [](const ElfSymbol& a, const ElfSymbol& b) {
        return a.addr != b.addr ? a.addr < b.addr : a.name < b.name;
    });
}

}  // namespace

ElfImage load_elf(const std::string& path, Bus& bus) {
    const auto fail = [&](const std::string& why) -> std::runtime_error {
        return std::runtime_error("bad ELF '" + path + "': " + why);
    };
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) throw fail(std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw fail("not a regular file");
    }
    if (static_cast<uint64_t>(st.st_size) > kMaxElfBytes) {
        ::close(fd);
        throw fail(fmt::format("{} bytes is larger than any program for these cores (at most {} MiB)", st.st_size,
                               kMaxElfBytes >> 20));
    }
    std::vector<char> bytes(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < bytes.size()) {
        const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    if (got != bytes.size()) throw fail("read error");
    return load_elf_image(bytes.data(), bytes.size(), path, bus);
}

ElfImage load_elf_image(char* data, std::size_t size, const std::string& name, Bus& bus) {
    ElfFile f(name, data, size);
    if (gelf_getclass(f.get()) != ELFCLASS32) f.fail("not a 32-bit ELF (ELFCLASS64?)");
    GElf_Ehdr eh;
    if (gelf_getehdr(f.get(), &eh) == nullptr) f.fail("corrupt ELF header");
    if (eh.e_machine != EM_RISCV) f.fail(fmt::format("machine {} is not RISC-V", eh.e_machine));
    if (eh.e_type != ET_EXEC) f.fail("not an executable (ET_EXEC)");
    ElfImage img;
    img.entry = static_cast<uint32_t>(eh.e_entry);
    load_segments(f, bus);
    read_symbols(f, img);
    return img;
}

}  // namespace iss
