// SPDX-License-Identifier: MIT
#include "exec/rknpu.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "app/task_list.h"
#include "exec/npu_wait.h"
#include "exec/soc.h"
#include "exec/uapi.h"
#include "hw/regdb.h"

namespace sim::exec {

using namespace hw::rknpu;

namespace {
constexpr uint32_t kRW = NPX_IOC_WRITE | NPX_IOC_READ;
constexpr uint32_t kIntClear = 0x1ffff;  // RKNPU_INT_CLEAR
constexpr int kMaxDomains = 16;          // iommu_domain_id range the driver accepts (assumption, docs/exec.md)
// The "kernel pointer" of a buffer (struct rknpu_gem_object *): opaque to user space, which
// passes it back in SUBMIT (task_obj_addr) and MEM_SYNC / MEM_DESTROY (obj_addr).
constexpr uint64_t kObjBase = 0xffffff8000000000ull;

/// Byte counters per SoC (rknpu_drv.c rknpu_config.amount_top): RK3588 has none ("Get rw_amount is
/// not supported on this device"); the others read the top (and core) counters.
bool has_rw_counters(const std::string& soc) {
    return soc == "rk3566" || soc == "rk3568" || soc == "rv1103" || soc == "rv1106" || soc == "rk3562" ||
           soc == "rk3576" || soc == "rv1126b";
}
/// Bandwidth-priority window (rknpu_config.bw_priority_length > 0): only the rk356x config.
bool has_bw_priority(const std::string& soc) { return soc == "rk3566" || soc == "rk3568"; }

std::string flags_text(uint32_t f) {
    std::string s = (f & NPX_RKNPU_JOB_PC) ? "PC" : "SLAVE";
    s += (f & NPX_RKNPU_JOB_NONBLOCK) ? "|NONBLOCK" : "|BLOCK";
    if (f & NPX_RKNPU_JOB_PINGPONG) s += "|PINGPONG";
    if (f & NPX_RKNPU_JOB_FENCE_IN) s += "|FENCE_IN";
    if (f & NPX_RKNPU_JOB_FENCE_OUT) s += "|FENCE_OUT";
    if (f & ~0x1fu) s += fmt::format("|0x{:x}", f & ~0x1fu);
    return s;
}
}  // namespace

struct RknpuDevice::Job {
    uint64_t board = 0, seq = 0;
    std::shared_ptr<Call> call;       ///< blocking submit: the pending ioctl
    std::shared_ptr<DrmFile> file;
    std::string who;
    int track = -1;
    npx_rknpu_submit args{};
    uint32_t mask = 0;
    int wait_core = 0;
    std::shared_ptr<Gem> task_obj;
    int mmu_domain = 0;
    std::map<int, std::vector<RawKick>> kicks;
    std::map<int, uint32_t> counts;  ///< tasks per core (rknpu_get_task_number)
    std::array<uint32_t, 4> int_status{};
    std::map<int, std::pair<size_t, size_t>> marks;  ///< core -> (diagnostics, tasks) at commit
    size_t last_task = SIZE_MAX;
    uint64_t submit_ps = 0, commit_ps = 0, end_ps = 0;
    int cores_left = 0;
    std::set<int> timed_out;
    bool aborted = false;
    std::string abort_why, notes;
    sc_core::sc_event abort_ev;
    uint64_t fence = 0;
    int ret = 0;
};

RknpuDevice::RknpuDevice(SocHost& soc, JobBoard& jobs)
    : DrmDevice(soc, jobs, Kind::Rknpu),
      todo_(static_cast<size_t>(soc.core_count())),
      running_(static_cast<size_t>(soc.core_count())),
      task_num_(static_cast<size_t>(soc.core_count()), 0) {
    auto b = [this](int (RknpuDevice::*fn)(Call&)) {
        return [this, fn](const std::shared_ptr<Call>& c) { return (this->*fn)(*c); };
    };
    // rknpu_ioctls[]: DRM_IOWR, DRM_RENDER_ALLOW.
    ioctls_ = {
        {NPX_RKNPU_NR_ACTION, "RKNPU_ACTION", kRW, sizeof(npx_rknpu_action), true, b(&RknpuDevice::action)},
        {NPX_RKNPU_NR_SUBMIT, "RKNPU_SUBMIT", kRW, sizeof(npx_rknpu_submit), true,
         [this](const std::shared_ptr<Call>& c) { return submit(c); }},
        {NPX_RKNPU_NR_MEM_CREATE, "RKNPU_MEM_CREATE", kRW, sizeof(npx_rknpu_mem_create), true,
         b(&RknpuDevice::mem_create)},
        {NPX_RKNPU_NR_MEM_MAP, "RKNPU_MEM_MAP", kRW, sizeof(npx_rknpu_mem_map), true, b(&RknpuDevice::mem_map)},
        {NPX_RKNPU_NR_MEM_DESTROY, "RKNPU_MEM_DESTROY", kRW, sizeof(npx_rknpu_mem_destroy), true,
         b(&RknpuDevice::mem_destroy)},
        {NPX_RKNPU_NR_MEM_SYNC, "RKNPU_MEM_SYNC", kRW, sizeof(npx_rknpu_mem_sync), true, b(&RknpuDevice::mem_sync)},
    };
}

std::string RknpuDevice::unique() const {
    // The DRM device's parent is the NPU platform device, named after its first register window.
    return fmt::format("{:x}.npu", soc_.soc().npu.core_mmio_bases.value.at(0));
}

RknpuDevice::Domain& RknpuDevice::domain(int id) {
    Domain& d = domains_[id];
    if (!d.iova) {
        d.mmu = soc_.iommu() ? soc_.platform().iommu().create_domain() : 0;
        if (d.mmu) ++soc_iommu_domains_;
        d.iova = std::make_unique<RangeAllocator>(soc_.soc().mem.iova_base.value, soc_.soc().mem.iova_bytes.value);
    }
    return d;
}

int RknpuDevice::map_iova(Gem& g, int domain_id, uint64_t& reserved) {
    if (!soc_.iommu()) {  // without IOMMU the device address is the physical one
        g.iova = g.pa;
        return 0;
    }
    Domain& d = domain(domain_id);
    // dma_limit: the device mask clamped to the domain; new domains are 4 GiB (rknpu_iommu.c).
    const uint64_t limit = std::min<uint64_t>(1ull << 32, soc_.soc().mem.iova_base.value + soc_.soc().mem.iova_bytes.value);
    const std::optional<uint64_t> iova =
        rknpu_alloc_iova(*d.iova, g.size, !(g.flags & NPX_RKNPU_MEM_IOMMU_LIMIT_IOVA_ALIGNMENT), limit, reserved);
    if (!iova) return -ENOMEM;
    std::string why;
    if (!soc_.platform().iommu().map(d.mmu, *iova, g.pa, g.size, &why)) {
        d.iova->free(*iova);
        return -ENOMEM;
    }
    g.iova = *iova;
    g.mmu_domain = d.mmu;
    g.rk_domain_id = domain_id;
    return 0;
}

int RknpuDevice::gem_map(DrmFile&, Gem& g) {
    // A dma-buf import is mapped into the domain that is live at that instant.
    int e = map_iova(g, live_domain_, g.iova_reserved);
    if (e == 0) {
        g.obj_addr = kObjBase + static_cast<uint64_t>(g.id) * 0x400;
        objs_[g.obj_addr] = objects_.at(g.id);
    }
    return e;
}

void RknpuDevice::gem_unmap(Gem& g) {
    objs_.erase(g.obj_addr);
    if (!soc_.iommu()) return;
    auto d = domains_.find(g.rk_domain_id);
    if (d == domains_.end()) return;
    soc_.platform().iommu().unmap(d->second.mmu, g.iova, g.size);
    d->second.iova->free(g.iova);
}

std::shared_ptr<Gem> RknpuDevice::by_obj_addr(uint64_t obj_addr) const {
    auto it = objs_.find(obj_addr);
    return it == objs_.end() ? nullptr : it->second.lock();
}

void RknpuDevice::file_closing(DrmFile& f) {
    for (auto it = fences_.begin(); it != fences_.end();) {
        if (it->second.file == f.id && it->second.signaled) {
            close(it->second.rd);
            close(it->second.wr);
            it = fences_.erase(it);
        } else {
            ++it;
        }
    }
}

// ---- RKNPU_MEM_* ----

int RknpuDevice::mem_create(Call& c) {
    auto& a = c.arg<npx_rknpu_mem_create>();
    c.args = fmt::format("handle {} flags 0x{:x} size {} sram_size {} domain {} core_mask 0x{:x}", a.handle, a.flags,
                         a.size, a.sram_size, a.iommu_domain_id, a.core_mask);
    std::shared_ptr<Gem> g = lookup(c.f, a.handle);  // an existing handle (e.g. a PRIME import): its facts
    if (!g) {
        if (a.size == 0) {
            explain(c, "RKNPU_MEM_CREATE: invalid buffer size: 0 (rknpu_gem_object_create): -EINVAL");
            return -EINVAL;
        }
        if (a.iommu_domain_id < 0 || a.iommu_domain_id >= kMaxDomains) return -EINVAL;
        const uint64_t size = page_align(a.size);
        std::string why;
        g = new_gem(a.size, size, why);
        if (!g) {
            explain(c, fmt::format("RKNPU_MEM_CREATE of {} bytes: {}: -ENOMEM", a.size, why));
            return -ENOMEM;
        }
        g->flags = a.flags;
        if (a.flags & NPX_RKNPU_MEM_TRY_ALLOC_NBUF && soc_.soc().mem.nbuf_bytes.value > 0)
            c.result += "(NBUF not modelled for exec buffers: placed in DDR) ";
        if (int e = map_iova(*g, a.iommu_domain_id, g->iova_reserved); e < 0) {
            ++g->refs;
            gem_put(g);
            return e;
        }
        g->obj_addr = kObjBase + static_cast<uint64_t>(g->id) * 0x400;
        objs_[g->obj_addr] = g;
        a.handle = handle_create(c.f, g);
    }
    a.size = g->size;
    a.sram_size = 0;
    a.obj_addr = g->obj_addr;
    a.dma_addr = g->iova;
    c.result += fmt::format("handle {} size {} dma_addr 0x{:x} obj_addr 0x{:x}", a.handle, a.size, a.dma_addr, a.obj_addr);
    return 0;
}

int RknpuDevice::mem_map(Call& c) {
    auto& a = c.arg<npx_rknpu_mem_map>();
    c.args = fmt::format("handle {}", a.handle);
    std::shared_ptr<Gem> g = lookup(c.f, a.handle);
    if (!g) return -ENOENT;            // drm_gem_dumb_map_offset
    if (g->imported) return -EINVAL;   // "Don't allow imported objects to be mapped"
    a.offset = mmap_offset(*g);
    c.result = fmt::format("offset 0x{:x}", a.offset);
    return 0;
}

int RknpuDevice::mem_destroy(Call& c) {
    const auto& a = c.arg<npx_rknpu_mem_destroy>();
    c.args = fmt::format("handle {} obj_addr 0x{:x}", a.handle, a.obj_addr);
    if (!lookup(c.f, a.handle)) return -EINVAL;
    handle_delete(c.f, a.handle);
    return 0;
}

int RknpuDevice::mem_sync(Call& c) {
    const auto& a = c.arg<npx_rknpu_mem_sync>();
    c.args = fmt::format("flags 0x{:x} obj_addr 0x{:x} offset {} size {}", a.flags, a.obj_addr, a.offset, a.size);
    if (!a.obj_addr) return -EINVAL;
    std::shared_ptr<Gem> g = by_obj_addr(a.obj_addr);
    if (!g) {
        explain(c, fmt::format("RKNPU_MEM_SYNC: obj_addr 0x{:x} names no buffer (the vendor kernel would dereference "
                               "it): -EINVAL",
                               a.obj_addr));
        return -EINVAL;
    }
    if (!(g->flags & NPX_RKNPU_MEM_CACHEABLE)) return -EINVAL;  // only cacheable buffers sync
    // The buffer is coherent shared memory: nothing to clean or invalidate.
    return 0;
}

// ---- RKNPU_ACTION ----

int RknpuDevice::action(Call& c) {
    auto& a = c.arg<npx_rknpu_action>();
    const hw::SocProfile& p = soc_.soc();
    c.args = fmt::format("flags {} value {}", a.flags, a.value);
    const bool counters = has_rw_counters(p.name);
    auto traffic = [&](bool write) {
        uint64_t n = 0;
        for (int i = 0; i < soc_.core_count(); ++i)
            for (const auto& t : soc_.platform().core(i).tasks()) n += write ? t.bytes_written : t.bytes_read;
        return n;
    };
    int ret = 0;
    switch (a.flags) {
        case NPX_RKNPU_GET_HW_VERSION:
            a.value = soc_.hal().reg_read32(0, 0x0) + (soc_.hal().reg_read32(0, 0x4) & 0xffff);
            break;
        case NPX_RKNPU_GET_DRV_VERSION: a.value = kMajor * 10000 + kMinor * 100 + kPatch; break;
        case NPX_RKNPU_GET_FREQ: a.value = static_cast<uint32_t>(p.npu.core_clock_hz.value); break;
        case NPX_RKNPU_GET_VOLT:
            a.value = 0;
            c.result = "(voltage: not in the profile) ";
            break;
        case NPX_RKNPU_SET_FREQ:
        case NPX_RKNPU_SET_VOLT: ret = -EINVAL; break;  // rknpu_action: these break with ret -EINVAL
        case NPX_RKNPU_ACT_RESET: soft_reset(fmt::format("RKNPU_ACT_RESET from client {}", c.s.client_no)); break;
        case NPX_RKNPU_GET_BW_PRIORITY:
        case NPX_RKNPU_GET_BW_EXPECT:
        case NPX_RKNPU_GET_BW_TW:
            if (has_bw_priority(p.name))
                a.value = 0;
            else
                ret = -EINVAL;
            break;
        case NPX_RKNPU_SET_BW_PRIORITY:
        case NPX_RKNPU_SET_BW_EXPECT:
        case NPX_RKNPU_SET_BW_TW: ret = has_bw_priority(p.name) ? 0 : -EINVAL; break;
        case NPX_RKNPU_ACT_CLR_TOTAL_RW_AMOUNT:
            if (counters) {
                rw_base_rd_ = traffic(false);
                rw_base_wr_ = traffic(true);
            }
            break;
        case NPX_RKNPU_GET_DT_WR_AMOUNT:
        case NPX_RKNPU_GET_DT_RD_AMOUNT:
        case NPX_RKNPU_GET_WT_RD_AMOUNT:
        case NPX_RKNPU_GET_TOTAL_RW_AMOUNT:
            if (!counters) {
                c.result = "(no byte counters on this SoC: value unchanged) ";
                break;
            }
            if (a.flags == NPX_RKNPU_GET_DT_WR_AMOUNT) a.value = static_cast<uint32_t>(traffic(true) - rw_base_wr_);
            // The model counts all DMA reads together: they are reported as data reads.
            if (a.flags == NPX_RKNPU_GET_DT_RD_AMOUNT) a.value = static_cast<uint32_t>(traffic(false) - rw_base_rd_);
            if (a.flags == NPX_RKNPU_GET_WT_RD_AMOUNT) a.value = 0;
            if (a.flags == NPX_RKNPU_GET_TOTAL_RW_AMOUNT)
                a.value = static_cast<uint32_t>(traffic(true) - rw_base_wr_ + traffic(false) - rw_base_rd_);
            break;
        case NPX_RKNPU_GET_IOMMU_EN: a.value = soc_.iommu() ? 1 : 0; break;
        case NPX_RKNPU_SET_PROC_NICE:
        case NPX_RKNPU_POWER_ON:
        case NPX_RKNPU_POWER_OFF: break;
        case NPX_RKNPU_GET_TOTAL_SRAM_SIZE:
        case NPX_RKNPU_GET_FREE_SRAM_SIZE: a.value = 0; break;  // no "rockchip,sram" region
        case NPX_RKNPU_GET_IOMMU_DOMAIN_ID: a.value = static_cast<uint32_t>(live_domain_); break;
        case NPX_RKNPU_SET_IOMMU_DOMAIN_ID: {
            const auto id = static_cast<int32_t>(a.value);
            if (id < 0 || id >= kMaxDomains) {
                ret = -EINVAL;
                break;
            }
            live_domain_ = id;
            domain(id);
            break;
        }
        default: ret = -EINVAL; break;
    }
    c.result += fmt::format("value {} (0x{:x})", a.value, a.value);
    return ret;
}

// ---- RKNPU_SUBMIT ----

uint32_t RknpuDevice::task_count_of(const Job& j, int core) const {
    auto it = j.counts.find(core);
    return it == j.counts.end() ? 0 : it->second;
}

int RknpuDevice::submit(const std::shared_ptr<Call>& cp) {
    Call& c = *cp;
    auto& a = c.arg<npx_rknpu_submit>();
    std::string sub;
    for (const auto& st : a.subcore_task) sub += fmt::format(" {}+{}", st.task_start, st.task_number);
    c.args = fmt::format("flags {} timeout {} ms task {}+{} core_mask 0x{:x} task_obj 0x{:x} domain {} subcore[{} ]",
                         flags_text(a.flags), a.timeout, a.task_start, a.task_number, a.core_mask, a.task_obj_addr,
                         a.iommu_domain_id, sub);
    const int ncores = soc_.core_count();
    if (a.task_number == 0) {
        explain(c, "RKNPU_SUBMIT: invalid rknpu task number 0: -EINVAL");
        return -EINVAL;
    }
    if (a.core_mask > soc_.core_mask()) {
        explain(c, fmt::format("RKNPU_SUBMIT: invalid rknpu core mask 0x{:x} (this SoC: 0x{:x}): -EINVAL", a.core_mask,
                               soc_.core_mask()));
        return -EINVAL;
    }
    uint64_t fence_in = 0;
    if (a.flags & NPX_RKNPU_JOB_FENCE_IN) {
        dev_t dev = 0;
        ino_t ino = 0;
        if (c.in_fd < 0 || !fd_identity(c.in_fd, dev, ino) || !fences_.count(ino)) {
            explain(c, fmt::format("RKNPU_SUBMIT: invalid fence in fd {}: -EINVAL", a.fence_fd));
            return -EINVAL;
        }
        fence_in = ino;  // a fence of this driver's own context: the kernel does not wait for it
        a.fence_fd = -1;
    }
    if (!(a.flags & NPX_RKNPU_JOB_PC)) {
        explain(c, "RKNPU_SUBMIT: slave mode (no RKNPU_JOB_PC) is not supported by the driver: -EINVAL");
        return -EINVAL;
    }
    std::shared_ptr<Gem> tobj = by_obj_addr(a.task_obj_addr);
    if (!tobj) {
        explain(c, fmt::format("RKNPU_SUBMIT: task_obj_addr 0x{:x} names no buffer (0: the kernel's commit fails and the "
                               "submit returns -EINVAL after the timeout; other values it would dereference): -EINVAL",
                               a.task_obj_addr));
        return -EINVAL;
    }
    if (!(tobj->flags & NPX_RKNPU_MEM_KERNEL_MAPPING)) {
        explain(c, "RKNPU_SUBMIT: the task buffer was created without RKNPU_MEM_KERNEL_MAPPING: the vendor kernel reads "
                   "the tasks through its kernel mapping, which is NULL (an oops on a board): -EINVAL");
        return -EINVAL;
    }
    if (a.task_base_addr != 0) {
        explain(c, fmt::format("RKNPU_SUBMIT: task_base_addr 0x{:x}: TASK_DMA_BASE_ADDR offsets are not modelled by "
                               "npusim (every public runtime submits 0): -EINVAL",
                               a.task_base_addr));
        return -EINVAL;
    }
    if (a.iommu_domain_id >= static_cast<uint32_t>(kMaxDomains)) return -EINVAL;
    // Core selection (rknpu_job_schedule): AUTO takes the core with the fewest queued tasks.
    uint32_t mask = ncores == 1 ? 1u : a.core_mask;
    if (mask == 0) {
        int best = -1;
        for (int i = 0; i < ncores; ++i)
            if ((soc_.core_mask() >> i & 1u) && (best < 0 || task_num_[static_cast<size_t>(i)] < task_num_[static_cast<size_t>(best)]))
                best = i;
        mask = 1u << best;
    }
    const bool known = mask == 1 || mask == 2 || mask == 4 || mask == 3 || mask == 7;
    if (!known || (mask & ~soc_.core_mask())) {
        explain(c, fmt::format("RKNPU_SUBMIT: core mask 0x{:x}: rknpu_job_commit kicks no core for it (the kernel "
                               "returns -EINVAL after the {} ms timeout): -EINVAL",
                               mask, a.timeout));
        return -EINVAL;
    }
    // The tasks as the kernel reads them through the task buffer, and the kicks it makes.
    TaskList tl;
    const size_t avail = tobj->size / sizeof(npx_rknpu_task);
    tl.tasks.resize(avail);
    for (size_t i = 0; i < avail; ++i) {
        npx_rknpu_task t;
        std::memcpy(&t, tobj->mem->data() + i * sizeof t, sizeof t);
        tl.tasks[i] = RknpuTask{t.flags, t.op_idx, t.enable_mask, t.int_mask, t.int_clear, t.int_status,
                                t.regcfg_amount, t.regcfg_offset, t.regcmd_addr};
    }
    RknpuSubmit rs;
    rs.flags = a.flags;
    rs.task_start = a.task_start;
    rs.task_number = a.task_number;
    rs.core_mask = mask;
    for (int i = 0; i < 5; ++i) {
        rs.subcore_task[i][0] = a.subcore_task[i].task_start;
        rs.subcore_task[i][1] = a.subcore_task[i].task_number;
    }
    tl.submit = rs;
    auto j = std::make_shared<Job>();
    try {
        for (const RawKick& k : kicks_of(tl, mask, soc_.soc(), {}, 0)) j->kicks[k.core].push_back(k);
    } catch (const std::invalid_argument& e) {
        explain(c, fmt::format("RKNPU_SUBMIT: {} (the task buffer holds {} tasks; the vendor kernel reads past it): "
                               "-EINVAL",
                               e.what(), avail));
        return -EINVAL;
    }
    const int used = __builtin_popcount(mask);
    for (int i = 0; i < ncores; ++i) {
        if (!(mask >> i & 1u)) continue;
        const uint32_t n = ncores == 1 ? a.task_number
                                       : a.subcore_task[used == 3 ? i + 2 : i].task_number;  // rknpu_get_task_number
        j->counts[i] = n;
        if (j->kicks[i].empty())
            j->notes += fmt::format("core {}: 0 tasks (subcore_task[{}]); the vendor driver still kicks it with "
                                    "TASK_NUMBER 0, whose hardware behaviour is not public: npusim counts the core as done\n",
                                    i, used == 3 ? i + 2 : i);
    }
    j->board = jobs_.add();
    j->seq = ++submits_;
    j->file = c.s.file;
    j->who = fmt::format("client {} ({} pid {})", c.s.client_no, c.s.comm, c.s.pid);
    j->track = track(c.s);
    j->args = a;
    j->mask = mask;
    j->wait_core = mask == 2 ? 1 : mask == 4 ? 2 : 0;  // rknpu_wait_core_index
    j->task_obj = tobj;
    gem_get(*tobj);
    j->mmu_domain = soc_.iommu() ? domain(static_cast<int>(a.iommu_domain_id)).mmu : 0;
    j->submit_ps = SocHost::now_ps();
    (void)fence_in;
    if (a.flags & NPX_RKNPU_JOB_FENCE_OUT) {
        int p[2];
        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return -ENOMEM;
        dev_t dev = 0;
        ino_t ino = 0;
        fd_identity(p[0], dev, ino);
        fences_[ino] = Fence{p[0], p[1], false, c.f.id};
        j->fence = ino;
        c.r.fd = fcntl(p[0], F_DUPFD_CLOEXEC, 0);
        c.r.fd_offset = static_cast<int32_t>(offsetof(npx_rknpu_submit, fence_fd));
        c.r.cloexec = true;
    }
    for (const auto& [core, n] : j->counts) {
        todo_[static_cast<size_t>(core)].push_back(j);
        task_num_[static_cast<size_t>(core)] += n;
    }
    if (!(a.flags & NPX_RKNPU_JOB_NONBLOCK)) {
        j->call = cp;
        c.deferred = true;
    } else {
        c.result = fmt::format("job {} queued", j->seq);
    }
    schedule();
    return 0;
}

void RknpuDevice::schedule() {
    // A job starts when it heads the queue of every core it uses and those cores are idle
    // (rknpu_job_next: the commit happens when the last of its cores takes it).
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t core = 0; core < todo_.size(); ++core) {
            if (running_[core] || todo_[core].empty()) continue;
            std::shared_ptr<Job> j = todo_[core].front();
            bool ready = true;
            for (const auto& [c, n] : j->counts)
                ready &= !running_[static_cast<size_t>(c)] && !todo_[static_cast<size_t>(c)].empty() &&
                         todo_[static_cast<size_t>(c)].front() == j;
            if (!ready) continue;
            for (const auto& [c, n] : j->counts) {
                todo_[static_cast<size_t>(c)].pop_front();
                running_[static_cast<size_t>(c)] = j;
            }
            start(j);
            progress = true;
        }
    }
}

