/* SPDX-License-Identifier: MIT */
/* Message framing of sim/exec/protocol.h: header + payload, descriptors as SCM_RIGHTS. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "protocol.h"

static int send_all(int sock, struct msghdr* m) {
    for (;;) {
        ssize_t n = sendmsg(sock, m, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        /* Skip what was sent; descriptors go with the first byte only. */
        m->msg_control = NULL;
        m->msg_controllen = 0;
        size_t left = (size_t)n;
        while (m->msg_iovlen > 0 && left >= m->msg_iov[0].iov_len) {
            left -= m->msg_iov[0].iov_len;
            m->msg_iov++;
            m->msg_iovlen--;
        }
        if (m->msg_iovlen == 0) return 0;
        m->msg_iov[0].iov_base = (char*)m->msg_iov[0].iov_base + left;
        m->msg_iov[0].iov_len -= left;
    }
}

int npx_send(int sock, uint32_t op, const void* a, size_t alen, const void* b, size_t blen, const void* c,
             size_t clen, const int* fds, uint32_t nfds) {
    if (alen + blen + clen > NPX_MAX_PAYLOAD || nfds > 2) return -EINVAL;
    struct npx_hdr h = {NPX_MAGIC, op, (uint32_t)(alen + blen + clen), nfds};
    struct iovec iov[4];
    int n = 0;
    iov[n].iov_base = &h;
    iov[n++].iov_len = sizeof h;
    if (alen) {
        iov[n].iov_base = (void*)a;
        iov[n++].iov_len = alen;
    }
    if (blen) {
        iov[n].iov_base = (void*)b;
        iov[n++].iov_len = blen;
    }
    if (clen) {
        iov[n].iov_base = (void*)c;
        iov[n++].iov_len = clen;
    }
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = iov;
    m.msg_iovlen = (size_t)n;
    if (nfds) {
        m.msg_control = ctl.buf;
        m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
        struct cmsghdr* cm = CMSG_FIRSTHDR(&m);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
        memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
    }
    return send_all(sock, &m);
}

static int recv_exact(int sock, void* buf, size_t len) {
    char* p = (char*)buf;
    while (len > 0) {
        ssize_t n = recv(sock, p, len, 0);
        if (n == 0) return -EPIPE;
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int npx_recv(int sock, struct npx_hdr* h, void** payload, int* fds) {
    fds[0] = fds[1] = -1;
    *payload = NULL;
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {h, sizeof *h};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl.buf;
    m.msg_controllen = sizeof ctl.buf;
    ssize_t n;
    do {
        n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n == 0) return -EPIPE;
    if (n < 0) return -errno;
    for (struct cmsghdr* cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k; ++i) {
                int fd;
                memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
                if (i < 2)
                    fds[i] = fd;
                else
                    close(fd);
            }
        }
    }
    if ((size_t)n < sizeof *h) {
        int r = recv_exact(sock, (char*)h + n, sizeof *h - (size_t)n);
        if (r) return r;
    }
    if (h->magic != NPX_MAGIC || h->len > NPX_MAX_PAYLOAD) return -EPROTO;
    if (h->len) {
        *payload = malloc(h->len);
        if (!*payload) return -ENOMEM;
        int r = recv_exact(sock, *payload, h->len);
        if (r) {
            free(*payload);
            *payload = NULL;
            return r;
        }
    }
    return 0;
}
