/* SPDX-License-Identifier: MIT */
/*
 * libnpusim-interposer: an LD_PRELOAD library that makes the NPU device nodes of a Rockchip board
 * (/dev/dri/card1 and /dev/dri/renderD129 of the vendor rknpu driver, /dev/accel/accel0 of
 * mainline rocket) exist for an unmodified program, backed by `npusim serve` (docs/exec.md).
 *
 * An open() of such a node returns a UNIX socket connected to the simulator: the socket is the
 * open file, so dup()/fork() share it as they share a kernel file, and close() of the last
 * descriptor releases it. ioctl() copies the argument in and out as the DRM core does (the
 * caller's size and direction), gathers the pointer payloads the kernel would read
 * (DRM_IOCTL_ROCKET_SUBMIT), passes descriptors (PRIME, fences); a bad user pointer gives
 * -EFAULT like copy_from_user. mmap() of a buffer's fake offset maps the buffer's shared memory
 * (a memfd the simulator sees as DMA memory). fstat/stat/access answer for the nodes as for a
 * character device. Plain C, libc only: built for x86-64 and aarch64 (qemu-user).
 *
 * Environment: NPUSIM_SOCKET (simulator), NPUSIM_NODES (PATH=rknpu|rocket[:...]), NPUSIM_LOG=1
 * (print every ioctl), NPUSIM_TAG (the `npusim exec` run).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "exec/protocol.h"
#include "exec/uapi.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_FDS 65536
#define MAX_CONNS 1024
#define MAX_NODES 16
#define MAX_MAPS 4096

enum { FD_NONE = 0, FD_DRM = 1, FD_FENCE = 2 };

struct node {
    char path[64];
    int kind;
    int major, minor;
};

struct conn {
    int used;
    int kind;
    char node[64];
    uint32_t file, session;
    pid_t pid; /* process that made the connection: a forked child re-attaches */
    pthread_mutex_t lock;
};

struct map {
    uintptr_t addr;
    size_t len;
    int conn;
};

static struct {
    pthread_once_t once;
    pthread_mutex_t lock;
    struct node nodes[MAX_NODES];
    int n_nodes;
    unsigned char fd_kind[MAX_FDS];
    unsigned short fd_conn[MAX_FDS];
    struct conn conns[MAX_CONNS];
    struct map maps[MAX_MAPS];
    char socket_path[108];
    char tag[32];
    int log;
    int pipe_rd, pipe_wr;
    pid_t pipe_pid;
    int (*open)(const char*, int, ...);
    int (*openat)(int, const char*, int, ...);
    int (*close)(int);
    int (*dup)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    int (*fcntl)(int, int, ...);
    int (*ioctl)(int, unsigned long, ...);
    void* (*mmap)(void*, size_t, int, int, int, off_t);
    int (*munmap)(void*, size_t);
    long (*syscall)(long, ...);
} g = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static void add_node(const char* path, int kind) {
    if (g.n_nodes >= MAX_NODES || strlen(path) >= sizeof g.nodes[0].path) return;
    struct node* n = &g.nodes[g.n_nodes++];
    snprintf(n->path, sizeof n->path, "%s", path);
    n->kind = kind;
    /* DRM nodes are char major 226 (cardN = minor N, renderDN = minor N); accel nodes major 261. */
    const char* base = strrchr(path, '/');
    base = base ? base + 1 : path;
    n->major = strncmp(base, "accel", 5) == 0 ? 261 : 226;
    n->minor = 0;
    for (const char* p = base; *p; ++p)
        if (*p >= '0' && *p <= '9') n->minor = n->minor * 10 + (*p - '0');
}

