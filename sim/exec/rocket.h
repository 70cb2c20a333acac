// SPDX-License-Identifier: MIT
// The mainline rocket accel driver (torvalds/linux drivers/accel/rocket) as `npusim serve`
// emulates it on /dev/accel/accel0: CREATE_BO (shmem buffer, the file's own IOMMU domain and
// drm_mm address space from 0), SUBMIT (jobs of tasks run in order on one core, one kick per task
// from the interrupt thread, implicit BO fences between jobs, 500 ms job timeout, core reset),
// PREP_BO (wait for the writers of a buffer, absolute CLOCK_MONOTONIC deadline) and FINI_BO.
#pragma once
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "exec/drm.h"
#include "exec/uapi.h"

namespace sim::exec {

class RocketDevice : public DrmDevice {
   public:
    RocketDevice(SocHost& soc, JobBoard& jobs);
    std::string report_json() const override;

   protected:
    const std::vector<IoctlDef>& driver_ioctls() const override { return ioctls_; }
    const char* drv_name() const override { return "rocket"; }
    const char* drv_desc() const override { return "rocket DRM"; }
    const char* drv_date() const override { return ""; }
    int drv_major() const override { return 0; }
    int drv_minor() const override { return 0; }
    int drv_patch() const override { return 0; }
    std::string unique() const override { return "rknn"; }
    bool mmap_from_start() const override { return false; }
    int gem_map(DrmFile& f, Gem& g) override;
    void gem_unmap(Gem& g) override;
    void file_opened(DrmFile& f) override;
    void file_closing(DrmFile& f) override;

   private:
    struct Job;
    int create_bo(Call& c);
    int submit(Call& c);
    int prep_bo(Call& c);
    int fini_bo(Call& c);
    void schedule();
    void run(std::shared_ptr<Job> j, int core);
    /// A closed file's IOMMU domain goes once no job of the file is queued or running.
    void release_if_idle(DrmFile& f);

    std::vector<IoctlDef> ioctls_;
    std::vector<std::deque<std::shared_ptr<Job>>> queue_;  ///< per core (drm_sched, credit limit 1)
    std::vector<std::shared_ptr<Job>> running_;
    std::vector<std::shared_ptr<Job>> unfinished_;  ///< for implicit fences, in submission order
    std::map<uint32_t, int> file_core_;              ///< file -> core its entity is bound to while busy
    std::map<uint32_t, int> file_busy_;
    std::set<uint32_t> closed_;                      ///< closed files whose domain jobs still use
    uint64_t submits_ = 0;
    std::vector<std::string> job_reports_;
};

}  // namespace sim::exec
