// SPDX-License-Identifier: MIT
// GDB RSP transport (TCP or stdio), packet framing and the run/stop protocol.
#include "riscv_iss/gdb_stub.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace iss {

GdbStub::~GdbStub() {
    if (in_fd_ > 2) ::close(in_fd_);
    if (listen_fd_ >= 0) ::close(listen_fd_);
}

bool GdbStub::open_transport(const std::string& where) {
    if (where == "stdio") {
        in_fd_ = 0;
        out_fd_ = 1;
        return true;
    }
    const auto colon = where.rfind(':');
    if (colon == std::string::npos) {
        error_ = "--gdb expects :PORT, HOST:PORT or stdio, got '" + where + "'";
        return false;
    }
    const std::string host = colon == 0 ? "127.0.0.1" : where.substr(0, colon);
    const int port = std::atoi(where.c_str() + colon + 1);
    if (port <= 0 || port > 65535) {
        error_ = "invalid GDB port in '" + where + "'";
        return false;
    }
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &addr.sin_addr) != 1) {
        error_ = "invalid GDB host '" + host + "'";
        return false;
    }
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 1) != 0) {
        error_ = fmt::format("cannot listen on {}:{}: {}", host, port, std::strerror(errno));
        return false;
    }
    std::fprintf(stderr, "rviss: waiting for GDB on %s:%d\n", host.c_str(), port);
    in_fd_ = out_fd_ = ::accept(listen_fd_, nullptr, nullptr);
    if (in_fd_ < 0) {
        error_ = std::string("accept failed: ") + std::strerror(errno);
        return false;
    }
    ::setsockopt(in_fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return true;
}

bool GdbStub::read_byte(uint8_t& b) {
    if (!pending_.empty()) {
        b = static_cast<uint8_t>(pending_.front());
        pending_.erase(0, 1);
        return true;
    }
    return ::read(in_fd_, &b, 1) == 1;
}

bool GdbStub::interrupt_requested() {
    pollfd p{in_fd_, POLLIN, 0};
    while (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
        char c;
        if (::read(in_fd_, &c, 1) != 1) return true;  // debugger went away: stop
        if (c == 0x03) return true;
        pending_.push_back(c);
    }
    return false;
}

bool GdbStub::get_packet(std::string& packet) {
    uint8_t b = 0;
    for (;;) {
        if (!read_byte(b)) return false;
        if (b == '$') break;
        if (b == 0x03) {
            packet = "\x03";
            return true;
        }
    }
    packet.clear();
    while (read_byte(b) && b != '#') packet.push_back(static_cast<char>(b));
    uint8_t sum[2];
    if (!read_byte(sum[0]) || !read_byte(sum[1])) return false;
    if (!no_ack_) (void)!::write(out_fd_, "+", 1);
    return true;
}

void GdbStub::put_packet(const std::string& body) {
    uint8_t sum = 0;
    for (char c : body) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(c));
    const std::string frame = fmt::format("${}#{:02x}", body, sum);
    for (;;) {
        (void)!::write(out_fd_, frame.data(), frame.size());
        if (no_ack_) return;
        uint8_t ack = 0;
        if (!read_byte(ack) || ack == '+') return;
        if (ack != '-') return;  // anything else: give up retransmitting
    }
}

std::string GdbStub::resume_and_report(bool step) {
    StopReason r;
    if (step) {
        r = hart_.run(1);
    } else {
        do {
            r = hart_.run(1u << 16);
        } while (r == StopReason::kInsnLimit && !interrupt_requested());
    }
    switch (r) {
        case StopReason::kExit:
            finished_ = true;
            exit_code_ = hart_.exit_code();
            return fmt::format("W{:02x}", hart_.exit_code() & 0xff);
        case StopReason::kBreakpoint: return "T05swbreak:;";
        case StopReason::kWatchpoint: return fmt::format("T05watch:{:08x};", hart_.watch_hit_addr());
        case StopReason::kFatal:
            std::fprintf(stderr, "rviss: error: %s\n", hart_.stop_message().c_str());
            finished_ = true;
            exit_code_ = 1;
            return hart_.fatal_kind() == FatalKind::kIllegalInsn ? "X04" : "X0b";
        default: return "S05";  // step done, Ctrl-C, or WFI with nothing to wake the hart
    }
}

int GdbStub::serve(const std::string& where) {
    if (!open_transport(where)) return -1;
    std::string packet;
    while (get_packet(packet)) {
        bool resume = false, step = false, quit = false;
        const std::string reply = handle(packet, resume, step, quit);
        if (resume) {
            put_packet(resume_and_report(step));
            if (finished_) return exit_code_;
            continue;
        }
        if (packet != "\x03" || !reply.empty()) put_packet(reply);
        if (enter_no_ack_) no_ack_ = true, enter_no_ack_ = false;
        if (quit) break;
    }
    return exit_code_;
}

}  // namespace iss