static void init(void) {
    g.open = dlsym(RTLD_NEXT, "open");
    g.openat = dlsym(RTLD_NEXT, "openat");
    g.close = dlsym(RTLD_NEXT, "close");
    g.dup = dlsym(RTLD_NEXT, "dup");
    g.dup2 = dlsym(RTLD_NEXT, "dup2");
    g.dup3 = dlsym(RTLD_NEXT, "dup3");
    g.fcntl = dlsym(RTLD_NEXT, "fcntl");
    g.ioctl = dlsym(RTLD_NEXT, "ioctl");
    g.mmap = dlsym(RTLD_NEXT, "mmap");
    g.munmap = dlsym(RTLD_NEXT, "munmap");
    g.syscall = dlsym(RTLD_NEXT, "syscall");
    const char* s = getenv("NPUSIM_SOCKET");
    snprintf(g.socket_path, sizeof g.socket_path, "%s", s && *s ? s : "/tmp/npusim.sock");
    const char* t = getenv("NPUSIM_TAG");
    snprintf(g.tag, sizeof g.tag, "%s", t ? t : "");
    const char* l = getenv("NPUSIM_LOG");
    g.log = l && *l && strcmp(l, "0") != 0;
    const char* nodes = getenv("NPUSIM_NODES");
    if (nodes && *nodes) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", nodes);
        for (char* save = NULL, *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
            char* eq = strchr(tok, '=');
            if (!eq) continue;
            *eq = 0;
            add_node(tok, strcmp(eq + 1, "rocket") == 0 ? NPX_KIND_ROCKET : NPX_KIND_RKNPU);
        }
    } else {
        add_node("/dev/dri/card1", NPX_KIND_RKNPU);
        add_node("/dev/dri/renderD129", NPX_KIND_RKNPU);
        add_node("/dev/accel/accel0", NPX_KIND_ROCKET);
    }
    g.pipe_rd = g.pipe_wr = -1;
}

static void ensure_init(void) { pthread_once(&g.once, init); }

static const struct node* find_node(const char* path) {
    if (!path) return NULL;
    for (int i = 0; i < g.n_nodes; ++i)
        if (strcmp(g.nodes[i].path, path) == 0) return &g.nodes[i];
    return NULL;
}

static int fd_kind(int fd) { return fd >= 0 && fd < MAX_FDS ? g.fd_kind[fd] : FD_NONE; }

static void say(const char* text, size_t n) {
    while (n > 0) {
        ssize_t w = write(2, text, n);
        if (w <= 0) return;
        text += w;
        n -= (size_t)w;
    }
}

/* ---- copies that fail with EFAULT instead of crashing, like copy_from_user / copy_to_user ---- */

static int pipe_copy(void* dst, const void* src, size_t n) {
    /* write() reads the source and read() writes the destination: each fails with EFAULT on a bad
     * range (also under qemu-user, where process_vm_readv is not available). */
    pthread_mutex_lock(&g.lock);
    if (g.pipe_pid != getpid()) {
        if (g.pipe_rd >= 0) {
            g.close(g.pipe_rd);
            g.close(g.pipe_wr);
        }
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) {
            pthread_mutex_unlock(&g.lock);
            return -errno;
        }
        g.pipe_rd = p[0];
        g.pipe_wr = p[1];
        g.pipe_pid = getpid();
    }
    int ret = 0;
    while (n > 0 && ret == 0) {
        const size_t chunk = n < 4096 ? n : 4096;
        ssize_t w = write(g.pipe_wr, src, chunk);
        if (w < 0) {
            ret = -errno;
            break;
        }
        ssize_t r = read(g.pipe_rd, dst, (size_t)w);
        if (r != w) {
            ret = r < 0 ? -errno : -EFAULT;
            char sink[4096];
            if (r < 0) (void)!read(g.pipe_rd, sink, (size_t)w);
            break;
        }
        src = (const char*)src + w;
        dst = (char*)dst + w;
        n -= (size_t)w;
    }
    pthread_mutex_unlock(&g.lock);
    return ret;
}

static int copy_in(void* dst, const void* user, size_t n) {
    if (n == 0) return 0;
    struct iovec l = {dst, n}, r = {(void*)user, n};
    ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
    if (got == (ssize_t)n) return 0;
    if (got < 0 && errno == EFAULT) return -EFAULT;
    return pipe_copy(dst, user, n);
}

