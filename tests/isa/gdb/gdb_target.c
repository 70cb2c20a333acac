/* SPDX-License-Identifier: MIT */
/* Debuggee of the gdb-multiarch batch test (gdb_batch.gdb): a call, a loop and a watched global. */
volatile int counter;

__attribute__((noinline)) int square(int x) { return x * x; }

int main(void) {
    int s = 0;
    for (int i = 0; i < 5; ++i) {
        s += square(i);
        counter = s;
    }
    return s == 30 ? 0 : 1;
}
