// SPDX-License-Identifier: MIT
#include "compiler/model_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "compiler/tflite/tflite_importer.h"
#include "numerics/limits.h"


namespace drv::importer {

namespace {

/// The file's bytes, read-only: mapped (no copy out of the page cache, no zero-filled buffer;
/// ResNet50's 26 MB cost ~0.05 s CPU through a read into a vector), or read when mapping fails
/// (special files, empty files).
class FileBytes {
   public:
    explicit FileBytes(const std::string& path) {
        try {
            num::check_input_file(path);  // regular file within the budget (/dev/zero would read forever)
        } catch (const std::runtime_error& e) {
            throw ImportError(e.what());
        }
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw ImportError(path + ": cannot open file");
        struct stat st {};
        const bool stat_ok = ::fstat(fd, &st) == 0;
        if (stat_ok && S_ISDIR(st.st_mode)) {
            ::close(fd);
            throw ImportError(path + ": is a directory, not a model file");
        }
        if (stat_ok && S_ISREG(st.st_mode) && st.st_size > 0) {
            void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
            if (p != MAP_FAILED) {
                map_ = p;
                size_ = static_cast<size_t>(st.st_size);
            }
        }
        ::close(fd);
        if (map_) return;
        std::ifstream f(path, std::ios::binary);
        if (!f) throw ImportError(path + ": cannot open file");
        copy_.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
        if (f.bad()) throw ImportError(path + ": cannot read file");
        size_ = copy_.size();
    }
    ~FileBytes() {
        if (map_) ::munmap(map_, size_);
    }
    FileBytes(const FileBytes&) = delete;
    FileBytes& operator=(const FileBytes&) = delete;
    const char* data() const { return map_ ? static_cast<const char*>(map_) : copy_.data(); }
    size_t size() const { return size_; }

   private:
    void* map_ = nullptr;
    size_t size_ = 0;
    std::vector<char> copy_;
};

}  // namespace

ir::Graph load_model(const std::string& path, const ImportOptions& opts) {
    const FileBytes bytes(path);
    if (looks_like_tflite(bytes.data(), bytes.size())) return import_tflite_bytes(bytes.data(), bytes.size(), opts, path);
    return import_onnx_bytes(bytes.data(), bytes.size(), opts, path);
}

}  // namespace drv::importer
