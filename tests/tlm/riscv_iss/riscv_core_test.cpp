// SPDX-License-Identifier: MIT
// RiscvCore in a small SystemC platform: RAM with DMI at 0x80000000 and an MMIO device at 0x40000000
// that raises the external interrupt 1 us after its START register is written.
#include "riscv_iss_tlm/riscv_core.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstring>
#include <systemc>
#include <vector>

namespace iss {
namespace {
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

constexpr uint64_t kRamBase = 0x80000000u, kRamSize = 0x10000u, kDevBase = 0x40000000u;

/// RAM (DMI) + device registers: +0 START (write raises irq 1 us later), +4 RESULT (write lowers irq).
struct Platform : sc_core::sc_module {
    tlm_utils::simple_target_socket<Platform> socket{"socket"};
    sc_core::sc_signal<bool, sc_core::SC_MANY_WRITERS> irq{"irq"};  // raised by a method, lowered from b_transport
    std::vector<uint8_t> ram = std::vector<uint8_t>(kRamSize, 0);
    sc_time start_time = sc_core::SC_ZERO_TIME, result_time = sc_core::SC_ZERO_TIME;
    uint32_t result = 0;
    sc_core::sc_event raise;

    explicit Platform(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
        socket.register_b_transport(this, &Platform::b_transport);
        socket.register_get_direct_mem_ptr(this, &Platform::get_dmi);
        SC_HAS_PROCESS(Platform);
        SC_METHOD(raise_irq);
        sensitive << raise;
        dont_initialize();
    }
    void raise_irq() { irq.write(true); }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
        const uint64_t a = gp.get_address();
        const unsigned len = gp.get_data_length();
        if (a >= kRamBase && a + len <= kRamBase + kRamSize) {
            uint8_t* p = &ram[a - kRamBase];
            gp.is_read() ? std::memcpy(gp.get_data_ptr(), p, len) : std::memcpy(p, gp.get_data_ptr(), len);
        } else if (a == kDevBase && gp.is_write()) {
            start_time = sc_core::sc_time_stamp() + delay;
            raise.notify(sc_time(1, SC_US));
        } else if (a == kDevBase + 4 && gp.is_write()) {
            std::memcpy(&result, gp.get_data_ptr(), 4);
            result_time = sc_core::sc_time_stamp() + delay;
            irq.write(false);
        } else {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            return;
        }
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    bool get_dmi(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
        if (gp.get_address() < kRamBase || gp.get_address() >= kRamBase + kRamSize) return false;
        dmi.set_dmi_ptr(ram.data());
        dmi.set_start_address(kRamBase);
        dmi.set_end_address(kRamBase + kRamSize - 1);
        dmi.allow_read_write();
        return true;
    }
    void load(uint64_t addr, const std::vector<uint32_t>& words) {
        std::memcpy(&ram[addr - kRamBase], words.data(), words.size() * 4);
    }
};

CorePreset preset() {
    CorePreset p;
    p.cycles.clock_hz = 100000000;  // 10 ns per cycle
    p.devices.clint_base = 0;       // no CLINT in this platform
    return p;
}

struct Bench {
    Platform plat{"plat"};
    RiscvCore core{"core", preset(), sc_time(1, SC_US)};
    sc_core::sc_signal<bool> no_irq[16];
    Bench() {
        core.socket.bind(plat.socket);
        core.irq_external.bind(plat.irq);
        for (unsigned i = 0; i < 16; ++i) core.irq_local[i].bind(no_irq[i]);
    }
};

// Program (hand-assembled):
//   0x00 lui x1,0x40000 (0x400000b7)        x1 = device
//   0x04 lui x2,1 (0x00001137); 0x08 addi x2,x2,-2048 (0x80010113)   x2 = 0x800 = MEIE
//   0x0c csrw mie,x2 (0x30411073)
//   0x10 lui x3,0x80000 (0x800001b7); 0x14 addi x3,x3,0x100 (0x10018193); 0x18 csrw mtvec,x3 (0x30519073)
//   0x1c csrsi mstatus,8 (0x30046073)
//   0x20 sw x0,0(x1) (0x0000a023)           START
//   0x24 wfi (0x10500073); 0x28 j . (0x0000006f)
// handler at 0x100: csrr x4,mcause (0x34202273); sw x4,4(x1) (0x0040a223); j . (0x0000006f)
TEST(RiscvCoreTlm, InterruptRoundTripThroughWfi) {
    Bench b;
    b.plat.load(kRamBase, {0x400000b7, 0x00001137, 0x80010113, 0x30411073, 0x800001b7, 0x10018193, 0x30519073,
                           0x30046073, 0x0000a023, 0x10500073, 0x0000006f});
    b.plat.load(kRamBase + 0x100, {0x34202273, 0x0040a223, 0x0000006f});
    b.core.start(kRamBase);
    sc_core::sc_start(sc_time(5, SC_US));
    EXPECT_EQ(b.plat.result, 0x8000000bu);  // machine external interrupt
    // START is the 9th instruction: a few tens of cycles (csr writes cost 4) at 10 ns.
    EXPECT_GT(b.plat.start_time, sc_core::SC_ZERO_TIME);
    EXPECT_LT(b.plat.start_time, sc_time(500, SC_NS));
    // The core slept in WFI until the irq (start + 1 us), then ran the handler's first instructions.
    EXPECT_GE(b.plat.result_time, b.plat.start_time + sc_time(1, SC_US));
    EXPECT_LT(b.plat.result_time, b.plat.start_time + sc_time(1, SC_US) + sc_time(200, SC_NS));
    // Simulated time and the hart's cycle count agree (within one quantum, the core spins at the end).
    const double hart_time_ns = static_cast<double>(b.core.hart().cycles_) * 10.0;
    EXPECT_NEAR(hart_time_ns, sc_core::sc_time_stamp().to_seconds() * 1e9, 1000.0 + 10.0);
}

// A load from an address the platform rejects (TLM_ADDRESS_ERROR_RESPONSE) is a load access fault.
//   0x00 lui x1,0x40000; 0x04 lui x3,0x80000; 0x08 addi x3,x3,0x100; 0x0c csrw mtvec,x3
//   0x10 lw x2,8(x1) (0x0080a103): device offset 8 does not exist; 0x14 j .
TEST(RiscvCoreTlm, BusErrorBecomesLoadAccessFault) {
    Bench b;
    b.plat.load(kRamBase, {0x400000b7, 0x800001b7, 0x10018193, 0x30519073, 0x0080a103, 0x0000006f});
    b.plat.load(kRamBase + 0x100, {0x34202273, 0x0040a223, 0x0000006f});
    b.core.start(kRamBase);
    sc_core::sc_start(sc_time(2, SC_US));
    EXPECT_EQ(b.plat.result, 5u);  // load access fault
    EXPECT_EQ(b.core.hart().mtval_, kDevBase + 8);
    EXPECT_EQ(b.core.hart().mepc_, kRamBase + 0x10);
}

}  // namespace
}  // namespace iss
