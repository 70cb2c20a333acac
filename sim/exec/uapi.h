/* SPDX-License-Identifier: MIT */
/*
 * The kernel interfaces `npusim exec` emulates, as plain C definitions shared by the simulator
 * (C++) and the LD_PRELOAD interposer (C). Our own definitions of the public layouts; every
 * struct's size and field offsets are checked below. LP64 only (x86-64, aarch64): the sizes of the
 * DRM core structs with size_t / pointer members differ on 32-bit ABIs.
 *
 * Sources (docs/exec.md has the table):
 *  - ioctl number encoding: asm-generic/ioctl.h (nr 7..0, type 15..8, size 29..16, dir 31..30).
 *  - DRM core: torvalds/linux include/uapi/drm/drm.h (DRM_IOCTL_BASE 'd', DRM_COMMAND_BASE 0x40,
 *    drm_version, drm_unique, drm_set_version, drm_gem_close/flink/open, drm_get_cap,
 *    drm_set_client_cap, drm_prime_handle).
 *  - rknpu: rockchip-linux/kernel drivers/rknpu/include/rknpu_ioctl.h (driver 0.9.x: mem_create
 *    with iommu_domain_id/core_mask, 48 bytes; submit with iommu_domain_id and hw_elapse_time) and
 *    the kernel-5.10 copy mtx512/rk3588-npu include/rknpu-ioctl.h (0.8.x: mem_create 40 bytes,
 *    submit with regcfg_obj_addr and user_data at the same offsets). Both are accepted: the DRM
 *    core dispatches on the number and copies the caller's size.
 *  - rocket: torvalds/linux include/uapi/drm/rocket_accel.h (CREATE_BO, SUBMIT, PREP_BO, FINI_BO).
 *  - sync_file: torvalds/linux include/uapi/linux/sync_file.h (SYNC_IOC_FILE_INFO).
 */
#ifndef NPUSIM_EXEC_UAPI_H
#define NPUSIM_EXEC_UAPI_H

#include <stdint.h>

#define NPX_IOC_NRBITS 8
#define NPX_IOC_TYPEBITS 8
#define NPX_IOC_SIZEBITS 14
#define NPX_IOC_WRITE 1u /* user -> kernel (IOC_IN) */
#define NPX_IOC_READ 2u  /* kernel -> user (IOC_OUT) */
#define NPX_IOC(dir, type, nr, size) \
    ((uint32_t)(((uint32_t)(dir) << 30) | ((uint32_t)(size) << 16) | ((uint32_t)(type) << 8) | (uint32_t)(nr)))
#define NPX_IOC_NR(c) ((uint32_t)(c) & 0xffu)
#define NPX_IOC_TYPE(c) (((uint32_t)(c) >> 8) & 0xffu)
#define NPX_IOC_SIZE(c) (((uint32_t)(c) >> 16) & 0x3fffu)
#define NPX_IOC_DIR(c) ((uint32_t)(c) >> 30)

#define NPX_DRM_TYPE 'd'
#define NPX_DRM_COMMAND_BASE 0x40u

/* ---- DRM core (drm.h) ---- */
struct npx_drm_version {
    int32_t version_major;
    int32_t version_minor;
    int32_t version_patchlevel;
    int32_t pad_; /* alignment of the size_t that follows (LP64) */
    uint64_t name_len;
    uint64_t name; /* char __user * */
    uint64_t date_len;
    uint64_t date;
    uint64_t desc_len;
    uint64_t desc;
};
struct npx_drm_unique {
    uint64_t unique_len;
    uint64_t unique;
};
struct npx_drm_set_version {
    int32_t drm_di_major, drm_di_minor, drm_dd_major, drm_dd_minor;
};
struct npx_drm_gem_close {
    uint32_t handle, pad;
};
struct npx_drm_gem_flink {
    uint32_t handle, name;
};
struct npx_drm_gem_open {
    uint32_t name, handle;
    uint64_t size;
};
struct npx_drm_get_cap {
    uint64_t capability, value;
};
struct npx_drm_prime_handle {
    uint32_t handle, flags;
    int32_t fd;
};