static int copy_out(void* user, const void* src, size_t n) {
    if (n == 0) return 0;
    struct iovec l = {(void*)src, n}, r = {user, n};
    ssize_t put = process_vm_writev(getpid(), &l, 1, &r, 1, 0);
    if (put == (ssize_t)n) return 0;
    if (put < 0 && errno == EFAULT) return -EFAULT;
    return pipe_copy(user, src, n);
}

/* ---- connections ---- */

static int hello(int sock, int kind, const char* node, uint32_t attach_file, uint32_t* file, uint32_t* session) {
    struct npx_hello h;
    memset(&h, 0, sizeof h);
    h.version = NPX_PROTO_VERSION;
    h.pid = getpid();
    h.kind = (uint32_t)kind;
    h.flags = (g.log ? NPX_HELLO_LOG : 0) | (attach_file ? NPX_HELLO_ATTACH : 0);
    h.attach_file = attach_file;
    snprintf(h.node, sizeof h.node, "%s", node);
    snprintf(h.tag, sizeof h.tag, "%s", g.tag);
#if defined(__aarch64__)
    snprintf(h.arch, sizeof h.arch, "aarch64");
#elif defined(__x86_64__)
    snprintf(h.arch, sizeof h.arch, "x86_64");
#else
    snprintf(h.arch, sizeof h.arch, "unknown");
#endif
    char comm[32] = {0};
    int cfd = g.open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (cfd >= 0) {
        ssize_t n = read(cfd, comm, sizeof comm - 1);
        g.close(cfd);
        if (n > 0 && comm[n - 1] == '\n') comm[n - 1] = 0;
    }
    snprintf(h.comm, sizeof h.comm, "%s", comm);
    if (npx_send(sock, NPX_OP_HELLO, &h, sizeof h, NULL, 0, NULL, 0, NULL, 0) != 0) return -EIO;
    struct npx_hdr rh;
    void* pl = NULL;
    int fds[2];
    if (npx_recv(sock, &rh, &pl, fds) != 0 || rh.len < sizeof(struct npx_hello_reply)) {
        free(pl);
        return -EIO;
    }
    struct npx_hello_reply rep;
    memcpy(&rep, pl, sizeof rep);
    free(pl);
    if (rep.status < 0) {
        char line[256];
        int n = snprintf(line, sizeof line, "npusim: interposer: %s: %s\n", node, rep.message);
        say(line, (size_t)n);
        return rep.status;
    }
    *file = rep.file;
    *session = rep.session;
    return 0;
}

static int dial(int cloexec) {
    int s = socket(AF_UNIX, SOCK_STREAM | (cloexec ? SOCK_CLOEXEC : 0), 0);
    if (s < 0) return -errno;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", g.socket_path);
    if (connect(s, (struct sockaddr*)&a, sizeof a) != 0) {
        int e = errno;
        g.close(s);
        return -e;
    }
    return s;
}

static int open_node(const struct node* n, int flags) {
    int s = dial((flags & O_CLOEXEC) != 0);
    if (s < 0) {
        char line[256];
        int k = snprintf(line, sizeof line, "npusim: interposer: %s: cannot reach the simulator at %s (%s)\n", n->path,
                         g.socket_path, strerror(-s));
        say(line, (size_t)k);
        errno = ENOENT;
        return -1;
    }
    if (s >= MAX_FDS) {
        g.close(s);
        errno = EMFILE;
        return -1;
    }
    uint32_t file = 0, session = 0;
    int r = hello(s, n->kind, n->path, 0, &file, &session);
    if (r < 0) {
        g.close(s);
        errno = r == -ENODEV ? ENODEV : ENOENT;
        return -1;
    }
    pthread_mutex_lock(&g.lock);
    int c = -1;
    for (int i = 1; i < MAX_CONNS; ++i)
        if (!g.conns[i].used) {
            c = i;
            break;
        }
    if (c < 0) {
        pthread_mutex_unlock(&g.lock);
        g.close(s);
        errno = ENFILE;
        return -1;
    }
    g.conns[c].used = 1;
    g.conns[c].kind = n->kind;
    snprintf(g.conns[c].node, sizeof g.conns[c].node, "%s", n->path);
    g.conns[c].file = file;
    g.conns[c].session = session;
    g.conns[c].pid = getpid();
    pthread_mutex_init(&g.conns[c].lock, NULL);
    g.fd_kind[s] = FD_DRM;
    g.fd_conn[s] = (unsigned short)c;
    pthread_mutex_unlock(&g.lock);
    return s;
}

