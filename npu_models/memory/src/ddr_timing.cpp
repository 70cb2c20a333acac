// SPDX-License-Identifier: MIT
#include "npu/memory/ddr_timing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace npu::memory {

namespace {
uint64_t ns_to_ps(double ns) { return static_cast<uint64_t>(std::llround(ns * 1000.0)); }
}  // namespace

DdrTimingModel::DdrTimingModel(const hw::MemoryParams& p)
    : DdrTimingModel(p.ddr_peak_bytes_per_s.value, p.ddr_efficiency.value, p.ddr_read_latency_ns.value,
                     p.ddr_write_latency_ns.value) {}

DdrTimingModel::DdrTimingModel(double peak_bytes_per_s, double efficiency, double read_latency_ns,
                               double write_latency_ns)
    : bytes_per_s_(peak_bytes_per_s * efficiency),
      read_latency_ps_(ns_to_ps(read_latency_ns)),
      write_latency_ps_(ns_to_ps(write_latency_ns)) {
    if (!(bytes_per_s_ > 0)) throw std::invalid_argument("DdrTimingModel: bandwidth must be > 0");
}

uint64_t DdrTimingModel::transfer_ps(uint64_t bytes) const {
    if (bytes == last_bytes_) return last_ps_;
    // Rounded up: a partial picosecond still occupies the channel.
    last_ps_ = static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) * 1e12 / bytes_per_s_));
    last_bytes_ = bytes;
    return last_ps_;
}

uint64_t DdrTimingModel::access(uint64_t start_ps, uint64_t bytes, bool is_write) {
    const uint64_t ready = start_ps + (is_write ? write_latency_ps_ : read_latency_ps_);
    const uint64_t begin = std::max(ready, busy_until_ps_);
    const uint64_t dur = transfer_ps(bytes);
    stats_.queued_ps += begin - ready;
    stats_.busy_ps += dur;
    busy_until_ps_ = begin + dur;
    if (is_write) {
        stats_.write_bytes += bytes;
        ++stats_.writes;
    } else {
        stats_.read_bytes += bytes;
        ++stats_.reads;
    }
    return busy_until_ps_;
}

void DdrTimingModel::reset() {
    busy_until_ps_ = 0;
    stats_ = DdrStats{};
}

}  // namespace npu::memory
