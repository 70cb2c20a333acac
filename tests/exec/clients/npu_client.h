/* SPDX-License-Identifier: MIT */
/*
 * What a board program carries to talk to the NPU: its own copies of the kernel uAPI (struct
 * layouts and ioctl numbers of the vendor rknpu driver, rockchip-linux/kernel
 * drivers/rknpu/include/rknpu_ioctl.h, and of mainline rocket, torvalds/linux
 * include/uapi/drm/rocket_accel.h), the regcmd encoding, and a register-list writer for the int8
 * and fp16 matmul task that follows mtx512/rk3588-npu src/npu_matmul.c (gen_matmul_task) value for
 * value, as tools/streams/mtx512_matmul.py does. The test clients of tests/exec use only this
 * header, libc and <linux/ioctl.h>: nothing of npusim.
 */
#ifndef NPUSIM_TESTS_EXEC_NPU_CLIENT_H
#define NPUSIM_TESTS_EXEC_NPU_CLIENT_H

#include <errno.h>
#include <fcntl.h>
#include <linux/ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- DRM core ---- */
struct drm_version_c {
    int version_major, version_minor, version_patchlevel;
    size_t name_len;
    char* name;
    size_t date_len;
    char* date;
    size_t desc_len;
    char* desc;
};
struct drm_gem_close_c {
    uint32_t handle, pad;
};
struct drm_gem_flink_c {
    uint32_t handle, name;
};
struct drm_gem_open_c {
    uint32_t name, handle;
    uint64_t size;
};
struct drm_prime_handle_c {
    uint32_t handle, flags;
    int32_t fd;
};
#define DRM_BASE_C 'd'
#define DRM_CMD_BASE_C 0x40
#define DRM_IOCTL_VERSION_C _IOWR(DRM_BASE_C, 0x00, struct drm_version_c)
#define DRM_IOCTL_GEM_CLOSE_C _IOW(DRM_BASE_C, 0x09, struct drm_gem_close_c)
#define DRM_IOCTL_GEM_FLINK_C _IOWR(DRM_BASE_C, 0x0a, struct drm_gem_flink_c)
#define DRM_IOCTL_GEM_OPEN_C _IOWR(DRM_BASE_C, 0x0b, struct drm_gem_open_c)
#define DRM_IOCTL_PRIME_HANDLE_TO_FD_C _IOWR(DRM_BASE_C, 0x2d, struct drm_prime_handle_c)
#define DRM_IOCTL_PRIME_FD_TO_HANDLE_C _IOWR(DRM_BASE_C, 0x2e, struct drm_prime_handle_c)

/* ---- rknpu ---- */
struct rknpu_mem_create_c {
    uint32_t handle, flags;
    uint64_t size, obj_addr, dma_addr, sram_size;
    int32_t iommu_domain_id;
    uint32_t core_mask;
};
struct rknpu_mem_map_c {
    uint32_t handle, reserved;
    uint64_t offset;
};
struct rknpu_mem_destroy_c {
    uint32_t handle, reserved;
    uint64_t obj_addr;
};
struct rknpu_mem_sync_c {
    uint32_t flags, reserved;
    uint64_t obj_addr, offset, size;
};
struct rknpu_task_c {
    uint32_t flags, op_idx, enable_mask, int_mask, int_clear, int_status, regcfg_amount, regcfg_offset;
    uint64_t regcmd_addr;
} __attribute__((packed));
struct rknpu_subcore_task_c {
    uint32_t task_start, task_number;
};
struct rknpu_submit_c {
    uint32_t flags, timeout, task_start, task_number, task_counter;
    int32_t priority;
    uint64_t task_obj_addr;
    uint32_t iommu_domain_id, reserved;
    uint64_t task_base_addr;
    int64_t hw_elapse_time;
    uint32_t core_mask;
    int32_t fence_fd;
    struct rknpu_subcore_task_c subcore_task[5];
};
struct rknpu_action_c {
    uint32_t flags, value;
};
#define RKNPU_ACTION_C _IOWR(DRM_BASE_C, DRM_CMD_BASE_C + 0x00, struct rknpu_action_c)
#define RKNPU_SUBMIT_C _IOWR(DRM_BASE_C, DRM_CMD_BASE_C + 0x01, struct rknpu_submit_c)
#define RKNPU_MEM_CREATE_C _IOWR(DRM_BASE_C, DRM_CMD_BASE_C + 0x02, struct rknpu_mem_create_c)
#define RKNPU_MEM_MAP_C _IOWR(DRM_BASE_C, DRM_CMD_BASE_C + 0x03, struct rknpu_mem_map_c)
#define RKNPU_MEM_DESTROY_C _IOWR(DRM_BASE_C, DRM_CMD_BASE_C + 0x04, struct rknpu_mem_destroy_c)
#define RKNPU_MEM_SYNC_C _IOWR(DRM_BASE_C, DRM_CMD_BASE_C + 0x05, struct rknpu_mem_sync_c)
#define RKNPU_JOB_PC_C 1u
#define RKNPU_JOB_NONBLOCK_C 2u
#define RKNPU_JOB_PINGPONG_C 4u
#define RKNPU_JOB_FENCE_OUT_C 16u
#define RKNPU_MEM_KERNEL_MAPPING_C (1u << 3)
#define RKNPU_MEM_CACHEABLE_C (1u << 1)
#define RKNPU_GET_DRV_VERSION_C 1u
#define RKNPU_GET_FREQ_C 2u
#define RKNPU_ACT_RESET_C 6u
#define RKNPU_GET_IOMMU_EN_C 18u

