// SPDX-License-Identifier: MIT
#include "exec/drm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "exec/soc.h"
#include "exec/uapi.h"
#include "trace/trace_writer.h"

namespace sim::exec {

void Pending::complete(Reply r) {
    std::lock_guard<std::mutex> l(m_);
    r_ = std::move(r);
    done_ = true;
    cv_.notify_all();
}

Reply Pending::wait() {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return done_; });
    return std::move(r_);
}

uint64_t JobBoard::add() {
    std::lock_guard<std::mutex> l(m_);
    const uint64_t id = next_++;
    unfinished_.insert(id);
    return id;
}

void JobBoard::finish(uint64_t id) {
    std::lock_guard<std::mutex> l(m_);
    unfinished_.erase(id);
    cv_.notify_all();
}

size_t JobBoard::running() {
    std::lock_guard<std::mutex> l(m_);
    return unfinished_.size();
}

namespace {
int64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace

bool JobBoard::wait(const std::vector<uint64_t>& ids, int64_t deadline_ns) {
    std::unique_lock<std::mutex> l(m_);
    auto done = [&] {
        for (uint64_t id : ids)
            if (unfinished_.count(id)) return false;
        return true;
    };
    while (!done()) {
        const int64_t left = deadline_ns - monotonic_ns();
        if (left <= 0) return false;
        cv_.wait_for(l, std::chrono::nanoseconds(std::min<int64_t>(left, 100000000)));
    }
    return true;
}

bool JobBoard::wait_all(int64_t deadline_ns) {
    std::unique_lock<std::mutex> l(m_);
    while (!unfinished_.empty()) {
        const int64_t left = deadline_ns - monotonic_ns();
        if (left <= 0) return false;
        cv_.wait_for(l, std::chrono::nanoseconds(std::min<int64_t>(left, 100000000)));
    }
    return true;
}

std::string errno_name(int e) {
    switch (-e) {
        case EPERM: return "-EPERM";
        case ENOENT: return "-ENOENT";
        case EINTR: return "-EINTR";
        case EIO: return "-EIO";
        case EBADF: return "-EBADF";
        case EAGAIN: return "-EAGAIN";
        case ENOMEM: return "-ENOMEM";
        case EACCES: return "-EACCES";
        case EFAULT: return "-EFAULT";
        case EBUSY: return "-EBUSY";
        case EINVAL: return "-EINVAL";
        case ENOTTY: return "-ENOTTY";
        case ENOSPC: return "-ENOSPC";
        case ENOSYS: return "-ENOSYS";
        case ETIMEDOUT: return "-ETIMEDOUT";
        case EOPNOTSUPP: return "-EOPNOTSUPP";
        case ENXIO: return "-ENXIO";
        case ENODEV: return "-ENODEV";
        case EPROTO: return "-EPROTO";
        default: return std::to_string(e);
    }
}

namespace {
// DRM_FILE_PAGE_OFFSET_START on 64-bit kernels: ((0xFFFFFFFF >> PAGE_SHIFT) + 1) pages, i.e. 4 GiB
// of fake offsets; 256 times that many pages follow (drm_gem.c DRM_FILE_PAGE_OFFSET_SIZE).
constexpr uint64_t kOffsetStart = 1ull << 32;
constexpr uint64_t kOffsetSize = (1ull << 32) * 256;
constexpr uint32_t kRW = NPX_IOC_WRITE | NPX_IOC_READ;
}  // namespace

DrmDevice::DrmDevice(SocHost& soc, JobBoard& jobs, Kind kind)
    : soc_(soc), jobs_(jobs), kind_(kind), offsets_(kOffsetStart, kOffsetSize) {
    auto bind = [this](int (DrmDevice::*fn)(Call&)) {
        return [this, fn](const std::shared_ptr<Call>& c) { return (this->*fn)(*c); };
    };
    // drm_ioctls[] of drm_ioctl.c: number, direction, size, render-node permission.
    core_ = {
        {NPX_DRM_NR_VERSION, "DRM_IOCTL_VERSION", kRW, sizeof(npx_drm_version), true, bind(&DrmDevice::drm_version)},
        {NPX_DRM_NR_GET_UNIQUE, "DRM_IOCTL_GET_UNIQUE", kRW, sizeof(npx_drm_unique), true,
         bind(&DrmDevice::drm_get_unique)},
        {NPX_DRM_NR_SET_VERSION, "DRM_IOCTL_SET_VERSION", kRW, sizeof(npx_drm_set_version), false,
         bind(&DrmDevice::drm_set_version)},
        {NPX_DRM_NR_GEM_CLOSE, "DRM_IOCTL_GEM_CLOSE", NPX_IOC_WRITE, sizeof(npx_drm_gem_close), true,
         bind(&DrmDevice::gem_close)},
        {NPX_DRM_NR_GEM_FLINK, "DRM_IOCTL_GEM_FLINK", kRW, sizeof(npx_drm_gem_flink), false,
         bind(&DrmDevice::gem_flink)},
        {NPX_DRM_NR_GEM_OPEN, "DRM_IOCTL_GEM_OPEN", kRW, sizeof(npx_drm_gem_open), false, bind(&DrmDevice::gem_open)},
        {NPX_DRM_NR_GET_CAP, "DRM_IOCTL_GET_CAP", kRW, sizeof(npx_drm_get_cap), true, bind(&DrmDevice::get_cap)},
        {NPX_DRM_NR_SET_CLIENT_CAP, "DRM_IOCTL_SET_CLIENT_CAP", NPX_IOC_WRITE, sizeof(npx_drm_get_cap), true,
         bind(&DrmDevice::set_client_cap)},
        {NPX_DRM_NR_PRIME_HANDLE_TO_FD, "DRM_IOCTL_PRIME_HANDLE_TO_FD", kRW, sizeof(npx_drm_prime_handle), true,
         bind(&DrmDevice::prime_handle_to_fd)},
        {NPX_DRM_NR_PRIME_FD_TO_HANDLE, "DRM_IOCTL_PRIME_FD_TO_HANDLE", kRW, sizeof(npx_drm_prime_handle), true,
         bind(&DrmDevice::prime_fd_to_handle)},
    };
}

const DrmDevice::IoctlDef* DrmDevice::core_ioctl(uint32_t nr) const {
    for (const IoctlDef& d : core_)
        if (d.nr == nr) return &d;
    return nullptr;
}

std::shared_ptr<DrmFile> DrmDevice::open_file(Session& s, bool render) {
    auto f = std::make_shared<DrmFile>();
    f->id = next_file_++;
    f->kind = kind_;
    f->render = render;
    f->client_no = s.client_no;
    f->comm = s.comm;
    files_[f->id] = f;
    file_opened(*f);
    return f;
}

void DrmDevice::close_file(DrmFile& f) {
    file_closing(f);
    std::vector<uint32_t> hs;
    for (const auto& [h, g] : f.handles) hs.push_back(h);
    for (uint32_t h : hs) handle_delete(f, h);
    files_.erase(f.id);
}

int DrmDevice::track(Session& s) {
    trace::TraceWriter* tw = soc_.trace();
    if (!tw) return -1;
    if (s.track < 0)
        s.track = tw->track("programs", fmt::format("client {} {} ({})", s.client_no, s.comm, s.node));
    return s.track;
}

std::string DrmDevice::fmt_log(const Session& s, const std::string& line) const {
    return fmt_log(fmt::format("client {} ({} pid {})", s.client_no, s.comm, s.pid), line);
}

std::string DrmDevice::fmt_log(const std::string& who, const std::string& line) const {
    std::string out;
    size_t at = 0;
    while (at < line.size()) {  // every line of a multi-line explanation carries the prefix
        size_t nl = line.find('\n', at);
        if (nl == std::string::npos) nl = line.size();
        out += fmt::format("npusim[{}] {}: {}\n", drv_name(), who, line.substr(at, nl - at));
        at = nl + 1;
    }
    return out;
}

void DrmDevice::explain(Call& c, const std::string& text) { c.r.log += fmt_log(c.s, text); }

void DrmDevice::ioctl(Session& s, const npx_ioctl_req& q, const uint8_t* arg, const uint8_t* extra, int fd,
                      std::shared_ptr<Pending> p) {
    auto c = std::make_shared<Call>(s, *s.file);
    c->cmd = q.cmd;
    c->pending = std::move(p);
    c->in_fd = fd;
    c->start_ps = SocHost::now_ps();
    if (q.extra_len) c->extra.assign(extra, extra + q.extra_len);
    const IoctlDef* d = nullptr;
    if (NPX_IOC_TYPE(q.cmd) == NPX_DRM_TYPE) {
        const uint32_t nr = NPX_IOC_NR(q.cmd);
        if (nr < NPX_DRM_COMMAND_BASE) {
            d = core_ioctl(nr);
        } else {
            for (const IoctlDef& dd : driver_ioctls())
                if (dd.nr == nr) d = &dd;
        }
    }
    if (!d) {
        c->name = "unknown";
        c->r.ret = -ENOTTY;
        explain(*c, fmt::format("unknown ioctl 0x{:08x} (type '{}' nr 0x{:02x} size {} dir {}) on {}: -ENOTTY",
                                q.cmd, static_cast<char>(NPX_IOC_TYPE(q.cmd)), NPX_IOC_NR(q.cmd), NPX_IOC_SIZE(q.cmd),
                                NPX_IOC_DIR(q.cmd), s.node));
        finish(*c);
        return;
    }
    c->name = d->name;
    const uint32_t dir = NPX_IOC_DIR(q.cmd), size = NPX_IOC_SIZE(q.cmd);
    const size_t in_size = (dir & d->dir & NPX_IOC_WRITE) ? size : 0;
    c->out_size = (dir & d->dir & NPX_IOC_READ) ? size : 0;
    c->k.assign(std::max<size_t>({in_size, c->out_size, d->size}), 0);
    if (s.file->render && !d->render_ok) {
        c->r.ret = -EACCES;
        c->out_size = 0;
        explain(*c, fmt::format("{} is not allowed on a render node ({}): -EACCES", d->name, s.node));
        finish(*c);
        return;
    }
    if (in_size) {
        if ((q.flags & NPX_IOCTL_ARG_FAULT) || q.arg_len < in_size) {
            c->r.ret = -EFAULT;
            c->out_size = 0;
            c->args = fmt::format("arg 0x{:x} unreadable", q.arg_addr);
            finish(*c);
            return;
        }
        std::memcpy(c->k.data(), arg, in_size);
    }
    c->r.ret = d->fn(c);
    if (!c->deferred) finish(*c);
}

void DrmDevice::finish(Call& c) {
    c.r.out.assign(c.k.begin(), c.k.begin() + static_cast<std::ptrdiff_t>(std::min(c.out_size, c.k.size())));
    ++c.s.calls[c.name];
    if (c.r.ret < 0) ++c.s.errors[fmt::format("{} {}", c.name, errno_name(c.r.ret))];
    const std::string ret = c.r.ret < 0 ? errno_name(c.r.ret) : std::to_string(c.r.ret);
    if (!c.f.pending_log.empty()) {
        c.r.log.insert(0, c.f.pending_log);
        c.f.pending_log.clear();
    }
    if (c.s.log)
        c.r.log.insert(0, fmt_log(c.s, fmt::format("{}({}) = {}{}{}", c.name, c.args, ret, c.result.empty() ? "" : " ",
                                                   c.result)));
    if (trace::TraceWriter* tw = soc_.trace()) {
        const uint64_t end = SocHost::now_ps();
        std::vector<trace::Arg> a = {trace::arg("args", c.args), trace::arg("ret", ret)};
        if (!c.result.empty()) a.push_back(trace::arg("result", c.result));
        if (end > c.start_ps)
            tw->complete(track(c.s), c.name, c.start_ps, end - c.start_ps, a, "ioctl");
        else
            tw->instant(track(c.s), c.name, c.start_ps, a);
    }
    if (c.in_fd >= 0) {
        close(c.in_fd);
        c.in_fd = -1;
    }
    c.pending->complete(std::move(c.r));
}

// ---- GEM objects ----

std::shared_ptr<Gem> DrmDevice::new_gem(uint64_t user_size, uint64_t size, std::string& why) {
    auto g = std::make_shared<Gem>();
    g->id = next_gem_++;
    g->user_size = user_size;
    g->size = size;
    try {
        g->mem = Backing::create(size, fmt::format("npusim-{}-bo{}", drv_name(), g->id));
    } catch (const std::exception& e) {
        why = e.what();
        return nullptr;
    }
    const std::optional<uint64_t> pa = soc_.alloc_phys(size, !soc_.iommu() && soc_.soc().npu.dma_address_bits.value <= 32);
    if (!pa) {
        why = fmt::format("no {} bytes of DDR left", size);
        return nullptr;
    }
    g->pa = *pa;
    soc_.attach(g->pa, *g->mem);
    objects_[g->id] = g;
    return g;
}

std::shared_ptr<Gem> DrmDevice::lookup(DrmFile& f, uint32_t handle) const {
    auto it = f.handles.find(handle);
    return it == f.handles.end() ? nullptr : it->second;
}

uint32_t DrmDevice::handle_create(DrmFile& f, const std::shared_ptr<Gem>& g) {
    uint32_t h = 1;  // idr_alloc(.., 1, 0): the lowest free handle
    for (const auto& [k, v] : f.handles) {
        if (k != h) break;
        ++h;
    }
    f.handles[h] = g;
    ++g->handles;
    gem_get(*g);
    g->files.insert(f.id);
    return h;
}

bool DrmDevice::handle_delete(DrmFile& f, uint32_t handle) {
    auto it = f.handles.find(handle);
    if (it == f.handles.end()) return false;
    std::shared_ptr<Gem> g = it->second;
    f.handles.erase(it);
    bool still = false;
    for (const auto& [k, v] : f.handles) still |= v == g;
    if (!still) g->files.erase(f.id);
    for (auto p = f.prime.begin(); p != f.prime.end();)
        p = p->second == handle ? f.prime.erase(p) : std::next(p);
    if (--g->handles == 0 && g->flink) {
        names_.erase(g->flink);
        g->flink = 0;
    }
    gem_put(g);
    return true;
}

void DrmDevice::gem_put(const std::shared_ptr<Gem>& g) {
    if (--g->refs > 0) return;
    gem_unmap(*g);
    soc_.detach(g->pa);
    soc_.free_phys(g->pa);
    if (g->mmap_offset) offsets_.free(g->mmap_offset);
    objects_.erase(g->id);
}

uint64_t DrmDevice::mmap_offset(Gem& g) {
    if (!g.mmap_offset) g.mmap_offset = offsets_.alloc_low(g.size, kPage).value_or(0);
    return g.mmap_offset;
}

DrmDevice::Stats DrmDevice::stats() const {
    Stats s;
    for (const auto& [id, g] : objects_) {
        ++s.objects;
        s.bytes += g->size;
    }
    s.files = files_.size();
    return s;
}

void DrmDevice::mmap(Session& s, const npx_mmap_req& q, std::shared_ptr<Pending> p) {
    Reply r;
    std::shared_ptr<Gem> g;
    for (const auto& [id, o] : objects_)
        if (o->mmap_offset && q.offset >= o->mmap_offset && q.offset < o->mmap_offset + o->size) g = o;
    const std::string what = fmt::format("mmap(length {}, offset 0x{:x})", q.length, q.offset);
    if (!g || q.length == 0 || q.offset + page_align(q.length) > g->mmap_offset + g->size) {
        r.ret = -EINVAL;
        r.log = fmt_log(s, fmt::format("{}: no buffer object at that offset and size: -EINVAL", what));
    } else if (!g->files.count(s.file->id)) {
        r.ret = -EACCES;
        r.log = fmt_log(s, fmt::format("{}: buffer {} belongs to another file: -EACCES", what, g->id));
    } else if (!mmap_from_start() && (q.flags & MAP_PRIVATE)) {
        r.ret = -EINVAL;  // drm_gem_shmem_mmap: copy-on-write mappings are refused
        r.log = fmt_log(s, fmt::format("{}: MAP_PRIVATE of a shmem buffer: -EINVAL", what));
    } else if (mmap_from_start() && page_align(q.length) > g->size) {
        r.ret = -EINVAL;
    } else {
        r.fd = fcntl(g->mem->fd(), F_DUPFD_CLOEXEC, 0);
        r.memfd_offset = mmap_from_start() ? 0 : q.offset - g->mmap_offset;
        r.force_shared = mmap_from_start();
        if (s.log)
            r.log = fmt_log(s, fmt::format("{} = buffer {} ({} bytes, device address 0x{:x})", what, g->id, g->size,
                                           g->iova));
    }
    if (trace::TraceWriter* tw = soc_.trace())
        tw->instant(track(s), "mmap", SocHost::now_ps(),
                    {trace::arg("offset", fmt::format("0x{:x}", q.offset)), trace::arg("length", q.length),
                     trace::arg("ret", r.ret < 0 ? errno_name(r.ret) : std::string("0"))});
    ++s.calls["mmap"];
    if (r.ret < 0) ++s.errors[fmt::format("mmap {}", errno_name(r.ret))];
    p->complete(std::move(r));
}

void DrmDevice::munmap(Session& s, const npx_munmap_req& q, std::shared_ptr<Pending> p) {
    Reply r;
    if (s.log) r.log = fmt_log(s, fmt::format("munmap(0x{:x}, {}) = 0", q.addr, q.length));
    if (trace::TraceWriter* tw = soc_.trace())
        tw->instant(track(s), "munmap", SocHost::now_ps(), {trace::arg("length", q.length)});
    ++s.calls["munmap"];
    p->complete(std::move(r));
}

// ---- DRM core ioctls ----

int DrmDevice::drm_version(Call& c) {
    auto& v = c.arg<npx_drm_version>();
    v.version_major = drv_major();
    v.version_minor = drv_minor();
    v.version_patchlevel = drv_patch();
    // drm_copy_field: the interposer copies min(len, strlen) bytes (no NUL) into the caller's
    // buffers; the lengths become the full string lengths.
    const std::string strs[3] = {drv_name(), drv_date(), drv_desc()};
    v.name_len = strs[0].size();
    v.date_len = strs[1].size();
    v.desc_len = strs[2].size();
    for (const std::string& x : strs) {
        c.r.extra.insert(c.r.extra.end(), x.begin(), x.end());
        c.r.extra.push_back(0);
    }
    c.result = fmt::format("{} {}.{}.{} {} \"{}\"", strs[0], v.version_major, v.version_minor, v.version_patchlevel,
                           strs[1], strs[2]);
    return 0;
}

int DrmDevice::drm_get_unique(Call& c) {
    auto& u = c.arg<npx_drm_unique>();
    const std::string x = unique();
    u.unique_len = x.size();
    c.r.extra.assign(x.begin(), x.end());
    c.r.extra.push_back(0);
    c.result = x;
    return 0;
}

int DrmDevice::drm_set_version(Call& c) {
    // drm_setversion: interface 1.4, driver major must match and minor not exceed.
    auto& v = c.arg<npx_drm_set_version>();
    int ret = 0;
    if (v.drm_di_major != -1 && (v.drm_di_major != 1 || v.drm_di_minor < 0 || v.drm_di_minor > 4)) ret = -EINVAL;
    if (v.drm_dd_major != -1 && (v.drm_dd_major != drv_major() || v.drm_dd_minor < 0 || v.drm_dd_minor > drv_minor()))
        ret = -EINVAL;
    c.args = fmt::format("di {}.{} dd {}.{}", v.drm_di_major, v.drm_di_minor, v.drm_dd_major, v.drm_dd_minor);
    v.drm_di_major = 1;
    v.drm_di_minor = 4;
    v.drm_dd_major = drv_major();
    v.drm_dd_minor = drv_minor();
    return ret;
}

int DrmDevice::gem_close(Call& c) {
    const auto& a = c.arg<npx_drm_gem_close>();
    c.args = fmt::format("handle {}", a.handle);
    return handle_delete(c.f, a.handle) ? 0 : -EINVAL;
}

int DrmDevice::gem_flink(Call& c) {
    auto& a = c.arg<npx_drm_gem_flink>();
    c.args = fmt::format("handle {}", a.handle);
    std::shared_ptr<Gem> g = lookup(c.f, a.handle);
    if (!g) return -ENOENT;
    if (!g->flink) {
        uint32_t n = 1;  // idr_alloc(&dev->object_name_idr, obj, 1, 0): lowest free name
        for (const auto& [k, v] : names_) {
            if (k != n) break;
            ++n;
        }
        g->flink = n;
        names_[n] = g;
    }
    a.name = g->flink;
    c.result = fmt::format("name {}", a.name);
    return 0;
}

int DrmDevice::gem_open(Call& c) {
    auto& a = c.arg<npx_drm_gem_open>();
    c.args = fmt::format("name {}", a.name);
    auto it = names_.find(a.name);
    std::shared_ptr<Gem> g = it == names_.end() ? nullptr : it->second.lock();
    if (!g) return -ENOENT;
    a.handle = handle_create(c.f, g);
    a.size = g->size;
    c.result = fmt::format("handle {} size {}", a.handle, a.size);
    return 0;
}

int DrmDevice::get_cap(Call& c) {
    // drm_getcap for a driver without DRIVER_MODESET: only these answer, the others -EOPNOTSUPP.
    auto& a = c.arg<npx_drm_get_cap>();
    c.args = fmt::format("cap 0x{:x}", a.capability);
    switch (a.capability) {
        case NPX_DRM_CAP_TIMESTAMP_MONOTONIC: a.value = 1; break;
        case NPX_DRM_CAP_PRIME: a.value = NPX_DRM_PRIME_CAP_IMPORT | NPX_DRM_PRIME_CAP_EXPORT; break;
        case 0x13: /* DRM_CAP_SYNCOBJ */
        case 0x14: /* DRM_CAP_SYNCOBJ_TIMELINE */ a.value = 0; break;
        default: return -EOPNOTSUPP;
    }
    c.result = fmt::format("value {}", a.value);
    return 0;
}

int DrmDevice::set_client_cap(Call& c) {
    c.args = fmt::format("cap 0x{:x}", c.arg<npx_drm_get_cap>().capability);
    return -EOPNOTSUPP;  // every client cap needs DRIVER_MODESET
}

int DrmDevice::prime_handle_to_fd(Call& c) {
    auto& a = c.arg<npx_drm_prime_handle>();
    c.args = fmt::format("handle {} flags 0x{:x}", a.handle, a.flags);
    if (a.flags & ~(NPX_DRM_CLOEXEC | NPX_DRM_RDWR)) return -EINVAL;
    std::shared_ptr<Gem> g = lookup(c.f, a.handle);
    if (!g) return -ENOENT;
    // The dma-buf is the buffer's shared memory itself: mmap-able, recognised when imported.
    c.r.fd = fcntl(g->mem->fd(), F_DUPFD_CLOEXEC, 0);
    if (c.r.fd < 0) return -errno;
    c.r.fd_offset = static_cast<int32_t>(offsetof(npx_drm_prime_handle, fd));
    c.r.cloexec = (a.flags & NPX_DRM_CLOEXEC) != 0;
    c.f.prime[{g->mem->device(), g->mem->inode()}] = a.handle;
    c.result = fmt::format("dma-buf of buffer {}", g->id);
    return 0;
}

int DrmDevice::prime_fd_to_handle(Call& c) {
    auto& a = c.arg<npx_drm_prime_handle>();
    c.args = fmt::format("fd {}", a.fd);
    if (c.in_fd < 0) return -EBADF;
    dev_t dev = 0;
    ino_t ino = 0;
    if (!fd_identity(c.in_fd, dev, ino)) return -EBADF;
    auto cached = c.f.prime.find({dev, ino});
    if (cached != c.f.prime.end() && c.f.handles.count(cached->second)) {
        a.handle = cached->second;
        c.result = fmt::format("handle {} (already imported)", a.handle);
        return 0;
    }
    std::shared_ptr<Gem> g;
    for (const auto& [id, o] : objects_)
        if (o->mem->device() == dev && o->mem->inode() == ino) g = o;
    if (!g) {
        std::string why;
        std::unique_ptr<Backing> b = Backing::import(c.in_fd, why);
        if (!b) {
            explain(c, fmt::format("PRIME import of fd {}: {}: -EINVAL", a.fd, why));
            return -EINVAL;
        }
        g = std::make_shared<Gem>();
        g->id = next_gem_++;
        g->size = g->user_size = b->bytes();
        g->mem = std::move(b);
        g->imported = true;
        const std::optional<uint64_t> pa = soc_.alloc_phys(g->size, false);
        if (!pa) return -ENOMEM;
        g->pa = *pa;
        soc_.attach(g->pa, *g->mem);
        objects_[g->id] = g;
        if (int e = gem_map(c.f, *g); e < 0) {
            soc_.detach(g->pa);
            soc_.free_phys(g->pa);
            objects_.erase(g->id);
            return e;
        }
    }
    a.handle = handle_create(c.f, g);
    c.f.prime[{dev, ino}] = a.handle;
    c.result = fmt::format("handle {} (buffer {}, {} bytes, device address 0x{:x})", a.handle, g->id, g->size, g->iova);
    return 0;
}

}  // namespace sim::exec
