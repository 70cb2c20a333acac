// SPDX-License-Identifier: MIT
// The NPU's IOMMU (memory.npu_iommu = 1): the cores' DMA addresses are IOVAs of one domain
// [memory.iova_base, + memory.iova_bytes) translated in 4 KiB pages to physical DDR addresses,
// as the vendor driver maps buffers (rknpu_iommu.c; docs/rknpu-register-semantics.md §6: rknpu
// IOVAs just below 4 GiB, rocket's from 0). Identity windows serve buffers the simulator's HAL
// allocates (IOVA = physical address); demand paging serves replays of captured streams, whose
// buffers were mapped by a process the replay does not have: a page is backed by fresh zeroed
// physical memory the first time the host or the NPU touches it. An access outside the domain or
// to an unmapped page without demand paging is an address error (the core reports a DMA error).
// With memory.npu_iommu = 0 addresses pass through unchanged (physical addresses).
// Further domains (create_domain) hold explicit page mappings only, and each initiator (the NPU
// cores, in the order they are bound) translates through the domain attached to it (default 0):
// rocket gives every DRM file its own domain and attaches it to the core that runs the file's job
// (torvalds/linux drivers/accel/rocket rocket_drv.c rocket_open, rocket_job.c rocket_job_run);
// `npusim serve` maps the buffer objects of the programs it runs this way.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "hw/profile.h"
#include "npu/memory/iova_map.h"

namespace npu::tlm_models {

class Iommu : public sc_core::sc_module {
   public:
    tlm_utils::multi_passthrough_target_socket<Iommu> socket;  ///< from the NPU cores
    tlm_utils::simple_initiator_socket<Iommu> to_memory;  ///< into the interconnect

    static constexpr uint64_t kPage = 4096;

    Iommu(sc_core::sc_module_name name, const hw::SocProfile& soc);
    bool enabled() const { return enabled_; }
    /// IOVA == physical address over [base, base + bytes) (the HAL's buffer pool, NBUF).
    void map_identity(uint64_t base, uint64_t bytes);
    /// Back unmapped pages of the domain on first touch with pages from [pool_base, pool_base +
    /// pool_bytes) of physical memory.
    void enable_demand_paging(uint64_t pool_base, uint64_t pool_bytes);
    /// Host access to NPU addresses (debug transport, no time): through the translation.
    /// Returns false (with `why`) when the range cannot be reached.
    bool host_access(uint64_t addr, void* data, uint64_t len, bool write, std::string* why = nullptr);

    /// A new, empty translation domain; returns its id (> 0).
    int create_domain();
    void destroy_domain(int domain);
    /// Domains created and not destroyed, and the pages mapped in them (leak checks).
    size_t domain_count() const { return domains_.size(); }
    size_t mapped_pages() const;
    /// Map [iova, iova + bytes) to physical [pa, pa + bytes) in `domain` (page-aligned; false with
    /// `why` on misalignment, a range outside the domain aperture or an unknown domain).
    bool map(int domain, uint64_t iova, uint64_t pa, uint64_t bytes, std::string* why = nullptr);
    void unmap(int domain, uint64_t iova, uint64_t bytes);
    /// Initiator `initiator` (core index) translates through `domain` from now on (0: default).
    void attach(int initiator, int domain);
    int attached(int initiator) const;
    /// host_access through `domain`.
    bool host_access_in(int domain, uint64_t addr, void* data, uint64_t len, bool write, std::string* why = nullptr);

   private:
    void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned int transport_dbg(int id, tlm::tlm_generic_payload& gp);
    /// Physical address of `iova` (allocating a demand page), or false.
    bool translate(int domain, uint64_t iova, uint64_t& pa, std::string* why);
    /// The whole range is one identity window (the common case: no split, same bus traffic).
    bool identity(uint64_t addr, uint64_t len) const;
    /// Runs `fn(pa, offset, n)` for each page-contiguous piece; false on a translation failure.
    template <typename Fn>
    bool each_piece(int domain, uint64_t addr, uint64_t len, std::string* why, Fn&& fn);

    bool enabled_;
    uint64_t domain_base_, domain_end_;
    std::vector<std::pair<uint64_t, uint64_t>> identity_;  ///< [base, end)
    /// Payloads of the downstream pieces, reused (a tlm_generic_payload allocates its extension
    /// array on construction; a DMA burst is one piece or a few). A stack, should a target re-enter.
    std::vector<std::unique_ptr<tlm::tlm_generic_payload>> spare_;
    std::map<uint64_t, uint64_t> pages_;                   ///< IOVA page -> physical page
    bool demand_ = false;
    uint64_t pool_next_ = 0, pool_end_ = 0;
    std::map<int, memory::IovaMap> domains_;  ///< domain id -> its IOVA -> physical extents
    int next_domain_ = 1;
    std::map<int, int> attached_;  ///< initiator -> domain (absent: 0)
    /// npu::memory::next_stamp() of the last change to any translation (map, unmap, attach, a
    /// demand page, ...): every MemStampQuery answer is at least this.
    uint64_t config_stamp_ = 0;
};

}  // namespace npu::tlm_models