/* ---- rocket ---- */
struct rocket_create_bo_c {
    uint32_t size, handle;
    uint64_t dma_address, offset;
};
struct rocket_prep_bo_c {
    uint32_t handle, reserved;
    int64_t timeout_ns;
};
struct rocket_fini_bo_c {
    uint32_t handle, reserved;
};
struct rocket_task_c {
    uint32_t regcmd, regcmd_count;
};
struct rocket_job_c {
    uint64_t tasks, in_bo_handles, out_bo_handles;
    uint32_t task_count, task_struct_size, in_bo_handle_count, out_bo_handle_count;
};
struct rocket_submit_c {
    uint64_t jobs;
    uint32_t job_count, job_struct_size;
    uint64_t reserved;
};
#define ROCKET_CREATE_BO_C _IOWR(DRM_BASE_C, DRM_CMD_BASE_C + 0x00, struct rocket_create_bo_c)
#define ROCKET_SUBMIT_C _IOW(DRM_BASE_C, DRM_CMD_BASE_C + 0x01, struct rocket_submit_c)
#define ROCKET_PREP_BO_C _IOW(DRM_BASE_C, DRM_CMD_BASE_C + 0x02, struct rocket_prep_bo_c)
#define ROCKET_FINI_BO_C _IOW(DRM_BASE_C, DRM_CMD_BASE_C + 0x03, struct rocket_fini_bo_c)

/* ---- regcmd entries (docs/rknpu-register-semantics.md section 1) ---- */
static inline uint64_t rk_entry(uint16_t target_op, uint32_t value, uint16_t offset) {
    return ((uint64_t)target_op << 48) | ((uint64_t)value << 16) | offset;
}
static inline uint64_t rk_reg(uint16_t offset, uint32_t value) {
    static const uint16_t targets[8] = {0x0100, 0x0200, 0, 0x0800, 0x1000, 0x2000, 0x4000, 0x8000};
    return rk_entry((uint16_t)(targets[offset >> 12] | 0x01), value, offset);
}
#define RK_SYNC 0x0041000000000000ull
static inline uint64_t rk_op_enable(uint32_t mask) { return rk_entry(0x0081, mask, 0x0008); }

