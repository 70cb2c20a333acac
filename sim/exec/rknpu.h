// SPDX-License-Identifier: MIT
// The vendor kernel driver (rknpu, DRM build) as `npusim serve` emulates it: the six RKNPU_*
// ioctls on the DRM core of exec/drm.h, with the driver's checks, errno values and job logic
// (rockchip-linux/kernel drivers/rknpu: rknpu_drv.c rknpu_action, rknpu_gem.c
// rknpu_gem_{create,map,destroy,sync}_ioctl, rknpu_job.c rknpu_submit, rknpu_job_schedule,
// rknpu_job_subcore_commit_pc, rknpu_irq_handler, rknpu_job_wait). docs/exec.md has the errno
// table and the choices made where the kernel's behaviour is undefined (bad kernel pointers).
#pragma once
#include <array>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/replay.h"
#include "exec/drm.h"

namespace sim::exec {

class RknpuDevice : public DrmDevice {
   public:
    RknpuDevice(SocHost& soc, JobBoard& jobs);
    std::string report_json() const override;
    /// IOMMU domains of the iommu_domain_id slots used so far (kept for the device's life, as the
    /// vendor driver keeps its domains).
    size_t domain_slots() const { return soc_iommu_domains_; }
    /// FENCE_OUT fences held (each a pipe).
    size_t fence_count() const { return fences_.size(); }

    /// Driver version this emulation reports (rknpu_drv.h of the 0.9.x drivers in the field).
    static constexpr int kMajor = 0, kMinor = 9, kPatch = 8;

   protected:
    const std::vector<IoctlDef>& driver_ioctls() const override { return ioctls_; }
    const char* drv_name() const override { return "rknpu"; }
    const char* drv_desc() const override { return "RKNPU driver"; }
    const char* drv_date() const override { return "20240828"; }
    int drv_major() const override { return kMajor; }
    int drv_minor() const override { return kMinor; }
    int drv_patch() const override { return kPatch; }
    std::string unique() const override;
    bool mmap_from_start() const override { return true; }
    int gem_map(DrmFile& f, Gem& g) override;
    void gem_unmap(Gem& g) override;
    void file_closing(DrmFile& f) override;

   private:
    struct Domain {
        int mmu = 0;
        std::unique_ptr<RangeAllocator> iova;
    };
    struct Fence {
        int rd = -1, wr = -1;
        bool signaled = false;
        uint32_t file = 0;
    };
    struct Job;

    int action(Call& c);
    int submit(const std::shared_ptr<Call>& c);
    int mem_create(Call& c);
    int mem_map(Call& c);
    int mem_destroy(Call& c);
    int mem_sync(Call& c);

    Domain& domain(int id);
    int map_iova(Gem& g, int domain_id, uint64_t& reserved);
    std::shared_ptr<Gem> by_obj_addr(uint64_t obj_addr) const;
    void schedule();
    void start(const std::shared_ptr<Job>& j);
    void run_core(std::shared_ptr<Job> j, int core);
    void job_done(const std::shared_ptr<Job>& j);
    void soft_reset(const std::string& why);
    uint32_t task_count_of(const Job& j, int core) const;
    void signal_fence(uint64_t key);

    std::vector<IoctlDef> ioctls_;
    std::map<int, Domain> domains_;
    int live_domain_ = 0;
    size_t soc_iommu_domains_ = 0;
    std::map<uint64_t, std::weak_ptr<Gem>> objs_;  ///< obj_addr -> object
    std::vector<std::deque<std::shared_ptr<Job>>> todo_;
    std::vector<std::shared_ptr<Job>> running_;
    std::vector<int64_t> task_num_;
    std::map<uint64_t, Fence> fences_;  ///< keyed by the pipe's inode
    uint64_t submits_ = 0;
    uint64_t rw_base_rd_ = 0, rw_base_wr_ = 0;  ///< RKNPU_ACT_CLR_TOTAL_RW_AMOUNT baseline
    std::vector<std::string> job_reports_;
};

}  // namespace sim::exec
