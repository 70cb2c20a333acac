// SPDX-License-Identifier: MIT
// The DRM core as `npusim serve` emulates it for the NPU drivers: files (one per open()), GEM
// objects with per-file handles, flink names, PRIME export/import over the buffers' shared memory,
// fake mmap offsets, DRM_IOCTL_VERSION / GET_CAP / ..., and the ioctl argument rules of
// drm_ioctl() (torvalds/linux drivers/gpu/drm/drm_ioctl.c): dispatch on the number, copy in the
// caller's size when both the caller and the declaration have IOC_IN, zero-fill to the declared
// size, copy out when both have IOC_OUT. Unknown numbers answer -ENOTTY with a log line.
// Runs in the SoC's dispatcher thread (no locking); replies go back through Pending.
#pragma once
#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exec/memory.h"
#include "exec/protocol.h"

namespace sim::exec {

class SocHost;

enum class Kind { Rknpu = NPX_KIND_RKNPU, Rocket = NPX_KIND_ROCKET };

struct Reply {
    int32_t ret = 0;
    std::vector<uint8_t> out;
    std::vector<uint8_t> extra;
    std::string log;           ///< text for the program's stderr
    int fd = -1;               ///< descriptor passed with the reply (owned: closed after sending)
    int32_t fd_offset = -1;
    bool cloexec = false;
    uint64_t memfd_offset = 0;  ///< MMAP replies
    bool force_shared = false;  ///< MMAP replies: map MAP_SHARED even if MAP_PRIVATE was asked
    /// Done by the socket thread after the dispatcher answered (real-time waits, PREP_BO).
    std::vector<uint64_t> wait_jobs;
    int64_t deadline_ns = 0;  ///< absolute CLOCK_MONOTONIC; 0: do not wait
};

/// A reply that may be completed later, from a job process (blocking submits).
class Pending {
   public:
    void complete(Reply r);
    Reply wait();

   private:
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    Reply r_;
};

/// Jobs not yet finished, visible to the socket threads (PREP_BO waits, shutdown).
class JobBoard {
   public:
    uint64_t add();
    void finish(uint64_t id);
    /// True when all `ids` finished before the absolute CLOCK_MONOTONIC deadline (0: no wait).
    bool wait(const std::vector<uint64_t>& ids, int64_t deadline_ns);
    /// True when no job is left before the absolute CLOCK_MONOTONIC deadline.
    bool wait_all(int64_t deadline_ns);
    size_t running();

   private:
    std::mutex m_;
    std::condition_variable cv_;
    std::set<uint64_t> unfinished_;
    uint64_t next_ = 1;
};

struct DrmFile;

struct Gem {
    uint32_t id = 0;
    uint64_t size = 0;       ///< mapped bytes (page multiple)
    uint64_t user_size = 0;  ///< bytes asked for
    std::unique_ptr<Backing> mem;
    uint64_t pa = 0;          ///< physical DDR address the backing is attached at
    uint64_t iova = 0;        ///< device address (IOVA, or physical without IOMMU)
    uint64_t iova_reserved = 0;
    int mmu_domain = 0;       ///< the model's IOMMU domain the IOVA lives in
    int rk_domain_id = 0;     ///< rknpu iommu_domain_id
    uint32_t flags = 0;       ///< rknpu memory flags
    uint64_t obj_addr = 0;    ///< rknpu: the "kernel pointer" user space passes back
    uint64_t mmap_offset = 0; ///< fake offset (0: none yet)
    uint32_t flink = 0;
    bool imported = false;
    int handles = 0;          ///< handles in all files
    int refs = 0;             ///< handles + jobs
    std::set<uint32_t> files; ///< files with a handle (mmap permission)
    std::weak_ptr<DrmFile> owner;  ///< rocket: the file whose address space holds the IOVA
};

struct Session;

struct DrmFile {
    uint32_t id = 0;
    Kind kind = Kind::Rknpu;
    bool render = false;  ///< a renderD node: no FLINK / GEM_OPEN (DRM_AUTH)
    std::map<uint32_t, std::shared_ptr<Gem>> handles;
    std::map<std::pair<dev_t, ino_t>, uint32_t> prime;  ///< imported/exported buffer -> handle
    int sessions = 0;
    uint32_t client_no = 0;
    std::string comm;
    std::string pending_log;  ///< explanations of non-blocking jobs, delivered with the next reply
    // rocket: the file's IOMMU domain and address space (rocket_open)
    int mmu_domain = 0;
    std::unique_ptr<RangeAllocator> mm;
};

/// One connection (the program's view of one opened descriptor and its dups).
struct Session {
    uint32_t id = 0;
    uint32_t client_no = 0;  ///< order of first appearance, for trace tracks (deterministic)
    int pid = 0;
    std::string comm, tag, node, arch;
    bool log = false;
    Kind kind = Kind::Rknpu;
    std::shared_ptr<DrmFile> file;
    int track = -1;
    std::map<std::string, uint64_t> calls;   ///< ioctl name -> count
    std::map<std::string, uint64_t> errors;  ///< "NAME -ERRNO" -> count
};

/// An ioctl being handled (kept alive by the handler when it completes later).
struct Call {
    Call(Session& s_, DrmFile& f_) : s(s_), f(f_) {}
    Session& s;
    DrmFile& f;
    uint32_t cmd = 0;
    const char* name = "";
    size_t out_size = 0;
    std::vector<uint8_t> k;  ///< kernel copy of the argument (declared size, zero-filled)
    std::vector<uint8_t> extra;
    int in_fd = -1;  ///< descriptor the program passed (PRIME import, fence in), -1 if none
    Reply r;
    std::shared_ptr<Pending> pending;
    bool deferred = false;  ///< the handler completes `pending` later
    std::string args;       ///< decoded arguments for the log
    std::string result;     ///< decoded results for the log
    uint64_t start_ps = 0;
    template <typename T>
    T& arg() {
        return *reinterpret_cast<T*>(k.data());
    }
};

class DrmDevice {
   public:
    DrmDevice(SocHost& soc, JobBoard& jobs, Kind kind);
    virtual ~DrmDevice() = default;
    Kind kind() const { return kind_; }