/* Register offsets (Mesa registers.xml / RK3588 TRM) */
enum {
    PC_BASE_ADDRESS = 0x0010, PC_REGISTER_AMOUNTS = 0x0014,
    CNA_CONV_CON1 = 0x100C, CNA_CONV_CON2 = 0x1010, CNA_CONV_CON3 = 0x1014, CNA_DATA_SIZE0 = 0x1020,
    CNA_DATA_SIZE1 = 0x1024, CNA_DATA_SIZE2 = 0x1028, CNA_DATA_SIZE3 = 0x102C, CNA_WEIGHT_SIZE0 = 0x1030,
    CNA_WEIGHT_SIZE1 = 0x1034, CNA_WEIGHT_SIZE2 = 0x1038, CNA_CBUF_CON0 = 0x1040, CNA_CBUF_CON1 = 0x1044,
    CNA_CVT_CON0 = 0x104C, CNA_CVT_CON1 = 0x1050, CNA_FC_CON0 = 0x1060, CNA_FC_CON1 = 0x1064, CNA_PAD_CON0 = 0x1068,
    CNA_FEATURE_DATA_ADDR = 0x1070, CNA_FC_CON2 = 0x1074, CNA_DMA_CON0 = 0x1078, CNA_DMA_CON1 = 0x107C,
    CNA_DMA_CON2 = 0x1080, CNA_FC_DATA_SIZE0 = 0x1084, CNA_FC_DATA_SIZE1 = 0x1088, CNA_DCOMP_CTRL = 0x1100,
    CNA_DCOMP_REGNUM = 0x1104, CNA_DCOMP_ADDR0 = 0x1110, CNA_DCOMP_AMOUNT0 = 0x1140, CNA_CVT_CON5 = 0x1180,
    CNA_PAD_CON1 = 0x1184,
    CORE_MISC_CFG = 0x3010, CORE_DATAOUT_SIZE_0 = 0x3014, CORE_DATAOUT_SIZE_1 = 0x3018, CORE_CLIP_TRUNCATE = 0x301C,
    CORE_3030 = 0x3030,
    DPU_S_POINTER = 0x4004, DPU_FEATURE_MODE_CFG = 0x400C, DPU_DATA_FORMAT = 0x4010, DPU_OFFSET_PEND = 0x4014,
    DPU_DST_BASE_ADDR = 0x4020, DPU_DST_SURF_STRIDE = 0x4024, DPU_DATA_CUBE_WIDTH = 0x4030,
    DPU_DATA_CUBE_HEIGHT = 0x4034, DPU_DATA_CUBE_NOTCH_ADDR = 0x4038, DPU_DATA_CUBE_CHANNEL = 0x403C,
    DPU_BS_CFG = 0x4040, DPU_BS_ALU_CFG = 0x4044, DPU_BS_MUL_CFG = 0x4048, DPU_BS_RELUX_CMP_VALUE = 0x404C,
    DPU_BS_OW_CFG = 0x4050, DPU_BS_OW_OP = 0x4054, DPU_WDMA_SIZE_0 = 0x4058, DPU_WDMA_SIZE_1 = 0x405C,
    DPU_BN_CFG = 0x4060, DPU_BN_ALU_CFG = 0x4064, DPU_BN_MUL_CFG = 0x4068, DPU_BN_RELUX_CMP_VALUE = 0x406C,
    DPU_EW_CFG = 0x4070, DPU_EW_CVT_OFFSET_VALUE = 0x4074, DPU_EW_CVT_SCALE_VALUE = 0x4078,
    DPU_EW_RELUX_CMP_VALUE = 0x407C, DPU_OUT_CVT_OFFSET = 0x4080, DPU_OUT_CVT_SCALE = 0x4084,
    DPU_OUT_CVT_SHIFT = 0x4088, DPU_EW_OP_VALUE_0 = 0x4090, DPU_SURFACE_ADD = 0x40C0, DPU_40C4 = 0x40C4,
    DPU_LUT_ACCESS_CFG = 0x4100
};
#define PREC_INT8 0u
#define PREC_FP16 2u
#define PREC_INT32 4u
#define PREC_FP32 5u

/* ---- the mtx512 matmul task (gen_matmul_task): 108 entries in a 112-entry array ---- */
#define MTX_ARRAY_ENTRIES 112
#define MTX_TASK_ENTRIES 108
#define MTX_REGCFG_AMOUNT (MTX_ARRAY_ENTRIES - (4 + 4)) /* as tests/matmul_*.c compute regcfg_amount */

