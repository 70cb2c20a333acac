/* SPDX-License-Identifier: MIT */
/*
 * DRM-core and buffer semantics a program relies on, on the vendor rknpu node: dup() and fork()
 * share the open file; two opens are two files; GEM_FLINK/GEM_OPEN share a buffer between files
 * (refused on the render node, DRM_AUTH); PRIME export gives a dma-buf fd that maps the same memory
 * and imports back to the same handle, and into another file as the same object
 * (RKNPU_MEM_CREATE with that handle answers its dma_addr); GEM_CLOSE; a non-blocking submit with
 * RKNPU_JOB_FENCE_OUT whose fence fd becomes readable when the job is done; ioctl through
 * syscall(2); fstat reports a DRM character device; mmap of an offset no buffer has fails.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "npu_client.h"

#define M 8
#define K 64
#define N 32

int main(void) {
    int fd = rk_open("/dev/dri/card1");
    CHECK(fd >= 0, "open: %s", strerror(errno));
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 226 && minor(st.st_rdev) == 1,
          "fstat of card1: a DRM character device 226:1");
    int fd2 = open("/dev/dri/card1", O_RDWR | O_CLOEXEC);
    int fd3 = dup(fd);
    CHECK(fd2 >= 0 && fd3 >= 0, "second open and dup");

    uint64_t dma, obj;
    uint32_t h;
    uint8_t* p = rk_alloc(fd, 8192, 0, &dma, &obj, &h);
    CHECK(p, "alloc");
    for (int i = 0; i < 8192; ++i) p[i] = (uint8_t)(i * 13 + 1);

    /* flink / open across files */
    struct drm_gem_flink_c fl = {h, 0};
    CHECK(ioctl(fd3, DRM_IOCTL_GEM_FLINK_C, &fl) == 0 && fl.name > 0, "FLINK through the dup: %s", strerror(errno));
    struct drm_gem_open_c go = {fl.name, 0, 0};
    CHECK(ioctl(fd2, DRM_IOCTL_GEM_OPEN_C, &go) == 0 && go.size == 8192, "GEM_OPEN in the second file");
    struct rknpu_mem_create_c mc;
    memset(&mc, 0, sizeof mc);
    mc.handle = go.handle;
    CHECK(ioctl(fd2, RKNPU_MEM_CREATE_C, &mc) == 0 && mc.dma_addr == dma && mc.obj_addr == obj,
          "MEM_CREATE with the opened handle names the same buffer");
    struct rknpu_mem_map_c mm = {go.handle, 0, 0};
    CHECK(ioctl(fd2, RKNPU_MEM_MAP_C, &mm) == 0, "MEM_MAP in the second file");
    uint8_t* q = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, (off_t)mm.offset);
    CHECK(q != MAP_FAILED && memcmp(p, q, 8192) == 0, "the second file maps the same bytes");
    q[100] = 0xee;
    CHECK(p[100] == 0xee, "a write through one mapping shows in the other");

    /* PRIME */
    struct drm_prime_handle_c ph = {h, 02000000 /* DRM_CLOEXEC */, -1};
    CHECK(ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD_C, &ph) == 0 && ph.fd >= 0, "PRIME_HANDLE_TO_FD: %s", strerror(errno));
    uint8_t* d = mmap(NULL, 8192, PROT_READ, MAP_SHARED, ph.fd, 0);
    CHECK(d != MAP_FAILED && memcmp(d, p, 8192) == 0, "the dma-buf maps the buffer");
    struct drm_prime_handle_c back = {0, 0, ph.fd};
    CHECK(ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE_C, &back) == 0 && back.handle == h, "import into the exporter: same handle");
    struct drm_prime_handle_c other = {0, 0, ph.fd};
    CHECK(ioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE_C, &other) == 0, "import into the second file");
    memset(&mc, 0, sizeof mc);
    mc.handle = other.handle;
    CHECK(ioctl(fd2, RKNPU_MEM_CREATE_C, &mc) == 0 && mc.dma_addr == dma, "the import is the same object");
    struct drm_prime_handle_c junk = {0, 0, 0 /* stdin */};
    CHECK(ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE_C, &junk) == -1 && errno == EINVAL, "import of a non-buffer: EINVAL");
    struct drm_gem_close_c gc = {go.handle, 0};
    CHECK(ioctl(fd2, DRM_IOCTL_GEM_CLOSE_C, &gc) == 0, "GEM_CLOSE");
    CHECK(ioctl(fd2, DRM_IOCTL_GEM_CLOSE_C, &gc) == -1 && errno == EINVAL, "GEM_CLOSE twice: EINVAL");

    /* the render node refuses FLINK (DRM_AUTH) */
    int rfd = open("/dev/dri/renderD129", O_RDWR);
    CHECK(rfd >= 0, "renderD129");
    uint64_t rdma, robj;
    uint32_t rh;
    CHECK(rk_alloc(rfd, 4096, 0, &rdma, &robj, &rh), "alloc on the render node");
    struct drm_gem_flink_c rfl = {rh, 0};
    CHECK(ioctl(rfd, DRM_IOCTL_GEM_FLINK_C, &rfl) == -1 && errno == EACCES, "FLINK on a render node: EACCES");
    close(rfd);
    CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0x7000000000) == MAP_FAILED && errno == EINVAL,
          "mmap of an offset no buffer has: EINVAL");

    /* syscall(2) and fork(): the child uses the inherited file */
    struct rknpu_action_c act = {RKNPU_GET_IOMMU_EN_C, 7};
    CHECK(syscall(SYS_ioctl, fd, RKNPU_ACTION_C, &act) == 0 && act.value == 1, "ioctl through syscall(2)");
    pid_t child = fork();
    if (child == 0) {
        struct rknpu_action_c a2 = {RKNPU_GET_FREQ_C, 0};
        uint64_t cd, co;
        uint32_t ch;
        int ok = ioctl(fd, RKNPU_ACTION_C, &a2) == 0 && a2.value == 1000000000u && rk_alloc(fd, 4096, 0, &cd, &co, &ch);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked child's ioctls on the inherited fd");

    /* a non-blocking submit with an out-fence */
    uint64_t rc_dma, rc_obj, tk_dma, tk_obj, in_dma, in_obj, w_dma, w_obj, out_dma, out_obj;
    uint32_t hh[5];
    uint64_t* regcmd = rk_alloc(fd, 1024, 0, &rc_dma, &rc_obj, &hh[0]);
    struct rknpu_task_c* tasks = rk_alloc(fd, 1024, RKNPU_MEM_KERNEL_MAPPING_C, &tk_dma, &tk_obj, &hh[1]);
    int8_t* in = rk_alloc(fd, M * K, 0, &in_dma, &in_obj, &hh[2]);
    int8_t* w = rk_alloc(fd, N * K, 0, &w_dma, &w_obj, &hh[3]);
    int32_t* out = rk_alloc(fd, M * N * 4, 0, &out_dma, &out_obj, &hh[4]);
    CHECK(regcmd && tasks && in && w && out, "alloc");
    for (int i = 0; i < M * K; ++i) in[i] = (int8_t)(i % 11 - 5);
    for (int i = 0; i < N * K; ++i) w[i] = (int8_t)(i % 7 - 3);
    CHECK(mtx_matmul_task(regcmd, M, K, N, 0, (uint32_t)in_dma, (uint32_t)w_dma, (uint32_t)out_dma) == 0, "gen");
    memset(tasks, 0, sizeof *tasks);
    tasks[0].enable_mask = 0xd;
    tasks[0].int_mask = 0x300;
    tasks[0].int_clear = 0x1ffff;
    tasks[0].regcfg_amount = MTX_REGCFG_AMOUNT;
    tasks[0].regcmd_addr = rc_dma;
    struct rknpu_submit_c s;
    memset(&s, 0, sizeof s);
    s.flags = RKNPU_JOB_PC_C | RKNPU_JOB_PINGPONG_C | RKNPU_JOB_NONBLOCK_C | RKNPU_JOB_FENCE_OUT_C;
    s.timeout = 6000;
    s.task_number = 1;
    s.task_obj_addr = tk_obj;
    s.core_mask = 1;
    s.fence_fd = -1;
    s.subcore_task[0] = (struct rknpu_subcore_task_c){0, 1};
    CHECK(ioctl(fd, RKNPU_SUBMIT_C, &s) == 0 && s.fence_fd >= 0, "non-blocking submit with a fence: %s", strerror(errno));
    struct pollfd pf = {s.fence_fd, POLLIN, 0};
    CHECK(poll(&pf, 1, 60000) == 1 && (pf.revents & POLLIN), "the fence signals");
    int bad = 0;
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            int32_t acc = 0;
            for (int k = 0; k < K; ++k)
                acc += in[mtx_feature_index(K, M, 16, k, m)] * w[mtx_weight_index(K, 32, n, k)];
            bad += out[mtx_output_index(M, n, m)] != acc;
        }
    CHECK(bad == 0, "%d outputs of the fenced job differ", bad);
    close(s.fence_fd);
    close(fd3);
    close(fd2);
    close(fd);
    printf("buffers: dup, fork, flink, prime, fences and syscall(2) behave as on the kernel\n");
    return 0;
}
