/* SPDX-License-Identifier: MIT */
/*
 * Wire protocol between the LD_PRELOAD interposer (in the program's process, x86-64 or aarch64
 * under qemu-user) and `npusim serve` (the simulated SoC), over a UNIX stream socket. One socket
 * per open() of an emulated device node: the socket is the file, so dup()/fork() share it as they
 * share a kernel file. Every message is a header plus payload; file descriptors (buffer memfds,
 * dma-buf fds, fences) travel as SCM_RIGHTS on the header. Little-endian fixed-width fields only
 * (both ends run on the same host). Used by C (interposer) and C++ (server, exec).
 */
#ifndef NPUSIM_EXEC_PROTOCOL_H
#define NPUSIM_EXEC_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#define NPX_MAGIC 0x3158504eu /* "NPX1" */
#define NPX_PROTO_VERSION 1u
#define NPX_MAX_PAYLOAD (256u << 20)

enum npx_op {
    NPX_OP_HELLO = 1,   /* first message of a connection: npx_hello -> npx_hello_reply */
    NPX_OP_IOCTL = 2,   /* npx_ioctl_req + arg + extra [+fd] -> npx_ioctl_rep + out + extra + log [+fd] */
    NPX_OP_MMAP = 3,    /* npx_mmap_req -> npx_mmap_rep + log + memfd */
    NPX_OP_MUNMAP = 4,  /* npx_munmap_req -> npx_status_rep + log */
    NPX_OP_CONTROL = 5  /* npx_control + text -> npx_status_rep + text */
};

enum npx_kind { NPX_KIND_RKNPU = 1, NPX_KIND_ROCKET = 2, NPX_KIND_CONTROL = 3 };

struct npx_hdr {
    uint32_t magic;
    uint32_t op;
    uint32_t len; /* payload bytes after the header */
    uint32_t nfds; /* descriptors attached to this message (0..2) */
};

#define NPX_HELLO_LOG 1u        /* --log: the reply to every request carries its text line */
#define NPX_HELLO_ATTACH 2u     /* join the file `attach_file` (a forked child re-connecting) */
struct npx_hello {
    uint32_t version;
    int32_t pid;
    uint32_t kind;
    uint32_t flags;
    uint32_t attach_file;
    uint32_t reserved;
    char node[64];  /* device path the program opened */
    char comm[32];  /* program name */
    char tag[32];   /* the `npusim exec` run this process belongs to */
    char arch[16];  /* "x86_64", "aarch64" */
};
struct npx_hello_reply {
    int32_t status; /* 0 or -errno */
    uint32_t session;
    uint32_t file;
    uint32_t reserved;
    char message[128];
};

#define NPX_IOCTL_ARG_FAULT 1u /* the argument could not be read (copy_from_user failed) */
struct npx_ioctl_req {
    uint32_t cmd;
    uint32_t arg_len;   /* bytes of the argument that follow */
    uint32_t extra_len; /* pointer payloads gathered by the interposer (rocket jobs) */
    uint32_t flags;
    uint64_t arg_addr;  /* the program's pointer, for logs only */
};
struct npx_ioctl_rep {
    int32_t ret;        /* >= 0 or -errno */
    uint32_t out_len;   /* bytes to copy back into the argument */
    uint32_t extra_len; /* strings of DRM_IOCTL_VERSION / GET_UNIQUE */
    uint32_t log_len;   /* text lines for the program's stderr */
    int32_t fd_offset;  /* >= 0: write the attached descriptor's number at this offset of out */
    uint32_t fd_cloexec;
};

/* ROCKET_SUBMIT extra payload: npx_rocket_blob, then per job npx_rocket_job_blob + tasks + handles */
struct npx_rocket_blob {
    uint32_t jobs_fault; /* the jobs array could not be read */
    uint32_t job_count;  /* jobs that follow */
};
#define NPX_ROCKET_JOB_OK 0u
#define NPX_ROCKET_JOB_TASKS_FAULT 1u
#define NPX_ROCKET_JOB_HANDLES_FAULT 2u
struct npx_rocket_job_blob {
    uint32_t status;
    uint32_t task_count;         /* npx_rocket_task entries that follow (8 bytes each) */
    uint32_t in_count, out_count; /* u32 handles that follow */
    uint32_t task_struct_size;
    uint32_t reserved;
};

struct npx_mmap_req {
    uint64_t offset;
    uint64_t length;
    int32_t prot;
    int32_t flags;
};
#define NPX_MMAP_FORCE_SHARED 1u /* map MAP_SHARED even if MAP_PRIVATE was asked (rknpu maps the pages) */
struct npx_mmap_rep {
    int32_t ret; /* 0 or -errno */
    uint32_t log_len;
    uint64_t memfd_offset; /* map the attached memfd from here */
    uint32_t flags;
    uint32_t reserved;
};
struct npx_munmap_req {
    uint64_t addr;
    uint64_t length;
};
struct npx_status_rep {
    int32_t ret;
    uint32_t text_len;
};

enum npx_control_op { NPX_CTL_WRITE_TRACE = 1, NPX_CTL_WRITE_REPORT = 2, NPX_CTL_STATUS = 3, NPX_CTL_SHUTDOWN = 4 };
struct npx_control {
    uint32_t what;
    uint32_t text_len; /* path or tag that follows */
};

#ifdef __cplusplus
extern "C" {
#endif
/* Framing helpers (sim/exec/wire.c), shared by both ends. All return 0 or -errno. */
int npx_send(int sock, uint32_t op, const void* a, size_t alen, const void* b, size_t blen, const void* c,
             size_t clen, const int* fds, uint32_t nfds);
/* Receives one message: header into *h, payload into a malloc'ed buffer (*payload, free() it),
 * up to 2 descriptors into fds (unused entries -1). */
int npx_recv(int sock, struct npx_hdr* h, void** payload, int* fds);
#ifdef __cplusplus
}
#endif

#endif /* NPUSIM_EXEC_PROTOCOL_H */
