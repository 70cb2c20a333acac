// SPDX-License-Identifier: MIT
// GDB RSP packet handlers: registers, memory, break/watchpoints, target description, monitor commands.
#include <fmt/format.h>

#include <cstdlib>

#include "riscv_iss/gdb_stub.h"

namespace iss {
namespace {
constexpr unsigned kRegPc = 32, kRegF0 = 33, kRegCsr0 = 65;
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

std::string hex32(uint32_t v) {  // little-endian byte order, as GDB expects for RISC-V registers
    return fmt::format("{:02x}{:02x}{:02x}{:02x}", v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24);
}
uint32_t parse_le32(const std::string& s, std::size_t pos) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
        v |= static_cast<uint32_t>(std::strtoul(s.substr(pos + 2 * i, 2).c_str(), nullptr, 16)) << (8 * i);
    return v;
}
std::string to_hex(const std::string& s) {
    std::string out;
    for (unsigned char c : s) out += fmt::format("{:02x}", c);
    return out;
}
std::string from_hex(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i + 1 < s.size(); i += 2)
        out.push_back(static_cast<char>(std::strtoul(s.substr(i, 2).c_str(), nullptr, 16)));
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
    ok = hart_.csr_read(n - kRegCsr0, v, true);
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
    return hart_.csr_write(n - kRegCsr0, v, true);
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
        out = "unknown monitor command '" + cmd + "' (try: monitor help)\n";
    put_packet("O" + to_hex(out));
    return "OK";
}

std::string GdbStub::query(const std::string& p) {
    if (p.rfind("qSupported", 0) == 0) return "PacketSize=4000;qXfer:features:read+;swbreak+;QStartNoAckMode+";
    if (p == "QStartNoAckMode") {
        enter_no_ack_ = true;  // takes effect after this reply has been acknowledged
        return "OK";
    }
    if (p.rfind("qXfer:features:read:target.xml:", 0) == 0) {
        const std::string args = p.substr(std::strlen("qXfer:features:read:target.xml:"));
        const std::size_t off = std::strtoul(args.c_str(), nullptr, 16);
        const std::size_t len = std::strtoul(args.substr(args.find(',') + 1).c_str(), nullptr, 16);
        const std::string xml = target_xml();
        if (off >= xml.size()) return "l";
        const std::string chunk = xml.substr(off, len);
        return (off + chunk.size() >= xml.size() ? "l" : "m") + chunk;
    }
    if (p.rfind("qRcmd,", 0) == 0) return monitor(from_hex(p.substr(6)));
    if (p == "qAttached") return "1";
    if (p == "qC") return "QC1";
    if (p == "qfThreadInfo") return "m1";
    if (p == "qsThreadInfo") return "l";
    return "";
}

std::string GdbStub::breakpoint(const std::string& p) {
    const bool insert = p[0] == 'Z';
    const int type = p[1] - '0';
    const std::size_t c1 = p.find(','), c2 = p.find(',', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) return "E01";
    const uint32_t addr = static_cast<uint32_t>(std::strtoul(p.c_str() + c1 + 1, nullptr, 16));
    const uint32_t len = static_cast<uint32_t>(std::strtoul(p.c_str() + c2 + 1, nullptr, 16));
    if (type == 0 || type == 1) {
        insert ? hart_.add_breakpoint(addr) : hart_.remove_breakpoint(addr);
        return "OK";
    }
    if (type >= 2 && type <= 4) {
        const auto kind = type == 2   ? Hart::WatchKind::kWrite
                          : type == 3 ? Hart::WatchKind::kRead
                                      : Hart::WatchKind::kAccess;
        insert ? hart_.add_watchpoint(addr, len, kind) : hart_.remove_watchpoint(addr, len, kind);
        return "OK";
    }
    return "";
}

std::string GdbStub::memory(const std::string& p) {
    const std::size_t comma = p.find(',');
    if (comma == std::string::npos) return "E01";
    const uint32_t addr = static_cast<uint32_t>(std::strtoul(p.c_str() + 1, nullptr, 16));
    const uint32_t len = static_cast<uint32_t>(std::strtoul(p.c_str() + comma + 1, nullptr, 16));
    if (len > 0x10000) return "E01";
    if (p[0] == 'm') {
        std::string buf(len, '\0');
        if (!hart_.debug_read(addr, len, reinterpret_cast<uint8_t*>(buf.data()))) return "E01";
        return to_hex(buf);
    }
    const std::size_t colon = p.find(':');
    if (colon == std::string::npos) return "E01";
    std::string data;
    if (p[0] == 'M') {
        data = from_hex(p.substr(colon + 1));
    } else {  // 'X': binary with 0x7d escapes
        for (std::size_t i = colon + 1; i < p.size(); ++i)
            data.push_back(p[i] == 0x7d && i + 1 < p.size() ? static_cast<char>(p[++i] ^ 0x20) : p[i]);
    }
    if (data.size() < len) return "E01";
    return hart_.debug_write(addr, len, reinterpret_cast<const uint8_t*>(data.data())) ? "OK" : "E01";
}

std::string GdbStub::handle(const std::string& p, bool& resume, bool& step, bool& quit) {
    if (p.empty()) return "";
    switch (p[0]) {
        case '\x03': return "S05";
        case '?': return "S05";
        case 'g': {
            std::string out;
            bool ok = true;
            for (unsigned i = 0; i <= kRegPc; ++i) out += read_register(i, ok);
            return out;
        }
        case 'G':
            for (unsigned i = 0; i <= kRegPc && 8 * (i + 1) <= p.size() - 1; ++i)
                write_register(i, parse_le32(p, 1 + 8 * i));
            return "OK";
        case 'p': {
            bool ok = true;
            const std::string v = read_register(static_cast<unsigned>(std::strtoul(p.c_str() + 1, nullptr, 16)), ok);
            return ok ? v : "E01";
        }
        case 'P': {
            const std::size_t eq = p.find('=');
            if (eq == std::string::npos) return "E01";
            const unsigned n = static_cast<unsigned>(std::strtoul(p.c_str() + 1, nullptr, 16));
            return write_register(n, parse_le32(p, eq + 1)) ? "OK" : "E01";
        }
        case 'm':
        case 'M':
        case 'X': return memory(p);
        case 'c':
        case 's':
            if (p.size() > 1) hart_.pc_ = static_cast<uint32_t>(std::strtoul(p.c_str() + 1, nullptr, 16));
            resume = true;
            step = p[0] == 's';
            return "";
        case 'v':
            if (p == "vCont?") return "vCont;c;s";
            if (p.rfind("vCont;", 0) == 0) {
                resume = true;
                step = p[6] == 's';
                return "";
            }
            if (p.rfind("vKill", 0) == 0) {
                quit = true;
                return "OK";
            }
            return "";
        case 'Z':
        case 'z': return breakpoint(p);
        case 'q':
        case 'Q': return query(p);
        case 'H': return "OK";
        case 'T': return "OK";
        case 'D': quit = true; return "OK";
        case 'k': quit = true; return "";
        default: return "";
    }
}

}  // namespace iss
