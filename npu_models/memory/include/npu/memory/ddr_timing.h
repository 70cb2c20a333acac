// SPDX-License-Identifier: MIT
// DDR timing: one shared data channel with a sustained bandwidth (peak x efficiency) and a
// first-beat latency per transaction. Requests from all initiators serialise on the channel,
// so contention between NPU cores and DMA engines shows up as queueing. Times in picoseconds.
#pragma once
#include <cstdint>

#include "hw/profile.h"

namespace npu::memory {

struct DdrStats {
    uint64_t read_bytes = 0;
    uint64_t write_bytes = 0;
    uint64_t reads = 0;
    uint64_t writes = 0;
    uint64_t busy_ps = 0;     ///< time the data channel was transferring
    uint64_t queued_ps = 0;   ///< time requests waited for the channel (contention)
};

class DdrTimingModel {
   public:
    explicit DdrTimingModel(const hw::MemoryParams& p);
    DdrTimingModel(double peak_bytes_per_s, double efficiency, double read_latency_ns, double write_latency_ns);

    /// A transfer of `bytes` requested at `start_ps`; returns the time its last byte is done.
    /// The data phase starts at max(start + latency, channel free) and lasts bytes / sustained BW.
    uint64_t access(uint64_t start_ps, uint64_t bytes, bool is_write);

    /// Duration of the data phase alone for `bytes` (no latency, no queueing).
    uint64_t transfer_ps(uint64_t bytes) const;
    uint64_t read_latency_ps() const { return read_latency_ps_; }
    uint64_t write_latency_ps() const { return write_latency_ps_; }
    double sustained_bytes_per_s() const { return bytes_per_s_; }

    const DdrStats& stats() const { return stats_; }
    void reset();

   private:
    double bytes_per_s_;
    uint64_t read_latency_ps_;
    uint64_t write_latency_ps_;
    uint64_t busy_until_ps_ = 0;
    DdrStats stats_;
    /// transfer_ps of the last size asked (a DMA asks for its 4 KiB bursts over and over): the same
    /// value without the division.
    mutable uint64_t last_bytes_ = ~uint64_t{0}, last_ps_ = 0;
};

}  // namespace npu::memory
