/* SPDX-License-Identifier: MIT */
/*
 * Multi-core submits to the vendor rknpu driver: six int8 matmul tasks (mtx512 register list) in
 * one regcmd buffer, 64-byte aligned, linked in pairs by the vendor task tail (PC_BASE_ADDRESS of
 * the next task, PC_REGISTER_AMOUNTS = ceil((regs + 4) / 2) - 1; the pair's second task ends
 * with the zero word and amount 0), as the vendor runtime chains tasks
 * (docs/rknpu-register-semantics.md sections 2 and 3). Submits:
 *   1. core_mask 7, task_number 6, subcore_task[2..4] = {0,2},{2,2},{4,2}: the 3-core indexing;
 *   2. core_mask 3, task_number 4, subcore_task[0..1] = {0,2},{2,2}, without PINGPONG;
 *   3. core_mask 0 (AUTO) with subcore_task[0] = {4,2}: the driver picks the idle core 0.
 * Each task computes its own 8 rows of A (8 x 64) times B (32 x 64); every output is checked
 * against a CPU matmul and outputs of tasks that did not run must stay untouched.
 */
#include "npu_client.h"

#define T 6
#define M 8
#define K 64
#define N 32

static int32_t a[T][M * K], b[N * K];
static uint8_t* outp;

static void clear_out(void) { memset(outp, 0x5a, (size_t)T * M * N * 4); }

static void check(int t, int expect_written) {
    int bad = 0, untouched = 1;
    for (int mm = 0; mm < M; ++mm)
        for (int nn = 0; nn < N; ++nn) {
            int64_t acc = 0;
            for (int kk = 0; kk < K; ++kk) acc += (int64_t)a[t][mm * K + kk] * b[nn * K + kk];
            int32_t got;
            memcpy(&got, outp + (size_t)t * M * N * 4 + mtx_output_index(M, nn, mm) * 4, 4);
            bad += got != acc;
            untouched &= got == 0x5a5a5a5a;
        }
    if (expect_written)
        CHECK(bad == 0, "task %d: %d of %d outputs differ from the CPU matmul", t, bad, M * N);
    else
        CHECK(untouched, "task %d did not run but its output changed", t);
}

