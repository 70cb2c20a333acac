// SPDX-License-Identifier: MIT
// The MCU SystemC platform (see mcu_platform.h).
#include "riscv_iss_tlm/mcu_platform.h"

#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <systemc>

#include "riscv_iss/bus.h"
#include "riscv_iss/elf_image.h"
#include "riscv_iss/semihost.h"
#include "riscv_iss_tlm/riscv_core.h"

namespace iss {
namespace {

constexpr uint64_t kDeviceWindow = 0x1000;  // each device's MMIO window

/// Interrupt controller: one level line per local interrupt (mip bit 16 + i) and the external line.
/// A device updates its line from its own process and from the core's MMIO accesses: many writers.
using IrqLine = sc_core::sc_signal<bool, sc_core::SC_MANY_WRITERS>;
struct McuIntc : sc_core::sc_module {
    IrqLine external{"external"};
    sc_core::sc_vector<IrqLine> local;
    McuIntc(const sc_core::sc_module_name& n, size_t lines) : sc_core::sc_module(n), local("local", lines) {}
};

/// The WS63's timers as its profile describes them (ws63-qemu's model of the DesignWare APB timer):
/// channel i at +0x100 (i + 1): LOAD +0, CURRENT +8, CONTROL +0x10 (bit 0 enable, bit 3 interrupt mask),
/// EOI +0x14 (access clears), RAW_INTR +0x18, INTR_STAT +0x1C; EOI of all +0x78, raw / masked status of
/// all +0x7C / +0x80. An enabled channel counts LOAD ticks of its clock, raises its interrupt and
/// reloads. Channel 0 drives the profile's timer interrupt line.
struct DwApbTimer : sc_core::sc_module {
    struct Ch {
        uint32_t load = 0, control = 0, raw = 0;
        sc_core::sc_time start;
        sc_core::sc_event fire;
    };
    std::vector<Ch> ch;
    sc_core::sc_time tick;
    IrqLine* irq = nullptr;  // channel 0's line, or none (not a local interrupt)

    DwApbTimer(const sc_core::sc_module_name& n, uint32_t channels, uint32_t clock_hz)
        : sc_core::sc_module(n), ch(channels), tick(1.0 / double(clock_hz ? clock_hz : 1), sc_core::SC_SEC) {
        for (size_t i = 0; i < ch.size(); ++i) sc_core::sc_spawn([this, i] { run(i); }, sc_core::sc_gen_unique_name("channel"));
    }
    sc_core::sc_time period(size_t i) const { return tick * double(ch[i].load ? ch[i].load : 1); }
    void run(size_t i) {
        for (;;) {
            sc_core::wait(ch[i].fire);
            ch[i].raw = 1;
            update();
            if (ch[i].control & 1u) arm(i, sc_core::sc_time_stamp());
        }
    }
    void arm(size_t i, const sc_core::sc_time& now) {
        ch[i].start = now;
        ch[i].fire.cancel();
        ch[i].fire.notify(now + period(i) - sc_core::sc_time_stamp());
    }
    bool pending_level() const { return !ch.empty() && ch[0].raw && !(ch[0].control & 8u); }
    void update() {
        if (irq) irq->write(pending_level());
    }
    uint32_t read(uint64_t off, const sc_core::sc_time& now) {
        if (off == 0x7c || off == 0x80 || off == 0x78) {
            uint32_t v = 0;
            for (size_t i = 0; i < ch.size(); ++i) v |= (off == 0x80 ? ch[i].raw && !(ch[i].control & 8u) : ch[i].raw) ? 1u << i : 0u;
            if (off == 0x78) {
                for (auto& c : ch) c.raw = 0;
                update();
                return 0;
            }
            return v;
        }
        const size_t i = size_t(off >> 8) - 1;
        if (off < 0x100 || i >= ch.size()) return 0;
        Ch& c = ch[i];
        switch (off & 0xff) {
            case 0x00: return c.load;
            case 0x08: {
                if (!(c.control & 1u)) return 0;
                const uint64_t t = uint64_t((now - c.start) / tick);
                return t >= c.load ? 0 : c.load - uint32_t(t);
            }
            case 0x10: return c.control;
            case 0x14: c.raw = 0; update(); return 0;
            case 0x18: return c.raw;
            case 0x1c: return c.raw && !(c.control & 8u);
            default: return 0;
        }
    }
    void write(uint64_t off, uint32_t v, const sc_core::sc_time& now) {
        if (off == 0x78) {
            for (auto& c : ch) c.raw = 0;
            update();
            return;
        }
        const size_t i = size_t(off >> 8) - 1;
        if (off < 0x100 || i >= ch.size()) return;
        Ch& c = ch[i];
        switch (off & 0xff) {
            case 0x00: c.load = v; break;
            case 0x10: {
                const uint32_t old = c.control;
                c.control = v;
                if (!(old & 1u) && (v & 1u)) arm(i, now);
                else if ((old & 1u) && !(v & 1u)) c.fire.cancel();
                update();
                break;
            }
            case 0x14: c.raw = 0; update(); break;
            default: break;
        }
    }
};

/// The preset's memory regions and the profile's devices as one TLM target. Memory answers with
/// DMI; a device window is MMIO; any other address is TLM_ADDRESS_ERROR_RESPONSE, which the core
/// turns into an access fault.
struct McuBus : sc_core::sc_module {
    tlm_utils::simple_target_socket<McuBus> socket{"socket"};
    std::vector<RegionConfig> regions;
    std::vector<std::vector<uint8_t>> mem;
    McuDevices dev;
    std::string* console;
    std::vector<uint32_t> uart_regs = std::vector<uint32_t>(kDeviceWindow / 4, 0);
    DwApbTimer* timer = nullptr;