#define NPX_DRM_NR_VERSION 0x00u
#define NPX_DRM_NR_GET_UNIQUE 0x01u
#define NPX_DRM_NR_SET_VERSION 0x07u
#define NPX_DRM_NR_GEM_CLOSE 0x09u
#define NPX_DRM_NR_GEM_FLINK 0x0au
#define NPX_DRM_NR_GEM_OPEN 0x0bu
#define NPX_DRM_NR_GET_CAP 0x0cu
#define NPX_DRM_NR_SET_CLIENT_CAP 0x0du
#define NPX_DRM_NR_PRIME_HANDLE_TO_FD 0x2du
#define NPX_DRM_NR_PRIME_FD_TO_HANDLE 0x2eu

#define NPX_DRM_CAP_DUMB_BUFFER 0x1u
#define NPX_DRM_CAP_PRIME 0x5u
#define NPX_DRM_PRIME_CAP_IMPORT 0x1u
#define NPX_DRM_PRIME_CAP_EXPORT 0x2u
#define NPX_DRM_CAP_TIMESTAMP_MONOTONIC 0x6u
#define NPX_DRM_RDWR 02u /* O_RDWR, the flag DRM_RDWR stands for */
#define NPX_DRM_CLOEXEC 02000000u /* O_CLOEXEC */

/* ---- rknpu (rknpu_ioctl.h) ---- */
struct npx_rknpu_mem_create { /* 0.9.x: 48 bytes; 0.8.x stops after sram_size (40 bytes) */
    uint32_t handle;
    uint32_t flags;
    uint64_t size;
    uint64_t obj_addr;
    uint64_t dma_addr;
    uint64_t sram_size;
    int32_t iommu_domain_id;
    uint32_t core_mask;
};
struct npx_rknpu_mem_map {
    uint32_t handle, reserved;
    uint64_t offset;
};
struct npx_rknpu_mem_destroy {
    uint32_t handle, reserved;
    uint64_t obj_addr;
};
struct npx_rknpu_mem_sync {
    uint32_t flags, reserved;
    uint64_t obj_addr, offset, size;
};
struct npx_rknpu_task { /* packed in the header; naturally 40 bytes without padding */
    uint32_t flags, op_idx, enable_mask, int_mask, int_clear, int_status, regcfg_amount, regcfg_offset;
    uint64_t regcmd_addr;
};
struct npx_rknpu_subcore_task {
    uint32_t task_start, task_number;
};
struct npx_rknpu_submit {
    uint32_t flags;
    uint32_t timeout; /* ms */
    uint32_t task_start;
    uint32_t task_number;
    uint32_t task_counter;
    int32_t priority;
    uint64_t task_obj_addr;
    uint32_t iommu_domain_id; /* 0.8.x: low half of regcfg_obj_addr */
    uint32_t reserved;
    uint64_t task_base_addr;
    int64_t hw_elapse_time; /* 0.8.x: user_data */
    uint32_t core_mask;
    int32_t fence_fd;
    struct npx_rknpu_subcore_task subcore_task[5];
};
struct npx_rknpu_action {
    uint32_t flags, value;
};

#define NPX_RKNPU_NR_ACTION 0x40u
#define NPX_RKNPU_NR_SUBMIT 0x41u
#define NPX_RKNPU_NR_MEM_CREATE 0x42u
#define NPX_RKNPU_NR_MEM_MAP 0x43u
#define NPX_RKNPU_NR_MEM_DESTROY 0x44u
#define NPX_RKNPU_NR_MEM_SYNC 0x45u

#define NPX_RKNPU_JOB_PC (1u << 0)
#define NPX_RKNPU_JOB_NONBLOCK (1u << 1)
#define NPX_RKNPU_JOB_PINGPONG (1u << 2)
#define NPX_RKNPU_JOB_FENCE_IN (1u << 3)
#define NPX_RKNPU_JOB_FENCE_OUT (1u << 4)