void RknpuDevice::start(const std::shared_ptr<Job>& j) {
    j->commit_ps = SocHost::now_ps();
    j->cores_left = 0;
    for (const auto& [c, n] : j->counts) {
        if (j->kicks[c].empty()) continue;
        ++j->cores_left;
        j->marks[c] = {soc_.platform().core(c).diagnostics().size(), soc_.platform().core(c).tasks().size()};
    }
    if (j->cores_left == 0) {
        job_done(j);
        return;
    }
    // rknpu_job_commit: the cores' first kicks in core order from one thread (job->last_task ends
    // on the last core's), then each core waits for its interrupts on its own.
    sc_core::sc_spawn([this, j] {
        for (auto& [c, n] : j->counts) {
            if (j->kicks[c].empty()) continue;
            const RawKick& k = j->kicks[c].front();
            soc_.platform().iommu().attach(c, j->mmu_domain);
            kick_pc(soc_.hal(), soc_.soc(), k);
            j->last_task = k.first_task + k.task_number - 1;
        }
        for (const auto& [c, n] : j->counts) {
            if (j->kicks[c].empty()) continue;
            const int core = c;
            sc_core::sc_spawn([this, j, core] { run_core(j, core); });
        }
    });
}

void RknpuDevice::run_core(std::shared_ptr<Job> j, int core) {
    SimHal& hal = soc_.hal();
    const uint64_t deadline = j->commit_ps + static_cast<uint64_t>(j->args.timeout) * 1000000000ull;
    for (size_t ki = 0; ki < j->kicks[core].size(); ++ki) {
        const RawKick& k = j->kicks[core][ki];
        if (j->aborted) break;
        if (ki > 0) {  // a submit split at max_submit_number: rknpu_job_done commits the next part
            soc_.platform().iommu().attach(core, j->mmu_domain);
            kick_pc(hal, soc_.soc(), k);
            j->last_task = k.first_task + k.task_number - 1;  // job->last_task of the latest commit
        }
        bool done = false;
        while (!done) {
            const WaitResult w = wait_core_irq(soc_, core, deadline, j->abort_ev, j->aborted);
            if (w == WaitResult::Aborted) break;
            if (w == WaitResult::Timeout) {
                j->timed_out.insert(core);
                break;
            }
            // rknpu_irq_handler: the folded status must equal the last task's int_mask.
            const uint32_t st = hal.reg_read32(core, PC_INTERRUPT_STATUS::kOffset);
            j->int_status[static_cast<size_t>(core)] = st;
            hal.reg_write32(core, PC_INTERRUPT_CLEAR::kOffset, kIntClear);
            settle_irq(soc_, core);
            if (fold_status(st) == k.int_mask) {
                done = true;
            } else {
                j->notes += fmt::format("core {}: invalid irq status {}, require mask 0x{:x} (rknpu_irq_handler clears "
                                        "it and the job keeps waiting)\n",
                                        core, status_text(st), k.int_mask);
            }
        }
        if (!done) break;
    }
    if (--j->cores_left == 0) job_done(j);
}

