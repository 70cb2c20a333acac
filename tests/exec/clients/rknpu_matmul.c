/* SPDX-License-Identifier: MIT */
/*
 * A board program for the vendor rknpu driver, with mtx512/rk3588-npu's ioctl sequence
 * (src/npu_interface.c, tests/matmul_int8.c): open /dev/dri/card1, DRM_IOCTL_VERSION, one buffer
 * per tensor with RKNPU_MEM_CREATE + MEM_MAP + mmap (the task buffer with RKNPU_MEM_KERNEL_MAPPING),
 * RKNPU_ACT_RESET, one mtx512 matmul task, RKNPU_SUBMIT PC|BLOCK|PINGPONG with a 6000 ms timeout
 * on core_mask 1 and subcore_task[0] = {0, 1}, read back, munmap, MEM_DESTROY, close.
 * The result is checked against a CPU matmul: int8 x int8 -> int32, or fp16 x fp16 -> fp32 with
 * whole numbers (exact).
 *
 * usage: rknpu_matmul [int8|fp16] [M K N] [core] [--no-reset] [--repeat R]
 */
#include "npu_client.h"

int main(int argc, char** argv) {
    int fp16 = argc > 1 && strcmp(argv[1], "fp16") == 0;
    int m = argc > 4 ? atoi(argv[2]) : 8, k = argc > 4 ? atoi(argv[3]) : 64, n = argc > 4 ? atoi(argv[4]) : 32;
    int core = argc > 5 ? atoi(argv[5]) : 0;
    int reset = 1, repeat = 1;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--no-reset") == 0) reset = 0;
        if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = atoi(argv[i + 1]);
    }
    CHECK(m > 0 && (m % 4 == 0 || m == 1) && k % 32 == 0 && n % (fp16 ? 16 : 32) == 0, "shape %dx%dx%d", m, k, n);
    const int bpe = fp16 ? 2 : 1, c2 = fp16 ? 8 : 16;

    int fd = rk_open("/dev/dri/card1");
    CHECK(fd >= 0, "open /dev/dri/card1: %s", strerror(errno));
    struct rknpu_action_c act = {RKNPU_GET_DRV_VERSION_C, 0};
    CHECK(ioctl(fd, RKNPU_ACTION_C, &act) == 0, "RKNPU_GET_DRV_VERSION");
    printf("rknpu driver version %u.%u.%u\n", act.value / 10000, act.value % 10000 / 100, act.value % 100);

    uint64_t regcmd_dma, regcmd_obj, tasks_dma, tasks_obj, in_dma, in_obj, w_dma, w_obj, out_dma, out_obj;
    uint32_t regcmd_h, tasks_h, in_h, w_h, out_h;
    uint64_t* regcmd = rk_alloc(fd, 1024, 0, &regcmd_dma, &regcmd_obj, &regcmd_h);
    struct rknpu_task_c* tasks = rk_alloc(fd, 1024, RKNPU_MEM_KERNEL_MAPPING_C, &tasks_dma, &tasks_obj, &tasks_h);
    uint8_t* input = rk_alloc(fd, (size_t)(m * k * bpe), 0, &in_dma, &in_obj, &in_h);
    uint8_t* weights = rk_alloc(fd, (size_t)(n * k * bpe), 0, &w_dma, &w_obj, &w_h);
    uint8_t* output = rk_alloc(fd, (size_t)(m * n * 4), 0, &out_dma, &out_obj, &out_h);
    CHECK(regcmd && tasks && input && weights && output, "buffer allocation: %s", strerror(errno));
    printf("input dma is %lx, output dma is %lx, weights dma is %lx\n", (unsigned long)in_dma, (unsigned long)out_dma,
           (unsigned long)w_dma);
    if (reset) {
        struct rknpu_action_c r = {RKNPU_ACT_RESET_C, 0};
        CHECK(ioctl(fd, RKNPU_ACTION_C, &r) == 0, "RKNPU_ACT_RESET");
    }

    uint64_t regs[MTX_ARRAY_ENTRIES];
    CHECK(mtx_matmul_task(regs, m, k, n, fp16, (uint32_t)in_dma, (uint32_t)w_dma, (uint32_t)out_dma) == 0, "gen");
    memcpy(regcmd, regs, sizeof regs);
    memset(tasks, 0, sizeof *tasks);
    tasks[0].enable_mask = 0xd;
    tasks[0].int_mask = 0x300; /* wait for the DPU */
    tasks[0].int_clear = 0x1ffff;
    tasks[0].regcfg_amount = MTX_REGCFG_AMOUNT;
    tasks[0].regcmd_addr = regcmd_dma;

    /* data: small values so that fp16 products and sums stay exact */
    int32_t* a = malloc(sizeof(int32_t) * (size_t)(m * k));
    int32_t* b = malloc(sizeof(int32_t) * (size_t)(n * k));
    uint32_t seed = 12345u + (uint32_t)core * 777u + (uint32_t)(fp16 ? 1 : 0);
    for (int i = 0; i < m * k; ++i) a[i] = fp16 ? (int32_t)(lcg(&seed) % 9) - 4 : (int32_t)(lcg(&seed) % 255) - 127;
    for (int i = 0; i < n * k; ++i) b[i] = fp16 ? (int32_t)(lcg(&seed) % 9) - 4 : (int32_t)(lcg(&seed) % 255) - 127;
    memset(input, 0, (size_t)(m * k * bpe));
    memset(weights, 0, (size_t)(n * k * bpe));
    for (int mm = 0; mm < m; ++mm)
        for (int kk = 0; kk < k; ++kk) {
            const size_t at = mtx_feature_index(k, m, c2, kk, mm);
            if (fp16) {
                uint16_t h = f32_to_f16((float)a[mm * k + kk]);
                memcpy(input + at * 2, &h, 2);
            } else {
                input[at] = (uint8_t)(int8_t)a[mm * k + kk];
            }
        }
    for (int nn = 0; nn < n; ++nn)
        for (int kk = 0; kk < k; ++kk) {
            const size_t at = mtx_weight_index(k, fp16 ? 16 : 32, nn, kk);
            if (fp16) {
                uint16_t h = f32_to_f16((float)b[nn * k + kk]);
                memcpy(weights + at * 2, &h, 2);
            } else {
                weights[at] = (uint8_t)(int8_t)b[nn * k + kk];
            }
        }

    for (int rep = 0; rep < repeat; ++rep) {
        memset(output, 0xa5, (size_t)(m * n * 4));
        tasks[0].int_status = 0;
        struct rknpu_submit_c submit;
        memset(&submit, 0, sizeof submit);
        submit.flags = RKNPU_JOB_PC_C | RKNPU_JOB_PINGPONG_C;
        submit.timeout = 6000;
        submit.task_number = 1;
        submit.task_obj_addr = tasks_obj;
        submit.core_mask = 1u << core;
        submit.fence_fd = -1;
        submit.subcore_task[core].task_start = 0;
        submit.subcore_task[core].task_number = 1;
        int ret = ioctl(fd, RKNPU_SUBMIT_C, &submit);
        printf("RKNPU_SUBMIT returned %d, task_counter %u, hw_elapse_time %lld ns, int_status 0x%x\n", ret,
               submit.task_counter, (long long)submit.hw_elapse_time, tasks[0].int_status);
        CHECK(ret == 0, "RKNPU_SUBMIT: %s", strerror(errno));
        CHECK(submit.task_counter == 1, "task_counter %u", submit.task_counter);
        CHECK(submit.hw_elapse_time > 0, "hw_elapse_time %lld", (long long)submit.hw_elapse_time);
        CHECK((tasks[0].int_status & 0x300) != 0 && (tasks[0].int_status & ~0x300u) == 0, "int_status 0x%x",
              tasks[0].int_status);
        int bad = 0;
        for (int mm = 0; mm < m; ++mm)
            for (int nn = 0; nn < n; ++nn) {
                int64_t acc = 0;
                for (int kk = 0; kk < k; ++kk) acc += (int64_t)a[mm * k + kk] * b[nn * k + kk];
                const size_t at = mtx_output_index(m, nn, mm);
                if (fp16) {
                    float got;
                    memcpy(&got, output + at * 4, 4);
                    if (got != (float)acc && bad++ < 5) printf("mismatch m %d n %d: %g, expected %lld\n", mm, nn, got, (long long)acc);
                } else {
                    int32_t got;
                    memcpy(&got, output + at * 4, 4);
                    if (got != acc && bad++ < 5) printf("mismatch m %d n %d: %d, expected %lld\n", mm, nn, got, (long long)acc);
                }
            }
        CHECK(bad == 0, "%d of %d outputs differ from the CPU matmul", bad, m * n);
    }
    printf("Multiplication of [%d,%d] x [%d,%d] (%s) on core %d successful\n", m, k, n, k, fp16 ? "fp16" : "int8", core);

    munmap(regcmd, 1024);
    munmap(tasks, 1024);
    munmap(input, (size_t)(m * k * bpe));
    munmap(weights, (size_t)(n * k * bpe));
    munmap(output, (size_t)(m * n * 4));
    uint32_t hs[5] = {regcmd_h, tasks_h, in_h, w_h, out_h};
    for (int i = 0; i < 5; ++i) {
        struct rknpu_mem_destroy_c d = {hs[i], 0, 0};
        CHECK(ioctl(fd, RKNPU_MEM_DESTROY_C, &d) == 0, "RKNPU_MEM_DESTROY");
    }
    close(fd);
    free(a);
    free(b);
    return 0;
}
