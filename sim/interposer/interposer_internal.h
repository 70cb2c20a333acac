/* SPDX-License-Identifier: MIT */
/* libnpusim-interposer, internal: the state and helpers its three files share (interposer.c: state,
 * copies and connections; interposer_ioctl.c: ioctl; interposer_fs.c: open/close/dup, mmap, stat,
 * syscall). Everything here is hidden (C_VISIBILITY_PRESET hidden); EXPORT marks the interposed calls. */
#ifndef NPUSIM_INTERPOSER_INTERNAL_H
#define NPUSIM_INTERPOSER_INTERNAL_H

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

struct interposer_state {
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
};
extern struct interposer_state g;

void ensure_init(void);
const struct node* find_node(const char* path);
int fd_kind(int fd);
void say(const char* text, size_t n);
/* Copies that fail with -EFAULT instead of crashing, like copy_from_user / copy_to_user. */
int copy_in(void* dst, const void* user, size_t n);
int copy_out(void* user, const void* src, size_t n);
/* Opens a connection to the simulator for node n: the new descriptor, or -1 with errno. */
int open_node(const struct node* n, int flags);
/* One request/answer on fd's connection (re-attaching a forked child first). */
int request(int fd, uint32_t op, const void* a, size_t alen, const void* b, size_t blen, const void* c2,
            size_t clen, int pass_fd, struct npx_hdr* h, void** pl, int* fds);
long do_ioctl(int fd, unsigned long request, void* arg);

#endif