/* A forked child shares the parent's socket: it opens its own connection to the same file and
 * puts it under every descriptor of that connection (called with the connection locked). */
static int reattach(int c) {
    struct conn* k = &g.conns[c];
    if (k->pid == getpid()) return 0;
    int s = dial(0);
    if (s < 0) return s;
    uint32_t file = 0, session = 0;
    int r = hello(s, k->kind, k->node, k->file, &file, &session);
    if (r < 0) {
        g.close(s);
        return r;
    }
    pthread_mutex_lock(&g.lock);
    for (int fd = 0; fd < MAX_FDS; ++fd) {
        if (g.fd_kind[fd] == FD_DRM && g.fd_conn[fd] == c) {
            int fl = g.fcntl(fd, F_GETFD);
            g.dup3(s, fd, (fl >= 0 && (fl & FD_CLOEXEC)) ? O_CLOEXEC : 0);
        }
    }
    pthread_mutex_unlock(&g.lock);
    g.close(s);
    k->pid = getpid();
    k->session = session;
    return 0;
}

static int request(int fd, uint32_t op, const void* a, size_t alen, const void* b, size_t blen, const void* c2,
                   size_t clen, int pass_fd, struct npx_hdr* h, void** pl, int* fds) {
    const int c = g.fd_conn[fd];
    struct conn* k = &g.conns[c];
    pthread_mutex_lock(&k->lock);
    int r = reattach(c);
    if (r == 0) r = npx_send(fd, op, a, alen, b, blen, c2, clen, pass_fd >= 0 ? &pass_fd : NULL, pass_fd >= 0 ? 1 : 0);
    if (r == 0) r = npx_recv(fd, h, pl, fds);
    pthread_mutex_unlock(&k->lock);
    return r;
}

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

static long do_ioctl(int fd, unsigned long request, void* arg) {
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

/* ---- open / close / dup ---- */

static int do_open(int dirfd, const char* path, int flags, mode_t mode, int at) {
    ensure_init();
    const struct node* n = (path && path[0] == '/') ? find_node(path) : NULL;
    if (n) return open_node(n, flags);
    return at ? g.openat(dirfd, path, flags, mode) : g.open(path, flags, mode);
}

static mode_t open_mode(int flags, va_list ap) { return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0; }

EXPORT int open(const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t m = open_mode(flags, ap);
    va_end(ap);
    return do_open(AT_FDCWD, path, flags, m, 0);
}
EXPORT int open64(const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t m = open_mode(flags, ap);
    va_end(ap);
    return do_open(AT_FDCWD, path, flags, m, 0);
}
EXPORT int openat(int dirfd, const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t m = open_mode(flags, ap);
    va_end(ap);
    return do_open(dirfd, path, flags, m, 1);
}
EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t m = open_mode(flags, ap);
    va_end(ap);
    return do_open(dirfd, path, flags, m, 1);
}
/* _FORTIFY_SOURCE variants */
EXPORT int __open_2(const char* path, int flags) { return do_open(AT_FDCWD, path, flags, 0, 0); }
EXPORT int __open64_2(const char* path, int flags) { return do_open(AT_FDCWD, path, flags, 0, 0); }
EXPORT int __openat_2(int dirfd, const char* path, int flags) { return do_open(dirfd, path, flags, 0, 1); }
EXPORT int __openat64_2(int dirfd, const char* path, int flags) { return do_open(dirfd, path, flags, 0, 1); }

