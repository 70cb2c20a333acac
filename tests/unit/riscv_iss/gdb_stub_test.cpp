// SPDX-License-Identifier: MIT
// GDB stub robustness (issue 23) through an in-memory connection and over real TCP: checksums (a corrupt
// packet is NAKed and the retransmission served), malformed packets answered with E01 without ending the
// session, the packet size limit, a vanishing client (detach, breakpoints removed), a client that closes
// before reading the reply (no SIGPIPE) and the next client on the same port. Packets and replies are
// framed as GDB's remote.c frames them (GDB manual E.1: $body#checksum, '+'/'-' acknowledgements).
#include "riscv_iss/gdb_stub.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "test_platform.h"

namespace iss {
namespace {
using test::kRamBase;
using test::Platform;

std::string frame(const std::string& body) {
    uint8_t sum = 0;
    for (char c : body) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(c));
    return fmt::format("${}#{:02x}", body, sum);
}

/// Replays `input` as what the client sends; collects what the stub writes.
class MemoryConnection : public GdbConnection {
   public:
    explicit MemoryConnection(std::string input) : in_(std::move(input)) {}
    bool read_byte(uint8_t& b) override {
        if (pos_ >= in_.size()) return false;
        b = static_cast<uint8_t>(in_[pos_++]);
        return true;
    }
    bool readable() override { return false; }
    bool write(const char* data, std::size_t len) override {
        out.append(data, len);
        return true;
    }
    std::string out;

   private:
    std::string in_;
    std::size_t pos_ = 0;
};

TEST(GdbStub, CorruptPacketIsNakedAndTheRetransmissionServed) {
    Platform p;
    GdbStub stub(p.hart);
    std::string bad = frame("qAttached");
    bad[bad.size() - 1] ^= 1;  // wrong checksum
    MemoryConnection c(bad + frame("qAttached") + "+" + frame("k"));
    EXPECT_EQ(stub.serve_connection(c), 0);
    EXPECT_EQ(c.out.substr(0, 2), "-+");                   // NAK, then ACK of the good copy
    EXPECT_NE(c.out.find(frame("1")), std::string::npos);  // its reply
    EXPECT_TRUE(stub.finished());
}

TEST(GdbStub, MalformedPacketsGetErrorsAndTheSessionGoesOn) {
    Platform p;
    GdbStub stub(p.hart);
    const char* const bad[] = {"P",
                               "P2=",
                               "P2=12345",
                               "P2=zzzzzzzz",
                               "Pz=00000000",
                               "G123",
                               "m80000000",
                               "m80000000,zz",
                               "M80000000,4:1234",
                               "X80000000,2:",
                               "Z0,80000000",
                               "Z9,1,2",
                               "p123456789",
                               "qXfer:features:read:target.xml:zz",
                               "qRcmd,4",
                               "c12345678901"};
    std::string in;
    for (const char* b : bad) in += frame(b) + "+";
    in += frame("p2") + "+" + frame("k");
    p.hart.x_[2] = 0x11223344;
    MemoryConnection c(in);
    EXPECT_EQ(stub.serve_connection(c), 0);
    std::size_t errors = 0;
    for (std::size_t at = 0; (at = c.out.find(frame("E01"), at)) != std::string::npos; ++at) ++errors;
    EXPECT_EQ(errors, std::size(bad) - 1);                        // Z9 (unsupported type) gets the empty reply
    EXPECT_NE(c.out.find(frame("")), std::string::npos);          // ... here
    EXPECT_NE(c.out.find(frame("44332211")), std::string::npos);  // and the session still works
}

TEST(GdbStub, OversizedPacketIsRefused) {
    Platform p;
    GdbStub stub(p.hart);
    MemoryConnection c(frame("M80000000,1:" + std::string(GdbStub::kMaxPacket + 10, '0')) + "+" + frame("k"));
    EXPECT_EQ(stub.serve_connection(c), 0);
    EXPECT_NE(c.out.find(frame("E01")), std::string::npos);
}

TEST(GdbStub, VanishedClientDetachesAndRemovesItsBreakpoints) {
    Platform p;
    p.load({0x00128293, 0x00128293, 0x00128293, 0x0000006f});  // addi x5,x5,1 x3; j .
    GdbStub stub(p.hart);
    MemoryConnection c(frame("Z0," + fmt::format("{:x}", kRamBase + 4) + ",4") + "+");  // then EOF
    EXPECT_EQ(stub.serve_connection(c), GdbStub::kClientGone);
    EXPECT_FALSE(stub.finished());
    EXPECT_EQ(p.hart.run(3), StopReason::kInsnLimit);  // no breakpoint left behind
    EXPECT_EQ(p.hart.x_[5], 3u);
}

TEST(GdbStub, ContinueHonoursTheInstructionBudget) {
    Platform p;
    p.load({0x0000006f});  // j .
    GdbStub stub(p.hart);
    stub.set_max_insns(5000);
    MemoryConnection c(frame("c") + "+" + frame("k"));
    EXPECT_EQ(stub.serve_connection(c), 0);
    EXPECT_NE(c.out.find(frame("S05")), std::string::npos);
    EXPECT_EQ(p.hart.executed_, 5000u);
}

TEST(GdbStub, HardwareBreakpointsUseTheCoresTriggers) {
    CorePreset preset = test::test_preset();
    preset.isa.triggers.count = 1;
    preset.isa.triggers.debugger_only = true;
    Platform p(preset);
    p.load({0x00128293, 0x00128293, 0x00128293, 0x0000006f});
    GdbStub stub(p.hart);
    const std::string z1 = fmt::format("Z1,{:x},4", kRamBase + 8), z1b = fmt::format("Z1,{:x},4", kRamBase + 4);
    MemoryConnection c(frame(z1) + "+" + frame(z1b) + "+" + frame("c") + "+" + frame("p5") + "+" + frame("k"));
    EXPECT_EQ(stub.serve_connection(c), 0);
    EXPECT_NE(c.out.find(frame("OK")), std::string::npos);
    EXPECT_NE(c.out.find(frame("E0E")), std::string::npos);  // the one trigger is taken
    EXPECT_NE(c.out.find(frame("T05hwbreak:;")), std::string::npos);
    EXPECT_NE(c.out.find(frame("02000000")), std::string::npos);  // x5 = 2: stopped before the third addi
}

/// Connects to 127.0.0.1:port (retrying while the stub starts listening).
int connect_to(int port) {
    for (int i = 0; i < 200; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
        ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
}

TEST(GdbStub, SurvivesAClientThatClosesEarlyAndServesTheNextOne) {
    Platform p;
    p.load({0x0000006f});
    GdbStub stub(p.hart);
    int rc = -100;
    std::thread server([&] { rc = stub.serve(":0"); });
    int port = 0;
    for (int i = 0; i < 500 && (port = stub.listen_port()) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_NE(port, 0);
    // Client 1 asks for the target description and closes without reading: the stub's writes go to a dead
    // socket (EPIPE, no SIGPIPE), it detaches and waits again.
    int fd = connect_to(port);
    ASSERT_GE(fd, 0);
    const std::string req = frame("qXfer:features:read:target.xml:0,3fff");
    ASSERT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    // Client 2 kills the program: serve() returns.
    fd = connect_to(port);
    ASSERT_GE(fd, 0);
    const std::string kill = frame("k");
    ASSERT_EQ(::send(fd, kill.data(), kill.size(), 0), static_cast<ssize_t>(kill.size()));
    server.join();
    ::close(fd);
    EXPECT_EQ(rc, 0);
    EXPECT_TRUE(stub.finished());
}

}  // namespace
}  // namespace iss
