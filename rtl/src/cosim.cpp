// SPDX-License-Identifier: MIT
// RtlSession with the verilated datapath (NPUSIM_RTL=ON).
#include "rtl/cosim.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <systemc>

#include "rtl/datapath.h"
#include "rtl/engine.h"

namespace npu::rtl {

bool rtl_built() { return true; }

namespace {

/// Verilated SystemC models accept trace() only once elaboration is done: this module registers
/// every datapath with the VCD and opens it when the simulation starts.
class VcdStarter : public sc_core::sc_module {
   public:
    VcdStarter(sc_core::sc_module_name name, std::vector<std::unique_ptr<Datapath>>& dps, VcdFile& vcd,
               std::string path)
        : sc_module(name), dps_(dps), vcd_(vcd), path_(std::move(path)) {}

   private:
    void start_of_simulation() override {
        for (auto& dp : dps_) dp->trace(vcd_);
        vcd_.open(path_);
    }
    std::vector<std::unique_ptr<Datapath>>& dps_;
    VcdFile& vcd_;
    std::string path_;
};

}  // namespace

struct RtlSession::Impl {
    RtlOptions opts;
    std::vector<std::unique_ptr<Datapath>> dps;
    std::vector<std::unique_ptr<RtlEngine>> engines;
    VcdFile vcd;
    std::unique_ptr<VcdStarter> starter;
};

RtlSession::RtlSession(const RtlOptions& o, const hw::SocProfile& soc, const std::vector<tlm_models::RknpuCore*>& cores)
    : impl_(std::make_unique<Impl>()) {
    if (!o.any()) throw std::invalid_argument("--rtl: no block selected (core, dpu)");
    static_assert(kLanes == 16, "soc_unsupported() assumes the 16-lane datapath");
    if (const std::string why = soc_unsupported(soc); !why.empty()) throw std::invalid_argument(why);
    impl_->opts = o;
    const uint64_t period = 1'000'000'000'000ull / static_cast<uint64_t>(soc.npu.core_clock_hz.value);
    for (size_t i = 0; i < cores.size(); ++i) {
        impl_->dps.push_back(std::make_unique<Datapath>(fmt::format("rtl_npu_core{}", i), period));
        impl_->engines.push_back(std::make_unique<RtlEngine>(static_cast<int>(i), o, *impl_->dps.back(), dw_schedule(soc)));
        cores[i]->set_task_executor(impl_->engines.back().get());
    }
    if (!o.vcd.empty()) {
        if (!std::ofstream(o.vcd, std::ios::binary))
            throw std::invalid_argument(fmt::format("--rtl-vcd: cannot write '{}'", o.vcd));
        impl_->starter = std::make_unique<VcdStarter>("rtl_vcd", impl_->dps, impl_->vcd, o.vcd);
    }
}

RtlSession::~RtlSession() = default;

std::vector<RtlTaskRecord> RtlSession::records() const {
    std::vector<RtlTaskRecord> all;
    for (const auto& e : impl_->engines) all.insert(all.end(), e->records().begin(), e->records().end());
    std::stable_sort(all.begin(), all.end(), [](const RtlTaskRecord& a, const RtlTaskRecord& b) {
        return a.start_ps != b.start_ps ? a.start_ps < b.start_ps : a.core < b.core;
    });
    return all;
}

void RtlSession::finish() { impl_->vcd.close(); }

}  // namespace npu::rtl
