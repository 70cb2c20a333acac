/* SPDX-License-Identifier: MIT */
/*
 * A program on the mainline rocket accel uAPI (torvalds/linux include/uapi/drm/rocket_accel.h),
 * the interface Mesa's Teflon delegate uses: open /dev/accel/accel0, DRM_IOCTL_ROCKET_CREATE_BO
 * (addresses from 0 in the file's own address space, page-aligned, in allocation order),
 * mmap of the returned offset, DRM_IOCTL_ROCKET_SUBMIT of jobs of tasks ({regcmd, regcmd_count}
 * with the task's full entry count, as Mesa passes it), DRM_IOCTL_ROCKET_PREP_BO with an absolute
 * CLOCK_MONOTONIC deadline before reading an output, FINI_BO, GEM_CLOSE. The tasks carry the
 * mtx512 int8 matmul register list; results are checked against a CPU matmul. Also the argument
 * checks of rocket_ioctl_submit / prep_bo (EINVAL, EFAULT, ENOENT).
 */
#include <time.h>

#include "npu_client.h"

#define T 3
#define M 8
#define K 64
#define N 32

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void* bo(int fd, uint32_t size, uint32_t* handle, uint64_t* dma) {
    struct rocket_create_bo_c c = {size, 0, 0, 0};
    CHECK(ioctl(fd, ROCKET_CREATE_BO_C, &c) == 0, "CREATE_BO: %s", strerror(errno));
    void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)c.offset);
    CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
    *handle = c.handle;
    *dma = c.dma_address;
    return p;
}

int main(void) {
    int fd = rk_open("/dev/accel/accel0");
    CHECK(fd >= 0, "open /dev/accel/accel0: %s", strerror(errno));
    uint32_t h_rc, h_in, h_w, h_out;
    uint64_t d_rc, d_in, d_w, d_out;
    uint64_t* regcmd = bo(fd, T * MTX_ARRAY_ENTRIES * 8, &h_rc, &d_rc);
    int8_t* in = bo(fd, T * M * K, &h_in, &d_in);
    int8_t* w = bo(fd, N * K, &h_w, &d_w);
    int32_t* out = bo(fd, T * M * N * 4, &h_out, &d_out);
    printf("rocket BOs at 0x%lx 0x%lx 0x%lx 0x%lx\n", (unsigned long)d_rc, (unsigned long)d_in, (unsigned long)d_w,
           (unsigned long)d_out);
    CHECK(d_rc == 0 && d_in == 0x1000 && d_w == 0x2000 && d_out == 0x3000, "rocket addresses: drm_mm from 0, page-aligned");
    static int32_t a[T][M * K], b[N * K];
    uint32_t seed = 7;
    for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k) {
            b[n * K + k] = (int32_t)(lcg(&seed) % 255) - 127;
            w[mtx_weight_index(K, 32, n, k)] = (int8_t)b[n * K + k];
        }
    struct rocket_task_c tasks[T];
    for (int t = 0; t < T; ++t) {
        for (int m = 0; m < M; ++m)
            for (int k = 0; k < K; ++k) {
                a[t][m * K + k] = (int32_t)(lcg(&seed) % 255) - 127;
                in[(size_t)t * M * K + mtx_feature_index(K, M, 16, k, m)] = (int8_t)a[t][m * K + k];
            }
        CHECK(mtx_matmul_task(regcmd + t * MTX_ARRAY_ENTRIES, M, K, N, 0, (uint32_t)(d_in + (uint64_t)t * M * K),
                              (uint32_t)d_w, (uint32_t)(d_out + (uint64_t)t * M * N * 4)) == 0, "gen");
        tasks[t].regcmd = (uint32_t)(d_rc + (uint64_t)t * MTX_ARRAY_ENTRIES * 8);
        tasks[t].regcmd_count = MTX_TASK_ENTRIES;
    }
    memset(out, 0x5a, T * M * N * 4);
    uint32_t ins[3] = {h_rc, h_in, h_w}, outs[1] = {h_out};
    struct rocket_job_c jobs[2];
    memset(jobs, 0, sizeof jobs);
    jobs[0] = (struct rocket_job_c){(uint64_t)(uintptr_t)&tasks[0], (uint64_t)(uintptr_t)ins, (uint64_t)(uintptr_t)outs,
                                    1, sizeof(struct rocket_task_c), 3, 1};
    jobs[1] = (struct rocket_job_c){(uint64_t)(uintptr_t)&tasks[1], (uint64_t)(uintptr_t)ins, (uint64_t)(uintptr_t)outs,
                                    2, sizeof(struct rocket_task_c), 3, 1};
    struct rocket_submit_c s = {(uint64_t)(uintptr_t)jobs, 2, sizeof(struct rocket_job_c), 0};
    CHECK(ioctl(fd, ROCKET_SUBMIT_C, &s) == 0, "SUBMIT: %s", strerror(errno));
    struct rocket_prep_bo_c prep = {h_out, 0, now_ns() + 60ll * 1000000000};
    CHECK(ioctl(fd, ROCKET_PREP_BO_C, &prep) == 0, "PREP_BO: %s", strerror(errno));
    int bad = 0;
    for (int t = 0; t < T; ++t)
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
                int64_t acc = 0;
                for (int k = 0; k < K; ++k) acc += (int64_t)a[t][m * K + k] * b[n * K + k];
                bad += out[(size_t)t * M * N + mtx_output_index(M, n, m)] != acc;
            }
    CHECK(bad == 0, "%d of %d outputs differ from the CPU matmul", bad, T * M * N);
    struct rocket_fini_bo_c fini = {h_out, 0};
    CHECK(ioctl(fd, ROCKET_FINI_BO_C, &fini) == 0, "FINI_BO");

    /* argument checks */
    s.reserved = 1;
    CHECK(ioctl(fd, ROCKET_SUBMIT_C, &s) == -1 && errno == EINVAL, "SUBMIT reserved != 0: EINVAL");
    s.reserved = 0;
    s.job_struct_size = 8;
    CHECK(ioctl(fd, ROCKET_SUBMIT_C, &s) == -1 && errno == EINVAL, "SUBMIT job_struct_size too small: EINVAL");
    s.job_struct_size = sizeof(struct rocket_job_c);
    s.jobs = 8;
    CHECK(ioctl(fd, ROCKET_SUBMIT_C, &s) == -1 && errno == EFAULT, "SUBMIT with an unreadable jobs array: EFAULT");
    struct rocket_prep_bo_c p2 = {999, 0, 0};
    CHECK(ioctl(fd, ROCKET_PREP_BO_C, &p2) == -1 && errno == ENOENT, "PREP_BO unknown handle: ENOENT");
    p2.handle = h_out;
    p2.reserved = 1;
    CHECK(ioctl(fd, ROCKET_PREP_BO_C, &p2) == -1 && errno == EINVAL, "PREP_BO reserved: EINVAL");
    struct rocket_create_bo_c z = {0, 0, 0, 0};
    CHECK(ioctl(fd, ROCKET_CREATE_BO_C, &z) == -1 && errno == EINVAL, "CREATE_BO size 0: EINVAL");
    uint32_t hs[4] = {h_rc, h_in, h_w, h_out};
    for (int i = 0; i < 4; ++i) {
        struct drm_gem_close_c gc = {hs[i], 0};
        CHECK(ioctl(fd, DRM_IOCTL_GEM_CLOSE_C, &gc) == 0, "GEM_CLOSE");
    }
    close(fd);
    printf("rocket: %d tasks in 2 jobs equal the CPU matmul\n", T);
    return 0;
}
