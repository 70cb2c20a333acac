#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The RTL co-simulation through the CLI (rtl/README.md): npusim run --rtl core,dpu on the bundled
# conv and the example layers (3x3, 5x5 stride 2, 1x1) and on single-layer QDQ nets in the model
# zoo's onnxruntime-style quantization (depthwise 3x3 stride 1 and 2, a residual add that runs as a
# DPU-only EW task): every task's bytes must equal the C++ engine's, the model report must be the
# C++ run's (the platform's timing stays the model's), and the RTL's cycles must be within 10% of
# the timing model's, depthwise included, with the profile's silicon-fitted depthwise figures
# (the RTL's depthwise schedule takes the same channel padding and lane utilisation). Then the VCD
# converts with GTKWave's vcd2fst and reads back (fst2vcd), replay --rtl, and the refusals.
#   rtl_cli_test.sh NPUSIM
set -u
NPUSIM="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY=/usr/bin/python3
T=$(mktemp -d)
[ -n "${NPUSIM_KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   - $1"; else echo "FAIL - $1"; fails=$((fails + 1)); fi; }

# The RTL section of a JSON report: every task on the RTL, bytes equal, |diff| <= limit %.
cat >"$T/rtl_ok.py" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
limit = float(sys.argv[2])
rtl = r["rtl"]
tasks = rtl["tasks"]
assert tasks, "no co-simulated task"
for t in tasks:
    assert t["rtl"] == rtl["blocks"].replace(",", "+") or t["kind"].startswith("dpu:"), t
    assert t["bytes_differ"] == 0 and t["bytes"] > 0, t
    assert abs(t["diff_pct"]) <= limit, t
assert rtl["summary"]["tasks_differ"] == 0
PY
# The report without its RTL section equals the C++ run's.
same_report() { diff <(sed '/^RTL co-simulation/,$d' "$1" | sed '/^$/d') <(sed '/^$/d' "$2") >/dev/null; }

run_pair() {  # name, extra args...
  local name="$1"; shift
  "$NPUSIM" run "$@" --rtl core,dpu --report "$T/$name.json" >"$T/$name.rtl.txt" 2>"$T/$name.err"
  echo $? >"$T/$name.rc"
  "$NPUSIM" run "$@" >"$T/$name.cpp.txt" 2>/dev/null
}

for ex in "" "$ROOT/examples/conv5x5_s2_int8.json" "$ROOT/examples/conv1x1_memory_bound.json"; do
  name=$(basename "${ex:-bundled}" .json)
  run_pair "$name" $ex
  check "$name: exit 0" "[ \$(cat $T/$name.rc) = 0 ]"
  check "$name: bytes equal on every task" "grep -q 'bytes equal on every task' $T/$name.rtl.txt"
  check "$name: RTL within 10% of the model, every task" "$PY $T/rtl_ok.py $T/$name.json 10"
  check "$name: report otherwise the C++ run's" "same_report $T/$name.rtl.txt $T/$name.cpp.txt"
done

if $PY -c "import onnx, numpy" 2>/dev/null && $PY "$HERE/make_rtl_nets.py" "$T/nets" >/dev/null; then
  for net in dwconv3x3_c32 dwconv3x3_s2_c64; do
    run_pair "$net" "$T/nets/${net}_qdq.onnx" -q
    check "$net: exit 0" "[ \$(cat $T/$net.rc) = 0 ]"
    check "$net: RTL bytes equal, within 10% with the profile's depthwise figures" "$PY $T/rtl_ok.py $T/$net.json 10"
    check "$net: output check and report the C++ run's" "same_report $T/$net.rtl.txt $T/$net.cpp.txt"
  done
  # Another schedule follows too: the RTL takes the parameters, it does not hard-wire RK3588's.
  DWP=(--param npu.depthwise_cout_align=32 --param npu.depthwise_mac_efficiency=0.02)
  run_pair dwalt "$T/nets/dwconv3x3_c32_qdq.onnx" -q "${DWP[@]}"
  check "dwconv3x3_c32 with other depthwise figures (align 32, efficiency 0.02): within 10%" \
    "$PY $T/rtl_ok.py $T/dwalt.json 10"
  run_pair residual "$T/nets/residual_qdq.onnx" -q
  check "residual: exit 0" "[ \$(cat $T/residual.rc) = 0 ]"
  check "residual: the EW add runs on the RTL DPU" "grep -q 'dpu:.*eltwise *dpu ' $T/residual.rtl.txt"
  check "residual: bytes equal, within 10%" "$PY $T/rtl_ok.py $T/residual.json 10"
  check "residual: report the C++ run's" "same_report $T/residual.rtl.txt $T/residual.cpp.txt"
  "$NPUSIM" run "$T/nets/residual_qdq.onnx" -q --rtl dpu --report "$T/res_dpu.json" >/dev/null 2>&1
  check "residual --rtl dpu: bytes equal, within 10%" "$PY $T/rtl_ok.py $T/res_dpu.json 10"
else
  echo "skip - python3-onnx missing: no QDQ nets"
fi

# VCD: the RTL's signals, converted by GTKWave's vcd2fst and read back.
"$NPUSIM" run --rtl core,dpu --rtl-vcd "$T/conv.vcd" >"$T/vcd.txt" 2>&1
check "VCD written" "[ -s $T/conv.vcd ] && grep -q 'timescale 1ps' $T/conv.vcd"
check "VCD has the CORE output and DPU ports" "grep -q ' c_o_valid ' $T/conv.vcd && grep -q ' o_data ' $T/conv.vcd"
if command -v vcd2fst >/dev/null; then
  check "vcd2fst converts the VCD" "vcd2fst $T/conv.vcd $T/conv.fst >/dev/null 2>&1 && [ -s $T/conv.fst ]"
  check "the FST reads back with the same signals" "fst2vcd $T/conv.fst 2>/dev/null | grep -q ' c_o_valid '"
else
  echo "FAIL - vcd2fst not installed (Debian package gtkwave; scripts/deps.sh)"; fails=$((fails + 1))
fi

# replay --rtl on the bundled conv's regcmd (tensors are zero in the replayed memory).
"$NPUSIM" run --dump-regcmd "$T/conv.regcmd" >/dev/null 2>&1
"$NPUSIM" replay "$T/conv.regcmd" --mode full --rtl core,dpu >"$T/replay.txt" 2>&1
check "replay --rtl core,dpu: exit 0, bytes equal" "grep -q 'bytes equal on every task' $T/replay.txt"

# Refusals: one line, exit 2.
refuse() {  # name, expected message part, args...
  local name="$1" msg="$2"; shift 2
  "$NPUSIM" "$@" >"$T/r.out" 2>"$T/r.err"
  local rc=$?
  check "$name: exit 2, one-line error" "[ $rc = 2 ] && [ \$(wc -l <$T/r.err) = 1 ] && grep -q 'npusim: error: .*$msg' $T/r.err"
}
refuse "unknown block" "unknown block" run --rtl core,mac
refuse "--rtl-vcd alone" "needs --rtl" run --rtl-vcd "$T/x.vcd"
refuse "timing mode" "needs --mode full" run --rtl dpu --mode timing
refuse "8-byte atoms" "16-byte atoms" run --rtl core --platform rk3566
refuse "MCU platform" "does not apply" run --rtl dpu --platform ws63
refuse "replay in timing mode" "needs --mode full" replay "$T/conv.regcmd" --rtl dpu
refuse "unwritable VCD" "cannot write" run --rtl dpu --rtl-vcd /nonexistent/dir/x.vcd

echo "$fails failure(s)"
[ "$fails" = 0 ]
