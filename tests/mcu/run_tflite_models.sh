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
  if [ -n "$pat" ] && ! echo "$out" | grep -qE -e "$pat"; then echo "FAIL: no '$pat'"; fail=1; fi
}
for p in ws63 3066h; do
  for m in tfl_cnn_f32 tfl_cnn_int8 tfl_kws_f32 tfl_kws_int8 tfl_mobilenet_int8 tfl_facedet_f32 tfl_upsample_f32 tfl_upsample_int8 \
           tfl_misc_f32 tfl_misc_int8; do
    expect 0 "equal to the reference" "$work/$m.tflite" --platform $p
  done
done
expect 0 "equal to the reference" "$work/tfl_mobilenet_f32.tflite" --platform ws63
# 98 KiB of float activations: refused on the 64 KiB 3066H with the figures.
expect 4 "does not fit: SRAM" "$work/tfl_mobilenet_f32.tflite" --platform 3066h
# ONNX MobileNet and DS-CNN (depthwise-equivalent Conv, the twins' float form) quantized by the
# toolchain for the MCU (--quantize int8): equal to the reference, within the stated tolerance of the float model.
for p in ws63 3066h; do
  for m in tfl_mobilenet_f32_twin tfl_kws_f32_twin; do
    expect 0 "within the tolerance" "$work/$m.onnx" --platform $p --quantize int8
  done
done
# The run on the SystemC platform writes a JSON report and a Perfetto trace, byte-identical run to run.
for k in 1 2; do
  expect 0 "equal to the reference" "$work/tfl_kws_int8.tflite" --platform ws63 --report "$work/r$k.json" --trace "$work/t$k.json"
done
cmp -s "$work/r1.json" "$work/r2.json" && cmp -s "$work/t1.json" "$work/t2.json" || { echo "FAIL: report/trace differ between runs"; fail=1; }
grep -q '"symbol": "mk_conv2d_s8"' "$work/r1.json" || { echo "FAIL: no kernel symbol in the report"; fail=1; }
grep -q '"name":"mk_depthwise_conv2d_s8"' "$work/t1.json" || { echo "FAIL: no kernel span in the trace"; fail=1; }
# Issue 17: the MCU trace nests on every track (the rule Perfetto applies) and --vcd writes a VCD
# GTKWave's vcd2fst reads, from the same trace writer.
/usr/bin/python3 "$(dirname "$0")/../e2e/trace_nesting.py" "$work/t1.json" || { echo "FAIL: MCU trace misnested"; fail=1; }
expect 0 "equal to the reference" "$work/tfl_kws_int8.tflite" --platform ws63 --vcd "$work/t.vcd"
if command -v vcd2fst >/dev/null; then
  vcd2fst "$work/t.vcd" "$work/t.fst" >/dev/null 2>&1 && grep -q 'layers_busy' "$work/t.vcd" || { echo "FAIL: MCU VCD"; fail=1; }
fi
# NPU options do not apply to an MCU: an error naming the option.
expect 2 "--core-mask does not apply to MCU runs" "$work/tfl_kws_int8.tflite" --platform ws63 --core-mask 1
expect 2 "--mode does not apply" "$work/tfl_kws_int8.tflite" --platform 3066h --mode timing
# check and run give one verdict: a TFLite op the checker accepts without an MCU kernel (float LOG).
exit $fail