    std::shared_ptr<DrmFile> open_file(Session& s, bool render);
    void close_file(DrmFile& f);
    void ioctl(Session& s, const npx_ioctl_req& q, const uint8_t* arg, const uint8_t* extra, int fd,
               std::shared_ptr<Pending> p);
    void mmap(Session& s, const npx_mmap_req& q, std::shared_ptr<Pending> p);
    void munmap(Session& s, const npx_munmap_req& q, std::shared_ptr<Pending> p);
    /// Finish a call: copy the argument out, log, trace, reply.
    void finish(Call& c);

    struct Stats {
        uint64_t objects = 0, bytes = 0, files = 0;
    };
    Stats stats() const;
    /// Keep a record of every job for report_json() (the default; off in the fuzzer).
    void set_history(bool on) { history_ = on; }
    virtual std::string report_json() const { return "{}"; }

   protected:
    struct IoctlDef {
        uint32_t nr;
        const char* name;
        uint32_t dir;   ///< declared NPX_IOC_WRITE / READ bits
        uint32_t size;  ///< declared argument size
        bool render_ok;
        std::function<int(const std::shared_ptr<Call>&)> fn;
    };
    /// The driver's ioctls (numbers >= DRM_COMMAND_BASE).
    virtual const std::vector<IoctlDef>& driver_ioctls() const = 0;
    virtual const char* drv_name() const = 0;
    virtual const char* drv_desc() const = 0;
    virtual const char* drv_date() const = 0;
    virtual int drv_major() const = 0;
    virtual int drv_minor() const = 0;
    virtual int drv_patch() const = 0;
    virtual std::string unique() const = 0;
    virtual bool dumb_buffers() const { return false; }
    /// Device-side mapping of a new or imported object (IOVA + IOMMU map); -errno on failure.
    virtual int gem_map(DrmFile& f, Gem& g) = 0;
    virtual void gem_unmap(Gem& g) = 0;
    virtual void file_opened(DrmFile&) {}
    virtual void file_closing(DrmFile&) {}
    /// rknpu maps a buffer from its start whatever the offset inside it (vm_pgoff = 0);
    /// shmem (rocket) honours the offset and refuses copy-on-write mappings.
    virtual bool mmap_from_start() const = 0;

    // GEM helpers for the drivers
    std::shared_ptr<Gem> new_gem(uint64_t user_size, uint64_t size, std::string& why);
    std::shared_ptr<Gem> lookup(DrmFile& f, uint32_t handle) const;
    uint32_t handle_create(DrmFile& f, const std::shared_ptr<Gem>& g);
    bool handle_delete(DrmFile& f, uint32_t handle);
    void gem_get(Gem& g) { ++g.refs; }
    void gem_put(const std::shared_ptr<Gem>& g);
    uint64_t mmap_offset(Gem& g);
    std::string fmt_log(const Session& s, const std::string& line) const;
    std::string fmt_log(const std::string& who, const std::string& line) const;
    /// Always-on explanation (faults, timeouts, refused requests): logged even without --log.
    void explain(Call& c, const std::string& text);
    /// The session's trace track (created on first use), -1 without a trace.
    int track(Session& s);

    SocHost& soc_;
    JobBoard& jobs_;
    Kind kind_;
    std::map<uint32_t, std::shared_ptr<Gem>> objects_;
    std::map<uint32_t, std::weak_ptr<Gem>> names_;  ///< flink name -> object
    RangeAllocator offsets_;
    uint32_t next_gem_ = 1, next_file_ = 1;
    std::map<uint32_t, std::weak_ptr<DrmFile>> files_;
    bool history_ = true;

   private:
    const IoctlDef* core_ioctl(uint32_t nr) const;
    int drm_version(Call& c);
    int drm_get_unique(Call& c);
    int drm_set_version(Call& c);
    int gem_close(Call& c);
    int gem_flink(Call& c);
    int gem_open(Call& c);
    int get_cap(Call& c);
    int set_client_cap(Call& c);
    int prime_handle_to_fd(Call& c);
    int prime_fd_to_handle(Call& c);
    std::vector<IoctlDef> core_;
};

/// "-EINVAL", "-ENOENT", ... for logs.
std::string errno_name(int negative_errno);

}  // namespace sim::exec
