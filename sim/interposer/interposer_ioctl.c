/* SPDX-License-Identifier: MIT */
/* libnpusim-interposer: ioctl() on the simulated nodes (the DRM core's copy-in/copy-out, DRM_IOCTL_ROCKET_SUBMIT's
 * user-pointer payloads, fences). See interposer.c. */
#include "interposer/interposer_internal.h"

/* ---- ioctl ---- */

struct buf {
    unsigned char* p;
    size_t n, cap;
};
static int buf_add(struct buf* b, const void* d, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + n) cap *= 2;
        unsigned char* p = realloc(b->p, cap);
        if (!p) return -ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
    return 0;
}

/* What rocket_ioctl_submit reads through its user pointers, gathered for the simulator. */
static int gather_rocket_submit(const struct npx_rocket_submit* s, struct buf* out) {
    struct npx_rocket_blob blob = {0, 0};
    if (s->job_count == 0 || s->job_struct_size < sizeof(struct npx_rocket_job) || s->reserved != 0)
        return buf_add(out, &blob, sizeof blob); /* the simulator answers these from the struct */
    struct buf jobs = {0};
    for (uint32_t i = 0; i < s->job_count; ++i) {
        struct npx_rocket_job j;
        if (copy_in(&j, (const char*)(uintptr_t)s->jobs + (size_t)i * s->job_struct_size, sizeof j) != 0) {
            blob.jobs_fault = 1;
            break;
        }
        struct npx_rocket_job_blob jb = {NPX_ROCKET_JOB_OK, 0, 0, 0, j.task_struct_size, 0};
        struct buf body = {0};
        if (j.task_count && j.task_struct_size >= sizeof(struct npx_rocket_task)) {
            for (uint32_t t = 0; t < j.task_count; ++t) {
                struct npx_rocket_task task;
                if (copy_in(&task, (const char*)(uintptr_t)j.tasks + (size_t)t * j.task_struct_size, sizeof task) != 0) {
                    jb.status = NPX_ROCKET_JOB_TASKS_FAULT;
                    break;
                }
                buf_add(&body, &task, sizeof task);
            }
            if (jb.status == NPX_ROCKET_JOB_OK) jb.task_count = j.task_count;
        }
        if (jb.status == NPX_ROCKET_JOB_OK && jb.task_count) {
            uint32_t* h = malloc(((size_t)j.in_bo_handle_count + j.out_bo_handle_count + 1) * 4);
            if (!h) return -ENOMEM;
            if (copy_in(h, (const void*)(uintptr_t)j.in_bo_handles, (size_t)j.in_bo_handle_count * 4) != 0 ||
                copy_in(h + j.in_bo_handle_count, (const void*)(uintptr_t)j.out_bo_handles,
                        (size_t)j.out_bo_handle_count * 4) != 0) {
                jb.status = NPX_ROCKET_JOB_HANDLES_FAULT;
            } else {
                jb.in_count = j.in_bo_handle_count;
                jb.out_count = j.out_bo_handle_count;
                buf_add(&body, h, ((size_t)jb.in_count + jb.out_count) * 4);
            }
            free(h);
        }
        if (jb.status != NPX_ROCKET_JOB_OK) {
            jb.task_count = jb.in_count = jb.out_count = 0;
            body.n = 0;
        }
        buf_add(&jobs, &jb, sizeof jb);
        if (body.n) buf_add(&jobs, body.p, body.n);
        free(body.p);
        blob.job_count++;
    }
    int r = buf_add(out, &blob, sizeof blob);
    if (r == 0 && !blob.jobs_fault && jobs.n) r = buf_add(out, jobs.p, jobs.n);
    free(jobs.p);
    return r;
}

