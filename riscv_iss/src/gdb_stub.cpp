// SPDX-License-Identifier: MIT
// GDB RSP transports (TCP, stdio), packet framing with checksums and acknowledgements, the session loop
// and the run/stop protocol (GDB manual, appendix E "Remote Serial Protocol", sections E.1 Overview
// and E.11 Packet Acknowledgment).
#include "riscv_iss/gdb_stub.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace iss {
namespace {

/// A file-descriptor transport: a TCP socket (send with MSG_NOSIGNAL) or stdin/stdout (SIGPIPE is
/// ignored while the stub serves, so a vanished reader is an EPIPE error, not the end of the process).
class FdConnection : public GdbConnection {
   public:
    FdConnection(int in, int out, bool socket) : in_(in), out_(out), socket_(socket) {}
    bool read_byte(uint8_t& b) override {
        for (;;) {
            const ssize_t n = ::read(in_, &b, 1);
            if (n == 1) return true;
            if (n < 0 && errno == EINTR) continue;
            return false;
        }
    }
    bool readable() override {
        pollfd p{in_, POLLIN, 0};
        return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
    }
    bool write(const char* data, std::size_t len) override {
        while (len > 0) {
            const ssize_t n = socket_ ? ::send(out_, data, len, MSG_NOSIGNAL) : ::write(out_, data, len);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            data += n;
            len -= static_cast<std::size_t>(n);
        }
        return true;
    }

   private:
    int in_, out_;
    bool socket_;
};

/// Ignores SIGPIPE for its lifetime (writes to a closed pipe then fail with EPIPE).
class IgnoreSigpipe {
   public:
    IgnoreSigpipe() {
        struct sigaction ign {};
        ign.sa_handler = SIG_IGN;
        sigemptyset(&ign.sa_mask);
        ::sigaction(SIGPIPE, &ign, &old_);
    }
    ~IgnoreSigpipe() { ::sigaction(SIGPIPE, &old_, nullptr); }
    IgnoreSigpipe(const IgnoreSigpipe&) = delete;
    IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;

