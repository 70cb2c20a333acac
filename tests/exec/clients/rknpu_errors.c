/* SPDX-License-Identifier: MIT */
/*
 * The vendor driver's answers to bad requests, a faulting job and a timeout, as a board program
 * sees them (errno after ioctl() returns -1):
 *  - a task that writes its output to an IOVA no buffer maps: the IOMMU faults the DPU's write,
 *    the interrupt status never folds to int_mask 0x300 and the submit ends with ETIMEDOUT after
 *    its timeout (rknpu_job_wait), task_counter from PC_TASK_STATUS; the NPU is reset and the
 *    next good submit works;
 *  - a timeout: a good task whose int_mask waits for the PPU pair (0xc00) while its output comes
 *    from the DPU: the DPU's bits are masked, no interrupt comes: ETIMEDOUT, task_counter 1 (the
 *    task ran, PC_TASK_STATUS), int_status 0 written back;
 *  - argument checks: task_number 0, core_mask beyond the SoC, an unknown task_obj_addr, no
 *    RKNPU_JOB_PC (EINVAL); an unreadable argument pointer (EFAULT); MEM_MAP of an unknown handle
 *    (ENOENT); MEM_DESTROY of an unknown handle (EINVAL); MEM_SYNC of a non-cacheable buffer
 *    (EINVAL); an unknown ioctl (ENOTTY).
 * Sources: rockchip-linux/kernel drivers/rknpu/rknpu_job.c rknpu_submit / rknpu_job_wait /
 * rknpu_irq_handler, rknpu_gem.c, drm_ioctl.c.
 */
#include "npu_client.h"

#define M 8
#define K 64
#define N 32

static int fd;
static uint64_t tk_obj;
static struct rknpu_task_c* tasks;

static int submit(uint32_t flags, uint32_t timeout, uint32_t task_number, uint32_t core_mask, uint64_t obj,
                  struct rknpu_submit_c* s) {
    memset(s, 0, sizeof *s);
    s->flags = flags;
    s->timeout = timeout;
    s->task_number = task_number;
    s->task_obj_addr = obj;
    s->core_mask = core_mask;
    s->fence_fd = -1;
    s->subcore_task[0] = (struct rknpu_subcore_task_c){0, task_number};
    return ioctl(fd, RKNPU_SUBMIT_C, s);
}