    McuBus(const sc_core::sc_module_name& n, const CorePreset& p, const McuDevices& d, std::string* out)
        : sc_core::sc_module(n), regions(p.memory), dev(d), console(out) {
        for (const auto& r : regions) mem.emplace_back(r.size_bytes, 0);
        socket.register_b_transport(this, &McuBus::b_transport);
        socket.register_get_direct_mem_ptr(this, &McuBus::get_dmi);
    }
    int find(uint64_t a, uint64_t len) const {
        for (size_t i = 0; i < regions.size(); ++i)
            if (a >= regions[i].base && a + len <= uint64_t(regions[i].base) + regions[i].size_bytes) return int(i);
        return -1;
    }
    static uint32_t get(const tlm::tlm_generic_payload& gp) {
        uint32_t v = 0;
        std::memcpy(&v, gp.get_data_ptr(), std::min<size_t>(4, gp.get_data_length()));
        return v;
    }
    static void put(tlm::tlm_generic_payload& gp, uint32_t v) {
        std::memset(gp.get_data_ptr(), 0, gp.get_data_length());
        std::memcpy(gp.get_data_ptr(), &v, std::min<size_t>(4, gp.get_data_length()));
    }
    /// The UART's register layout from the profile: the transmit register writes the console, the
    /// status registers read "transmitter empty, receiver empty"; other registers keep what is written.
    void uart(tlm::tlm_generic_payload& gp, uint64_t off) {
        const bool ws63 = dev.uart_model == "hisilicon_ws63", pl011 = dev.uart_model == "pl011";
        const uint64_t tx = ws63 ? 0x04 : 0x00;
        if (gp.is_write()) {
            if (off == tx) console->push_back(static_cast<char>(gp.get_data_ptr()[0]));
            else uart_regs[size_t(off / 4)] = get(gp);
            return;
        }
        uint32_t v = uart_regs[size_t(off / 4)];
        if (ws63 && off == 0x34) v = 0x60;                  // LINE_STATUS: TX ready
        if (ws63 && off == 0x44) v = 0x0a;                  // FIFO_STATUS: TX empty, RX empty
        if (pl011 && off == 0x18) v = 0x90;                 // UART_FR: TXFE, RXFE
        if (!ws63 && !pl011 && off == 5) v = 0x60;          // 16550 LSR
        if (off == tx) v = 0;
        put(gp, v);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
        const uint64_t a = gp.get_address();
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        if (!dev.uart_model.empty() && a - dev.uart_base < kDeviceWindow) return uart(gp, a - dev.uart_base);
        if (!dev.timer_model.empty() && a - dev.timer_base < kDeviceWindow) {
            const sc_core::sc_time now = sc_core::sc_time_stamp() + delay;
            const bool level = timer && timer->irq && timer->irq->read();
            if (timer && gp.is_read()) put(gp, timer->read(a - dev.timer_base, now));
            else if (timer) timer->write(a - dev.timer_base, get(gp), now);
            else if (gp.is_read()) put(gp, 0);  // a window without a register model: reads 0, writes ignored
            // An access that moved the interrupt line (EOI, mask): let the new level reach the hart's mip
            // before its next instruction (the signal updates in the next delta, the core's irq method
            // runs in the one after), as a level-sensitive line does on silicon.
            if (timer && timer->irq && timer->pending_level() != level) {
                sc_core::wait(sc_core::SC_ZERO_TIME);
                sc_core::wait(sc_core::SC_ZERO_TIME);
            }
            return;
        }
        const int i = find(a, gp.get_data_length());
        if (i < 0 || (gp.is_write() && !regions[size_t(i)].writable)) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            return;
        }
        uint8_t* p = &mem[size_t(i)][a - regions[size_t(i)].base];
        if (gp.is_read()) std::memcpy(gp.get_data_ptr(), p, gp.get_data_length());
        else std::memcpy(p, gp.get_data_ptr(), gp.get_data_length());
    }
    bool get_dmi(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
        const int i = find(gp.get_address(), 1);
        if (i < 0) return false;
        const auto& r = regions[size_t(i)];
        dmi.set_dmi_ptr(mem[size_t(i)].data());
        dmi.set_start_address(r.base);
        dmi.set_end_address(uint64_t(r.base) + r.size_bytes - 1);
        dmi.allow_read_write();  // the core applies the preset's writable flag and wait states
        return true;
    }
};

}  // namespace