   private:
    struct sigaction old_ {};
};

int hex_digit(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

GdbStub::~GdbStub() {
    if (listen_fd_ >= 0) ::close(listen_fd_);
}

GdbStub::Got GdbStub::get_packet(std::string& packet) {
    for (;;) {
        uint8_t b = 0;
        auto next = [&](uint8_t& out) {
            if (!pending_.empty()) {
                out = static_cast<uint8_t>(pending_.front());
                pending_.erase(0, 1);
                return true;
            }
            return conn_->read_byte(out);
        };
        if (!next(b)) return Got::kEof;
        if (b == 0x03) return Got::kInterrupt;
        if (b != '$') continue;  // acks, noise between packets
        packet.clear();
        uint8_t sum = 0;
        bool oversize = false;
        for (;;) {
            if (!next(b)) return Got::kEof;
            if (b == '#') break;
            if (b == '$') {  // a new start: the previous packet was cut off
                packet.clear();
                sum = 0;
                oversize = false;
                continue;
            }
            sum = static_cast<uint8_t>(sum + b);
            if (packet.size() < kMaxPacket)
                packet.push_back(static_cast<char>(b));
            else
                oversize = true;
        }
        uint8_t c1 = 0, c2 = 0;
        if (!next(c1) || !next(c2)) return Got::kEof;
        const int h1 = hex_digit(c1), h2 = hex_digit(c2);
        if (h1 < 0 || h2 < 0 || static_cast<uint8_t>(h1 * 16 + h2) != sum) {
            if (!no_ack_ && !conn_->write("-", 1)) return Got::kEof;  // NAK: the client sends it again
            continue;
        }
        if (!no_ack_ && !conn_->write("+", 1)) return Got::kEof;
        if (oversize) packet = "\x01oversize";
        return Got::kPacket;
    }
}

bool GdbStub::put_packet(const std::string& body) {
    std::string frame = "$";
    uint8_t sum = 0;
    for (char ch : body) {
        const auto c = static_cast<uint8_t>(ch);
        if (c == '$' || c == '#' || c == '}' || c == '*') {  // binary escape (GDB manual E.1)
            frame.push_back('}');
            sum = static_cast<uint8_t>(sum + '}');
            frame.push_back(static_cast<char>(c ^ 0x20));
            sum = static_cast<uint8_t>(sum + (c ^ 0x20));
        } else {
            frame.push_back(ch);
            sum = static_cast<uint8_t>(sum + c);
        }
    }
    frame += fmt::format("#{:02x}", sum);
    for (int attempt = 0; attempt < 8; ++attempt) {
        if (!conn_->write(frame.data(), frame.size())) return false;
        if (no_ack_) return true;
        for (;;) {
            uint8_t ack = 0;
            if (!conn_->read_byte(ack)) return false;
            if (ack == '+') return true;
            if (ack == '-') break;  // retransmit
            if (ack == '$') {       // the client moved on without acknowledging: keep its packet
                pending_.push_back('$');
                return true;
            }
            if (ack == 0x03) pending_.push_back(static_cast<char>(ack));
        }
    }
    return true;  // gave up retransmitting: carry on with the session
}

bool GdbStub::interrupt_requested() {
    while (conn_->readable()) {
        uint8_t c = 0;
        if (!conn_->read_byte(c)) return true;  // the debugger went away: stop (the session ends next)
        if (c == 0x03) return true;
        pending_.push_back(static_cast<char>(c));
        if (pending_.size() > kMaxPacket + 16) return true;  // a client that talks while we run: stop
    }
    return false;
}

uint64_t GdbStub::budget_left() const {
    if (budget_ == 0) return ~0ull;
    const uint64_t used = hart_.executed_ - start_executed_;
    return used >= budget_ ? 0 : budget_ - used;
}

std::string GdbStub::resume_and_report(bool step) {
    StopReason r = StopReason::kNone;
    if (budget_left() == 0) {
        if (!quiet_)
            std::fprintf(stderr, "%s: gdb: instruction limit of %llu reached, the program does not run further\n",
                         tool_.c_str(), static_cast<unsigned long long>(budget_));
        return "S05";
    }
    if (step) {
        r = hart_.run(1);
    } else {
        do {
            const uint64_t n = std::min<uint64_t>(budget_left(), 1u << 16);
            if (n == 0) break;
            r = hart_.run(n);
        } while (r == StopReason::kInsnLimit && !interrupt_requested());
    }
    const auto has = [](const std::vector<uint32_t>& v, uint32_t pc) {
        return std::find(v.begin(), v.end(), pc) != v.end();
    };
    switch (r) {
        case StopReason::kExit:
            finished_ = true;
            exit_code_ = hart_.exit_code();
            return fmt::format("W{:02x}", hart_.exit_code() & 0xff);
        case StopReason::kBreakpoint:
            if (has(sw_breaks_, hart_.pc_)) return "T05swbreak:;";
            if (has(hw_breaks_, hart_.pc_)) return "T05hwbreak:;";
            return "S05";
        case StopReason::kWatchpoint:
            return fmt::format("T05watch:{:08x};", hart_.watch_hit_addr());
        case StopReason::kFatal:
            if (!quiet_) std::fprintf(stderr, "%s: error: %s\n", tool_.c_str(), hart_.stop_message().c_str());
            finished_ = true;
            exit_code_ = 1;
            return hart_.fatal_kind() == FatalKind::kIllegalInsn ? "X04" : "X0b";
        default:
            return "S05";  // step done, Ctrl-C, budget used up, or WFI with nothing to wake the hart
    }
}

void GdbStub::detach_debugger() {
    for (uint32_t pc : sw_breaks_) hart_.remove_breakpoint(pc);
    for (uint32_t pc : hw_breaks_) hart_.remove_hw_breakpoint(pc);
    for (const Watch& w : watches_) hart_.remove_watchpoint(w.addr, w.len, w.kind);
    sw_breaks_.clear();
    hw_breaks_.clear();
    watches_.clear();
    pending_.clear();
    no_ack_ = enter_no_ack_ = false;
}

int GdbStub::serve_connection(GdbConnection& c) {
    conn_ = &c;
    no_ack_ = enter_no_ack_ = detach_run_ = false;
    std::string packet;
    for (;;) {
        const Got g = get_packet(packet);
        if (g == Got::kEof) break;
        if (g == Got::kInterrupt) {  // Ctrl-C while already stopped: report the stop again
            if (!put_packet("S05")) break;
            continue;
        }
        bool resume = false, step = false, quit = false;
        std::string reply;
        if (packet == "\x01oversize") {
            reply = "E01";
        } else {
            try {
                reply = handle(packet, resume, step, quit);
            } catch (const std::exception&) {
                reply = "E01";  // nothing a client sends may end the session
            }
        }
        if (resume) {
            if (!put_packet(resume_and_report(step))) break;
            if (finished_) return exit_code_;
            continue;
        }
        if (!(quit && packet[0] == 'k') && !put_packet(reply)) break;
        if (enter_no_ack_) no_ack_ = true, enter_no_ack_ = false;
        if (quit) {
            detach_debugger();
            if (detach_run_) return kDetachedRun;
            finished_ = true;  // k / vKill: the run ends here
            return 0;
        }
    }
    detach_debugger();  // the client went away without D or k
    return kClientGone;
}

int GdbStub::serve(const std::string& where) {
    IgnoreSigpipe no_sigpipe;
    start_executed_ = hart_.executed_;
    if (where == "stdio") {
        FdConnection c(0, 1, false);
        const int rc = serve_connection(c);
        if (rc != kClientGone) return rc;
        std::fprintf(stderr, "%s: gdb: the debugger closed the connection; the run ends\n", tool_.c_str());
        return 0;
    }
    const auto colon = where.rfind(':');
    if (colon == std::string::npos) {
        error_ = "--gdb '" + where + "' is not :PORT, HOST:PORT or stdio";
        return -1;
    }
    const std::string host = colon == 0 ? "127.0.0.1" : where.substr(0, colon);
    const std::string port_text = where.substr(colon + 1);
    int port = 0;
    for (char ch : port_text) {
        if (ch < '0' || ch > '9' || port > 65535) {
            port = -1;
            break;
        }
        port = port * 10 + (ch - '0');
    }
    if (port_text.empty() || port < 0 || port > 65535) {
        error_ = "--gdb '" + where + "': port '" + port_text + "' is not 0..65535 (0 = any free port)";
        return -1;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &addr.sin_addr) != 1) {
        error_ = "--gdb '" + where + "': host '" + host + "' is not an IPv4 address (or localhost)";
        return -1;
    }
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 1) != 0) {
        error_ = fmt::format("--gdb '{}': cannot listen on {}:{} ({})", where, host, port, std::strerror(errno));
        return -1;
    }
    socklen_t alen = sizeof addr;
    if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &alen) == 0) port = ntohs(addr.sin_port);
    port_ = port;
    for (;;) {
        std::fprintf(stderr, "%s: waiting for GDB on %s:%d\n", tool_.c_str(), host.c_str(), port);
        int fd = -1;
        do {
            fd = ::accept(listen_fd_, nullptr, nullptr);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0) {
            error_ = std::string("--gdb: accept failed (") + std::strerror(errno) + ")";
            return -1;
        }
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        FdConnection c(fd, fd, true);
        const int rc = serve_connection(c);
        ::close(fd);
        if (rc != kClientGone) return rc;
        std::fprintf(stderr, "%s: gdb: the debugger disconnected; the program stays stopped at pc 0x%08x\n",
                     tool_.c_str(), hart_.pc_);
    }
}

}  // namespace iss
