// SPDX-License-Identifier: MIT
// The socket-free core of `npusim serve`: the simulated SoC, the emulated kernel drivers (rknpu,
// and rocket on rk3588), the jobs they run, and the sessions and files of the programs. Every
// request runs in the SoC's dispatcher thread (SocHost::post); the calls below are made from
// other OS threads (a connection's thread in `serve`, the fuzz driver of fuzz/uapi_ioctl_fuzz.cpp)
// while the SystemC kernel runs, and block until the dispatcher answered. The server keeps only
// the socket I/O around them (server.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/drm.h"
#include "hw/profile.h"
#include "trace/trace_writer.h"

namespace sim::exec {

class SocHost;
class RknpuDevice;
class RocketDevice;

class ExecCore {
   public:
    /// `history`: keep every session and job for report() (serve does; the fuzzer does not, as
    /// its millions of sessions would only grow memory).
    ExecCore(const hw::SocProfile& soc, uint32_t core_mask, trace::TraceWriter* tw, bool history = true);
    ~ExecCore();

    SocHost& soc() { return *soc_; }
    JobBoard& jobs() { return jobs_; }

    /// Run `fn` in the SoC's dispatcher and wait for its reply.
    Reply in_sim(std::function<void(std::shared_ptr<Pending>)> fn);

    /// What `hello` does: a new session on the device `h.kind` names (a new file, or the file
    /// `h.attach_file` with NPX_HELLO_ATTACH), or a control session. ret: the session id, or
    /// -ENODEV (with the log) when the SoC has no such device; `s` is set on success.
    Reply open_session(const npx_hello& h, std::shared_ptr<Session>& s);
    /// One NPX_OP_IOCTL: the driver's handler, then (PREP_BO) the wait for the jobs it names until
    /// the absolute CLOCK_MONOTONIC deadline of the reply (past or 0: poll, -EBUSY; else -ETIMEDOUT).
    Reply ioctl(const std::shared_ptr<Session>& s, const npx_ioctl_req& q, std::vector<uint8_t> arg,
                std::vector<uint8_t> extra, int in_fd);
    Reply mmap(const std::shared_ptr<Session>& s, const npx_mmap_req& q);
    Reply munmap(const std::shared_ptr<Session>& s, const npx_munmap_req& q);
    /// One request of a device session as its connection received it: the payload of
    /// NPX_OP_IOCTL cut into npx_ioctl_req + arg + extra (`in_fd`: the descriptor that came with
    /// it, owned by the handler; -1 none), of NPX_OP_MMAP / NPX_OP_MUNMAP their request, and run.
    /// False (nothing run) when the op is not one of these, the session has no file or the
    /// payload is shorter than it says: the server closes the connection.
    bool request(const std::shared_ptr<Session>& s, uint32_t op, const uint8_t* pl, size_t len, int in_fd, Reply& r);
    /// What a disconnect does: the session's file is closed when it was its last session (every
    /// handle released; jobs still running keep their buffers until they end).
    void close_session(const std::shared_ptr<Session>& s);

    /// The run report (JSON) of the sessions of `tag` (all when empty); in the dispatcher only.
    std::string report(const std::string& tag) const;
    /// One line: sessions, jobs running, simulated time; in the dispatcher only.
    std::string status();

    /// Buffer memory in use, for leak checks (dispatcher only): objects and bytes of both drivers,
    /// physical DDR allocated, IOMMU domains and mapped pages, open files, RKNPU fences (pipes).
    struct Usage {
        uint64_t objects = 0, object_bytes = 0, phys_bytes = 0, iommu_domains = 0, iommu_pages = 0, files = 0, fences = 0;
        bool operator==(const Usage& o) const {
            return objects == o.objects && object_bytes == o.object_bytes && phys_bytes == o.phys_bytes &&
                   iommu_domains == o.iommu_domains && iommu_pages == o.iommu_pages && files == o.files &&
                   fences == o.fences;
        }
        bool operator!=(const Usage& o) const { return !(*this == o); }
        std::string text() const;
    };
    Usage usage() const;

   private:
    DrmDevice* device(Kind k) const;
    struct Recording;
    /// $NPUSIM_SERVE_RECORD=DIR: every device session's requests are written to
    /// DIR/<tag>-<session>.bin in the input format of fuzz/uapi_ioctl_fuzz.cpp, with the bytes the
    /// program stored into its mappings since the previous request as WRITE records: the seeds
    /// of that fuzz target are such recordings of tests/exec programs.
    void record(const std::shared_ptr<Session>& s, uint32_t op, const uint8_t* pl, size_t len, int in_fd);
    bool request_unrecorded(const std::shared_ptr<Session>& s, uint32_t op, const uint8_t* pl, size_t len, int in_fd,
                            Reply& r);
    void record_reply(const std::shared_ptr<Session>& s, uint32_t op, const uint8_t* pl, const Reply& r);
    std::string record_dir_;
    std::mutex record_m_;
    std::map<uint32_t, std::unique_ptr<Recording>> recordings_;  ///< session id -> its file

    std::unique_ptr<SocHost> soc_;
    JobBoard jobs_;
    std::unique_ptr<RknpuDevice> rknpu_;
    std::unique_ptr<RocketDevice> rocket_;
    bool history_;
    // Touched in the dispatcher only:
    std::vector<std::shared_ptr<Session>> sessions_;
    std::map<std::pair<std::string, int>, uint32_t> clients_;  ///< (tag, pid) -> client number
    std::map<uint32_t, std::shared_ptr<DrmFile>> files_;
    uint32_t next_session_ = 1;
};

}  // namespace sim::exec
