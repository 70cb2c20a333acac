// SPDX-License-Identifier: MIT
// GDB remote serial protocol stub for one Hart, over TCP or stdin/stdout (`target remote | rviss --gdb
// stdio prog.elf`). Register numbering follows GDB's RISC-V target: x0-x31 = 0-31, pc = 32,
// f0-f31 = 33-64, CSR n = 65 + n.
//
// Robustness (issue 23): packets are checked (checksum, '+'/'-' acknowledgement until QStartNoAckMode),
// at most kMaxPacket bytes long, and every malformed packet gets an error reply instead of ending the
// session; writes never raise SIGPIPE. When the client goes away the stub detaches (debugger breakpoints,
// watchpoints and hardware breakpoints removed): over TCP it waits for the next client with the program
// stopped where it was; over stdio, where nobody can reconnect, the run ends (exit 0). `D` (detach)
// lets the program run to its end without debugger; `k` ends the run.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "riscv_iss/hart.h"

namespace iss {

/// Byte stream under the stub: a TCP socket, stdin/stdout, or memory (tests, fuzzing).
class GdbConnection {
   public:
    virtual ~GdbConnection() = default;
    /// Blocks for one byte; false at end of stream or error.
    virtual bool read_byte(uint8_t& b) = 0;
    /// A byte is ready without blocking (Ctrl-C polling while the program runs).
    virtual bool readable() = 0;
    /// Writes everything; false if the peer is gone (never raises SIGPIPE).
    virtual bool write(const char* data, std::size_t len) = 0;
};

class GdbStub {
   public:
    /// Packets longer than this (the PacketSize we advertise) are refused with an error reply.
    static constexpr std::size_t kMaxPacket = 0x4000;
    /// serve(): the debugger detached (D): the caller runs the program on without debugger.
    static constexpr int kDetachedRun = -2;
    /// serve_connection(): the client went away without D or k.
    static constexpr int kClientGone = -3;

    explicit GdbStub(Hart& hart) : hart_(hart) {}
    ~GdbStub();
    GdbStub(const GdbStub&) = delete;
    GdbStub& operator=(const GdbStub&) = delete;
    /// Serves debugger sessions. `where` is ":PORT", "HOST:PORT" or "stdio". Returns the guest exit code
    /// (0 if the debugger killed the program or went away over stdio), kDetachedRun after D, or -1 with
    /// error() set if the transport cannot be opened.
    int serve(const std::string& where);
    /// Serves one session on `c` until it ends (tests, fuzzing): what serve() returns, or kClientGone.
    int serve_connection(GdbConnection& c);
    const std::string& error() const { return error_; }
    /// The TCP port serve() listens on (once listening; ":0" picks a free one), 0 before.
    int listen_port() const { return port_; }
    void set_tool_name(const std::string& name) { tool_ = name; }
    /// No notes on stderr (fuzzing).
    void set_quiet(bool q) { quiet_ = q; }
    /// Instruction budget (attempted instructions) for everything the debugger lets the program run;
    /// 0 = none. A continue that uses it up stops as if interrupted.
    void set_max_insns(uint64_t n) { budget_ = n; }
    /// True once the session ended for good (program exited or killed, detached-run finished).
    bool finished() const { return finished_; }

    // Packet handling, public for the protocol unit tests: the reply to one packet body (no framing).
    std::string handle(const std::string& packet, bool& resume, bool& step, bool& quit);

   private:
    enum class Got { kPacket, kInterrupt, kEof };
    Got get_packet(std::string& packet);
    bool put_packet(const std::string& body);
    bool interrupt_requested();
    std::string resume_and_report(bool step);
    void detach_debugger();
    int run_detached();
    uint64_t budget_left() const;
    std::string read_register(unsigned n, bool& ok);
    bool write_register(unsigned n, uint32_t v);
    std::string monitor(const std::string& cmd);
    std::string query(const std::string& packet);
    std::string breakpoint(const std::string& packet);
    std::string memory(const std::string& packet);
    std::string write_all_registers(const std::string& packet);

    Hart& hart_;
    GdbConnection* conn_ = nullptr;
    int listen_fd_ = -1;
    std::atomic<int> port_{0};
    bool no_ack_ = false;
    bool enter_no_ack_ = false;
    bool finished_ = false;
    bool detach_run_ = false;
    int exit_code_ = 0;
    uint64_t budget_ = 0, start_executed_ = 0;
    std::string error_;
    std::string tool_ = "rviss";
    bool quiet_ = false;
    std::string pending_;  // bytes read ahead while polling for Ctrl-C
    // What the debugger set (removed again when it goes away).
    std::vector<uint32_t> sw_breaks_, hw_breaks_;
    struct Watch {
        uint32_t addr, len;
        Hart::WatchKind kind;
    };
    std::vector<Watch> watches_;
};

}  // namespace iss