int main(void) {
    int fd = rk_open("/dev/dri/card1");
    CHECK(fd >= 0, "open: %s", strerror(errno));
    uint64_t rc_dma, rc_obj, tk_dma, tk_obj, in_dma, in_obj, w_dma, w_obj, out_dma, out_obj;
    uint32_t h[5];
    uint64_t* regcmd = rk_alloc(fd, T * MTX_ARRAY_ENTRIES * 8, 0, &rc_dma, &rc_obj, &h[0]);
    struct rknpu_task_c* tasks = rk_alloc(fd, 4096, RKNPU_MEM_KERNEL_MAPPING_C, &tk_dma, &tk_obj, &h[1]);
    uint8_t* in = rk_alloc(fd, T * M * K, 0, &in_dma, &in_obj, &h[2]);
    uint8_t* w = rk_alloc(fd, N * K, 0, &w_dma, &w_obj, &h[3]);
    outp = rk_alloc(fd, T * M * N * 4, 0, &out_dma, &out_obj, &h[4]);
    CHECK(regcmd && tasks && in && w && outp, "allocation: %s", strerror(errno));

    uint32_t seed = 99;
    for (int nn = 0; nn < N; ++nn)
        for (int kk = 0; kk < K; ++kk) {
            b[nn * K + kk] = (int32_t)(lcg(&seed) % 255) - 127;
            w[mtx_weight_index(K, 32, nn, kk)] = (uint8_t)(int8_t)b[nn * K + kk];
        }
    for (int t = 0; t < T; ++t) {
        for (int mm = 0; mm < M; ++mm)
            for (int kk = 0; kk < K; ++kk) {
                a[t][mm * K + kk] = (int32_t)(lcg(&seed) % 255) - 127;
                in[(size_t)t * M * K + mtx_feature_index(K, M, 16, kk, mm)] = (uint8_t)(int8_t)a[t][mm * K + kk];
            }
        uint64_t* e = regcmd + t * MTX_ARRAY_ENTRIES;
        CHECK(mtx_matmul_task(e, M, K, N, 0, (uint32_t)(in_dma + (uint64_t)t * M * K), (uint32_t)w_dma,
                              (uint32_t)(out_dma + (uint64_t)t * M * N * 4)) == 0, "gen");
        if (t % 2 == 0) { /* link to the pair's second task */
            const uint64_t next = rc_dma + (uint64_t)(t + 1) * MTX_ARRAY_ENTRIES * 8;
            e[MTX_TASK_ENTRIES - 4] = rk_reg(PC_BASE_ADDRESS, (uint32_t)next);
            e[MTX_TASK_ENTRIES - 3] = rk_reg(PC_REGISTER_AMOUNTS, (104 + 4 + 1) / 2 - 1);
        }
        memset(&tasks[t], 0, sizeof tasks[t]);
        tasks[t].enable_mask = 0xd;
        tasks[t].int_mask = 0x300;
        tasks[t].int_clear = 0x1ffff;
        tasks[t].regcfg_amount = 104;
        tasks[t].regcmd_addr = rc_dma + (uint64_t)t * MTX_ARRAY_ENTRIES * 8;
    }

    struct rknpu_submit_c s;
    /* 1: three cores, subcore_task[core + 2] */
    clear_out();
    memset(&s, 0, sizeof s);
    s.flags = RKNPU_JOB_PC_C | RKNPU_JOB_PINGPONG_C;
    s.timeout = 6000;
    s.task_number = 6;
    s.task_obj_addr = tk_obj;
    s.core_mask = 7;
    s.fence_fd = -1;
    s.subcore_task[2] = (struct rknpu_subcore_task_c){0, 2};
    s.subcore_task[3] = (struct rknpu_subcore_task_c){2, 2};
    s.subcore_task[4] = (struct rknpu_subcore_task_c){4, 2};
    CHECK(ioctl(fd, RKNPU_SUBMIT_C, &s) == 0, "3-core submit: %s", strerror(errno));
    printf("3-core submit: task_counter %u, hw_elapse_time %lld ns, last task int_status 0x%x\n", s.task_counter,
           (long long)s.hw_elapse_time, tasks[5].int_status);
    CHECK(s.task_counter == 6, "task_counter %u", s.task_counter);
    /* rknpu_job_wait writes the waiting core's status into the last committed task (core 2's last) */
    CHECK((tasks[5].int_status & 0x300) && !(tasks[5].int_status & ~0x300u), "task 5 int_status 0x%x", tasks[5].int_status);
    for (int t = 0; t < T; ++t) check(t, 1);

    /* 2: two cores, subcore_task[core], no ping-pong */
    clear_out();
    memset(&s, 0, sizeof s);
    s.flags = RKNPU_JOB_PC_C;
    s.timeout = 6000;
    s.task_number = 4;
    s.task_obj_addr = tk_obj;
    s.core_mask = 3;
    s.fence_fd = -1;
    s.subcore_task[0] = (struct rknpu_subcore_task_c){0, 2};
    s.subcore_task[1] = (struct rknpu_subcore_task_c){2, 2};
    s.subcore_task[2] = (struct rknpu_subcore_task_c){4, 2}; /* must be ignored with two cores */
    CHECK(ioctl(fd, RKNPU_SUBMIT_C, &s) == 0, "2-core submit: %s", strerror(errno));
    CHECK(s.task_counter == 4, "task_counter %u", s.task_counter);
    for (int t = 0; t < T; ++t) check(t, t < 4);

    /* 3: AUTO core mask: one core, subcore_task[that core] */
    clear_out();
    memset(&s, 0, sizeof s);
    s.flags = RKNPU_JOB_PC_C | RKNPU_JOB_PINGPONG_C;
    s.timeout = 6000;
    s.task_number = 2;
    s.task_obj_addr = tk_obj;
    s.core_mask = 0;
    s.fence_fd = -1;
    s.subcore_task[0] = (struct rknpu_subcore_task_c){4, 2};
    CHECK(ioctl(fd, RKNPU_SUBMIT_C, &s) == 0, "auto submit: %s", strerror(errno));
    for (int t = 0; t < T; ++t) check(t, t >= 4);
    printf("multi-core chains: all outputs equal the CPU matmul\n");
    for (int i = 0; i < 5; ++i) {
        struct rknpu_mem_destroy_c d = {h[i], 0, 0};
        CHECK(ioctl(fd, RKNPU_MEM_DESTROY_C, &d) == 0, "destroy");
    }
    close(fd);
    return 0;
}
