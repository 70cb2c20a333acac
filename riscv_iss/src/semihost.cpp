// SPDX-License-Identifier: MIT
// Semihosting operations (ARM "Semihosting for AArch32 and AArch64" 2.0 numbering, RISC-V semihosting
// spec 1.0): a0 = operation, a1 = parameter (block pointer), result in a0.
#include "riscv_iss/semihost.h"

#include <algorithm>
#include <cstring>

namespace iss {
namespace {
enum : uint32_t {
    kSysOpen = 0x01,
    kSysClose = 0x02,
    kSysWritec = 0x03,
    kSysWrite0 = 0x04,
    kSysWrite = 0x05,
    kSysRead = 0x06,
    kSysReadc = 0x07,
    kSysIserror = 0x08,
    kSysIstty = 0x09,
    kSysSeek = 0x0a,
    kSysFlen = 0x0c,
    kSysClock = 0x10,
    kSysTime = 0x11,
    kSysErrno = 0x13,
    kSysGetCmdline = 0x15,
    kSysHeapinfo = 0x16,
    kSysExit = 0x18,
    kSysExitExtended = 0x20,
    kSysElapsed = 0x30,
    kSysTickfreq = 0x31,
};
constexpr uint32_t kAdpStoppedApplicationExit = 0x20026;
// Handles: 1 = stdin, 2 = stdout, 3 = stderr (":tt" opened with mode r / w / a), 4 = features file.
constexpr uint32_t kStdin = 1, kStdout = 2, kStderr = 3, kFeatures = 4;
// ":semihosting-features": magic "SHFB" and one feature byte, bit 0 = SYS_EXIT_EXTENDED supported.
constexpr uint8_t kFeatureBytes[5] = {'S', 'H', 'F', 'B', 0x01};
constexpr uint32_t kEnoent = 2, kEbadf = 9;
constexpr uint32_t kFail = 0xffffffffu;
}  // namespace

uint32_t Semihost::word(Hart& h, uint32_t addr) {
    uint32_t v = 0;
    h.debug_read(addr, 4, reinterpret_cast<uint8_t*>(&v));
    return v;
}

uint32_t Semihost::op_open(Hart& h, uint32_t block) {
    const uint32_t name_ptr = word(h, block), mode = word(h, block + 4), len = word(h, block + 8);
    std::string name(std::min<uint32_t>(len, 256), '\0');
    h.debug_read(name_ptr, static_cast<uint32_t>(name.size()), reinterpret_cast<uint8_t*>(name.data()));
    if (name == ":tt") return mode < 4 ? kStdin : mode < 8 ? kStdout : kStderr;
    if (name == ":semihosting-features") {
        features_pos_ = 0;
        return kFeatures;
    }
    errno_ = kEnoent;
    return kFail;
}

uint32_t Semihost::op_write(Hart& h, uint32_t block) {
    const uint32_t fd = word(h, block), buf = word(h, block + 4), len = word(h, block + 8);
    if (fd != kStdout && fd != kStderr) {
        errno_ = kEbadf;
        return len;  // returns the number of bytes NOT written
    }
    std::string text(std::min<uint32_t>(len, 1u << 20), '\0');
    if (!h.debug_read(buf, static_cast<uint32_t>(text.size()), reinterpret_cast<uint8_t*>(text.data()))) return len;
    if (h.console_out) h.console_out(text.data(), text.size());
    return len - static_cast<uint32_t>(text.size());
}

uint32_t Semihost::op_read(Hart& h, uint32_t block) {
    const uint32_t fd = word(h, block), buf = word(h, block + 4), len = word(h, block + 8);
    if (fd == kFeatures) {
        const uint32_t n = std::min<uint32_t>(len, sizeof kFeatureBytes - std::min<uint32_t>(features_pos_, 5));
        h.debug_write(buf, n, kFeatureBytes + features_pos_);
        features_pos_ += n;
        return len - n;
    }
    return len;  // stdin: end of file
}

bool Semihost::semihost_call(Hart& h) {
    const uint32_t op = h.x_[10], arg = h.x_[11];
    uint32_t ret = 0;
    switch (op) {
        case kSysOpen: ret = op_open(h, arg); break;
        case kSysClose: ret = 0; break;
        case kSysWritec: {
            char c = 0;
            h.debug_read(arg, 1, reinterpret_cast<uint8_t*>(&c));
            if (h.console_out) h.console_out(&c, 1);
            break;
        }
        case kSysWrite0: {
            std::string s;
            char c = 0;
            for (uint32_t a = arg; s.size() < (1u << 20) && h.debug_read(a, 1, reinterpret_cast<uint8_t*>(&c)) && c;
                 ++a)
                s.push_back(c);
            if (h.console_out) h.console_out(s.data(), s.size());
            break;
        }
        case kSysWrite: ret = op_write(h, arg); break;
        case kSysRead: ret = op_read(h, arg); break;
        case kSysReadc: ret = kFail; break;
        case kSysIserror: ret = static_cast<int32_t>(word(h, arg)) < 0; break;
        case kSysIstty: {
            const uint32_t fd = word(h, arg);
            ret = fd >= kStdin && fd <= kStderr;
            break;
        }
        case kSysSeek: {
            const uint32_t fd = word(h, arg);
            if (fd == kFeatures) features_pos_ = word(h, arg + 4);
            ret = 0;
            break;
        }
        case kSysFlen: ret = word(h, arg) == kFeatures ? sizeof kFeatureBytes : 0; break;
        case kSysClock: ret = static_cast<uint32_t>(h.cycles_ * 100 / clock_hz_); break;
        case kSysTime: ret = static_cast<uint32_t>(h.cycles_ / clock_hz_); break;
        case kSysErrno: ret = errno_; break;
        case kSysGetCmdline: {
            const uint32_t buf = word(h, arg), size = word(h, arg + 4);
            if (size <= cmdline_.size()) {
                ret = kFail;
                break;
            }
            h.debug_write(buf, static_cast<uint32_t>(cmdline_.size() + 1),
                          reinterpret_cast<const uint8_t*>(cmdline_.c_str()));
            const uint32_t len = static_cast<uint32_t>(cmdline_.size());
            h.debug_write(arg + 4, 4, reinterpret_cast<const uint8_t*>(&len));
            break;
        }
        case kSysHeapinfo: {
            const uint32_t block = word(h, arg);
            const uint32_t zeros[4] = {};
            h.debug_write(block, sizeof zeros, reinterpret_cast<const uint8_t*>(zeros));
            break;
        }
        case kSysExit:
            // RV32 passes the reason code directly in a1 (not a block, unlike 64-bit targets).
            h.request_stop(StopReason::kExit, arg == kAdpStoppedApplicationExit ? 0 : 1);
            break;
        case kSysExitExtended: {
            const uint32_t reason = word(h, arg), code = word(h, arg + 4);
            h.request_stop(StopReason::kExit, reason == kAdpStoppedApplicationExit ? static_cast<int>(code) : 1);
            break;
        }
        case kSysElapsed: {
            const uint64_t ticks = h.cycles_;
            h.debug_write(arg, 8, reinterpret_cast<const uint8_t*>(&ticks));
            break;
        }
        case kSysTickfreq: ret = static_cast<uint32_t>(clock_hz_); break;
        default: return false;
    }
    h.x_[10] = ret;
    return true;
}

}  // namespace iss