#define NPX_RKNPU_MEM_NON_CONTIGUOUS (1u << 0)
#define NPX_RKNPU_MEM_CACHEABLE (1u << 1)
#define NPX_RKNPU_MEM_WRITE_COMBINE (1u << 2)
#define NPX_RKNPU_MEM_KERNEL_MAPPING (1u << 3)
#define NPX_RKNPU_MEM_IOMMU (1u << 4)
#define NPX_RKNPU_MEM_ZEROING (1u << 5)
#define NPX_RKNPU_MEM_SECURE (1u << 6)
#define NPX_RKNPU_MEM_DMA32 (1u << 7)
#define NPX_RKNPU_MEM_TRY_ALLOC_SRAM (1u << 8)
#define NPX_RKNPU_MEM_TRY_ALLOC_NBUF (1u << 9)
#define NPX_RKNPU_MEM_IOMMU_LIMIT_IOVA_ALIGNMENT (1u << 10)

#define NPX_RKNPU_MEM_SYNC_TO_DEVICE (1u << 0)
#define NPX_RKNPU_MEM_SYNC_FROM_DEVICE (1u << 1)

enum npx_rknpu_action_code {
    NPX_RKNPU_GET_HW_VERSION = 0,
    NPX_RKNPU_GET_DRV_VERSION = 1,
    NPX_RKNPU_GET_FREQ = 2,
    NPX_RKNPU_SET_FREQ = 3,
    NPX_RKNPU_GET_VOLT = 4,
    NPX_RKNPU_SET_VOLT = 5,
    NPX_RKNPU_ACT_RESET = 6,
    NPX_RKNPU_GET_BW_PRIORITY = 7,
    NPX_RKNPU_SET_BW_PRIORITY = 8,
    NPX_RKNPU_GET_BW_EXPECT = 9,
    NPX_RKNPU_SET_BW_EXPECT = 10,
    NPX_RKNPU_GET_BW_TW = 11,
    NPX_RKNPU_SET_BW_TW = 12,
    NPX_RKNPU_ACT_CLR_TOTAL_RW_AMOUNT = 13,
    NPX_RKNPU_GET_DT_WR_AMOUNT = 14,
    NPX_RKNPU_GET_DT_RD_AMOUNT = 15,
    NPX_RKNPU_GET_WT_RD_AMOUNT = 16,
    NPX_RKNPU_GET_TOTAL_RW_AMOUNT = 17,
    NPX_RKNPU_GET_IOMMU_EN = 18,
    NPX_RKNPU_SET_PROC_NICE = 19,
    NPX_RKNPU_POWER_ON = 20,
    NPX_RKNPU_POWER_OFF = 21,
    NPX_RKNPU_GET_TOTAL_SRAM_SIZE = 22,
    NPX_RKNPU_GET_FREE_SRAM_SIZE = 23,
    NPX_RKNPU_GET_IOMMU_DOMAIN_ID = 24,
    NPX_RKNPU_SET_IOMMU_DOMAIN_ID = 25
};

/* ---- rocket (rocket_accel.h) ---- */
struct npx_rocket_create_bo {
    uint32_t size, handle;
    uint64_t dma_address, offset;
};
struct npx_rocket_prep_bo {
    uint32_t handle, reserved;
    int64_t timeout_ns; /* absolute CLOCK_MONOTONIC */
};
struct npx_rocket_fini_bo {
    uint32_t handle, reserved;
};
struct npx_rocket_task {
    uint32_t regcmd, regcmd_count;
};
struct npx_rocket_job {
    uint64_t tasks, in_bo_handles, out_bo_handles;
    uint32_t task_count, task_struct_size, in_bo_handle_count, out_bo_handle_count;
};
struct npx_rocket_submit {
    uint64_t jobs;
    uint32_t job_count, job_struct_size;
    uint64_t reserved;
};

