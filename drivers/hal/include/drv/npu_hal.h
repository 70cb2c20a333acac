// SPDX-License-Identifier: MIT
// The driver's only door to NPU hardware (SG-8.5, after nvdla/sw kmd/include/nvdla_interface.h).
// Every function is IMPLEMENTED BY THE HAL and CALLED BY THE DRIVER. The simulator provides one
// backend (sim/hal_sim: TLM transactions into the platform, IRQ as an sc_event); a board backend
// would wrap the rocket or rknpu ioctls. No simulator types appear here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace drv {

/// A DMA-able buffer: what the NPU sees (dma_addr) and a handle for CPU access.
struct DmaBuffer {
    uint32_t handle = 0;
    uint64_t dma_addr = 0;
    size_t size = 0;
};

enum class WaitResult { Irq, Timeout };

/// Where a buffer should live: DDR, or the NPU's on-chip SRAM (NBUF) when the SoC has one and it
/// has room - otherwise DDR, like the vendor RKNPU_MEM_TRY_ALLOC_SRAM flag.
enum class Placement { Ddr, TrySram };

class NpuHal {
   public:
    virtual ~NpuHal() = default;

    /// Number of NPU cores behind this HAL.
    virtual int core_count() const = 0;
    /// 32-bit MMIO read/write at a core-relative register offset.
    virtual uint32_t reg_read32(int core, uint32_t offset) = 0;
    virtual void reg_write32(int core, uint32_t offset, uint32_t value) = 0;

    /// Allocate a DMA buffer of `size` bytes aligned to `align` (a power of two). Throws
    /// std::runtime_error when the device memory is exhausted.
    virtual DmaBuffer bo_create(size_t size, size_t align, Placement where = Placement::Ddr) = 0;
    virtual void bo_destroy(const DmaBuffer& bo) = 0;
    /// CPU writes/reads through the buffer's mapping, with the cache sync a board would need.
    virtual void bo_write(const DmaBuffer& bo, size_t offset, const void* src, size_t len) = 0;
    virtual void bo_read(const DmaBuffer& bo, size_t offset, void* dst, size_t len) = 0;

    /// Block until the core's interrupt line is raised or `timeout_ns` of device time passes.
    virtual WaitResult wait_irq(int core, uint64_t timeout_ns) = 0;
    /// Soft-reset one core (after a timeout or fault).
    virtual void reset(int core) = 0;
    /// Device time in nanoseconds (the simulated clock in the simulator).
    virtual uint64_t now_ns() = 0;
    /// Driver log line.
    virtual void log(const std::string& line) = 0;
};

}  // namespace drv
