#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 21 acceptance 3/5: `npusim check` and `npusim run` give one verdict on every test model, on ws63
# and 3066H: a model the checker accepts runs (exit 0, outputs equal to the reference executor) or is
# refused only because it does not fit (flash/SRAM figures); a model the checker refuses is refused by
# run (exit 4) for the same reason class, never run. Prints the acceptance table row per run.
# Usage: check_run_agree.sh NPUSIM MODEL_DIR...
set -u
npusim="$1"; shift
fail=0; n=0
printf '| model | platform | check | run | cycles | time | flash (fw + blob) | SRAM | outputs |\n|---|---|---|---|---|---|---|---|---|\n'
for dir in "$@"; do
  for m in "$dir"/*.onnx "$dir"/*.tflite; do
    [ -e "$m" ] || continue
    for p in ws63 3066h; do
      n=$((n + 1))
      chk="$("$npusim" check --platform "$p" "$m" 2>&1)"
      unsup=$(echo "$chk" | sed -n 's/^summary: .* \([0-9][0-9]*\) unsupported$/\1/p')
      if [ -z "$unsup" ]; then echo "FAIL: $m $p: no check summary: $chk"; fail=1; continue; fi
      out="$("$npusim" run --platform "$p" "$m" --quiet 2>&1)"; rc=$?
      cyc=$(echo "$out" | sed -n 's/^total: \([0-9]*\) cycles, [0-9]* instructions, \(.*\) at .*/\1|\2/p')
      flash=$(echo "$out" | sed -n 's/^flash: \([0-9]*\) \/ .*firmware \([0-9]*\), model blob \([0-9]*\).*/\1 (\2 + \3)/p')
      sram=$(echo "$out" | sed -n 's/^SRAM:  *\([0-9]*\) \/ .*/\1/p')
      verdict=$(echo "$out" | grep -E "^output " | sed 's/^output \(.*\): \(equal[^(]*\|[0-9]* of [0-9]* differ\).*/\2/' | sort -u | tr '\n' ';')
      if [ "$unsup" = 0 ]; then
        cv="supported"
        if [ "$rc" = 0 ] && echo "$out" | grep -q "equal to the reference"; then rv="ran"
        elif [ "$rc" = 4 ] && echo "$out" | grep -q "does not fit"; then rv="does not fit"
        else rv="exit $rc"; echo "FAIL: $m on $p: the checker accepts it, run exits $rc"; echo "$out" | tail -5; fail=1; fi
      else
        cv="$unsup unsupported"
        if [ "$rc" = 4 ] && ! echo "$out" | grep -q "^total:" && echo "$out" | grep -qE "does not support|no MCU kernel yet|onnxruntime quantization scenario"; then rv="refused"
        else rv="exit $rc"; echo "FAIL: $m on $p: the checker refuses it ($unsup nodes), run exits $rc"; echo "$out" | tail -5; fail=1; fi
      fi
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(basename "$m")" "$p" "$cv" "$rv" "${cyc%%|*}" "${cyc#*|}" "$flash" "$sram" "$verdict"
    done
  done
done
echo "$n check/run pairs"
[ "$n" -gt 0 ] || { echo "FAIL: no models"; fail=1; }
exit $fail