McuPlatformRun run_mcu_platform(const CorePreset& preset, const McuDevices& devices, const std::string& elf,
                                const std::vector<std::pair<uint32_t, std::vector<uint8_t>>>& loads, uint64_t max_insns) {
    McuPlatformRun r;
    try {
        // The ISS's ELF loader fills a staging bus; its regions are copied into the platform's memory.
        Bus staging(preset);
        const ElfImage img = load_elf(elf, staging);
        auto bus = std::make_unique<McuBus>("mcu_bus", preset, devices, &r.console);
        for (size_t i = 0; i < preset.memory.size(); ++i) {
            const auto& reg = preset.memory[i];
            if (const uint8_t* src = staging.host_ptr(reg.base, reg.size_bytes)) std::memcpy(bus->mem[i].data(), src, reg.size_bytes);
        }
        for (const auto& [addr, bytes] : loads) {
            if (bytes.empty()) continue;
            const int i = bus->find(addr, bytes.size());
            if (i < 0) throw std::runtime_error("load of " + std::to_string(bytes.size()) + " bytes at " + std::to_string(addr) + " is outside the memory map");
            std::memcpy(&bus->mem[size_t(i)][addr - preset.memory[size_t(i)].base], bytes.data(), bytes.size());
        }
        auto core = std::make_unique<RiscvCore>("mcu_core", preset, sc_core::sc_time(1, sc_core::SC_US));
        auto intc = std::make_unique<McuIntc>("mcu_intc", core->irq_local.size());
        core->socket.bind(bus->socket);
        core->irq_external.bind(intc->external);
        for (size_t i = 0; i < core->irq_local.size(); ++i) core->irq_local[i].bind(intc->local[i]);
        std::unique_ptr<DwApbTimer> timer;
        if (devices.timer_model == "dw_apb_timer") {
            timer = std::make_unique<DwApbTimer>("mcu_timer", std::max<uint32_t>(1, devices.timer_channels), devices.timer_clock_hz);
            // Its interrupt reaches the hart when the profile delivers that number as a mip bit (16-31).
            const uint32_t irq = devices.timer_irq;
            if (irq >= 16 && irq - 16 < intc->local.size() && irq >= devices.local_irq_lo && irq <= devices.local_irq_hi)
                timer->irq = &intc->local[irq - 16];
            bus->timer = timer.get();
        }
        Semihost semihost(elf, preset.cycles.clock_hz);
        core->hart().set_semihost(&semihost);
        core->hart().console_out = [&r](const char* s, size_t n) { r.console.append(s, n); };
        core->start(img.entry);
        // The guest's exit stops the kernel (sc_stop); its "simulation stopped by user" info is not output.
        sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
        // Simulated-time guard: max_insns at one instruction per cycle.
        const double limit_s = std::min(3600.0, double(max_insns) / double(preset.cycles.clock_hz));
        sc_core::sc_start(sc_core::sc_time(limit_s, sc_core::SC_SEC));
        r.cycles = core->hart().cycles_;
        r.instret = core->hart().instret_;
        r.sim_time_s = sc_core::sc_time_stamp().to_seconds();
        if (core->stop_reason() == StopReason::kExit) r.exit_code = core->hart().exit_code();
        else r.error = core->finished() ? "ISS: " + core->hart().stop_message() : "the SystemC run did not finish within the instruction budget";
    } catch (const std::exception& e) {
        r.error = std::string("SystemC platform: ") + e.what();
    }
    return r;
}

}  // namespace iss
