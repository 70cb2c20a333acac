/* SPDX-License-Identifier: MIT */
/* libnpusim-interposer: open/close/dup/fcntl, mmap/munmap, stat/access and syscall(2) on the simulated
 * nodes. See interposer.c. */
#include "interposer/interposer_internal.h"

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
