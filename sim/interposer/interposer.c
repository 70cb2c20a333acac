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
#include "interposer/interposer_internal.h"

struct interposer_state g = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

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

void ensure_init(void) { pthread_once(&g.once, init); }

const struct node* find_node(const char* path) {
    if (!path) return NULL;
    for (int i = 0; i < g.n_nodes; ++i)
        if (strcmp(g.nodes[i].path, path) == 0) return &g.nodes[i];
    return NULL;
}

int fd_kind(int fd) { return fd >= 0 && fd < MAX_FDS ? g.fd_kind[fd] : FD_NONE; }

void say(const char* text, size_t n) {
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

int copy_in(void* dst, const void* user, size_t n) {
    if (n == 0) return 0;
    struct iovec l = {dst, n}, r = {(void*)user, n};
    ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
    if (got == (ssize_t)n) return 0;
    if (got < 0 && errno == EFAULT) return -EFAULT;
    return pipe_copy(dst, user, n);
}

int copy_out(void* user, const void* src, size_t n) {
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

int open_node(const struct node* n, int flags) {
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

int request(int fd, uint32_t op, const void* a, size_t alen, const void* b, size_t blen, const void* c2,
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

