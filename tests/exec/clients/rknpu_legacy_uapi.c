/* SPDX-License-Identifier: MIT */
/*
 * The kernel-5.10 (rknpu 0.8.x) uAPI as mtx512/rk3588-npu include/rknpu-ioctl.h has it, built on
 * libdrm's <libdrm/drm.h> like that program: struct rknpu_mem_create without iommu_domain_id /
 * core_mask (40 bytes, so a different DRM_IOCTL_RKNPU_MEM_CREATE number) and struct rknpu_submit
 * with regcfg_obj_addr and user_data where 0.9.x has iommu_domain_id and hw_elapse_time. A newer
 * driver serves it: the DRM core dispatches on the number and copies the caller's size. One
 * int8 matmul (the mtx512 register list) checked against the CPU.
 */
#include <libdrm/drm.h>

#include "npu_client.h"

struct rknpu_mem_create_510 {
    uint32_t handle, flags;
    uint64_t size, obj_addr, dma_addr, sram_size;
};
struct rknpu_submit_510 {
    uint32_t flags, timeout, task_start, task_number, task_counter;
    int32_t priority;
    uint64_t task_obj_addr, regcfg_obj_addr, task_base_addr, user_data;
    uint32_t core_mask;
    int32_t fence_fd;
    struct rknpu_subcore_task_c subcore_task[5];
};
#define DRM_IOCTL_RKNPU_MEM_CREATE_510 DRM_IOWR(DRM_COMMAND_BASE + 0x02, struct rknpu_mem_create_510)
#define DRM_IOCTL_RKNPU_MEM_MAP_510 DRM_IOWR(DRM_COMMAND_BASE + 0x03, struct rknpu_mem_map_c)
#define DRM_IOCTL_RKNPU_SUBMIT_510 DRM_IOWR(DRM_COMMAND_BASE + 0x01, struct rknpu_submit_510)

#define M 4
#define K 32
#define N 32

static void* alloc510(int fd, size_t size, uint32_t flags, uint64_t* dma, uint64_t* obj) {
    struct rknpu_mem_create_510 mc = {0, flags, size, 0, 0, 0};
    if (ioctl(fd, DRM_IOCTL_RKNPU_MEM_CREATE_510, &mc) < 0) return NULL;
    struct rknpu_mem_map_c mm = {mc.handle, 0, 0};
    if (ioctl(fd, DRM_IOCTL_RKNPU_MEM_MAP_510, &mm) < 0) return NULL;
    void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mm.offset);
    *dma = mc.dma_addr;
    *obj = mc.obj_addr;
    return p == MAP_FAILED ? NULL : p;
}

int main(void) {
    int fd = open("/dev/dri/card1", O_RDWR);
    CHECK(fd >= 0, "open: %s", strerror(errno));
    char name[256] = {0}, date[256] = {0}, desc[256] = {0};
    struct drm_version dv;
    memset(&dv, 0, sizeof dv);
    dv.name = name;
    dv.name_len = sizeof name;
    dv.date = date;
    dv.date_len = sizeof date;
    dv.desc = desc;
    dv.desc_len = sizeof desc;
    CHECK(ioctl(fd, DRM_IOCTL_VERSION, &dv) == 0 && strcmp(name, "rknpu") == 0, "DRM_IOCTL_VERSION");
    printf("drm name is %s - %s - %s\n", dv.name, dv.date, dv.desc);
    uint64_t rc_dma, rc_obj, tk_dma, tk_obj, in_dma, in_obj, w_dma, w_obj, out_dma, out_obj;
    uint64_t* regcmd = alloc510(fd, 1024, 0, &rc_dma, &rc_obj);
    struct rknpu_task_c* tasks = alloc510(fd, 1024, RKNPU_MEM_KERNEL_MAPPING_C, &tk_dma, &tk_obj);
    int8_t* in = alloc510(fd, M * K, 0, &in_dma, &in_obj);
    int8_t* w = alloc510(fd, N * K, 0, &w_dma, &w_obj);
    int32_t* out = alloc510(fd, M * N * 4, 0, &out_dma, &out_obj);
    CHECK(regcmd && tasks && in && w && out && tk_obj != 0, "allocation");
    for (int i = 0; i < M * K; ++i) in[i] = (int8_t)(i % 13 - 6);
    for (int i = 0; i < N * K; ++i) w[i] = (int8_t)(i % 9 - 4);
    CHECK(mtx_matmul_task(regcmd, M, K, N, 0, (uint32_t)in_dma, (uint32_t)w_dma, (uint32_t)out_dma) == 0, "gen");
    memset(tasks, 0, sizeof *tasks);
    tasks[0].enable_mask = 0xd;
    tasks[0].int_mask = 0x300;
    tasks[0].int_clear = 0x1ffff;
    tasks[0].regcfg_amount = MTX_REGCFG_AMOUNT;
    tasks[0].regcmd_addr = rc_dma;
    struct rknpu_submit_510 s = {RKNPU_JOB_PC_C | RKNPU_JOB_PINGPONG_C, 6000, 0, 1, 0, 0, tk_obj, 0, 0, 0, 1, -1,
                                 {{0, 1}, {1, 0}, {2, 0}, {0, 0}, {0, 0}}};
    int ret = ioctl(fd, DRM_IOCTL_RKNPU_SUBMIT_510, &s);
    printf("RKNPU_SUBMIT returned %d, task_counter %u\n", ret, s.task_counter);
    CHECK(ret == 0 && s.task_counter == 1, "submit: %s", strerror(errno));
    int bad = 0;
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            int32_t acc = 0;
            for (int k = 0; k < K; ++k) acc += in[mtx_feature_index(K, M, 16, k, m)] * w[mtx_weight_index(K, 32, n, k)];
            bad += out[mtx_output_index(M, n, m)] != acc;
        }
    CHECK(bad == 0, "%d outputs differ", bad);
    printf("legacy 0.8.x uAPI: matmul equal to the CPU\n");
    close(fd);
    return 0;
}
