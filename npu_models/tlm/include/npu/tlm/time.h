// SPDX-License-Identifier: MIT
// Integer-picosecond conversions (the SystemC time resolution the platform sets is 1 ps).
#pragma once
#include <cstdint>
#include <string>

#include <systemc>

namespace npu::tlm_models {

inline uint64_t to_ps(const sc_core::sc_time& t) { return t.value(); }
inline sc_core::sc_time from_ps(uint64_t ps) { return sc_core::sc_time::from_value(ps); }
std::string fmt_hex(uint64_t v);

}  // namespace npu::tlm_models