void RknpuDevice::job_done(const std::shared_ptr<Job>& j) {
    j->end_ps = SocHost::now_ps();
    npx_rknpu_submit& a = j->call ? j->call->arg<npx_rknpu_submit>() : j->args;
    const uint32_t tmask = (1u << soc_.soc().npu.pc_task_number_bits.value) - 1u;
    // rknpu_job_wait: last_task->int_status = job->int_status[core_index], through the kernel
    // mapping of the task buffer (user space reads it back from its mapping).
    if (j->last_task != SIZE_MAX && (j->last_task + 1) * sizeof(npx_rknpu_task) <= j->task_obj->size)
        std::memcpy(j->task_obj->mem->data() + j->last_task * sizeof(npx_rknpu_task) + offsetof(npx_rknpu_task, int_status),
                    &j->int_status[static_cast<size_t>(j->wait_core)], 4);
    std::string explain_text;
    if (j->aborted) {
        j->ret = -EINVAL;
        explain_text = fmt::format("RKNPU job {} of {} aborted by a soft reset ({}): the waiter finds it not done: -EINVAL",
                                   j->seq, j->who, j->abort_why);
    } else if (!j->timed_out.empty()) {
        j->ret = -ETIMEDOUT;
        a.task_counter = soc_.hal().reg_read32(j->wait_core, soc_.soc().npu.pc_task_status_offset.value) & tmask;
        explain_text = fmt::format("RKNPU job {} of {} timed out: no matching interrupt within {} ms (simulated) on "
                                   "core(s)",
                                   j->seq, j->who, j->args.timeout);
        for (int core : j->timed_out) explain_text += fmt::format(" {}", core);
        explain_text += fmt::format("; task_counter {}, last task {} int_status {}; the kernel returns -ETIMEDOUT and "
                                    "soft-resets the NPU\n",
                                    a.task_counter, j->last_task, status_text(j->int_status[static_cast<size_t>(j->wait_core)]));
        for (int core : j->timed_out) {
            const RawKick& k = j->kicks[core].front();
            explain_text += fmt::format("  core {}: kick of tasks {}..{} (first regcmd 0x{:x}, int_mask 0x{:x})\n", core,
                                        k.first_task, k.first_task + k.task_number - 1, k.addr, k.int_mask);
            explain_text += explain_core(soc_, core, j->marks[core].first, j->marks[core].second, "  ");
        }
        if (!j->notes.empty()) explain_text += j->notes;
    } else {
        j->ret = 0;
        a.task_counter = a.task_number;
        a.hw_elapse_time = static_cast<int64_t>((j->end_ps - j->commit_ps) / 1000);
    }
    // Faults the model reported in a job that still completed are worth a line too.
    if (j->ret == 0) {
        for (const auto& [core, m] : j->marks) {
            const auto& d = soc_.platform().core(core).diagnostics();
            for (size_t i = m.first; i < d.size(); ++i)
                explain_text += fmt::format("RKNPU job {} of {}: core {}: model: {}\n", j->seq, j->who, core, d[i]);
        }
    }
    for (const auto& [c, n] : j->counts) {
        if (running_[static_cast<size_t>(c)] == j) running_[static_cast<size_t>(c)] = nullptr;
        task_num_[static_cast<size_t>(c)] -= n;
    }
    if (trace::TraceWriter* tw = soc_.trace()) {
        std::vector<trace::Arg> ta = {trace::arg("core_mask", fmt::format("0x{:x}", j->mask)),
                                      trace::arg("task_number", static_cast<uint64_t>(j->args.task_number)),
                                      trace::arg("ret", j->ret < 0 ? errno_name(j->ret) : std::string("0"))};
        if (j->commit_ps > j->submit_ps)
            tw->complete(j->track, fmt::format("RKNPU job {} queued", j->seq), j->submit_ps, j->commit_ps - j->submit_ps,
                         {}, "job");
        tw->complete(j->track, fmt::format("RKNPU job {}", j->seq), j->commit_ps, j->end_ps - j->commit_ps, ta, "job");
    }
    if (history_) job_reports_.push_back(fmt::format(
        "{{\"job\": {}, \"client\": {}, \"driver\": \"rknpu\", \"core_mask\": {}, \"task_number\": {}, \"timeout_ms\": {}, "
        "\"submit_ns\": {}, \"start_ns\": {}, \"end_ns\": {}, \"ret\": \"{}\", \"int_status\": {}}}",
        j->seq, j->file->client_no, j->mask, j->args.task_number, j->args.timeout, j->submit_ps / 1000, j->commit_ps / 1000,
        j->end_ps / 1000, j->ret < 0 ? errno_name(j->ret) : "0", j->int_status[static_cast<size_t>(j->wait_core)]));
    if (j->fence) signal_fence(j->fence);
    jobs_.finish(j->board);
    gem_put(j->task_obj);
    if (j->call) {
        Call& c = *j->call;
        c.r.ret = j->ret;
        if (!explain_text.empty()) c.r.log += fmt_log(j->who, explain_text);
        c.result = j->ret == 0 ? fmt::format("task_counter {} hw_elapse_time {} ns int_status {}", a.task_counter,
                                             a.hw_elapse_time, status_text(j->int_status[static_cast<size_t>(j->wait_core)]))
                               : fmt::format("task_counter {}", a.task_counter);
        finish(c);
    } else if (!explain_text.empty()) {
        j->file->pending_log += fmt_log(j->who, explain_text);
    }
    if (j->ret == -ETIMEDOUT) soft_reset(fmt::format("timeout of RKNPU job {}", j->seq));
    schedule();
}

void RknpuDevice::soft_reset(const std::string& why) {
    // rknpu_soft_reset resets the whole NPU: jobs running on any core are woken and fail.
    for (auto& r : running_) {
        if (!r || r->aborted) continue;
        r->aborted = true;
        r->abort_why = why;
        r->abort_ev.notify(sc_core::SC_ZERO_TIME);
    }
    for (int c = 0; c < soc_.core_count(); ++c) soc_.hal().reset(c);
}

void RknpuDevice::signal_fence(uint64_t key) {
    auto it = fences_.find(key);
    if (it == fences_.end() || it->second.signaled) return;
    const char one = 1;
    if (write(it->second.wr, &one, 1) != 1) return;
    it->second.signaled = true;
    if (!files_.count(it->second.file)) {  // the file closed while the job ran: nobody can pass it back
        close(it->second.rd);
        close(it->second.wr);
        fences_.erase(it);
    }
}

std::string RknpuDevice::report_json() const {
    std::string s = "[";
    for (size_t i = 0; i < job_reports_.size(); ++i) s += (i ? ",\n    " : "\n    ") + job_reports_[i];
    return s + (job_reports_.empty() ? "]" : "\n  ]");
}

}  // namespace sim::exec
