// SPDX-License-Identifier: MIT
// RtlSession when npusim is built without Verilator (NPUSIM_RTL=OFF): --rtl is refused.
#include <stdexcept>

#include "rtl/cosim.h"

namespace npu::rtl {

bool rtl_built() { return false; }

struct RtlSession::Impl {};

RtlSession::RtlSession(const RtlOptions&, const hw::SocProfile&, const std::vector<tlm_models::RknpuCore*>&) {
    throw std::invalid_argument(
        "--rtl: this npusim was built without Verilator (NPUSIM_RTL=OFF; install the verilator package and rebuild)");
}

RtlSession::~RtlSession() = default;
std::vector<RtlTaskRecord> RtlSession::records() const { return {}; }
void RtlSession::finish() {}

}  // namespace npu::rtl
