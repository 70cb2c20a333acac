#!/bin/bash
# SPDX-License-Identifier: MIT
# npusim run --param / --profile: each timing parameter the calibration fits moves the bundled conv
# example (1x16x32x32 -> 32 channels, 3x3, one task on RK3588) by the amount its formula says.
# usage: param_cli_test.sh NPUSIM SOURCE_DIR
set -u
NPUSIM=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() {
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
cyc() {  # cyc REPORT FIELD -> the first layer's cycles.FIELD
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['layers'][0]['cycles'][sys.argv[2]])" "$1" "$2"
}
# The fitted dense-MAC efficiency is set to 1 so that the expectations are the formulas' own.
P1="--param npu.conv_mac_efficiency=1"
"$NPUSIM" run --mode timing --report "$T/base.json" $P1 >/dev/null 2>&1
check "baseline: 32x32 px x 32 ch x 16 ch x 9 taps / 1024 = 4608 compute cycles" "[ $(cyc "$T/base.json" compute) -eq 4608 ]"
base=$(cyc "$T/base.json" total)
base_ovh=$(cyc "$T/base.json" overhead)

"$NPUSIM" run --mode timing --report "$T/ovh.json" $P1 --param npu.task_overhead_cycles=6000 >/dev/null 2>&1
check "task overhead -> 6000 adds (6000 - profile value) cycles to the one task" \
  "[ $(cyc "$T/ovh.json" overhead) -eq 6000 ] && [ $(cyc "$T/ovh.json" total) -eq $((base + 6000 - base_ovh)) ]"

# DPU: 32x32 px x 2 atoms (32 int8 channels / 16) = 2048 atoms; at 0.25 atoms/cycle 8192 > 4608.
"$NPUSIM" run --mode timing --report "$T/dpu.json" $P1 --param npu.dpu_atoms_per_cycle=0.25 >/dev/null 2>&1
check "DPU at 0.25 atoms/cycle bounds the pipeline: 2048 / 0.25 = 8192" "[ $(cyc "$T/dpu.json" compute) -eq 8192 ]"

# No overlap: the pipeline starts after the loads, so the task is the sum of its terms.
"$NPUSIM" run --mode timing --report "$T/ovl.json" $P1 --param npu.load_compute_overlap=0 >/dev/null 2>&1
sum=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['layers'][0]['cycles']; print(c['fetch']+c['dma_read']+c['compute']+c['write']+c['overhead'])" "$T/ovl.json")
check "load_compute_overlap=0: total = fetch + loads + compute + write + overhead" "[ $(cyc "$T/ovl.json" total) -eq $sum ] && [ $sum -gt $base ]"

"$NPUSIM" run --mode timing --report "$T/eff.json" --param npu.conv_mac_efficiency=0.5 >/dev/null 2>&1
check "conv_mac_efficiency 0.5 doubles the MAC array cycles: 9216" "[ $(cyc "$T/eff.json" compute) -eq 9216 ]"
# Stripes of 4 pixels, each waiting for a weight load of 1024 B / 16 B per cycle = 64 cycles:
# 1024 px / 4 = 256 stripes x 64 = 16384 pixel-cycles x 32 x 16 x 9 / 1024 = 73728.
"$NPUSIM" run --mode timing --report "$T/str.json" $P1 --param npu.stripe_max_pixels=4 \
  --param npu.cbuf_read_bytes_per_cycle=16 >/dev/null 2>&1
check "short stripes wait for the weight load: 73728 compute cycles" "[ $(cyc "$T/str.json" compute) -eq 73728 ]"

"$NPUSIM" run --mode timing --param npu.no_such=1 >"$T/o" 2>"$T/e"
rc=$?
check "unknown parameter: exit 2 naming it" "[ $rc -eq 2 ] && grep -q 'npu.no_such: unknown parameter' '$T/e'"
"$NPUSIM" run --mode timing --param memory.ddr_efficiency=1.5 >"$T/o" 2>"$T/e"
rc=$?
check "out-of-range value: exit 2 with the range" "[ $rc -eq 2 ] && grep -q 'memory.ddr_efficiency: 1.5 outside' '$T/e'"

sed 's/"display_name": "Rockchip RK3588 \/ RK3588S"/"display_name": "my board"/' "$SRC/hwdesc/profiles/rk3588.json" >"$T/my.json"
"$NPUSIM" run --mode timing --profile "$T/my.json" >"$T/o" 2>&1
check "--profile FILE is used" "grep -q 'my board' '$T/o'"
"$NPUSIM" run --mode timing --profile "$T/missing.json" >"$T/o" 2>"$T/e"
rc=$?
check "--profile missing file: exit 2" "[ $rc -eq 2 ] && grep -q 'cannot open profile' '$T/e'"
exit $fails
