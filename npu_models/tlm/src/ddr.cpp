// SPDX-License-Identifier: MIT
#include "npu/tlm/ddr.h"

#include <algorithm>

#include "npu/tlm/mem_stamp.h"
#include "npu/tlm/time.h"

namespace npu::tlm_models {

Ddr::Ddr(sc_core::sc_module_name name, const hw::MemoryParams& p, trace::TraceWriter* tw)
    : Ddr(name, p.ddr_size_bytes.value, memory::DdrTimingModel(p), tw) {}

Ddr::Ddr(sc_core::sc_module_name name, uint64_t size_bytes, const memory::DdrTimingModel& timing, trace::TraceWriter* tw)
    : sc_module(name), socket("socket"), mem_(size_bytes), timing_(timing), tw_(tw) {
    socket.register_b_transport(this, &Ddr::b_transport);
    socket.register_transport_dbg(this, &Ddr::transport_dbg);
    if (tw_) track_ = tw_->track(this->name(), "data channel", trace::Layout::Lanes);
}

void Ddr::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const uint64_t addr = gp.get_address();
    const uint64_t len = gp.get_data_length();
    if (gp.get_byte_enable_ptr() || gp.get_streaming_width() < len) {
        gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
        return;
    }
    const bool is_write = gp.is_write();
    // A null data pointer is a timing-only transfer (SimMode::Timing): checked, timed, no bytes moved.
    const bool ok = !gp.get_data_ptr() ? mem_.in_range(addr, len)
                    : is_write        ? mem_.write(addr, gp.get_data_ptr(), len)
                                      : mem_.read(addr, gp.get_data_ptr(), len);
    if (!ok) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const uint64_t start = to_ps(sc_core::sc_time_stamp() + delay);
    const uint64_t done = timing_.access(start, len, is_write);
    if (tw_) {
        const uint64_t xfer = timing_.transfer_ps(len);
        tw_->complete(track_, is_write ? "write" : "read", done - xfer, xfer,
                      {trace::arg("addr", fmt_hex(addr)), trace::arg("bytes", len)}, "ddr");
    }
    delay = from_ps(done) - sc_core::sc_time_stamp();
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int Ddr::transport_dbg(tlm::tlm_generic_payload& gp) {
    const uint64_t len = gp.get_data_length();
    if (gp.get_command() == tlm::TLM_IGNORE_COMMAND) {  // a MemStampQuery (mem_stamp.h)
        MemStampQuery* q = nullptr;
        gp.get_extension(q);
        if (!q || !mem_.in_range(gp.get_address(), len)) return 0;
        q->stamp = std::max(q->stamp, mem_.stamp(gp.get_address(), len));
        return static_cast<unsigned int>(len);
    }
    const bool ok = gp.is_write() ? mem_.write(gp.get_address(), gp.get_data_ptr(), len)
                                  : mem_.read(gp.get_address(), gp.get_data_ptr(), len);
    gp.set_response_status(ok ? tlm::TLM_OK_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return ok ? static_cast<unsigned int>(len) : 0;
}

}  // namespace npu::tlm_models