/* Returns 0, or -1 (feature data beyond the CBUF) / -2 (a kernel beyond one bank) as mtx512 does. */
static inline int mtx_matmul_task(uint64_t* e, int m, int k, int n, int fp16, uint32_t input, uint32_t weights,
                                  uint32_t output) {
    const uint32_t bpe = fp16 ? 2 : 1;
    const uint32_t in_prec = fp16 ? PREC_FP16 : PREC_INT8, out_prec = fp16 ? PREC_FP32 : PREC_INT32;
    const uint32_t fd_bytes = (uint32_t)(m * k) * bpe, fd_banks = (fd_bytes + 32767) / 32768;
    if (fd_banks > 11) return -1;
    if ((uint32_t)k * bpe > 32768) return -2;
    const uint32_t weight_bank = 12 - fd_banks;
    const uint32_t per_entry = fp16 ? 32 : 64;
    const uint32_t data_entries = ((uint32_t)k + per_entry - 1) / per_entry;
    const uint32_t line_stride = 4;
    int surf = (int)line_stride * ((m / 4) - 1);
    const uint32_t surf_stride = (uint32_t)(surf < 0 ? surf + 1 : surf);
    const uint32_t dst_surf = (uint32_t)m, size_e = fp16 ? 3 : 7, surf_add = dst_surf * (fp16 ? 4 : 8);
    int i = 0;
    e[i++] = rk_reg(DPU_S_POINTER, 0xE);
    e[i++] = rk_reg(CNA_CONV_CON1, (in_prec << 7) | (in_prec << 4));
    e[i++] = rk_reg(CNA_CONV_CON2, ((uint32_t)(m + 1) & 0x3FF) << 4);
    e[i++] = rk_reg(CNA_CONV_CON3, (1 << 3) | 1);
    e[i++] = rk_reg(CNA_DATA_SIZE0, (1u << 16) | (uint32_t)m);
    e[i++] = rk_reg(CNA_DATA_SIZE1, ((uint32_t)(k - 1) << 16) | (uint32_t)k);
    e[i++] = rk_reg(CNA_DATA_SIZE2, 1);
    e[i++] = rk_reg(CNA_DATA_SIZE3, (uint32_t)m);
    e[i++] = rk_reg(CNA_WEIGHT_SIZE0, (uint32_t)(k * n) * bpe);
    e[i++] = rk_reg(CNA_WEIGHT_SIZE1, (uint32_t)k * bpe);
    e[i++] = rk_reg(CNA_WEIGHT_SIZE2, (1u << 24) | (1u << 16) | (uint32_t)n);
    e[i++] = rk_reg(CNA_CBUF_CON0, (weight_bank << 4) | fd_banks);
    e[i++] = rk_reg(CNA_CBUF_CON1, data_entries);
    e[i++] = rk_reg(CNA_CVT_CON0, (1 << 3) | (1 << 1) | 1);
    for (int c = 0; c < 4; ++c) e[i++] = rk_reg((uint16_t)(CNA_CVT_CON1 + 4 * c), 1u << 16);
    e[i++] = rk_reg(CNA_FC_CON0, 0);
    e[i++] = rk_reg(CNA_FC_CON1, 0);
    e[i++] = rk_reg(CNA_PAD_CON0, 0);
    e[i++] = rk_reg(CNA_FEATURE_DATA_ADDR, input);
    e[i++] = rk_reg(CNA_FC_CON2, 0);
    e[i++] = rk_reg(CNA_DMA_CON0, (15u << 16) | 15u);
    e[i++] = rk_reg(CNA_DMA_CON1, line_stride);
    e[i++] = rk_reg(CNA_DMA_CON2, surf_stride & 0xFFFFFFF);
    e[i++] = rk_reg(CNA_FC_DATA_SIZE0, (1u << 16) | (uint32_t)m);
    e[i++] = rk_reg(CNA_FC_DATA_SIZE1, (uint32_t)k);
    e[i++] = rk_reg(CNA_DCOMP_CTRL, 0);
    e[i++] = rk_reg(CNA_DCOMP_REGNUM, 0);
    e[i++] = rk_reg(CNA_DCOMP_ADDR0, weights);
    for (int c = 0; c < 16; ++c) e[i++] = rk_reg((uint16_t)(CNA_DCOMP_AMOUNT0 + 4 * c), 0);
    e[i++] = rk_reg(CNA_CVT_CON5, 0);
    e[i++] = rk_reg(CNA_PAD_CON1, 0);
    e[i++] = rk_reg(CORE_MISC_CFG, (in_prec << 8) | 1);
    e[i++] = rk_reg(CORE_DATAOUT_SIZE_0, (uint32_t)(m - 1) << 16);
    e[i++] = rk_reg(CORE_DATAOUT_SIZE_1, (uint32_t)(n - 1));
    e[i++] = rk_reg(CORE_CLIP_TRUNCATE, 0);
    e[i++] = rk_reg(CORE_3030, 0);
    e[i++] = rk_reg(DPU_FEATURE_MODE_CFG, (15u << 5) | (2u << 1));
    e[i++] = rk_reg(DPU_DATA_FORMAT, (out_prec << 29) | (in_prec << 26) | in_prec);
    e[i++] = rk_reg(DPU_OFFSET_PEND, 0);
    e[i++] = rk_reg(DPU_DST_BASE_ADDR, output);
    e[i++] = rk_reg(DPU_DST_SURF_STRIDE, dst_surf << 4);
    e[i++] = rk_reg(DPU_DATA_CUBE_WIDTH, 0);
    e[i++] = rk_reg(DPU_DATA_CUBE_HEIGHT, (uint32_t)(m - 1));
    e[i++] = rk_reg(DPU_DATA_CUBE_NOTCH_ADDR, 0);
    e[i++] = rk_reg(DPU_DATA_CUBE_CHANNEL, ((uint32_t)(n - 1) << 16) | (uint32_t)(n - 1));
    e[i++] = rk_reg(DPU_BS_CFG, (1 << 6) | (1 << 4) | (1 << 1) | 1);
    e[i++] = rk_reg(DPU_BS_ALU_CFG, 0);
    e[i++] = rk_reg(DPU_BS_MUL_CFG, 0);
    e[i++] = rk_reg(DPU_BS_RELUX_CMP_VALUE, 0);
    e[i++] = rk_reg(DPU_BS_OW_CFG, (size_e << 8) | (size_e << 5) | (size_e << 2) | (1 << 1));
    e[i++] = rk_reg(DPU_BS_OW_OP, 0);
    e[i++] = rk_reg(DPU_WDMA_SIZE_0, (uint32_t)(n - 1));
    e[i++] = rk_reg(DPU_WDMA_SIZE_1, (uint32_t)(m - 1) << 16);
    e[i++] = rk_reg(DPU_BN_CFG, (1 << 6) | (1 << 4) | (1 << 1) | 1);
    e[i++] = rk_reg(DPU_BN_ALU_CFG, 0);
    e[i++] = rk_reg(DPU_BN_MUL_CFG, 0);
    e[i++] = rk_reg(DPU_BN_RELUX_CMP_VALUE, 0);
    e[i++] = rk_reg(DPU_EW_CFG, (1 << 9) | (1 << 8) | (1 << 7) | (1 << 1) | 1);
    e[i++] = rk_reg(DPU_EW_CVT_OFFSET_VALUE, 0);
    e[i++] = rk_reg(DPU_EW_CVT_SCALE_VALUE, 1);
    e[i++] = rk_reg(DPU_EW_RELUX_CMP_VALUE, 0);
    e[i++] = rk_reg(DPU_OUT_CVT_OFFSET, 0);
    e[i++] = rk_reg(DPU_OUT_CVT_SCALE, 1);
    e[i++] = rk_reg(DPU_OUT_CVT_SHIFT, 0);
    for (int c = 0; c < 8; ++c) e[i++] = rk_reg((uint16_t)(DPU_EW_OP_VALUE_0 + 4 * c), 0);
    e[i++] = rk_reg(DPU_SURFACE_ADD, surf_add << 4);
    e[i++] = rk_reg(DPU_40C4, 0);
    for (int c = 0; c < 12; ++c) e[i++] = rk_reg((uint16_t)(DPU_LUT_ACCESS_CFG + 4 * c), 0);
    /* tail: zero word (no next task), amount 0, sync, op-enable CNA|CORE|DPU */
    e[i++] = 0;
    e[i++] = rk_reg(PC_REGISTER_AMOUNTS, 0);
    e[i++] = RK_SYNC;
    e[i++] = rk_op_enable(0x0d);
    while (i < MTX_ARRAY_ENTRIES) e[i++] = 0;
    return 0;
}