int main(void) {
    fd = rk_open("/dev/dri/card1");
    CHECK(fd >= 0, "open: %s", strerror(errno));
    uint64_t rc_dma, rc_obj, tk_dma, in_dma, in_obj, w_dma, w_obj, out_dma, out_obj;
    uint32_t h[5];
    uint64_t* regcmd = rk_alloc(fd, 1024, 0, &rc_dma, &rc_obj, &h[0]);
    tasks = rk_alloc(fd, 1024, RKNPU_MEM_KERNEL_MAPPING_C, &tk_dma, &tk_obj, &h[1]);
    uint8_t* in = rk_alloc(fd, M * K, 0, &in_dma, &in_obj, &h[2]);
    uint8_t* w = rk_alloc(fd, N * K, 0, &w_dma, &w_obj, &h[3]);
    uint8_t* out = rk_alloc(fd, M * N * 4, 0, &out_dma, &out_obj, &h[4]);
    CHECK(regcmd && tasks && in && w && out, "allocation");
    for (int i = 0; i < M * K; ++i) in[i] = (uint8_t)(i * 7);
    for (int i = 0; i < N * K; ++i) w[i] = (uint8_t)(i * 3);
    memset(tasks, 0, sizeof *tasks);
    tasks[0].enable_mask = 0xd;
    tasks[0].int_mask = 0x300;
    tasks[0].int_clear = 0x1ffff;
    tasks[0].regcfg_amount = MTX_REGCFG_AMOUNT;
    tasks[0].regcmd_addr = rc_dma;
    struct rknpu_submit_c s;

    /* fault: the output lands on an unmapped IOVA (the bottom of the domain holds no buffer) */
    CHECK(mtx_matmul_task(regcmd, M, K, N, 0, (uint32_t)in_dma, (uint32_t)w_dma, 0x00100000u) == 0, "gen");
    int r = submit(RKNPU_JOB_PC_C | RKNPU_JOB_PINGPONG_C, 100, 1, 1, tk_obj, &s);
    printf("faulting submit: ret %d errno %d (%s), task_counter %u, int_status 0x%x\n", r, errno, strerror(errno),
           s.task_counter, tasks[0].int_status);
    CHECK(r == -1 && errno == ETIMEDOUT, "a faulting job must time out (ETIMEDOUT)");

    /* the NPU was reset: the same task with a good address works */
    CHECK(mtx_matmul_task(regcmd, M, K, N, 0, (uint32_t)in_dma, (uint32_t)w_dma, (uint32_t)out_dma) == 0, "gen");
    CHECK(submit(RKNPU_JOB_PC_C | RKNPU_JOB_PINGPONG_C, 6000, 1, 1, tk_obj, &s) == 0, "good submit after the fault: %s",
          strerror(errno));
    CHECK(s.task_counter == 1, "task_counter %u", s.task_counter);
    int bad = 0;
    for (int mm = 0; mm < M; ++mm)
        for (int nn = 0; nn < N; ++nn) {
            int64_t acc = 0;
            for (int kk = 0; kk < K; ++kk)
                acc += (int64_t)(int8_t)in[mtx_feature_index(K, M, 16, kk, mm)] *
                       (int8_t)w[mtx_weight_index(K, 32, nn, kk)];
            int32_t got;
            memcpy(&got, out + mtx_output_index(M, nn, mm) * 4, 4);
            bad += got != acc;
        }
    CHECK(bad == 0, "%d outputs differ after the reset", bad);

    /* timeout: waits for the PPU pair, the task ends on the DPU */
    tasks[0].int_mask = 0xc00;
    tasks[0].int_status = 0;
    r = submit(RKNPU_JOB_PC_C | RKNPU_JOB_PINGPONG_C, 50, 1, 1, tk_obj, &s);
    printf("timeout submit: ret %d errno %d, task_counter %u, int_status 0x%x\n", r, errno, s.task_counter,
           tasks[0].int_status);
    CHECK(r == -1 && errno == ETIMEDOUT, "a job whose interrupt never matches must time out");
    CHECK(s.task_counter == 1, "task_counter %u (the task itself completed)", s.task_counter);
    /* INTERRUPT_MASK 0xc00 masks the DPU bits: no interrupt is raised, the handler never stores a status */
    CHECK(tasks[0].int_status == 0, "int_status 0x%x", tasks[0].int_status);
    tasks[0].int_mask = 0x300;

    /* argument checks */
    CHECK(submit(RKNPU_JOB_PC_C, 6000, 0, 1, tk_obj, &s) == -1 && errno == EINVAL, "task_number 0: EINVAL");
    CHECK(submit(RKNPU_JOB_PC_C, 6000, 1, 8, tk_obj, &s) == -1 && errno == EINVAL, "core_mask 8: EINVAL");
    CHECK(submit(RKNPU_JOB_PC_C, 6000, 1, 1, 0x1234, &s) == -1 && errno == EINVAL, "bad task_obj_addr: EINVAL");
    CHECK(submit(0, 6000, 1, 1, tk_obj, &s) == -1 && errno == EINVAL, "slave mode: EINVAL");
    CHECK(ioctl(fd, RKNPU_SUBMIT_C, (void*)16) == -1 && errno == EFAULT, "unreadable argument: EFAULT");
    struct rknpu_mem_map_c mm = {999, 0, 0};
    CHECK(ioctl(fd, RKNPU_MEM_MAP_C, &mm) == -1 && errno == ENOENT, "MEM_MAP unknown handle: ENOENT");
    struct rknpu_mem_destroy_c d = {999, 0, 0};
    CHECK(ioctl(fd, RKNPU_MEM_DESTROY_C, &d) == -1 && errno == EINVAL, "MEM_DESTROY unknown handle: EINVAL");
    struct rknpu_mem_sync_c sy = {1, 0, out_obj, 0, 64};
    CHECK(ioctl(fd, RKNPU_MEM_SYNC_C, &sy) == -1 && errno == EINVAL, "MEM_SYNC of a non-cacheable buffer: EINVAL");
    struct rknpu_mem_create_c mc;
    memset(&mc, 0, sizeof mc);
    CHECK(ioctl(fd, RKNPU_MEM_CREATE_C, &mc) == -1 && errno == EINVAL, "MEM_CREATE size 0: EINVAL");
    mc.size = 4096;
    mc.flags = RKNPU_MEM_CACHEABLE_C;
    CHECK(ioctl(fd, RKNPU_MEM_CREATE_C, &mc) == 0, "cacheable create");
    sy.obj_addr = mc.obj_addr;
    CHECK(ioctl(fd, RKNPU_MEM_SYNC_C, &sy) == 0, "MEM_SYNC of a cacheable buffer: %s", strerror(errno));
    struct rknpu_action_c act = {12345, 0};
    CHECK(ioctl(fd, RKNPU_ACTION_C, &act) == -1 && errno == EINVAL, "unknown action: EINVAL");
    unsigned long unknown = _IOWR('d', 0x40 + 0x20, struct rknpu_action_c);
    CHECK(ioctl(fd, unknown, &act) == -1 && errno == ENOTTY, "unknown ioctl: ENOTTY");
    printf("errors: every case answered as the vendor driver does\n");
    close(fd);
    return 0;
}
