#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ISS speed vs QEMU (issue 7 acceptance 3) on one compute-heavy ELF. Usage:
#   bench/riscv_iss/run_bench.sh BUILD_DIR      (configured with -DNPUSIM_BUILD_BENCH=ON and built)
# Reports CPU-time MIPS (the CI box has 2 shared cores, so wall time is noisy); the instruction count is
# rviss's retired count, the same program on both simulators (checked: identical guest output).
set -euo pipefail
B=${1:?build dir}
ELF=$B/bench/riscv_iss/iss_bench.elf
RVISS=$B/riscv_iss/rviss
cpu_of() { # prints user+sys seconds of a command, its output to FILE
  local out=$1; shift
  /usr/bin/time -f "%U %S" -o "$out.time" "$@" > "$out" 2>&1 || true
  awk '{print $1 + $2}' "$out.time"
}
QEMU=(qemu-system-riscv32 -M virt -bios none -display none -serial stdio -monitor none
      -semihosting-config enable=on,target=native -kernel "$ELF")
t_iss=$(cpu_of /tmp/rviss_bench.out "$RVISS" --stats "$ELF")
insns=$(sed -n 's/.*rviss: \([0-9]*\) instructions.*/\1/p' /tmp/rviss_bench.out)
t_qemu=$(cpu_of /tmp/qemu_bench.out "${QEMU[@]}")
t_qicount=$(cpu_of /tmp/qemu_icount_bench.out "${QEMU[@]}" -icount shift=0)
t_tlm=$(cpu_of /tmp/tlm_bench.out "$B/bench/riscv_iss/iss_tlm_bench" "$ELF" 10)
grep -h checksum /tmp/rviss_bench.out /tmp/qemu_icount_bench.out /tmp/tlm_bench.out || true
awk -v n="$insns" -v a="$t_iss" -v q="$t_qemu" -v i="$t_qicount" -v t="$t_tlm" 'BEGIN {
  printf "instructions            %d\n", n
  printf "rviss (cycle model on)  %6.2f s cpu  %7.1f MIPS\n", a, n / a / 1e6
  printf "qemu plain              %6.2f s cpu  %7.1f MIPS  -> rviss = %.2fx\n", q, n / q / 1e6, q / a
  printf "qemu -icount shift=0    %6.2f s cpu  %7.1f MIPS  -> rviss = %.2fx\n", i, n / i / 1e6, i / a
  printf "rviss in SystemC (10us) %6.2f s cpu  %7.1f MIPS\n", t, n / t / 1e6 }'
