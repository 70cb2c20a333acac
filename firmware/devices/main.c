/* SPDX-License-Identifier: MIT */
/* The SoC devices at the addresses of the board's profile (hwdesc/profiles/mcu, board header
 * mk_board_<board>.h generated from it): writes a line through the UART's own registers, then - where
 * the profile has a timer register model whose interrupt is a local line - runs timer 0 for three
 * periods of 100 us with its interrupt enabled, sleeping in WFI, and reports the interrupts and the
 * cycles per period over semihosting. Console (parsed by tests/mcu/mcu_systemc_test.cpp):
 *   UART <board>                      (through the UART registers)
 *   TIMER <interrupts> <cycles per period>   or   TIMER unmodelled <first word of its window>
 * Exit 0 when every expected interrupt arrived. */
#include <stdint.h>
#include <stdio.h>

#include MK_BOARD_HEADER

#define REG(a) (*(volatile uint32_t*)(uintptr_t)(a))

static void uart_putc(char c) {
#if defined(MK_BOARD_UART_MODEL_HISILICON_WS63)
    while (!(REG(MK_BOARD_UART_BASE + 0x44u) & 2u)) { /* FIFO_STATUS: TX FIFO empty */
    }
    REG(MK_BOARD_UART_BASE + 0x04u) = (uint8_t)c; /* DATA */
#elif defined(MK_BOARD_UART_MODEL_PL011)
    while (REG(MK_BOARD_UART_BASE + 0x18u) & 0x20u) { /* UART_FR: TX FIFO full */
    }
    REG(MK_BOARD_UART_BASE + 0x00u) = (uint8_t)c; /* UART_DR */
#else
    while (!(*(volatile uint8_t*)(uintptr_t)(MK_BOARD_UART_BASE + 5u) & 0x20u)) { /* 16550 LSR: THR empty */
    }
    *(volatile uint8_t*)(uintptr_t)MK_BOARD_UART_BASE = (uint8_t)c;
#endif
}

static void uart_puts(const char* s) {
    while (*s) uart_putc(*s++);
}

#if defined(MK_BOARD_TIMER_MODEL_DW_APB_TIMER) && MK_BOARD_TIMER_IRQ >= MK_BOARD_LOCAL_IRQ_LO && MK_BOARD_TIMER_IRQ <= MK_BOARD_LOCAL_IRQ_HI
#define TIMER_IRQ_DELIVERED 1
static volatile uint32_t g_ticks;
static volatile uint32_t g_bad_cause;

static void __attribute__((interrupt("machine"), aligned(4))) trap(void) {
    uint32_t cause;
    __asm__ volatile("csrr %0, mcause" : "=r"(cause));
    if (cause == (0x80000000u | MK_BOARD_TIMER_IRQ)) {
        (void)REG(MK_BOARD_TIMER_BASE + 0x114u); /* channel 0 EOI: reading clears the interrupt */
        ++g_ticks;
    } else {
        g_bad_cause = cause;
        REG(MK_BOARD_TIMER_BASE + 0x110u) = 0; /* stop */
    }
}

static uint32_t mcycle(void) {
    uint32_t v;
    __asm__ volatile("csrr %0, mcycle" : "=r"(v));
    return v;
}
#endif

int main(void) {
    uart_puts("UART " MK_BOARD_NAME "\n");
#ifdef TIMER_IRQ_DELIVERED
    __asm__ volatile("csrw mtvec, %0" ::"r"((uintptr_t)&trap));
    REG(MK_BOARD_TIMER_BASE + 0x100u) = MK_BOARD_TIMER_HZ / 10000u; /* LOAD: 100 us */
    REG(MK_BOARD_TIMER_BASE + 0x110u) = 1u;                         /* CONTROL: enable, interrupt unmasked */
    __asm__ volatile("csrs mie, %0" ::"r"(1u << MK_BOARD_TIMER_IRQ));
    __asm__ volatile("csrsi mstatus, 8");
    const uint32_t c0 = mcycle();
    while (g_ticks < 3u && g_bad_cause == 0u) __asm__ volatile("wfi");
    const uint32_t c1 = mcycle();
    REG(MK_BOARD_TIMER_BASE + 0x110u) = 0u;
    __asm__ volatile("csrci mstatus, 8");
    printf("TIMER %lu %lu\n", (unsigned long)g_ticks, (unsigned long)((c1 - c0) / 3u));
    if (g_bad_cause) printf("unexpected trap, mcause %08lx\n", (unsigned long)g_bad_cause);
    return g_ticks == 3u && g_bad_cause == 0u ? 0 : 1;
#else
    printf("TIMER unmodelled %lu\n", (unsigned long)REG(MK_BOARD_TIMER_BASE));
    return 0;
#endif
}
