// SPDX-License-Identifier: MIT
#include "npu/tlm/iommu.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "npu/memory/sparse_memory.h"
#include "npu/tlm/mem_stamp.h"

namespace npu::tlm_models {

Iommu::Iommu(sc_core::sc_module_name name, const hw::SocProfile& soc)
    : sc_module(name),
      socket("socket"),
      to_memory("to_memory"),
      enabled_(soc.mem.npu_iommu.value != 0),
      domain_base_(soc.mem.iova_base.value),
      domain_end_(soc.mem.iova_base.value + soc.mem.iova_bytes.value) {
    socket.register_b_transport(this, &Iommu::b_transport);
    socket.register_transport_dbg(this, &Iommu::transport_dbg);
}

void Iommu::map_identity(uint64_t base, uint64_t bytes) {
    identity_.emplace_back(base, base + bytes);
    config_stamp_ = memory::next_stamp();
}

void Iommu::enable_demand_paging(uint64_t pool_base, uint64_t pool_bytes) {
    demand_ = true;
    config_stamp_ = memory::next_stamp();
    pool_next_ = (pool_base + kPage - 1) / kPage * kPage;
    pool_end_ = pool_base + pool_bytes;
}

bool Iommu::identity(uint64_t addr, uint64_t len) const {
    for (const auto& [b, e] : identity_)
        if (addr >= b && len <= e - b && addr - b <= e - b - len) return true;
    return false;
}

bool Iommu::translate(int domain, uint64_t iova, uint64_t& pa, std::string* why) {
    if (iova < domain_base_ || iova >= domain_end_) {
        if (why) *why = fmt::format("IOVA 0x{:x} outside the IOMMU domain [0x{:x}, 0x{:x})", iova, domain_base_, domain_end_);
        return false;
    }
    if (domain != 0) {
        auto d = domains_.find(domain);
        if (d != domains_.end() && d->second.translate(iova, pa)) return true;
        if (why) *why = fmt::format("IOVA 0x{:x} is not mapped in IOMMU domain {} (IOMMU page fault)", iova, domain);
        return false;
    }
    if (identity(iova, 1)) {
        pa = iova;
        return true;
    }
    const uint64_t page = iova / kPage * kPage;
    auto it = pages_.find(page);
    if (it == pages_.end()) {
        if (!demand_ || pool_next_ + kPage > pool_end_) {
            if (why)
                *why = demand_ ? fmt::format("no physical memory left to back IOVA 0x{:x}", iova)
                               : fmt::format("IOVA 0x{:x} is not mapped (IOMMU page fault)", iova);
            return false;
        }
        it = pages_.emplace(page, pool_next_).first;
        config_stamp_ = memory::next_stamp();
        pool_next_ += kPage;
    }
    pa = it->second + (iova - page);
    return true;
}

template <typename Fn>
bool Iommu::each_piece(int domain, uint64_t addr, uint64_t len, std::string* why, Fn&& fn) {
    if (!enabled_ || (domain == 0 && identity(addr, len))) return fn(addr, 0, len);
    for (uint64_t off = 0; off < len || (len == 0 && off == 0);) {
        const uint64_t a = addr + off;
        const uint64_t n = std::min(len - off, kPage - a % kPage);
        uint64_t pa = 0;
        if (!translate(domain, a, pa, why)) return false;
        if (!fn(pa, off, n)) return false;
        if (len == 0) break;
        off += n;
    }
    return true;
}

void Iommu::b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const uint64_t addr = gp.get_address(), len = gp.get_data_length();
    unsigned char* data = gp.get_data_ptr();
    tlm::tlm_response_status st = tlm::TLM_OK_RESPONSE;
    std::unique_ptr<tlm::tlm_generic_payload> held;
    if (spare_.empty()) {
        held = std::make_unique<tlm::tlm_generic_payload>();
    } else {
        held = std::move(spare_.back());
        spare_.pop_back();
    }
    tlm::tlm_generic_payload& p = *held;
    const bool ok = each_piece(attached(id), addr, len, nullptr, [&](uint64_t pa, uint64_t off, uint64_t n) {
        p.set_command(gp.get_command());
        p.set_address(pa);
        p.set_data_ptr(data ? data + off : nullptr);
        p.set_data_length(static_cast<unsigned int>(n));
        p.set_streaming_width(static_cast<unsigned int>(n));
        p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        to_memory->b_transport(p, delay);
        st = p.get_response_status();
        return st == tlm::TLM_OK_RESPONSE;
    });
    spare_.push_back(std::move(held));
    gp.set_response_status(ok ? tlm::TLM_OK_RESPONSE : (st != tlm::TLM_OK_RESPONSE ? st : tlm::TLM_ADDRESS_ERROR_RESPONSE));
}

