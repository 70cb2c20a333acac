// SPDX-License-Identifier: MIT
// GDB RSP packet handlers: registers, memory, break/watchpoints, target description, monitor commands.
// Every field is parsed strictly (hex digits only, lengths checked, nothing past the end of the packet);
// a malformed packet gets "E01" and the session goes on.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "riscv_iss/gdb_stub.h"

namespace iss {
namespace {
constexpr unsigned kRegPc = 32, kRegF0 = 33, kRegCsr0 = 65;
constexpr uint32_t kMaxMemAccess = 0x1000;  // bytes per m/M/X packet (reply hex fits kMaxPacket)
const char* const kXNames[32] = {"zero", "ra", "sp", "gp", "tp",  "t0",  "t1", "t2", "fp", "s1", "a0",
                                 "a1",   "a2", "a3", "a4", "a5",  "a6",  "a7", "s2", "s3", "s4", "s5",
                                 "s6",   "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"};
const char* const kFNames[32] = {"ft0", "ft1", "ft2", "ft3", "ft4",  "ft5",  "ft6", "ft7", "fs0",  "fs1", "fa0",
                                 "fa1", "fa2", "fa3", "fa4", "fa5",  "fa6",  "fa7", "fs2", "fs3",  "fs4", "fs5",
                                 "fs6", "fs7", "fs8", "fs9", "fs10", "fs11", "ft8", "ft9", "ft10", "ft11"};
struct CsrName {
    const char* name;
    uint32_t num;
};
const CsrName kCsrs[] = {{"mstatus", 0x300},   {"misa", 0x301},   {"mie", 0x304},      {"mtvec", 0x305},
                         {"mscratch", 0x340},  {"mepc", 0x341},   {"mcause", 0x342},   {"mtval", 0x343},
                         {"mip", 0x344},       {"mcycle", 0xb00}, {"minstret", 0xb02}, {"mcycleh", 0xb80},
                         {"minstreth", 0xb82}, {"mhartid", 0xf14}};

int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// A hex number of 1..8 digits at s[pos], ending at `stop` (or at the end when stop == 0).
bool parse_hex(const std::string& s, std::size_t& pos, char stop, uint32_t& out) {
    uint64_t v = 0;
    std::size_t n = 0;
    while (pos < s.size() && s[pos] != stop) {
        const int d = hexval(s[pos]);
        if (d < 0 || ++n > 8) return false;
        v = v * 16 + static_cast<unsigned>(d);
        ++pos;
    }
    if (n == 0 || (stop != 0 && (pos >= s.size() || s[pos] != stop))) return false;
    if (stop != 0) ++pos;  // past the separator
    out = static_cast<uint32_t>(v);
    return true;
}

/// Exactly `bytes` bytes of hex (2 digits each) from s[pos].
bool parse_hex_bytes(const std::string& s, std::size_t pos, std::size_t bytes, std::string& out) {
    if (s.size() < pos || s.size() - pos != 2 * bytes) return false;
    out.resize(bytes);
    for (std::size_t i = 0; i < bytes; ++i) {
        const int hi = hexval(s[pos + 2 * i]), lo = hexval(s[pos + 2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<char>(hi * 16 + lo);
    }
    return true;
}

bool parse_le32(const std::string& s, std::size_t pos, uint32_t& v) {  // 8 hex digits, little-endian bytes
    std::string b;
    if (!parse_hex_bytes(s.substr(0, pos + 8), pos, 4, b)) return false;
    v = static_cast<uint8_t>(b[0]) | (static_cast<uint8_t>(b[1]) << 8) | (static_cast<uint8_t>(b[2]) << 16) |
        (static_cast<uint32_t>(static_cast<uint8_t>(b[3])) << 24);
    return true;
}

std::string hex32(uint32_t v) {  // little-endian byte order, as GDB expects for RISC-V registers
    return fmt::format("{:02x}{:02x}{:02x}{:02x}", v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24);
}
std::string to_hex(const std::string& s) {
    std::string out;
    for (unsigned char c : s) out += fmt::format("{:02x}", c);
    return out;
}

std::string target_xml() {
    std::string x =
        "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\"><target version=\"1.0\">"
        "<architecture>riscv:rv32</architecture><feature name=\"org.gnu.gdb.riscv.cpu\">";
    for (unsigned i = 0; i < 32; ++i)
        x += fmt::format("<reg name=\"{}\" bitsize=\"32\" type=\"{}\" regnum=\"{}\"/>", kXNames[i],
                         i == 2 ? "data_ptr" : "int", i);
    x += "<reg name=\"pc\" bitsize=\"32\" type=\"code_ptr\" regnum=\"32\"/></feature>"
         "<feature name=\"org.gnu.gdb.riscv.fpu\">";
    for (unsigned i = 0; i < 32; ++i)
        x +=
            fmt::format("<reg name=\"{}\" bitsize=\"32\" type=\"ieee_single\" regnum=\"{}\"/>", kFNames[i], kRegF0 + i);
    x += "<reg name=\"fflags\" bitsize=\"32\" type=\"int\" regnum=\"66\"/>"
         "<reg name=\"frm\" bitsize=\"32\" type=\"int\" regnum=\"67\"/>"
         "<reg name=\"fcsr\" bitsize=\"32\" type=\"int\" regnum=\"68\"/></feature>"
         "<feature name=\"org.gnu.gdb.riscv.csr\">";
    for (const CsrName& c : kCsrs)
        x += fmt::format("<reg name=\"{}\" bitsize=\"32\" type=\"int\" regnum=\"{}\"/>", c.name, kRegCsr0 + c.num);
    return x + "</feature></target>";
}
}  // namespace

std::string GdbStub::read_register(unsigned n, bool& ok) {
    ok = true;
    if (n < 32) return hex32(hart_.x_[n]);
    if (n == kRegPc) return hex32(hart_.pc_);
    if (n < kRegCsr0) return hex32(hart_.f_[n - kRegF0]);
    uint32_t v = 0;
    ok = n - kRegCsr0 < 4096 && hart_.csr_read(n - kRegCsr0, v, true);
    return hex32(v);
}

bool GdbStub::write_register(unsigned n, uint32_t v) {
    if (n < 32) {
        if (n != 0) hart_.x_[n] = v;
        return true;
    }
    if (n == kRegPc) {
        hart_.pc_ = hart_.npc_ = v;
        return true;
    }
    if (n < kRegCsr0) {
        hart_.f_[n - kRegF0] = v;
        return true;
    }
    return n - kRegCsr0 < 4096 && hart_.csr_write(n - kRegCsr0, v, true);
}

std::string GdbStub::monitor(const std::string& cmd) {
    std::string out;
    if (cmd == "cyclecount" || cmd == "cycles")
        out = fmt::format("cycles: {}\n", hart_.cycles_);
    else if (cmd == "instret" || cmd == "insncount")
        out = fmt::format("instret: {}\n", hart_.instret_);
    else if (cmd == "help")
        out = "monitor commands: cyclecount, instret, help\n";
    else
        out = "unknown monitor command '" + cmd.substr(0, 64) + "' (try: monitor help)\n";
    put_packet("O" + to_hex(out));
    return "OK";
}

std::string GdbStub::query(const std::string& p) {
    if (p.rfind("qSupported", 0) == 0)
        return fmt::format("PacketSize={:x};qXfer:features:read+;swbreak+;hwbreak+;QStartNoAckMode+", kMaxPacket);
    if (p == "QStartNoAckMode") {
        enter_no_ack_ = true;  // takes effect after this reply has been acknowledged
        return "OK";
    }
    static const std::string kXfer = "qXfer:features:read:";
    if (p.rfind(kXfer, 0) == 0) {
        const std::size_t colon = p.find(':', kXfer.size());
        if (colon == std::string::npos) return "E01";
        if (p.substr(kXfer.size(), colon - kXfer.size()) != "target.xml") return "E00";  // no such annex
        std::size_t pos = colon + 1;
        uint32_t off = 0, len = 0;
        if (!parse_hex(p, pos, ',', off) || !parse_hex(p, pos, 0, len)) return "E01";
        const std::string xml = target_xml();
        if (off >= xml.size()) return "l";
        const std::string chunk = xml.substr(off, std::min<std::size_t>(len, kMaxPacket / 2));
        return (off + chunk.size() >= xml.size() ? "l" : "m") + chunk;
    }
    if (p.rfind("qRcmd,", 0) == 0) {
        std::string cmd;
        if ((p.size() - 6) % 2 != 0 || !parse_hex_bytes(p, 6, (p.size() - 6) / 2, cmd)) return "E01";
        return monitor(cmd);
    }
    if (p == "qAttached") return "1";
    if (p == "qC") return "QC1";
    if (p == "qfThreadInfo") return "m1";
    if (p == "qsThreadInfo") return "l";
    return "";
}

std::string GdbStub::breakpoint(const std::string& p) {
    const bool insert = p[0] == 'Z';
    if (p.size() < 4 || p[2] != ',' || p[1] < '0' || p[1] > '4') return p.size() >= 2 && p[1] > '4' ? "" : "E01";
    const int type = p[1] - '0';
    std::size_t pos = 3;
    uint32_t addr = 0, kind = 0;
    if (!parse_hex(p, pos, ',', addr)) return "E01";
    const std::size_t semi = p.find(';', pos);  // conditions/commands after ';' are not supported
    if (!parse_hex(p.substr(0, semi), pos, 0, kind)) return "E01";
    if (type == 0) {
        auto it = std::find(sw_breaks_.begin(), sw_breaks_.end(), addr);
        if (insert) {
            if (it == sw_breaks_.end()) sw_breaks_.push_back(addr);
            hart_.add_breakpoint(addr);
        } else {
            if (it != sw_breaks_.end()) sw_breaks_.erase(it);
            hart_.remove_breakpoint(addr);
        }
        return "OK";
    }
    if (type == 1) {  // hardware breakpoint: one of the core's Sdtrig triggers
        auto it = std::find(hw_breaks_.begin(), hw_breaks_.end(), addr);
        if (insert) {
            if (it != hw_breaks_.end()) return "OK";
            if (!hart_.add_hw_breakpoint(addr)) return "E0E";  // no free trigger (GDB: cannot insert)
            hw_breaks_.push_back(addr);
            return "OK";
        }
        if (it == hw_breaks_.end()) return "E01";
        hw_breaks_.erase(it);
        hart_.remove_hw_breakpoint(addr);
        return "OK";
    }
    const auto wk = type == 2 ? Hart::WatchKind::kWrite : type == 3 ? Hart::WatchKind::kRead : Hart::WatchKind::kAccess;
    if (kind == 0 || kind > kMaxMemAccess) return "E01";
    if (insert) {
        hart_.add_watchpoint(addr, kind, wk);
        watches_.push_back({addr, kind, wk});
    } else {
        for (auto it = watches_.begin(); it != watches_.end(); ++it) {
            if (it->addr == addr && it->len == kind && it->kind == wk) {
                watches_.erase(it);
                hart_.remove_watchpoint(addr, kind, wk);
                return "OK";
            }
        }
        return "E01";
    }
    return "OK";
}

std::string GdbStub::memory(const std::string& p) {
    std::size_t pos = 1;
    uint32_t addr = 0, len = 0;
    if (!parse_hex(p, pos, ',', addr)) return "E01";
    const char stop = p[0] == 'm' ? 0 : ':';
    if (!parse_hex(p, pos, stop, len) || len > kMaxMemAccess) return "E01";
    if (p[0] == 'm') {
        std::string buf(len, '\0');
        if (!hart_.debug_read(addr, len, reinterpret_cast<uint8_t*>(buf.data()))) return "E01";
        return to_hex(buf);
    }
    std::string data;
    if (p[0] == 'M') {
        if (!parse_hex_bytes(p, pos, len, data)) return "E01";
    } else {  // 'X': binary with 0x7d escapes
        for (std::size_t i = pos; i < p.size(); ++i) {
            if (p[i] == 0x7d) {
                if (i + 1 >= p.size()) return "E01";
                data.push_back(static_cast<char>(p[++i] ^ 0x20));
            } else {
                data.push_back(p[i]);
            }
        }
        if (data.size() != len) return "E01";
    }
    return hart_.debug_write(addr, len, reinterpret_cast<const uint8_t*>(data.data())) ? "OK" : "E01";
}

std::string GdbStub::write_all_registers(const std::string& p) {
    const std::size_t hex = p.size() - 1;
    if (hex == 0 || hex % 8 != 0 || hex / 8 > kRegPc + 1) return "E01";
    uint32_t vals[kRegPc + 1];
    for (std::size_t i = 0; i < hex / 8; ++i)
        if (!parse_le32(p, 1 + 8 * i, vals[i])) return "E01";
    for (std::size_t i = 0; i < hex / 8; ++i) write_register(static_cast<unsigned>(i), vals[i]);
    return "OK";
}

std::string GdbStub::handle(const std::string& p, bool& resume, bool& step, bool& quit) {
    if (p.empty()) return "";
    switch (p[0]) {
        case '?':
            return "S05";
        case 'g': {
            if (p.size() != 1) return "E01";
            std::string out;
            bool ok = true;
            for (unsigned i = 0; i <= kRegPc; ++i) out += read_register(i, ok);
            return out;
        }
        case 'G':
            return write_all_registers(p);
        case 'p': {
            std::size_t pos = 1;
            uint32_t n = 0;
            if (!parse_hex(p, pos, 0, n)) return "E01";
            bool ok = true;
            const std::string v = read_register(n, ok);
            return ok ? v : "E01";
        }
        case 'P': {
            std::size_t pos = 1;
            uint32_t n = 0, v = 0;
            if (!parse_hex(p, pos, '=', n) || p.size() != pos + 8 || !parse_le32(p, pos, v)) return "E01";
            return write_register(n, v) ? "OK" : "E01";
        }
        case 'm':
        case 'M':
        case 'X':
            return memory(p);
        case 'c':
        case 's': {
            if (p.size() > 1) {
                std::size_t pos = 1;
                uint32_t addr = 0;
                if (!parse_hex(p, pos, 0, addr)) return "E01";
                hart_.pc_ = hart_.npc_ = addr;
            }
            resume = true;
            step = p[0] == 's';
            return "";
        }
        case 'v':
            if (p == "vCont?") return "vCont;c;C;s;S";
            if (p.rfind("vCont;", 0) == 0) {
                const char action = p.size() > 6 ? p[6] : 0;
                if (action != 'c' && action != 's' && action != 'C' && action != 'S') return "E01";
                resume = true;
                step = action == 's' || action == 'S';
                return "";
            }
            if (p.rfind("vKill", 0) == 0) {
                quit = true;
                return "OK";
            }
            return "";
        case 'Z':
        case 'z':
            return breakpoint(p);
        case 'q':
        case 'Q':
            return query(p);
        case 'H':
            return "OK";
        case 'T':
            return "OK";
        case 'D':
            quit = true;
            detach_run_ = true;  // the program runs on to its end without debugger
            return "OK";
        case 'k':
            quit = true;
            return "";
        default:
            return "";
    }
}

}  // namespace iss
