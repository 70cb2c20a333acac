// SPDX-License-Identifier: MIT
#include "exec/rocket.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "app/replay.h"
#include "exec/npu_wait.h"
#include "exec/soc.h"
#include "hw/regdb.h"

namespace sim::exec {

using namespace hw::rknpu;

namespace {
constexpr uint32_t kRW = NPX_IOC_WRITE | NPX_IOC_READ;
constexpr uint64_t kJobTimeoutPs = 500ull * 1000000000ull;  // JOB_TIMEOUT_MS 500 (rocket_job.c)
constexpr uint32_t kDpuBits = 0x300;                        // PC_INTERRUPT_*_DPU_0 | DPU_1
}  // namespace

struct RocketDevice::Job {
    uint64_t board = 0, seq = 0;
    std::shared_ptr<DrmFile> file;
    std::string who;
    int track = -1;
    std::vector<npx_rocket_task> tasks;
    std::vector<std::shared_ptr<Gem>> in, out;
    uint64_t submit_ps = 0, start_ps = 0, end_ps = 0;
    int core = -1;
    bool timed_out = false;
    size_t tasks_done = 0;
};

RocketDevice::RocketDevice(SocHost& soc, JobBoard& jobs)
    : DrmDevice(soc, jobs, Kind::Rocket),
      queue_(static_cast<size_t>(soc.core_count())),
      running_(static_cast<size_t>(soc.core_count())) {
    auto b = [this](int (RocketDevice::*fn)(Call&)) {
        return [this, fn](const std::shared_ptr<Call>& c) { return (this->*fn)(*c); };
    };
    // rocket_drm_driver_ioctls[] (flags 0: accel nodes have no render restriction).
    ioctls_ = {
        {NPX_ROCKET_NR_CREATE_BO, "DRM_IOCTL_ROCKET_CREATE_BO", kRW, sizeof(npx_rocket_create_bo), true,
         b(&RocketDevice::create_bo)},
        {NPX_ROCKET_NR_SUBMIT, "DRM_IOCTL_ROCKET_SUBMIT", NPX_IOC_WRITE, sizeof(npx_rocket_submit), true,
         b(&RocketDevice::submit)},
        {NPX_ROCKET_NR_PREP_BO, "DRM_IOCTL_ROCKET_PREP_BO", NPX_IOC_WRITE, sizeof(npx_rocket_prep_bo), true,
         b(&RocketDevice::prep_bo)},
        {NPX_ROCKET_NR_FINI_BO, "DRM_IOCTL_ROCKET_FINI_BO", NPX_IOC_WRITE, sizeof(npx_rocket_fini_bo), true,
         b(&RocketDevice::fini_bo)},
    };
}

void RocketDevice::file_opened(DrmFile& f) {
    // rocket_open: a paging domain per file and a drm_mm over its aperture (0 .. 4 GiB - 1 on the
    // Rockchip IOMMU).
    f.mmu_domain = soc_.iommu() ? soc_.platform().iommu().create_domain() : 0;
    f.mm = std::make_unique<RangeAllocator>(soc_.soc().mem.iova_base.value, soc_.soc().mem.iova_bytes.value);
}

void RocketDevice::file_closing(DrmFile& f) {
    // rocket_postclose drops the file's reference to its domain; its jobs hold theirs
    // (rocket_iommu_domain_get in rocket_job_push), so the domain goes when the last job ends. A
    // buffer of the file another file opened by name keeps an IOVA no job of that file can use
    // (its jobs run in their own domain), so nothing observable waits for it.
    closed_.insert(f.id);
    release_if_idle(f);
}

void RocketDevice::release_if_idle(DrmFile& f) {
    if (!closed_.count(f.id) || file_busy_[f.id] > 0) return;
    if (soc_.iommu() && f.mmu_domain) soc_.platform().iommu().destroy_domain(f.mmu_domain);
    f.mmu_domain = 0;
    closed_.erase(f.id);
    file_busy_.erase(f.id);
    file_core_.erase(f.id);
}

int RocketDevice::gem_map(DrmFile& f, Gem& g) {
    const std::optional<uint64_t> at = f.mm->alloc_best(g.user_size, kPage);
    if (!at) return -ENOSPC;
    if (soc_.iommu()) {
        std::string why;
        if (!soc_.platform().iommu().map(f.mmu_domain, *at, g.pa, g.size, &why)) {
            f.mm->free(*at);
            return -ENOMEM;
        }
    }
    g.iova = *at;
    g.mmu_domain = f.mmu_domain;
    g.owner = files_.at(f.id);
    return 0;
}

void RocketDevice::gem_unmap(Gem& g) {
    if (soc_.iommu()) soc_.platform().iommu().unmap(g.mmu_domain, g.iova, g.size);
    if (std::shared_ptr<DrmFile> f = g.owner.lock()) f->mm->free(g.iova);
}

int RocketDevice::create_bo(Call& c) {
    auto& a = c.arg<npx_rocket_create_bo>();
    c.args = fmt::format("size {}", a.size);
    if (a.size == 0) return -EINVAL;
    std::string why;
    std::shared_ptr<Gem> g = new_gem(a.size, page_align(a.size), why);
    if (!g) {
        explain(c, fmt::format("CREATE_BO of {} bytes: {}: -ENOMEM", a.size, why));
        return -ENOMEM;
    }
    if (int e = gem_map(c.f, *g); e < 0) {
        ++g->refs;
        gem_put(g);
        return e;
    }
    a.handle = handle_create(c.f, g);
    a.dma_address = g->iova;
    a.offset = mmap_offset(*g);
    c.result = fmt::format("handle {} dma_address 0x{:x} offset 0x{:x}", a.handle, a.dma_address, a.offset);
    return 0;
}

int RocketDevice::submit(Call& c) {
    const auto& a = c.arg<npx_rocket_submit>();
    c.args = fmt::format("jobs {} job_struct_size {}", a.job_count, a.job_struct_size);
    if (a.job_count == 0) return 0;
    if (a.job_struct_size < sizeof(npx_rocket_job)) return -EINVAL;
    if (a.reserved != 0) return -EINVAL;
    if (c.extra.size() < sizeof(npx_rocket_blob)) return -EFAULT;
    npx_rocket_blob blob;
    std::memcpy(&blob, c.extra.data(), sizeof blob);
    if (blob.jobs_fault) return -EFAULT;
    size_t at = sizeof blob;
    uint32_t queued = 0;
    for (uint32_t i = 0; i < blob.job_count; ++i) {
        npx_rocket_job_blob jb;
        // rocket_ioctl_submit: a job struct that cannot be read ends the loop with -EFAULT; the
        // jobs pushed before it stay queued on the scheduler and run.
        if (at + sizeof jb > c.extra.size()) {
            schedule();
            return -EFAULT;
        }
        std::memcpy(&jb, c.extra.data() + at, sizeof jb);
        at += sizeof jb;
        const size_t need = jb.task_count * sizeof(npx_rocket_task) + (jb.in_count + jb.out_count) * 4ull;
        if (at + need > c.extra.size()) {
            schedule();
            return -EFAULT;
        }
        const uint8_t* p = c.extra.data() + at;
        at += need;
        // rocket_ioctl_submit_job: its errors are not returned (rocket_ioctl_submit ignores them).
        auto drop = [&](const std::string& why) {
            explain(c, fmt::format("SUBMIT job {}: {}; the driver drops the job and the ioctl still returns 0", i, why));
        };
        if (jb.task_count == 0) {
            drop("task_count 0 (-EINVAL)");
            continue;
        }
        if (jb.task_struct_size < sizeof(npx_rocket_task)) {
            drop(fmt::format("task_struct_size {} (-EINVAL)", jb.task_struct_size));
            continue;
        }
        if (jb.status == NPX_ROCKET_JOB_TASKS_FAULT) {
            drop("the tasks array cannot be read (-EFAULT)");
            continue;
        }
        auto j = std::make_shared<Job>();
        j->tasks.resize(jb.task_count);
        std::memcpy(j->tasks.data(), p, jb.task_count * sizeof(npx_rocket_task));
        p += jb.task_count * sizeof(npx_rocket_task);
        bool bad = false;
        for (const auto& t : j->tasks) bad |= t.regcmd_count == 0;
        if (bad) {
            drop("a task with regcmd_count 0 (-EINVAL)");
            continue;
        }
        if (jb.status == NPX_ROCKET_JOB_HANDLES_FAULT) {
            drop("a BO handle array cannot be read (-EFAULT)");
            continue;
        }
        auto handles = [&](uint32_t n, std::vector<std::shared_ptr<Gem>>& v) {
            for (uint32_t k = 0; k < n; ++k) {
                uint32_t h;
                std::memcpy(&h, p + 4 * k, 4);
                std::shared_ptr<Gem> g = lookup(c.f, h);
                if (!g) return false;
                v.push_back(g);
            }
            p += 4ull * n;
            return true;
        };
        if (!handles(jb.in_count, j->in) || !handles(jb.out_count, j->out)) {
            drop("an unknown BO handle (-ENOENT)");
            continue;
        }
        for (auto& g : j->in) gem_get(*g);
        for (auto& g : j->out) gem_get(*g);
        j->board = jobs_.add();
        j->seq = ++submits_;
        j->file = c.s.file;
        j->who = fmt::format("client {} ({} pid {})", c.s.client_no, c.s.comm, c.s.pid);
        j->track = track(c.s);
        j->submit_ps = SocHost::now_ps();
        // The file's scheduler entity stays on one core while it has jobs (drm_sched_entity);
        // an idle entity goes to the least loaded core.
        int core = -1;
        if (file_busy_[c.f.id] > 0) {
            core = file_core_[c.f.id];
        } else {
            size_t best = SIZE_MAX;
            for (int k = 0; k < soc_.core_count(); ++k) {
                if (!(soc_.core_mask() >> k & 1u)) continue;
                const size_t load = queue_[static_cast<size_t>(k)].size() + (running_[static_cast<size_t>(k)] ? 1 : 0);
                if (load < best) {
                    best = load;
                    core = k;
                }
            }
        }
        j->core = core;
        file_core_[c.f.id] = core;
        ++file_busy_[c.f.id];
        queue_[static_cast<size_t>(core)].push_back(j);
        unfinished_.push_back(j);
        ++queued;
    }
    c.result = fmt::format("{} job(s) queued", queued);
    schedule();
    return 0;
}

void RocketDevice::schedule() {
    for (size_t core = 0; core < queue_.size(); ++core) {
        if (running_[core] || queue_[core].empty()) continue;
        std::shared_ptr<Job> j = queue_[core].front();
        // Implicit fences: wait for earlier unfinished jobs that write one of this job's buffers.
        bool blocked = false;
        for (const auto& u : unfinished_) {
            if (u == j) break;
            for (const auto& w : u->out) {
                for (const auto& g : j->in) blocked |= g == w;
                for (const auto& g : j->out) blocked |= g == w;
            }
        }
        if (blocked) continue;
        queue_[core].pop_front();
        running_[core] = j;
        const int c = static_cast<int>(core);
        sc_core::sc_spawn([this, j, c] { run(j, c); });
    }
}

void RocketDevice::run(std::shared_ptr<Job> j, int core) {
    SimHal& hal = soc_.hal();
    npu::tlm_models::RknpuCore& model = soc_.platform().core(core);
    const size_t diag0 = model.diagnostics().size(), task0 = model.tasks().size();
    j->start_ps = SocHost::now_ps();
    const uint64_t deadline = j->start_ps + kJobTimeoutPs;
    soc_.platform().iommu().attach(core, j->file->mmu_domain);  // iommu_attach_group in rocket_job_run
    const bool never = false;
    const sc_core::sc_event none;
    for (const npx_rocket_task& t : j->tasks) {
        // rocket_job_hw_submit
        RawKick k;
        k.core = core;
        k.addr = t.regcmd;
        k.amount = (t.regcmd_count + 1) / 2 - 1;
        k.task_number = 1;
        k.int_mask = k.int_clear = kDpuBits;
        k.pingpong = true;
        kick_pc(hal, soc_.soc(), k);
        const WaitResult w = wait_core_irq(soc_, core, deadline, none, never);
        if (w == WaitResult::Irq && !(hal.reg_read32(core, PC_INTERRUPT_RAW_STATUS::kOffset) & kDpuBits)) {
            // rocket_job_irq_handler: no DPU bit -> IRQ_NONE; the job can only time out.
            const uint64_t now = SocHost::now_ps();
            if (now < deadline) sc_core::wait(sc_core::sc_time(static_cast<double>(deadline - now), sc_core::SC_PS));
        }
        if (w != WaitResult::Irq || !(hal.reg_read32(core, PC_INTERRUPT_RAW_STATUS::kOffset) & kDpuBits)) {
            j->timed_out = true;
            break;
        }
        // rocket_job_handle_irq
        hal.reg_write32(core, PC_OPERATION_ENABLE::kOffset, 0);
        hal.reg_write32(core, PC_INTERRUPT_CLEAR::kOffset, 0x1ffff);
        settle_irq(soc_, core);
        ++j->tasks_done;
    }
    std::string text;
    if (j->timed_out) {
        text = fmt::format("rocket job {} of {}: NPU job timed out (500 ms, simulated) at task {} of {} (regcmd 0x{:x}); "
                           "the core is reset and the job's fence signalled with an error (PREP_BO still returns 0)\n",
                           j->seq, j->who, j->tasks_done, j->tasks.size(), j->tasks[j->tasks_done].regcmd);
        text += explain_core(soc_, core, diag0, task0, "  ");
        hal.reset(core);
    } else {
        for (size_t i = diag0; i < model.diagnostics().size(); ++i)
            text += fmt::format("rocket job {} of {}: core {}: model: {}\n", j->seq, j->who, core, model.diagnostics()[i]);
    }
    soc_.platform().iommu().attach(core, 0);
    j->end_ps = SocHost::now_ps();
    if (!text.empty()) j->file->pending_log += fmt_log(j->who, text);
    if (trace::TraceWriter* tw = soc_.trace()) {
        if (j->start_ps > j->submit_ps)
            tw->complete(j->track, fmt::format("rocket job {} queued", j->seq), j->submit_ps, j->start_ps - j->submit_ps,
                         {}, "job");
        tw->complete(j->track, fmt::format("rocket job {}", j->seq), j->start_ps, j->end_ps - j->start_ps,
                     {trace::arg("core", static_cast<uint64_t>(core)), trace::arg("tasks", static_cast<uint64_t>(j->tasks.size())),
                      trace::arg("timed_out", std::string(j->timed_out ? "yes" : "no"))},
                     "job");
    }
    if (history_) job_reports_.push_back(fmt::format("{{\"job\": {}, \"client\": {}, \"driver\": \"rocket\", \"core\": {}, \"tasks\": {}, "
                                       "\"submit_ns\": {}, \"start_ns\": {}, \"end_ns\": {}, \"timed_out\": {}}}",
                                       j->seq, j->file->client_no, core, j->tasks.size(), j->submit_ps / 1000,
                                       j->start_ps / 1000, j->end_ps / 1000, j->timed_out ? "true" : "false"));
    running_[static_cast<size_t>(core)] = nullptr;
    --file_busy_[j->file->id];
    release_if_idle(*j->file);
    for (auto it = unfinished_.begin(); it != unfinished_.end(); ++it)
        if (*it == j) {
            unfinished_.erase(it);
            break;
        }
    for (auto& g : j->in) gem_put(g);
    for (auto& g : j->out) gem_put(g);
    jobs_.finish(j->board);
    schedule();
}

int RocketDevice::prep_bo(Call& c) {
    const auto& a = c.arg<npx_rocket_prep_bo>();
    c.args = fmt::format("handle {} timeout_ns {}", a.handle, a.timeout_ns);
    if (a.reserved != 0) return -EINVAL;
    std::shared_ptr<Gem> g = lookup(c.f, a.handle);
    if (!g) return -ENOENT;
    // dma_resv_wait_timeout(DMA_RESV_USAGE_WRITE): the unfinished jobs that write this buffer.
    for (const auto& u : unfinished_)
        for (const auto& w : u->out)
            if (w == g) c.r.wait_jobs.push_back(u->board);
    c.r.deadline_ns = a.timeout_ns;
    if (!c.r.wait_jobs.empty()) c.result = fmt::format("waits for {} job(s)", c.r.wait_jobs.size());
    return 0;
}

int RocketDevice::fini_bo(Call& c) {
    const auto& a = c.arg<npx_rocket_fini_bo>();
    c.args = fmt::format("handle {}", a.handle);
    if (a.reserved != 0) return -EINVAL;
    return lookup(c.f, a.handle) ? 0 : -ENOENT;
}

std::string RocketDevice::report_json() const {
    std::string s = "[";
    for (size_t i = 0; i < job_reports_.size(); ++i) s += (i ? ",\n    " : "\n    ") + job_reports_[i];
    return s + (job_reports_.empty() ? "]" : "\n  ]");
}

}  // namespace sim::exec