/* mtx512's layouts (src/npu_matmul.c): A as [K/C2][M][C2], B int8 [N/32][K/32][32][32] and fp16
 * [N/16][K/32][16][32], C [N/4][M][4] (int32 / fp32). Indices are 0-based here. */
static inline size_t mtx_feature_index(int k_dim, int m_dim, int c2, int kk, int mm) {
    (void)k_dim;
    return (size_t)(kk / c2) * (size_t)m_dim * (size_t)c2 + (size_t)mm * (size_t)c2 + (size_t)(kk % c2);
}
static inline size_t mtx_weight_index(int k_dim, int n2, int nn, int kk) {
    return (size_t)(nn / n2) * (size_t)n2 * (size_t)k_dim + (size_t)(kk / 32) * (size_t)n2 * 32 +
           (size_t)(nn % n2) * 32 + (size_t)(kk % 32);
}
static inline size_t mtx_output_index(int m_dim, int nn, int mm) {
    return (size_t)(nn / 4) * (size_t)m_dim * 4 + (size_t)mm * 4 + (size_t)(nn % 4);
}

/* IEEE half <-> float (exact for the small whole numbers the fp16 tests use). */
static inline uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t mant = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0) return (uint16_t)sign;
    if (exp <= 0) return (uint16_t)sign; /* the tests never go subnormal */
    if (exp >= 31) return (uint16_t)(sign | 0x7c00);
    uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
    if ((mant & 0x1fff) > 0x1000 || ((mant & 0x1fff) == 0x1000 && (h & 1))) ++h;
    return (uint16_t)h;
}