unsigned int Iommu::transport_dbg(int id, tlm::tlm_generic_payload& gp) {
    if (gp.get_command() == tlm::TLM_IGNORE_COMMAND) {  // a MemStampQuery (mem_stamp.h), piece by piece
        MemStampQuery* q = nullptr;
        gp.get_extension(q);
        if (!q) return 0;
        // Physically contiguous pieces are asked about as one run (a buffer mapped page after page).
        uint64_t st = 0, run_pa = 0, run_n = 0;
        tlm::tlm_generic_payload p;
        const auto ask = [&]() {
            if (run_n == 0) return true;
            uint64_t piece = 0;
            const bool got = query_mem_stamp(p, run_pa, run_n, piece,
                                             [&](tlm::tlm_generic_payload& pp) { return to_memory->transport_dbg(pp); });
            st = std::max(st, piece);
            run_n = 0;
            return got;
        };
        bool ok = each_piece(attached(id), gp.get_address(), gp.get_data_length(), nullptr,
                             [&](uint64_t pa, uint64_t, uint64_t n) {
                                 if (run_n && pa == run_pa + run_n) {
                                     run_n += n;
                                     return true;
                                 }
                                 const bool prev = ask();
                                 run_pa = pa, run_n = n;
                                 return prev;
                             });
        ok = ask() && ok;
        // After the walk: a demand page it backed is a translation change too.
        q->stamp = std::max({q->stamp, st, config_stamp_});
        return ok ? gp.get_data_length() : 0;
    }
    const bool write = gp.is_write();
    return host_access_in(attached(id), gp.get_address(), gp.get_data_ptr(), gp.get_data_length(), write)
               ? gp.get_data_length()
               : 0;
}

bool Iommu::host_access(uint64_t addr, void* data, uint64_t len, bool write, std::string* why) {
    return host_access_in(0, addr, data, len, write, why);
}

int Iommu::create_domain() {
    const int id = next_domain_++;
    domains_[id];
    return id;
}

void Iommu::destroy_domain(int domain) {
    domains_.erase(domain);
    config_stamp_ = memory::next_stamp();
    for (auto& [init, d] : attached_)
        if (d == domain) d = 0;
}

size_t Iommu::mapped_pages() const {
    size_t n = 0;
    for (const auto& [id, m] : domains_) n += static_cast<size_t>(m.mapped_bytes() / kPage);
    return n;
}

bool Iommu::map(int domain, uint64_t iova, uint64_t pa, uint64_t bytes, std::string* why) {
    auto d = domains_.find(domain);
    if (d == domains_.end()) {
        if (why) *why = fmt::format("IOMMU domain {} does not exist", domain);
        return false;
    }
    if (iova % kPage || pa % kPage || bytes % kPage) {
        if (why) *why = fmt::format("IOMMU map 0x{:x} -> 0x{:x} (+0x{:x}) is not page-aligned", iova, pa, bytes);
        return false;
    }
    if (iova < domain_base_ || bytes > domain_end_ - domain_base_ || iova - domain_base_ > domain_end_ - domain_base_ - bytes) {
        if (why) *why = fmt::format("IOVA range 0x{:x} (+0x{:x}) outside the aperture [0x{:x}, 0x{:x})", iova, bytes,
                                    domain_base_, domain_end_);
        return false;
    }
    d->second.map(iova, pa, bytes);
    config_stamp_ = memory::next_stamp();
    return true;
}

void Iommu::unmap(int domain, uint64_t iova, uint64_t bytes) {
    auto d = domains_.find(domain);
    if (d == domains_.end()) return;
    // The pages from the one holding iova on, ceil(bytes / page) of them (saturated at the top of
    // the address space).
    const uint64_t lo = iova / kPage * kPage, pages = bytes / kPage + (bytes % kPage != 0);
    const uint64_t hi = pages > (UINT64_MAX - lo) / kPage ? UINT64_MAX : lo + pages * kPage;
    d->second.unmap(lo, hi);
    config_stamp_ = memory::next_stamp();
}

void Iommu::attach(int initiator, int domain) {
    config_stamp_ = memory::next_stamp();
    if (domain == 0)
        attached_.erase(initiator);
    else
        attached_[initiator] = domain;
}

int Iommu::attached(int initiator) const {
    auto it = attached_.find(initiator);
    return it == attached_.end() ? 0 : it->second;
}

bool Iommu::host_access_in(int domain, uint64_t addr, void* data, uint64_t len, bool write, std::string* why) {
    auto* bytes = static_cast<unsigned char*>(data);
    return each_piece(domain, addr, len, why, [&](uint64_t pa, uint64_t off, uint64_t n) {
        tlm::tlm_generic_payload p;
        p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        p.set_address(pa);
        p.set_data_ptr(bytes + off);
        p.set_data_length(static_cast<unsigned int>(n));
        if (to_memory->transport_dbg(p) != n) {
            if (why) *why = fmt::format("physical address 0x{:x} (+{}) outside memory", pa, n);
            return false;
        }
        return true;
    });
}

}  // namespace npu::tlm_models
