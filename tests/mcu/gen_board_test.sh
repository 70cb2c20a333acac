#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The MCU profiles (hwdesc/profiles/mcu) generate cleanly, and the generator refuses a profile whose
# figures are ungraded, whose unverified figures carry no reason, or whose layout does not fit the
# memory map. Usage: gen_board_test.sh GEN PROFILE_DIR WORKDIR
set -u
gen="$1"; prof="$2"; work="$3"; fail=0
rm -rf "$work"; mkdir -p "$work"
python3 "$gen" --out "$work/ok" --presets-out "$work/ok/presets" "$prof/ws63.json" "$prof/3066h.json" || { echo "FAIL: the shipped profiles"; fail=1; }
grep -q "__model_blob = 0x00300000" "$work/ok/ws63.ld" || { echo "FAIL: ws63.ld"; fail=1; }
/usr/bin/python3 - "$work/ok/presets/ws63.json" <<'PY' || { echo "FAIL: ws63 preset core"; fail=1; }
import json, sys
isa = json.load(open(sys.argv[1]))["isa"]
sys.exit(0 if isa["misaligned"] == "trap" and isa["triggers"] == {"count": 0} else 1)
PY
bad() {  # bad NAME PYTHON-EXPRESSION-ON-p MESSAGE
  python3 - "$prof/ws63.json" "$work/$1.json" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(p, open(sys.argv[2], "w"))
PY
  out="$(python3 "$gen" --out "$work/$1" --presets-out "$work/$1/p" "$work/$1.json" 2>&1)"; rc=$?
  if [ "$rc" = 0 ] || ! echo "$out" | grep -q "$3"; then echo "FAIL: $1 ($rc): $out"; fail=1; fi
}
bad no_reason 'del p["devices"]["clint"]["reason"]' "unverified figure needs 'reason'"
bad no_grade 'p["clock_hz"]["grade"] = "probably"' "grade must be one of"
bad overlap 'p["memory"][1]["base"] = "0x00100000"' "overlap"
bad blob_outside_flash 'p["layout"]["model_blob"]["end"] = "0x00700000"' "inside flash"
bad gap 'p["layout"]["model_blob"]["base"] = "0x00300100"' "back to back"
bad misaligned 'p["core"]["misaligned"] = "split"' "core.misaligned"
bad core_no_reason 'del p["core"]["reason"]' "unverified figure needs 'reason'"
bad uart_model 'p["devices"]["uart"]["model"] = "8250"' "devices.uart.model"
exit $fail
