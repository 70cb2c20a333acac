// SPDX-License-Identifier: MIT
// Address-decoding interconnect: any number of initiators, targets mapped by address ranges.
// Adds a fixed hop latency each way; unmapped addresses answer TLM_ADDRESS_ERROR_RESPONSE.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

namespace npu::tlm_models {

class Interconnect : public sc_core::sc_module {
   public:
    tlm_utils::multi_passthrough_target_socket<Interconnect> targ_socket;
    tlm_utils::multi_passthrough_initiator_socket<Interconnect> init_socket;

    Interconnect(sc_core::sc_module_name name, uint64_t hop_latency_ps);

    /// Map [base, base + size) to the n-th bound initiator-socket target; addresses are passed on
    /// relative to base. Overlapping ranges are rejected with std::invalid_argument.
    void map(uint64_t base, uint64_t size, unsigned target_index, const std::string& name);

    /// Sees every routed transfer: initiator socket index (bind order), the target range's name,
    /// direction, bytes, and the time the request reached the target and the target completed it.
    using Observer = std::function<void(int initiator, const std::string& target, bool write, uint64_t bytes,
                                        uint64_t begin_ps, uint64_t end_ps)>;
    void set_observer(Observer o) { observer_ = std::move(o); }

   private:
    struct Range {
        uint64_t base, size;
        unsigned target;
        std::string name;
    };
    const Range* decode(uint64_t addr, uint64_t len) const;
    void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned int transport_dbg(int id, tlm::tlm_generic_payload& gp);

    std::vector<Range> ranges_;
    sc_core::sc_time hop_;
    Observer observer_;
};

}  // namespace npu::tlm_models