#define NPX_ROCKET_NR_CREATE_BO 0x40u
#define NPX_ROCKET_NR_SUBMIT 0x41u
#define NPX_ROCKET_NR_PREP_BO 0x42u
#define NPX_ROCKET_NR_FINI_BO 0x43u

/* ---- sync_file (fences of RKNPU_JOB_FENCE_OUT) ---- */
struct npx_sync_file_info {
    char name[32];
    int32_t status; /* 1 signaled, 0 active, < 0 error */
    uint32_t flags;
    uint32_t num_fences;
    uint32_t pad;
    uint64_t sync_fence_info;
};
#define NPX_SYNC_TYPE '>'
#define NPX_SYNC_NR_FILE_INFO 4u

#ifdef __cplusplus
#define NPX_STATIC_ASSERT static_assert
#else
#define NPX_STATIC_ASSERT _Static_assert
#endif
#define NPX_OFFSET(t, f) __builtin_offsetof(t, f)
NPX_STATIC_ASSERT(sizeof(struct npx_drm_version) == 64, "drm_version (LP64)");
NPX_STATIC_ASSERT(NPX_OFFSET(struct npx_drm_version, name_len) == 16, "drm_version.name_len");
NPX_STATIC_ASSERT(sizeof(struct npx_drm_unique) == 16, "drm_unique");
NPX_STATIC_ASSERT(sizeof(struct npx_drm_gem_open) == 16, "drm_gem_open");
NPX_STATIC_ASSERT(sizeof(struct npx_drm_prime_handle) == 12, "drm_prime_handle");
NPX_STATIC_ASSERT(sizeof(struct npx_rknpu_mem_create) == 48, "rknpu_mem_create 0.9.x");
NPX_STATIC_ASSERT(NPX_OFFSET(struct npx_rknpu_mem_create, iommu_domain_id) == 40, "0.8.x size");
NPX_STATIC_ASSERT(sizeof(struct npx_rknpu_mem_map) == 16, "rknpu_mem_map");
NPX_STATIC_ASSERT(sizeof(struct npx_rknpu_mem_destroy) == 16, "rknpu_mem_destroy");
NPX_STATIC_ASSERT(sizeof(struct npx_rknpu_mem_sync) == 32, "rknpu_mem_sync");
NPX_STATIC_ASSERT(sizeof(struct npx_rknpu_task) == 40, "rknpu_task (packed)");
NPX_STATIC_ASSERT(sizeof(struct npx_rknpu_submit) == 104, "rknpu_submit");
NPX_STATIC_ASSERT(NPX_OFFSET(struct npx_rknpu_submit, hw_elapse_time) == 48, "rknpu_submit.hw_elapse_time");
NPX_STATIC_ASSERT(NPX_OFFSET(struct npx_rknpu_submit, fence_fd) == 60, "rknpu_submit.fence_fd");
NPX_STATIC_ASSERT(NPX_OFFSET(struct npx_rknpu_submit, subcore_task) == 64, "rknpu_submit.subcore_task");
NPX_STATIC_ASSERT(sizeof(struct npx_rknpu_action) == 8, "rknpu_action");
NPX_STATIC_ASSERT(sizeof(struct npx_rocket_create_bo) == 24, "drm_rocket_create_bo");
NPX_STATIC_ASSERT(sizeof(struct npx_rocket_prep_bo) == 16, "drm_rocket_prep_bo");
NPX_STATIC_ASSERT(sizeof(struct npx_rocket_fini_bo) == 8, "drm_rocket_fini_bo");
NPX_STATIC_ASSERT(sizeof(struct npx_rocket_task) == 8, "drm_rocket_task");
NPX_STATIC_ASSERT(sizeof(struct npx_rocket_job) == 40, "drm_rocket_job");
NPX_STATIC_ASSERT(sizeof(struct npx_rocket_submit) == 24, "drm_rocket_submit");
NPX_STATIC_ASSERT(sizeof(struct npx_sync_file_info) == 56, "sync_file_info");

#endif /* NPUSIM_EXEC_UAPI_H */