static void forget_fd(int fd) {
    if (fd < 0 || fd >= MAX_FDS) return;
    pthread_mutex_lock(&g.lock);
    if (g.fd_kind[fd] == FD_DRM) {
        const int c = g.fd_conn[fd];
        g.fd_kind[fd] = FD_NONE;
        int still = 0;
        for (int i = 0; i < MAX_FDS && !still; ++i) still = g.fd_kind[i] == FD_DRM && g.fd_conn[i] == c;
        if (!still) g.conns[c].used = 0;
    }
    g.fd_kind[fd] = FD_NONE;
    pthread_mutex_unlock(&g.lock);
}

static void copy_fd(int from, int to) {
    if (to < 0 || to >= MAX_FDS || from < 0 || from >= MAX_FDS) return;
    pthread_mutex_lock(&g.lock);
    g.fd_kind[to] = g.fd_kind[from];
    g.fd_conn[to] = g.fd_conn[from];
    pthread_mutex_unlock(&g.lock);
}

EXPORT int close(int fd) {
    ensure_init();
    if (fd_kind(fd) != FD_NONE) forget_fd(fd);
    return g.close(fd);
}

EXPORT int dup(int fd) {
    ensure_init();
    int r = g.dup(fd);
    if (r >= 0 && fd_kind(fd) != FD_NONE) copy_fd(fd, r);
    return r;
}

EXPORT int dup2(int fd, int to) {
    ensure_init();
    if (fd == to) return g.dup2(fd, to);
    if (fd_kind(to) != FD_NONE) forget_fd(to);
    int r = g.dup2(fd, to);
    if (r >= 0 && fd_kind(fd) != FD_NONE) copy_fd(fd, r);
    return r;
}

EXPORT int dup3(int fd, int to, int flags) {
    ensure_init();
    if (fd != to && fd_kind(to) != FD_NONE) forget_fd(to);
    int r = g.dup3(fd, to, flags);
    if (r >= 0 && fd_kind(fd) != FD_NONE) copy_fd(fd, r);
    return r;
}

static int do_fcntl(int fd, int cmd, long arg) {
    ensure_init();
    const int k = fd_kind(fd);
    if (k == FD_DRM && cmd == F_SETFL) /* the socket carries the protocol: keep it blocking */
        arg &= ~(long)O_NONBLOCK;
    int r = g.fcntl(fd, cmd, arg);
    if (r >= 0 && k != FD_NONE && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) copy_fd(fd, r);
    return r;
}

EXPORT int fcntl(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    return do_fcntl(fd, cmd, arg);
}
EXPORT int fcntl64(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    return do_fcntl(fd, cmd, arg);
}

/* ---- mmap ---- */

static void* do_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
    ensure_init();
    if (fd_kind(fd) != FD_DRM || (flags & MAP_ANONYMOUS)) return g.mmap(addr, len, prot, flags, fd, off);
    struct npx_mmap_req q = {(uint64_t)off, (uint64_t)len, prot, flags};
    struct npx_hdr h;
    void* pl = NULL;
    int fds[2] = {-1, -1};
    if (request(fd, NPX_OP_MMAP, &q, sizeof q, NULL, 0, NULL, 0, -1, &h, &pl, fds) != 0 ||
        h.len < sizeof(struct npx_mmap_rep)) {
        free(pl);
        errno = EIO;
        return MAP_FAILED;
    }
    struct npx_mmap_rep rep;
    memcpy(&rep, pl, sizeof rep);
    if (rep.log_len) say((const char*)pl + sizeof rep, rep.log_len);
    free(pl);
    if (rep.ret < 0 || fds[0] < 0) {
        if (fds[0] >= 0) g.close(fds[0]);
        errno = rep.ret < 0 ? -rep.ret : EIO;
        return MAP_FAILED;
    }
    if (rep.flags & NPX_MMAP_FORCE_SHARED) flags = (flags & ~MAP_PRIVATE) | MAP_SHARED;
    void* p = g.mmap(addr, len, prot, flags, fds[0], (off_t)rep.memfd_offset);
    int e = errno;
    g.close(fds[0]);
    if (p != MAP_FAILED) {
        pthread_mutex_lock(&g.lock);
        for (int i = 0; i < MAX_MAPS; ++i)
            if (!g.maps[i].addr) {
                g.maps[i].addr = (uintptr_t)p;
                g.maps[i].len = len;
                g.maps[i].conn = g.fd_conn[fd];
                break;
            }
        pthread_mutex_unlock(&g.lock);
    }
    errno = e;
    return p;
}

EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
    return do_mmap(addr, len, prot, flags, fd, off);
}
EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
    return do_mmap(addr, len, prot, flags, fd, off);
}

static int do_munmap(void* addr, size_t len) {
    ensure_init();
    int conn = 0;
    pthread_mutex_lock(&g.lock);
    for (int i = 0; i < MAX_MAPS; ++i)
        if (g.maps[i].addr == (uintptr_t)addr && addr) {
            conn = g.maps[i].conn;
            g.maps[i].addr = 0;
            break;
        }
    int fd = -1;
    if (conn && g.conns[conn].used)
        for (int i = 0; i < MAX_FDS && fd < 0; ++i)
            if (g.fd_kind[i] == FD_DRM && g.fd_conn[i] == conn) fd = i;
    pthread_mutex_unlock(&g.lock);
    int r = g.munmap(addr, len);
    if (fd >= 0 && r == 0) {
        struct npx_munmap_req q = {(uint64_t)(uintptr_t)addr, (uint64_t)len};
        struct npx_hdr h;
        void* pl = NULL;
        int fds[2];
        if (request(fd, NPX_OP_MUNMAP, &q, sizeof q, NULL, 0, NULL, 0, -1, &h, &pl, fds) == 0 &&
            h.len >= sizeof(struct npx_status_rep)) {
            struct npx_status_rep rep;
            memcpy(&rep, pl, sizeof rep);
            if (rep.text_len) say((const char*)pl + sizeof rep, rep.text_len);
        }
        free(pl);
    }
    return r;
}

EXPORT int munmap(void* addr, size_t len) { return do_munmap(addr, len); }

/* ---- stat / access on the nodes ---- */

static const struct node* node_of_fd(int fd) {
    if (fd_kind(fd) != FD_DRM) return NULL;
    return find_node(g.conns[g.fd_conn[fd]].node);
}

static void fill_stat(const struct node* n, struct stat* st) {
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = makedev((unsigned)n->major, (unsigned)n->minor);
    st->st_nlink = 1;
    st->st_blksize = 4096;
}

EXPORT int fstat(int fd, struct stat* st) {
    ensure_init();
    const struct node* n = node_of_fd(fd);
    if (n) {
        fill_stat(n, st);
        return 0;
    }
    return (int)syscall(SYS_fstat, fd, st);
}
EXPORT int fstat64(int fd, struct stat64* st) { return fstat(fd, (struct stat*)st); }
EXPORT int __fxstat(int ver, int fd, struct stat* st) {
    (void)ver;
    return fstat(fd, st);
}
EXPORT int __fxstat64(int ver, int fd, struct stat* st) {
    (void)ver;
    return fstat(fd, st);
}

