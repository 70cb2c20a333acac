// SPDX-License-Identifier: MIT
// `npusim run --compile-cache DIR` (compile_cache.h): the key and the cache files.
#include "app/compile_cache.h"

#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "checker/spec_db.h"
#include "compiler/rknpu/model_cache.h"

namespace sim {

namespace fs = std::filesystem;
namespace rk = drv::rknpu;

namespace {

/// Hashes fields into one key; each field is length-prefixed so that no two field lists collide.
struct KeyHasher {
    uint64_t h = 0x6e7075 /* "npu" */;
    void add(const void* p, size_t n) {
        const uint64_t len = n;
        h = rk::cache_hash(&len, sizeof len, h);
        h = rk::cache_hash(p, n, h);
    }
    void add(const std::string& s) { add(s.data(), s.size()); }
    void add(uint64_t v) { add(&v, sizeof v); }
    void add(const std::vector<std::string>& v) {
        add(static_cast<uint64_t>(v.size()));
        for (const std::string& s : v) add(s);
    }
};

bool read_file(const std::string& path, std::vector<uint8_t>& bytes) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    bytes.clear();
    bool ok = std::fseek(f, 0, SEEK_END) == 0;
    const long size = ok ? std::ftell(f) : -1;
    ok = ok && size >= 0 && std::fseek(f, 0, SEEK_SET) == 0;
    if (ok) {
        bytes.resize(static_cast<size_t>(size));
        ok = bytes.empty() || std::fread(bytes.data(), 1, bytes.size(), f) == bytes.size();
    }
    std::fclose(f);
    return ok;
}

/// The GNU build ID of the running executable (the linker's hash of its contents).
int build_id_of_main(dl_phdr_info* info, size_t, void* out) {
    auto* id = static_cast<std::string*>(out);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_NOTE) continue;
        const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
        const uint8_t* end = p + ph.p_memsz;
        while (end - p >= static_cast<ptrdiff_t>(sizeof(ElfW(Nhdr)))) {
            ElfW(Nhdr) n;
            std::memcpy(&n, p, sizeof n);
            const uint8_t* name = p + sizeof n;
            const uint8_t* desc = name + ((n.n_namesz + 3u) & ~3u);
            const uint8_t* next = desc + ((n.n_descsz + 3u) & ~3u);
            if (next > end) break;
            if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                id->assign(reinterpret_cast<const char*>(desc), n.n_descsz);
                return 1;
            }
            p = next;
        }
    }
    return 1;  // the first object is the executable: stop
}

/// What identifies this npusim build: its build ID, else the executable's bytes.
std::string build_identity() {
    std::string id;
    dl_iterate_phdr(build_id_of_main, &id);
    if (!id.empty()) return "build-id:" + id;
    std::vector<uint8_t> exe;
    if (read_file("/proc/self/exe", exe))
        return fmt::format("exe:{:016x}", rk::cache_hash(exe.data(), exe.size()));
    return "unknown build";  // the format version and the rest of the key still apply
}

}  // namespace

uint64_t compile_cache_key(const CompileCacheKeyInputs& k) {
    KeyHasher h;
    h.add(static_cast<uint64_t>(rk::kModelCacheFormat));
    h.add(build_identity());
    // The operator spec DB is read at run time: every spec file's name and bytes.
    std::vector<fs::path> specs;
    std::error_code ec;
    for (fs::directory_iterator it(drv::check::default_specs_dir(), ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json") specs.push_back(it->path());
    std::sort(specs.begin(), specs.end());
    std::vector<uint8_t> bytes;
    for (const fs::path& p : specs) {
        h.add(p.filename().string());
        if (read_file(p.string(), bytes)) h.add(bytes.data(), bytes.size());
    }
    if (!read_file(k.model, bytes)) throw std::runtime_error(fmt::format("cannot read model '{}'", k.model));
    h.add(bytes.data(), bytes.size());
    const hw::SocProfile& soc = *k.soc;
    h.add(soc.name);
    h.add(soc.family);
    h.add(static_cast<uint64_t>(soc.schema_version));
    for (const hw::SocProfile::ParamView& p : soc.params()) {
        h.add(p.path);
        h.add(p.value);
    }
    h.add(k.mode);
    h.add(static_cast<uint64_t>(k.keep_all_tensors));
    h.add(k.core_mask);
    h.add(k.quantize);
    h.add(k.cpu_nodes);
    h.add(k.input_shapes);
    return h.h;
}

CompileCache::CompileCache(const std::string& dir, uint64_t key) : key_(key) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
        throw std::invalid_argument(fmt::format("--compile-cache '{}': not a directory and cannot be created ({})", dir,
                                                ec ? ec.message() : "a file of that name exists"));
    status_.used = true;
    status_.file = (fs::path(dir) / fmt::format("{:016x}.npc", key)).string();
}

namespace {

/// A cache file mapped read-only (no copy of its bytes before they are checked and decoded).
class MappedFile {
   public:
    explicit MappedFile(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return;
        struct stat st {};
        if (::fstat(fd, &st) == 0 && st.st_size >= 0) {
            size_ = static_cast<size_t>(st.st_size);
            if (size_ == 0) {
                ok_ = true;
            } else {
                void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
                if (p != MAP_FAILED) data_ = static_cast<const uint8_t*>(p), ok_ = true;
            }
        }
        ::close(fd);
    }
    ~MappedFile() {
        if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    bool ok() const { return ok_; }
    const uint8_t* data() const { return data_ ? data_ : reinterpret_cast<const uint8_t*>(""); }
    size_t size() const { return size_; }

   private:
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
    bool ok_ = false;
};

}  // namespace

bool CompileCache::load(rk::CompiledModel& m, std::vector<std::string>& extra, std::ostream& err) {
    if (!fs::exists(status_.file)) {
        status_.reason = "no file";
        return false;
    }
    try {
        const MappedFile file(status_.file);
        if (!file.ok()) throw rk::CacheError("cannot read it");
        rk::check_cache_file(file.data(), file.size(), key_);
        m = rk::decode_compiled_model(file.data() + rk::kModelCacheHeaderBytes,
                                      file.size() - rk::kModelCacheHeaderBytes, extra);
    } catch (const rk::CacheError& e) {
        status_.reason = e.what();
        err << fmt::format("npusim: warning: compile cache '{}': {}; compiling afresh\n", status_.file, e.what());
        return false;
    }
    status_.hit = true;
    return true;
}

void CompileCache::store(const rk::CompiledModel& m, const std::vector<std::string>& extra, std::ostream& err) {
    const std::vector<uint8_t> payload = rk::encode_compiled_model(m, extra);
    const auto header = rk::cache_file_header(key_, payload.data(), payload.size());
    const std::string tmp = fmt::format("{}.tmp.{}", status_.file, ::getpid());
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    bool ok = f && std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
              std::fwrite(payload.data(), 1, payload.size(), f) == payload.size();
    if (f) ok = std::fclose(f) == 0 && ok;
    std::error_code ec;
    if (ok) fs::rename(tmp, status_.file, ec);
    if (!ok || ec) {
        const std::string why = ok ? ec.message() : std::string(std::strerror(errno));
        fs::remove(tmp, ec);
        err << fmt::format("npusim: warning: compile cache '{}': cannot write it ({}); the run goes on\n",
                           status_.file, why);
    }
}

}  // namespace sim
