#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ISS speed vs QEMU (issue 7 acceptance 3, issue 22 acceptance 1) on one compute-heavy ELF. Usage:
#   bench/riscv_iss/run_bench.sh BUILD_DIR [ELF]   (BUILD_DIR configured with -DNPUSIM_BUILD_BENCH=ON and built)
# Reports CPU time (user + sys of the whole process; the CI box has 2 shared cores, so wall time is noisy)
# and MIPS for: `npusim iss` with the cycle model (block engine), the step engine (the reference: its
# instret and cycles must equal the block engine's), qemu-system-riscv32 plain and with -icount shift=0,
# and the ISS inside SystemC (iss_tlm_bench). The instruction count is the ISS's retired count; every
# simulator prints the same guest checksum. Ratios > 1 mean the ISS is faster.
set -euo pipefail
B=${1:?build dir}
ELF=${2:-$B/bench/riscv_iss/iss_bench.elf}
NPUSIM=$B/sim/npusim
[ -x "$NPUSIM" ] || { echo "run_bench: $NPUSIM not built (cmake --build $B --target npusim)"; exit 2; }
cpu_of() { # prints user+sys seconds of a command, its output to FILE
  local out=$1; shift
  /usr/bin/time -f "%U %S" -o "$out.time" "$@" > "$out" 2>&1 || true
  awk '{print $1 + $2}' "$out.time"
}
stat_of() { sed -n "s/.*: \([0-9]*\) instructions, \([0-9]*\) cycles.*/\1 \2/p" "$1"; }
QEMU=(qemu-system-riscv32 -M virt -bios none -display none -serial stdio -monitor none
      -semihosting-config enable=on,target=native -kernel "$ELF")
T=$(mktemp -d)
t_iss=$(cpu_of "$T/blocks" "$NPUSIM" iss --stats "$ELF")
t_step=$(cpu_of "$T/step" "$NPUSIM" iss --engine step --stats "$ELF")
t_qemu=$(cpu_of "$T/qemu" "${QEMU[@]}")
t_qicount=$(cpu_of "$T/qemu_icount" "${QEMU[@]}" -icount shift=0)
t_tlm=$(cpu_of "$T/tlm" "$B/bench/riscv_iss/iss_tlm_bench" "$ELF" 10)
read -r insns cycles <<< "$(stat_of "$T/blocks")"
read -r insns_step cycles_step <<< "$(stat_of "$T/step")"
grep -h checksum "$T/blocks" "$T/step" "$T/qemu_icount" "$T/tlm" || true
same=$([ "$insns $cycles" = "$insns_step $cycles_step" ] && echo "identical" || echo "DIFFERENT")
awk -v n="$insns" -v c="$cycles" -v a="$t_iss" -v s="$t_step" -v q="$t_qemu" -v i="$t_qicount" -v t="$t_tlm" \
    -v same="$same" 'BEGIN {
  printf "instructions %d, cycles %d (step engine: %s)\n", n, c, same
  printf "npusim iss, cycle model on  %6.2f s cpu  %7.1f MIPS\n", a, n / a / 1e6
  printf "npusim iss --engine step    %6.2f s cpu  %7.1f MIPS\n", s, n / s / 1e6
  printf "qemu plain                  %6.2f s cpu  %7.1f MIPS  -> npusim iss = %.2fx\n", q, n / q / 1e6, q / a
  printf "qemu -icount shift=0        %6.2f s cpu  %7.1f MIPS  -> npusim iss = %.2fx\n", i, n / i / 1e6, i / a
  printf "ISS in SystemC (10 us)      %6.2f s cpu  %7.1f MIPS  -> %.2fx qemu -icount\n", t, n / t / 1e6, i / t }'
rm -rf "$T"
[ "$same" = "identical" ]