static int do_fstatat(int dirfd, const char* path, struct stat* st, int flags) {
    ensure_init();
    const struct node* n = (path && path[0] == '/') ? find_node(path) : NULL;
    if (n) {
        fill_stat(n, st);
        return 0;
    }
    if (path && path[0] == 0 && (flags & AT_EMPTY_PATH) && node_of_fd(dirfd)) {
        fill_stat(node_of_fd(dirfd), st);
        return 0;
    }
#ifdef SYS_newfstatat
    return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
#else
    return (int)syscall(SYS_fstatat64, dirfd, path, st, flags);
#endif
}
EXPORT int stat(const char* path, struct stat* st) { return do_fstatat(AT_FDCWD, path, st, 0); }
EXPORT int stat64(const char* path, struct stat64* st) { return do_fstatat(AT_FDCWD, path, (struct stat*)st, 0); }
EXPORT int lstat(const char* path, struct stat* st) { return do_fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW); }
EXPORT int lstat64(const char* path, struct stat64* st) {
    return do_fstatat(AT_FDCWD, path, (struct stat*)st, AT_SYMLINK_NOFOLLOW);
}
EXPORT int fstatat(int dirfd, const char* path, struct stat* st, int flags) { return do_fstatat(dirfd, path, st, flags); }
EXPORT int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
    return do_fstatat(dirfd, path, (struct stat*)st, flags);
}
_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "LP64: stat64 is stat");
EXPORT int __xstat(int ver, const char* path, struct stat* st) {
    (void)ver;
    return do_fstatat(AT_FDCWD, path, st, 0);
}
EXPORT int __xstat64(int ver, const char* path, struct stat* st) {
    (void)ver;
    return do_fstatat(AT_FDCWD, path, st, 0);
}
EXPORT int __lxstat(int ver, const char* path, struct stat* st) {
    (void)ver;
    return do_fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}
EXPORT int __lxstat64(int ver, const char* path, struct stat* st) {
    (void)ver;
    return do_fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

/* access(2) is declared nonnull; programs may still pass NULL (the kernel answers EFAULT). */
static const struct node* find_node_unchecked(const char* path) {
    const char* volatile p = path;
    return find_node(p);
}

EXPORT int access(const char* path, int mode) {
    ensure_init();
    if (find_node_unchecked(path)) return (mode & X_OK) ? (errno = EACCES, -1) : 0;
    return (int)syscall(SYS_faccessat, AT_FDCWD, path, mode, 0);
}
EXPORT int faccessat(int dirfd, const char* path, int mode, int flags) {
    ensure_init();
    if (find_node_unchecked(path)) return (mode & X_OK) ? (errno = EACCES, -1) : 0;
    return (int)syscall(SYS_faccessat, dirfd, path, mode, flags);
}

/* ---- programs that call the system calls through syscall(2) ---- */

EXPORT long syscall(long nr, ...) {
    ensure_init();
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
    va_end(ap);
    switch (nr) {
        case SYS_ioctl:
            if (fd_kind((int)a[0]) != FD_NONE) return do_ioctl((int)a[0], (unsigned long)a[1], (void*)a[2]);
            break;
        case SYS_openat:
            if ((const char*)a[1] && ((const char*)a[1])[0] == '/' && find_node((const char*)a[1]))
                return do_open((int)a[0], (const char*)a[1], (int)a[2], (mode_t)a[3], 1);
            break;
#ifdef SYS_open
        case SYS_open:
            if ((const char*)a[0] && find_node((const char*)a[0])) return do_open(AT_FDCWD, (const char*)a[0], (int)a[1], (mode_t)a[2], 0);
            break;
#endif
        case SYS_close:
            if (fd_kind((int)a[0]) != FD_NONE) return close((int)a[0]);
            break;
        case SYS_mmap:
            if (fd_kind((int)a[4]) == FD_DRM) {
                void* p = do_mmap((void*)a[0], (size_t)a[1], (int)a[2], (int)a[3], (int)a[4], (off_t)a[5]);
                return p == MAP_FAILED ? -1 : (long)p;
            }
            break;
        case SYS_dup:
            if (fd_kind((int)a[0]) != FD_NONE) return dup((int)a[0]);
            break;
        case SYS_dup3:
            if (fd_kind((int)a[0]) != FD_NONE || fd_kind((int)a[1]) != FD_NONE) return dup3((int)a[0], (int)a[1], (int)a[2]);
            break;
        default: break;
    }
    return g.syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
