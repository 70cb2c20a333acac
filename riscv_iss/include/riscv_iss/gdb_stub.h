// SPDX-License-Identifier: MIT
// GDB remote serial protocol stub for one Hart, over TCP or stdin/stdout (`target remote | rviss --gdb
// stdio prog.elf`). Register numbering follows GDB's RISC-V target: x0-x31 = 0-31, pc = 32,
// f0-f31 = 33-64, CSR n = 65 + n.
#pragma once
#include <cstdint>
#include <string>

#include "riscv_iss/hart.h"

namespace iss {

class GdbStub {
public:
    explicit GdbStub(Hart& hart) : hart_(hart) {}
    ~GdbStub();
    GdbStub(const GdbStub&) = delete;
    GdbStub& operator=(const GdbStub&) = delete;
    /// Serves one debugger session. `where` is ":PORT", "HOST:PORT" or "stdio". Returns the guest exit code
    /// (0 if the debugger detached or killed the program), or -1 with error() set if the transport failed.
    int serve(const std::string& where);
    const std::string& error() const { return error_; }

private:
    bool open_transport(const std::string& where);
    bool get_packet(std::string& packet);
    void put_packet(const std::string& body);
    bool read_byte(uint8_t& b);
    bool interrupt_requested();
    std::string handle(const std::string& packet, bool& resume, bool& step, bool& quit);
    std::string resume_and_report(bool step);
    std::string read_register(unsigned n, bool& ok);
    bool write_register(unsigned n, uint32_t v);
    std::string monitor(const std::string& cmd);
    std::string query(const std::string& packet);
    std::string breakpoint(const std::string& packet);
    std::string memory(const std::string& packet);

    Hart& hart_;
    int in_fd_ = -1, out_fd_ = -1, listen_fd_ = -1;
    bool no_ack_ = false;
    bool enter_no_ack_ = false;
    bool finished_ = false;
    int exit_code_ = 0;
    std::string error_;
    std::string pending_;  // bytes read ahead while polling for Ctrl-C
};

}  // namespace iss
