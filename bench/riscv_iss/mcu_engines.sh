#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 22 acceptance 1, MCU part: the MCU model runs (tests/mcu models on ws63 and 3066H, per-layer cycles
# and instret, schedule totals, outputs) are identical with the block engine and the step engine (the
# per-instruction reference, NPUSIM_ISS_ENGINE=step); prints both ISS speeds. Usage:
#   bench/riscv_iss/mcu_engines.sh BUILD_DIR
set -euo pipefail
B=${1:?build dir}
MCU=$B/drivers/mcu/npusim-mcu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d)
/usr/bin/python3 "$SRC/tests/mcu/gen_mcu_models.py" "$W" > /dev/null
run_all() {  # engine -> file
  for p in ws63 3066h; do
    for m in lenet5_int8 cnn_kws_int8 dscnn_kws_int8 float_cnn_f32 act_int8; do
      echo "== $m $p"
      NPUSIM_ISS_ENGINE=$1 "$MCU" "$W/$m.onnx" --platform "$p" --skip-check 2>&1 || true
    done
  done
}
run_all blocks > "$W/blocks.txt"
run_all step > "$W/step.txt"
grep "ISS:" "$W/blocks.txt" | sed 's/^/blocks /'
grep "ISS:" "$W/step.txt" | sed 's/^/step   /'
if diff <(grep -v "host CPU" "$W/blocks.txt") <(grep -v "host CPU" "$W/step.txt") > "$W/diff.txt"; then
  echo "mcu_engines: $(grep -c '^== ' "$W/blocks.txt") runs, $(grep -vc 'host CPU' "$W/blocks.txt") output lines (per-layer cycles/instret, totals, outputs) identical"
  rm -rf "$W"
else
  echo "mcu_engines: DIFFERENT (see $W/diff.txt)"; head -20 "$W/diff.txt"; exit 1
fi
