// SPDX-License-Identifier: MIT
#include "exec/server.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "exec/core.h"
#include "exec/soc.h"
#include "trace/trace_writer.h"

namespace sim::exec {

std::string default_socket(const std::string& platform) {
    if (const char* s = std::getenv("NPUSIM_SOCKET"); s && *s) return s;
    const char* dir = std::getenv("XDG_RUNTIME_DIR");
    return fmt::format("{}/npusim-{}-{}.sock", dir && *dir ? dir : "/tmp", getuid(), platform);
}

namespace {

std::atomic<bool> g_signalled{false};
void on_signal(int) { g_signalled = true; }

class Server {
   public:
    Server(const hw::SocProfile& soc, const ServeOptions& o)
        : o_(o),
          tw_(o.record_trace || !o.trace_path.empty() ? std::make_unique<trace::TraceWriter>() : nullptr),
          core_(std::make_unique<ExecCore>(soc, o.core_mask, tw_.get())),
          soc_(&core_->soc()) {}

    int run();

   private:
    void accept_loop(int lfd);
    void serve_conn(int fd);
    bool hello(int fd, const npx_hello& h, std::shared_ptr<Session>& s);
    Reply in_sim(std::function<void(std::shared_ptr<Pending>)> fn) { return core_->in_sim(std::move(fn)); }
    void control(int fd, const npx_control& c, const std::string& text, const std::string& tag);
    void maybe_idle_exit();