/* ---- small helpers for the clients ---- */
#define CHECK(cond, ...)                                             \
    do {                                                             \
        if (!(cond)) {                                               \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);     \
            fprintf(stderr, __VA_ARGS__);                            \
            fprintf(stderr, "\n");                                   \
            exit(1);                                                 \
        }                                                            \
    } while (0)

/* mtx512 mem_allocate: MEM_CREATE, MEM_MAP, mmap of the fake offset. */
static inline void* rk_alloc(int fd, size_t size, uint32_t flags, uint64_t* dma, uint64_t* obj, uint32_t* handle) {
    struct rknpu_mem_create_c mc;
    memset(&mc, 0, sizeof mc);
    mc.flags = flags;
    mc.size = size;
    if (ioctl(fd, RKNPU_MEM_CREATE_C, &mc) < 0) return NULL;
    struct rknpu_mem_map_c mm = {mc.handle, 0, 0};
    if (ioctl(fd, RKNPU_MEM_MAP_C, &mm) < 0) return NULL;
    void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mm.offset);
    if (p == MAP_FAILED) return NULL;
    *dma = mc.dma_addr;
    *obj = mc.obj_addr;
    *handle = mc.handle;
    return p;
}

static inline int rk_open(const char* path) {
    int fd = open(path, O_RDWR);
    if (fd < 0) return fd;
    char name[64] = {0}, date[64] = {0}, desc[64] = {0};
    struct drm_version_c v;
    memset(&v, 0, sizeof v);
    v.name = name;
    v.name_len = sizeof name - 1;
    v.date = date;
    v.date_len = sizeof date - 1;
    v.desc = desc;
    v.desc_len = sizeof desc - 1;
    if (ioctl(fd, DRM_IOCTL_VERSION_C, &v) < 0) return -1;
    printf("drm name is %s - %s - %s (%d.%d.%d)\n", name, date, desc, v.version_major, v.version_minor,
           v.version_patchlevel);
    return fd;
}

/* Deterministic pseudo-random numbers (the tests must not depend on time). */
static inline uint32_t lcg(uint32_t* s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

#endif