static int drm_ioctl(int fd, uint32_t cmd, void* arg) {
    const int kind = g.conns[g.fd_conn[fd]].kind;
    const uint32_t dir = NPX_IOC_DIR(cmd), size = NPX_IOC_SIZE(cmd), nr = NPX_IOC_NR(cmd);
    const int drm = NPX_IOC_TYPE(cmd) == NPX_DRM_TYPE;
    unsigned char* k = calloc(1, size ? size : 1);
    unsigned char* orig = calloc(1, size ? size : 1);
    if (!k || !orig) {
        free(k);
        free(orig);
        return -ENOMEM;
    }
    struct npx_ioctl_req q = {cmd, 0, 0, 0, (uint64_t)(uintptr_t)arg};
    if ((dir & NPX_IOC_WRITE) && size) {
        if (copy_in(k, arg, size) != 0)
            q.flags |= NPX_IOCTL_ARG_FAULT;
        else
            q.arg_len = size;
        memcpy(orig, k, size);
    }
    struct buf extra = {0};
    int pass_fd = -1;
    const int readable = !(q.flags & NPX_IOCTL_ARG_FAULT) && q.arg_len == size;
    if (drm && readable) {
        if (kind == NPX_KIND_ROCKET && nr == NPX_ROCKET_NR_SUBMIT && size >= sizeof(struct npx_rocket_submit))
            gather_rocket_submit((const struct npx_rocket_submit*)k, &extra);
        if (nr == NPX_DRM_NR_PRIME_FD_TO_HANDLE && size >= sizeof(struct npx_drm_prime_handle)) {
            int f = ((struct npx_drm_prime_handle*)k)->fd;
            if (g.fcntl(f, F_GETFD) >= 0) pass_fd = f;
        }
        if (kind == NPX_KIND_RKNPU && nr == NPX_RKNPU_NR_SUBMIT && size >= sizeof(struct npx_rknpu_submit)) {
            const struct npx_rknpu_submit* s = (const struct npx_rknpu_submit*)k;
            if ((s->flags & NPX_RKNPU_JOB_FENCE_IN) && g.fcntl(s->fence_fd, F_GETFD) >= 0) pass_fd = s->fence_fd;
        }
    }
    q.extra_len = (uint32_t)extra.n;
    struct npx_hdr h;
    void* pl = NULL;
    int fds[2] = {-1, -1};
    int r = request(fd, NPX_OP_IOCTL, &q, sizeof q, k, q.arg_len, extra.p, extra.n, pass_fd, &h, &pl, fds);
    free(extra.p);
    if (r != 0 || h.len < sizeof(struct npx_ioctl_rep)) {
        free(pl);
        free(k);
        free(orig);
        say("npusim: interposer: lost the simulator\n", 39);
        return -EIO;
    }
    struct npx_ioctl_rep rep;
    memcpy(&rep, pl, sizeof rep);
    const unsigned char* body = (const unsigned char*)pl + sizeof rep;
    int ret = rep.ret;
    unsigned char* out = (unsigned char*)body;
    if (fds[0] >= 0) {
        if (fds[0] >= MAX_FDS) {
            g.close(fds[0]);
            fds[0] = -1;
            ret = -EMFILE;
        } else {
            if (!rep.fd_cloexec) g.fcntl(fds[0], F_SETFD, 0);
            if (rep.fd_offset >= 0 && (uint32_t)rep.fd_offset + 4 <= rep.out_len)
                memcpy(out + rep.fd_offset, &fds[0], 4);
            if (kind == NPX_KIND_RKNPU && drm && nr == NPX_RKNPU_NR_SUBMIT) {
                pthread_mutex_lock(&g.lock);
                g.fd_kind[fds[0]] = FD_FENCE;
                pthread_mutex_unlock(&g.lock);
            }
        }
    }
    /* DRM_IOCTL_VERSION / GET_UNIQUE: drm_copy_field into the caller's buffers. */
    if (drm && ret == 0 && (nr == NPX_DRM_NR_VERSION || nr == NPX_DRM_NR_GET_UNIQUE) && rep.extra_len) {
        const char* s = (const char*)body + rep.out_len;
        const char* end = s + rep.extra_len;
        uint64_t lens[3] = {0}, ptrs[3] = {0};
        int fields = 0;
        if (nr == NPX_DRM_NR_VERSION && size >= sizeof(struct npx_drm_version)) {
            const struct npx_drm_version* v = (const struct npx_drm_version*)orig;
            lens[0] = v->name_len, ptrs[0] = v->name;
            lens[1] = v->date_len, ptrs[1] = v->date;
            lens[2] = v->desc_len, ptrs[2] = v->desc;
            fields = 3;
        } else if (nr == NPX_DRM_NR_GET_UNIQUE && size >= sizeof(struct npx_drm_unique)) {
            const struct npx_drm_unique* u = (const struct npx_drm_unique*)orig;
            lens[0] = u->unique_len, ptrs[0] = u->unique;
            fields = 1;
        }
        for (int i = 0; i < fields && s < end; ++i) {
            size_t len = strnlen(s, (size_t)(end - s));
            size_t n = len < lens[i] ? len : (size_t)lens[i];
            if (n && ptrs[i] && copy_out((void*)(uintptr_t)ptrs[i], s, n) != 0) ret = -EFAULT;
            s += len + 1;
        }
    }
    if (rep.out_len && copy_out(arg, out, rep.out_len) != 0) ret = -EFAULT;
    if (rep.log_len) say((const char*)body + rep.out_len + rep.extra_len, rep.log_len);
    free(pl);
    free(k);
    free(orig);
    return ret;
}

static int fence_ioctl(int fd, uint32_t cmd, void* arg) {
    if (NPX_IOC_TYPE(cmd) == NPX_SYNC_TYPE && NPX_IOC_NR(cmd) == NPX_SYNC_NR_FILE_INFO &&
        NPX_IOC_SIZE(cmd) == sizeof(struct npx_sync_file_info)) {
        struct npx_sync_file_info info;
        if (copy_in(&info, arg, sizeof info) != 0) return -EFAULT;
        struct pollfd p = {fd, POLLIN, 0};
        int signaled = poll(&p, 1, 0) > 0;
        snprintf(info.name, sizeof info.name, "rknpu");
        info.status = signaled ? 1 : 0;
        info.num_fences = 1;
        return copy_out(arg, &info, sizeof info) != 0 ? -EFAULT : 0;
    }
    char line[160];
    int n = snprintf(line, sizeof line, "npusim: interposer: ioctl 0x%08x on a fence descriptor is not emulated: -ENOTTY\n",
                     cmd);
    say(line, (size_t)n);
    return -ENOTTY;
}

long do_ioctl(int fd, unsigned long request, void* arg) {
    ensure_init();
    int r;
    switch (fd_kind(fd)) {
        case FD_DRM: r = drm_ioctl(fd, (uint32_t)request, arg); break;
        case FD_FENCE: r = fence_ioctl(fd, (uint32_t)request, arg); break;
        default: return g.ioctl(fd, request, arg);
    }
    if (r < 0) {
        errno = -r;
        return -1;
    }
    return r;
}

EXPORT int ioctl(int fd, unsigned long request, ...) {
    va_list ap;
    va_start(ap, request);
    void* arg = va_arg(ap, void*);
    va_end(ap);
    return (int)do_ioctl(fd, request, arg);
}