    ServeOptions o_;
    std::unique_ptr<trace::TraceWriter> tw_;
    std::unique_ptr<ExecCore> core_;  ///< the SoC, the drivers, sessions and files
    SocHost* soc_;
    std::atomic<int> live_{0};
    std::atomic<bool> had_client_{false}, stopping_{false};
};

int Server::run() {
    const int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (lfd < 0 || o_.socket.size() >= sizeof addr.sun_path) {
        std::cerr << fmt::format("npusim: error: cannot create the socket '{}', serve (path limit {} bytes)\n", o_.socket,
                                 sizeof addr.sun_path - 1);
        return 2;
    }
    std::memcpy(addr.sun_path, o_.socket.c_str(), o_.socket.size() + 1);
    if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        bool bound = false;
        if (errno == EADDRINUSE) {
            // A socket file left by a server that died: nobody answers on it.
            const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            const bool alive = connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
            close(probe);
            if (alive) {
                std::cerr << fmt::format("npusim: error: a simulator already serves '{}', serve (use another --socket)\n",
                                         o_.socket);
                return 2;
            }
            unlink(o_.socket.c_str());
            bound = bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
        }
        if (!bound) {
            std::cerr << fmt::format("npusim: error: cannot bind '{}': {}, serve\n", o_.socket, std::strerror(errno));
            return 2;
        }
    }
    if (listen(lfd, 64) != 0) {
        std::cerr << fmt::format("npusim: error: cannot listen on '{}': {}, serve\n", o_.socket, std::strerror(errno));
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    std::thread acceptor;
    // Connections are accepted once the kernel runs (requests posted before it starts are lost).
    soc_->on_start([&] {
        acceptor = std::thread([this, lfd] { accept_loop(lfd); });
        if (!o_.quiet)
            std::cerr << fmt::format("npusim: serving {} ({} core(s), mask 0x{:x}) at {}\n", soc_->soc().name,
                                     soc_->core_count(), soc_->core_mask(), o_.socket);
        if (o_.ready_fd >= 0) {
            const char ok[] = "ready\n";
            (void)!write(o_.ready_fd, ok, sizeof ok - 1);
            close(o_.ready_fd);
        }
    });
    std::thread watcher([this] {
        while (!stopping_) {
            if (g_signalled) {
                stopping_ = true;
                soc_->post([] { sc_core::sc_stop(); });
                break;
            }
            soc_->nudge();
            usleep(20000);
        }
    });
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    sc_core::sc_start();
    stopping_ = true;
    shutdown(lfd, SHUT_RDWR);
    close(lfd);
    unlink(o_.socket.c_str());
    if (acceptor.joinable()) acceptor.join();
    watcher.join();
    int rc = 0;
    if (!o_.trace_path.empty() && tw_ && !tw_->write_file(o_.trace_path)) {
        std::cerr << fmt::format("npusim: error: cannot write trace '{}', serve\n", o_.trace_path);
        rc = 2;
    }
    if (!o_.report_path.empty()) {
        std::ofstream f(o_.report_path);
        f << core_->report("");  // the kernel has stopped: no dispatcher to post to
        if (!f) {
            std::cerr << fmt::format("npusim: error: cannot write report '{}', serve\n", o_.report_path);
            rc = 2;
        }
    }
    // Connection threads still blocked on a dead peer are detached; the process ends here.
    std::cout.flush();
    std::cerr.flush();
    _exit(rc);
}

void Server::accept_loop(int lfd) {
    for (;;) {
        const int fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (stopping_) {
            close(fd);
            return;
        }
        ++live_;
        had_client_ = true;
        std::thread([this, fd] { serve_conn(fd); }).detach();
    }
}

void Server::maybe_idle_exit() {
    if (o_.exit_when_idle && had_client_ && live_ == 0 && !stopping_) {
        stopping_ = true;
        soc_->post([] { sc_core::sc_stop(); });
    }
}

bool Server::hello(int fd, const npx_hello& h, std::shared_ptr<Session>& s) {
    npx_hello_reply rep{};
    Reply r = core_->open_session(h, s);
    rep.status = r.ret < 0 ? r.ret : 0;
    if (r.ret >= 0) {
        rep.session = s->id;
        rep.file = s->file ? s->file->id : 0;
    }
    std::snprintf(rep.message, sizeof rep.message, "%s", r.log.c_str());
    return npx_send(fd, NPX_OP_HELLO, &rep, sizeof rep, nullptr, 0, nullptr, 0, nullptr, 0) == 0 && r.ret >= 0;
}

void Server::serve_conn(int fd) {
    std::shared_ptr<Session> s;
    npx_hdr h{};
    void* payload = nullptr;
    int fds[2];
    if (npx_recv(fd, &h, &payload, fds) == 0 && h.op == NPX_OP_HELLO && h.len >= sizeof(npx_hello)) {
        npx_hello hi;
        std::memcpy(&hi, payload, sizeof hi);
        free(payload);
        payload = nullptr;
        if (hi.version == NPX_PROTO_VERSION && hello(fd, hi, s)) {
            for (;;) {
                if (npx_recv(fd, &h, &payload, fds) != 0) break;
                const auto* pl = static_cast<const uint8_t*>(payload);
                Reply r;
                bool ok = true;
                if (h.op == NPX_OP_CONTROL && !s->file && h.len >= sizeof(npx_control)) {
                    npx_control cq;
                    std::memcpy(&cq, pl, sizeof cq);
                    const std::string text(reinterpret_cast<const char*>(pl) + sizeof cq,
                                           std::min<size_t>(cq.text_len, h.len - sizeof cq));
                    control(fd, cq, text, s->tag);
                    for (int& x : fds)
                        if (x >= 0) close(x);
                } else {
                    const int in_fd = h.op == NPX_OP_IOCTL ? fds[0] : -1;
                    if (h.op == NPX_OP_IOCTL && fds[1] >= 0) close(fds[1]);
                    if (!core_->request(s, h.op, pl, h.len, in_fd, r)) {
                        if (in_fd >= 0) close(in_fd);
                        break;
                    }
                    if (h.op == NPX_OP_IOCTL) {
                        npx_ioctl_rep rep{r.ret, static_cast<uint32_t>(r.out.size()), static_cast<uint32_t>(r.extra.size()),
                                          static_cast<uint32_t>(r.log.size()), r.fd >= 0 ? r.fd_offset : -1,
                                          r.cloexec ? 1u : 0u};
                        std::vector<uint8_t> body(r.out);
                        body.insert(body.end(), r.extra.begin(), r.extra.end());
                        ok = npx_send(fd, NPX_OP_IOCTL, &rep, sizeof rep, body.data(), body.size(), r.log.data(),
                                      r.log.size(), r.fd >= 0 ? &r.fd : nullptr, r.fd >= 0 ? 1 : 0) == 0;
                    } else if (h.op == NPX_OP_MMAP) {
                        npx_mmap_rep rep{r.ret, static_cast<uint32_t>(r.log.size()), r.memfd_offset,
                                         r.force_shared && r.ret == 0 ? NPX_MMAP_FORCE_SHARED : 0u, 0};
                        ok = npx_send(fd, NPX_OP_MMAP, &rep, sizeof rep, r.log.data(), r.log.size(), nullptr, 0,
                                      r.fd >= 0 ? &r.fd : nullptr, r.fd >= 0 ? 1 : 0) == 0;
                    } else {
                        npx_status_rep rep{r.ret, static_cast<uint32_t>(r.log.size())};
                        ok = npx_send(fd, NPX_OP_MUNMAP, &rep, sizeof rep, r.log.data(), r.log.size(), nullptr, 0,
                                      nullptr, 0) == 0;
                    }
                }
                if (r.fd >= 0) close(r.fd);
                free(payload);
                payload = nullptr;
                if (!ok) break;
            }
        }
    }
    free(payload);
    close(fd);
    if (s) core_->close_session(s);
    --live_;
    maybe_idle_exit();
}

void Server::control(int fd, const npx_control& c, const std::string& text, const std::string& tag) {
    npx_status_rep rep{0, 0};
    std::string msg;
    if (c.what == NPX_CTL_WRITE_TRACE) {
        Reply r = in_sim([this, text](std::shared_ptr<Pending> p) {
            Reply out;
            if (!tw_) {
                out.ret = -ENOENT;
                out.log = "this simulator records no trace (start `npusim serve` with --trace)";
            } else if (!tw_->write_file(text)) {
                out.ret = -EIO;
                out.log = fmt::format("cannot write trace '{}'", text);
            }
            p->complete(std::move(out));
        });
        rep.ret = r.ret;
        msg = r.log;
    } else if (c.what == NPX_CTL_WRITE_REPORT) {
        Reply r = in_sim([this, text, tag](std::shared_ptr<Pending> p) {
            Reply out;
            std::ofstream f(text);
            f << core_->report(tag);
            if (!f) {
                out.ret = -EIO;
                out.log = fmt::format("cannot write report '{}'", text);
            }
            p->complete(std::move(out));
        });
        rep.ret = r.ret;
        msg = r.log;
    } else if (c.what == NPX_CTL_STATUS) {
        Reply r = in_sim([this](std::shared_ptr<Pending> p) {
            Reply out;
            out.log = core_->status();
            p->complete(std::move(out));
        });
        msg = r.log;
    } else if (c.what == NPX_CTL_SHUTDOWN) {
        stopping_ = true;
        soc_->post([] { sc_core::sc_stop(); });
    } else {
        rep.ret = -EINVAL;
    }
    rep.text_len = static_cast<uint32_t>(msg.size());
    npx_send(fd, NPX_OP_CONTROL, &rep, sizeof rep, msg.data(), msg.size(), nullptr, 0, nullptr, 0);
}

}  // namespace

int serve(const hw::SocProfile& soc, const ServeOptions& o) {
    Server s(soc, o);
    return s.run();
}

}  // namespace sim::exec
