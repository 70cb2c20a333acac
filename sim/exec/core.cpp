// SPDX-License-Identifier: MIT
#include "exec/core.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "exec/rknpu.h"
#include "exec/rocket.h"
#include "exec/soc.h"

namespace sim::exec {

namespace {
std::string cstr(const char* p, size_t n) { return std::string(p, strnlen(p, n)); }
std::string json_str(const std::string& s) { return trace::json_quote(s); }
}  // namespace

ExecCore::ExecCore(const hw::SocProfile& soc, uint32_t core_mask, trace::TraceWriter* tw, bool history)
    : history_(history) {
    if (const char* d = std::getenv("NPUSIM_SERVE_RECORD"); d && *d) record_dir_ = d;
    soc_ = std::make_unique<SocHost>("exec", soc, core_mask, tw);
    rknpu_ = std::make_unique<RknpuDevice>(*soc_, jobs_);
    // Mainline rocket binds to "rockchip,rk3588-rknn-core" only.
    if (soc.name == "rk3588") rocket_ = std::make_unique<RocketDevice>(*soc_, jobs_);
    rknpu_->set_history(history);
    if (rocket_) rocket_->set_history(history);
}

ExecCore::~ExecCore() = default;

// ---- request recording (fuzz seeds) ----

struct ExecCore::Recording {
    FILE* f = nullptr;
    struct Map {
        int fd;
        uint64_t offset, length;
        std::vector<uint8_t> last;  ///< content at the previous request
    };
    std::vector<Map> maps;
    std::vector<std::pair<dev_t, ino_t>> fds;  ///< descriptors replies passed, in order
    ~Recording() {
        if (f) std::fclose(f);
        for (const Map& m : maps) close(m.fd);
    }
    void put(const void* p, size_t n) { std::fwrite(p, 1, n, f); }
};

void ExecCore::record(const std::shared_ptr<Session>& s, uint32_t op, const uint8_t* pl, size_t len, int in_fd) {
    std::lock_guard<std::mutex> l(record_m_);
    auto it = recordings_.find(s->id);
    if (it == recordings_.end()) {
        auto rec = std::make_unique<Recording>();
        const std::string path = fmt::format("{}/{}-{}.bin", record_dir_, s->tag.empty() ? "session" : s->tag, s->id);
        rec->f = std::fopen(path.c_str(), "wb");
        if (!rec->f) return;
        const uint8_t mode = static_cast<uint8_t>((s->kind == Kind::Rocket ? 1 : 0) | (s->file->render ? 2 : 0) |
                                                  (s->log ? 4 : 0));
        rec->put(&mode, 1);
        it = recordings_.emplace(s->id, std::move(rec)).first;
    }
    Recording& rec = *it->second;
    // What the program stored through its mappings since the last request (WRITE records).
    for (size_t mi = 0; mi < rec.maps.size() && mi < 256; ++mi) {
        Recording::Map& m = rec.maps[mi];
        std::vector<uint8_t> now(m.length);
        if (pread(m.fd, now.data(), now.size(), static_cast<off_t>(m.offset)) != static_cast<ssize_t>(now.size())) continue;
        for (size_t at = 0; at < now.size();) {
            if (now[at] == m.last[at]) {
                ++at;
                continue;
            }
            size_t end = at, same = 0;
            while (end < now.size() && end - at < 0xffff && same < 16) {
                same = now[end] == m.last[end] ? same + 1 : 0;
                ++end;
            }
            end -= same;
            const uint8_t op4 = 4, idx = static_cast<uint8_t>(mi);
            const uint16_t n = static_cast<uint16_t>(end - at);
            const uint32_t off = static_cast<uint32_t>(at);
            rec.put(&op4, 1);
            rec.put(&n, 2);
            rec.put(&idx, 1);
            rec.put(&off, 4);
            rec.put(now.data() + at, n);
            at = end;
        }
        m.last = std::move(now);
    }
    if (len > 0xffff) return;  // not representable in a record (no test program sends one)
    const uint8_t o = static_cast<uint8_t>(op == NPX_OP_IOCTL ? 1 : op == NPX_OP_MMAP ? 2 : 3);
    const uint16_t n = static_cast<uint16_t>(len);
    rec.put(&o, 1);
    rec.put(&n, 2);
    if (op == NPX_OP_IOCTL) {
        uint8_t sel = 0;
        dev_t dev = 0;
        ino_t ino = 0;
        if (in_fd >= 0 && fd_identity(in_fd, dev, ino))
            for (size_t i = 0; i < rec.fds.size() && !sel; ++i)
                if (rec.fds[i] == std::make_pair(dev, ino)) sel = static_cast<uint8_t>(i + 1);
        rec.put(&sel, 1);
    }
    rec.put(pl, len);
    std::fflush(rec.f);
}

void ExecCore::record_reply(const std::shared_ptr<Session>& s, uint32_t op, const uint8_t* pl, const Reply& r) {
    std::lock_guard<std::mutex> l(record_m_);
    auto it = recordings_.find(s->id);
    if (it == recordings_.end() || r.fd < 0) return;
    Recording& rec = *it->second;
    if (op == NPX_OP_MMAP && r.ret == 0) {
        npx_mmap_req q;
        std::memcpy(&q, pl, sizeof q);
        const uint64_t length = page_align(q.length);
        rec.maps.push_back({fcntl(r.fd, F_DUPFD_CLOEXEC, 0), r.memfd_offset, length, std::vector<uint8_t>(length, 0)});
    } else if (op != NPX_OP_MMAP && rec.fds.size() < 64) {
        dev_t dev = 0;
        ino_t ino = 0;
        if (fd_identity(r.fd, dev, ino)) rec.fds.emplace_back(dev, ino);
    }
}

DrmDevice* ExecCore::device(Kind k) const {
    return k == Kind::Rknpu ? static_cast<DrmDevice*>(rknpu_.get()) : static_cast<DrmDevice*>(rocket_.get());
}

Reply ExecCore::in_sim(std::function<void(std::shared_ptr<Pending>)> fn) {
    auto p = std::make_shared<Pending>();
    soc_->post([fn, p] { fn(p); });
    return p->wait();
}

Reply ExecCore::open_session(const npx_hello& h, std::shared_ptr<Session>& s) {
    return in_sim([&, h](std::shared_ptr<Pending> p) {
        Reply out;
        DrmDevice* dev = h.kind == NPX_KIND_RKNPU ? static_cast<DrmDevice*>(rknpu_.get())
                         : h.kind == NPX_KIND_ROCKET ? static_cast<DrmDevice*>(rocket_.get())
                                                     : nullptr;
        if (h.kind != NPX_KIND_CONTROL && !dev) {
            out.ret = -ENODEV;
            out.log = fmt::format("no {} device on {}", h.kind == NPX_KIND_ROCKET ? "rocket" : "NPU", soc_->soc().name);
            p->complete(std::move(out));
            return;
        }
        auto ns = std::make_shared<Session>();
        ns->id = next_session_++;
        ns->pid = h.pid;
        ns->comm = cstr(h.comm, sizeof h.comm);
        ns->tag = cstr(h.tag, sizeof h.tag);
        ns->node = cstr(h.node, sizeof h.node);
        ns->arch = cstr(h.arch, sizeof h.arch);
        ns->log = (h.flags & NPX_HELLO_LOG) != 0;
        auto key = std::make_pair(ns->tag, ns->pid);
        if (!clients_.count(key)) clients_[key] = static_cast<uint32_t>(clients_.size() + 1);
        ns->client_no = clients_[key];
        if (dev) {
            ns->kind = static_cast<Kind>(h.kind);
            if ((h.flags & NPX_HELLO_ATTACH) && files_.count(h.attach_file)) {
                ns->file = files_[h.attach_file];
            } else {
                ns->file = dev->open_file(*ns, ns->node.find("renderD") != std::string::npos);
                files_[ns->file->id] = ns->file;
            }
            ++ns->file->sessions;
        }
        if (history_) sessions_.push_back(ns);
        out.ret = static_cast<int32_t>(ns->id);
        s = ns;
        p->complete(std::move(out));
    });
}

Reply ExecCore::ioctl(const std::shared_ptr<Session>& s, const npx_ioctl_req& q, std::vector<uint8_t> arg,
                      std::vector<uint8_t> extra, int in_fd) {
    DrmDevice* dev = device(s->kind);
    Reply r = in_sim([dev, s, q, arg = std::move(arg), extra = std::move(extra), in_fd](std::shared_ptr<Pending> p) {
        dev->ioctl(*s, q, arg.data(), extra.data(), in_fd, std::move(p));
    });
    if (!r.wait_jobs.empty() && r.ret == 0) {
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        const int64_t now = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
        const bool poll = r.deadline_ns <= now;  // drm_timeout_abs_to_jiffies: 0 or past = poll
        if (!jobs_.wait(r.wait_jobs, poll ? 0 : r.deadline_ns)) r.ret = poll ? -EBUSY : -ETIMEDOUT;
    }
    return r;
}

Reply ExecCore::mmap(const std::shared_ptr<Session>& s, const npx_mmap_req& q) {
    DrmDevice* dev = device(s->kind);
    return in_sim([dev, s, q](std::shared_ptr<Pending> p) { dev->mmap(*s, q, std::move(p)); });
}

Reply ExecCore::munmap(const std::shared_ptr<Session>& s, const npx_munmap_req& q) {
    DrmDevice* dev = device(s->kind);
    return in_sim([dev, s, q](std::shared_ptr<Pending> p) { dev->munmap(*s, q, std::move(p)); });
}

bool ExecCore::request(const std::shared_ptr<Session>& s, uint32_t op, const uint8_t* pl, size_t len, int in_fd,
                       Reply& r) {
    if (!s->file) return false;
    const bool cut = (op == NPX_OP_IOCTL && len >= sizeof(npx_ioctl_req)) ||
                     (op == NPX_OP_MMAP && len >= sizeof(npx_mmap_req)) ||
                     (op == NPX_OP_MUNMAP && len >= sizeof(npx_munmap_req));
    if (!record_dir_.empty() && cut) {
        record(s, op, pl, len, in_fd);
        const bool ok = request_unrecorded(s, op, pl, len, in_fd, r);
        record_reply(s, op, pl, r);
        return ok;
    }
    return request_unrecorded(s, op, pl, len, in_fd, r);
}

bool ExecCore::request_unrecorded(const std::shared_ptr<Session>& s, uint32_t op, const uint8_t* pl, size_t len,
                                  int in_fd, Reply& r) {
    if (op == NPX_OP_IOCTL && len >= sizeof(npx_ioctl_req)) {
        npx_ioctl_req q;
        std::memcpy(&q, pl, sizeof q);
        if (sizeof q + uint64_t{q.arg_len} + q.extra_len > len) return false;
        std::vector<uint8_t> arg(pl + sizeof q, pl + sizeof q + q.arg_len);
        std::vector<uint8_t> extra(pl + sizeof q + q.arg_len, pl + sizeof q + q.arg_len + q.extra_len);
        r = ioctl(s, q, std::move(arg), std::move(extra), in_fd);
        return true;
    }
    if (op == NPX_OP_MMAP && len >= sizeof(npx_mmap_req)) {
        npx_mmap_req q;
        std::memcpy(&q, pl, sizeof q);
        r = mmap(s, q);
        return true;
    }
    if (op == NPX_OP_MUNMAP && len >= sizeof(npx_munmap_req)) {
        npx_munmap_req q;
        std::memcpy(&q, pl, sizeof q);
        r = munmap(s, q);
        return true;
    }
    return false;
}

void ExecCore::close_session(const std::shared_ptr<Session>& s) {
    if (!record_dir_.empty()) {
        std::lock_guard<std::mutex> l(record_m_);
        recordings_.erase(s->id);
    }
    in_sim([this, s](std::shared_ptr<Pending> p) {
        if (s->file && --s->file->sessions == 0) {
            device(s->kind)->close_file(*s->file);
            files_.erase(s->file->id);
        }
        p->complete(Reply{});
    });
}

std::string ExecCore::status() {
    return fmt::format("{} sessions, {} jobs running, simulated time {} ns", sessions_.size(), jobs_.running(),
                       SocHost::now_ns());
}

std::string ExecCore::report(const std::string& tag) const {
    std::string s = fmt::format("{{\n  \"platform\": {},\n  \"simulated_ns\": {},\n  \"clients\": [", json_str(soc_->soc().name),
                                SocHost::now_ns());
    bool first = true;
    for (const auto& ss : sessions_) {
        if (!ss->file || (!tag.empty() && ss->tag != tag)) continue;
        std::string calls, errors;
        for (const auto& [k, v] : ss->calls) calls += fmt::format("{}{}: {}", calls.empty() ? "" : ", ", json_str(k), v);
        for (const auto& [k, v] : ss->errors) errors += fmt::format("{}{}: {}", errors.empty() ? "" : ", ", json_str(k), v);
        s += fmt::format("{}\n    {{\"client\": {}, \"program\": {}, \"arch\": {}, \"node\": {}, \"driver\": {}, "
                         "\"ioctls\": {{{}}}, \"errors\": {{{}}}}}",
                         first ? "" : ",", ss->client_no, json_str(ss->comm), json_str(ss->arch), json_str(ss->node),
                         json_str(ss->kind == Kind::Rknpu ? "rknpu" : "rocket"), calls, errors);
        first = false;
    }
    s += first ? "]" : "\n  ]";
    s += fmt::format(",\n  \"rknpu_jobs\": {}", rknpu_->report_json());
    if (rocket_) s += fmt::format(",\n  \"rocket_jobs\": {}", rocket_->report_json());
    return s + "\n}\n";
}

ExecCore::Usage ExecCore::usage() const {
    Usage u;
    for (const DrmDevice* d : {static_cast<const DrmDevice*>(rknpu_.get()), static_cast<const DrmDevice*>(rocket_.get())}) {
        if (!d) continue;
        const DrmDevice::Stats st = d->stats();
        u.objects += st.objects;
        u.object_bytes += st.bytes;
        u.files += st.files;
    }
    u.phys_bytes = soc_->phys_used_bytes();
    u.fences = rknpu_->fence_count();
    u.iommu_domains = soc_->platform().iommu().domain_count() - rknpu_->domain_slots();
    u.iommu_pages = soc_->platform().iommu().mapped_pages();
    return u;
}

std::string ExecCore::Usage::text() const {
    return fmt::format("{} objects ({} bytes), {} bytes of DDR, {} IOMMU domains ({} pages mapped), {} files, {} fences",
                       objects, object_bytes, phys_bytes, iommu_domains, iommu_pages, files, fences);
}

}  // namespace sim::exec
