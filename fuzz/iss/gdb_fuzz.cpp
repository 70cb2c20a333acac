// SPDX-License-Identifier: MIT
// Fuzz target (issue 23): the GDB RSP stub through an in-memory connection. The input is either the raw
// byte stream a client sends (first byte even), or (first byte odd) packet bodies separated by '\n' that
// the harness frames with correct checksums and acknowledges, so mutations reach the packet handlers and
// not only the framing. The stub serves a small program (loads, stores, a loop) with an instruction budget,
// so continue/step always end. Crashes, sanitizer reports, exceptions escaping serve_connection() and hangs
// are findings.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "common.h"
#include "riscv_iss/bus.h"
#include "riscv_iss/gdb_stub.h"
#include "riscv_iss/hart.h"

namespace {

class MemoryConnection : public iss::GdbConnection {
   public:
    explicit MemoryConnection(std::string in) : in_(std::move(in)) {}
    bool read_byte(uint8_t& b) override {
        if (pos_ >= in_.size()) return false;
        b = static_cast<uint8_t>(in_[pos_++]);
        return true;
    }
    bool readable() override { return false; }
    bool write(const char*, std::size_t) override { return true; }

   private:
    std::string in_;
    std::size_t pos_ = 0;
};

std::string frame_all(const uint8_t* data, size_t size) {
    std::string out;
    std::size_t start = 1;
    for (std::size_t i = 1; i <= size; ++i) {
        if (i == size || data[i] == '\n') {
            std::string body(reinterpret_cast<const char*>(data + start), i - start);
            uint8_t sum = 0;
            for (char c : body) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(c));
            char tail[8];
            std::snprintf(tail, sizeof tail, "#%02x+", sum);
            out += "$" + body + tail;  // '+' acknowledges the stub's reply
            start = i + 1;
        }
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    static const iss::CorePreset preset = iss::fuzz::small_core();
    iss::Bus bus(preset);
    // lui x1,0x80001; addi x2,x2,1; sw x2,0(x1); lw x3,0(x1); bne x3,x0,-12 (loop to addi); j .
    const uint32_t prog[] = {0x800010b7, 0x00110113, 0x0020a023, 0x0000a183, 0xfe019ae3, 0x0000006f};
    std::memcpy(bus.host_ptr(0x80000000u, sizeof prog), prog, sizeof prog);
    iss::IsaConfig isa = preset.isa;
    isa.reset_pc = 0x80000000u;
    iss::Hart hart(isa, preset.cycles, bus, preset.devices);
    bus.attach(&hart);
    hart.console_out = [](const char*, size_t) {};
    iss::GdbStub stub(hart);
    stub.set_max_insns(5000);
    stub.set_quiet(true);
    MemoryConnection c((data[0] & 1) ? frame_all(data, size) : std::string(reinterpret_cast<const char*>(data), size));
    stub.serve_connection(c);  // must return, whatever the client sent
    return 0;
}
