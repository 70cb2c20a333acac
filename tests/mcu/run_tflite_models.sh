#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 21 acceptance 1 and 3: the TFLite test models (gen_tflite_models.py) through `npusim run` on
# ws63 and 3066H: seed-000 check (TFLite rules), model blob, firmware on the ISS, outputs equal to the
# reference executor (TFLite arithmetic) - check and run give one verdict.
# Usage: run_tflite_models.sh NPUSIM MODELS_DIR
set -u
npusim="$1"; work="$2"
fail=0
expect() {  # expect CODE PATTERN args...
  local code="$1" pat="$2"; shift 2
  local out; out="$("$npusim" run "$@" 2>&1)"; local rc=$?
  echo "== npusim run $* -> $rc"; echo "$out" | grep -E "^(check|flash|SRAM|does not fit|total|output|error|  unsupported)" | head -12
  if [ "$rc" != "$code" ]; then echo "FAIL: exit $rc, expected $code"; fail=1; fi
  if [ -n "$pat" ] && ! echo "$out" | grep -qE "$pat"; then echo "FAIL: no '$pat'"; fail=1; fi
}
for p in ws63 3066h; do
  for m in tfl_cnn_f32 tfl_cnn_int8 tfl_kws_f32 tfl_kws_int8 tfl_mobilenet_int8 tfl_facedet_f32; do
    expect 0 "equal to the reference" "$work/$m.tflite" --platform $p
  done
done
expect 0 "equal to the reference" "$work/tfl_mobilenet_f32.tflite" --platform ws63
# 98 KiB of float activations: refused on the 64 KiB 3066H with the figures.
expect 4 "does not fit: SRAM" "$work/tfl_mobilenet_f32.tflite" --platform 3066h
exit $fail
