// SPDX-License-Identifier: MIT
#include "npu/tlm/interconnect.h"

#include <stdexcept>

#include <fmt/format.h>

#include "npu/tlm/time.h"

namespace npu::tlm_models {

std::string fmt_hex(uint64_t v) { return fmt::format("0x{:x}", v); }

Interconnect::Interconnect(sc_core::sc_module_name name, uint64_t hop_latency_ps)
    : sc_module(name), targ_socket("targ_socket"), init_socket("init_socket"), hop_(from_ps(hop_latency_ps)) {
    targ_socket.register_b_transport(this, &Interconnect::b_transport);
    targ_socket.register_transport_dbg(this, &Interconnect::transport_dbg);
}

void Interconnect::map(uint64_t base, uint64_t size, unsigned target_index, const std::string& name) {
    for (const Range& r : ranges_)
        if (base < r.base + r.size && r.base < base + size)
            throw std::invalid_argument(fmt::format("interconnect: {} [0x{:x}, +0x{:x}) overlaps {}", name, base, size, r.name));
    ranges_.push_back(Range{base, size, target_index, name});
}

const Interconnect::Range* Interconnect::decode(uint64_t addr, uint64_t len) const {
    for (const Range& r : ranges_)
        if (addr >= r.base && len <= r.size && addr - r.base <= r.size - len) return &r;
    return nullptr;
}

void Interconnect::b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const uint64_t addr = gp.get_address();
    const Range* r = decode(addr, gp.get_data_length());
    if (!r) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    delay += hop_;
    const uint64_t begin = to_ps(sc_core::sc_time_stamp() + delay);
    gp.set_address(addr - r->base);
    init_socket[r->target]->b_transport(gp, delay);
    gp.set_address(addr);
    if (observer_ && gp.get_response_status() == tlm::TLM_OK_RESPONSE)
        observer_(id, r->name, gp.is_write(), gp.get_data_length(), begin, to_ps(sc_core::sc_time_stamp() + delay));
    delay += hop_;
}

unsigned int Interconnect::transport_dbg(int, tlm::tlm_generic_payload& gp) {
    const uint64_t addr = gp.get_address();
    const Range* r = decode(addr, gp.get_data_length());
    if (!r) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return 0;
    }
    gp.set_address(addr - r->base);
    const unsigned int n = init_socket[r->target]->transport_dbg(gp);
    gp.set_address(addr);
    return n;
}

}  // namespace npu::tlm_models
