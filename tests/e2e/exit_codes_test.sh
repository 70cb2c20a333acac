#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Exit codes of `npusim lint` and `npusim replay` against docs/cli.md's table (issue 17): every
# code each of them can give, each with its one-line error (`npusim: error: ...`) where it is an
# error. The streams are the driver's own (`run --dump-regcmd`) and one with a CBUF bank overflow
# (a programming error the vendor's rknn runtime reports as well, docs/rknpu-register-semantics.md).
# `npusim iss`'s codes: tests/isa/CMakeLists.txt (isa_cli.npusim_iss_*), on assembled programs.
set -u
NPUSIM="$1"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   - $1"; else echo "FAIL - $1"; fails=$((fails + 1)); fi; }
# expect NAME CODE REGEX -- ARGS...: exit CODE; for CODE 2 exactly one stderr line, matching REGEX
expect() {
  local name="$1" code="$2" re="$3"; shift 4
  "$NPUSIM" "$@" >"$T/o" 2>"$T/e"; local rc=$?
  if [ "$code" -eq 2 ]; then
    check "$name: exit $code, one line '$re'" "[ $rc -eq $code ] && [ \$(wc -l <'$T/e') -eq 1 ] && grep -Eq -- \"$re\" '$T/e'"
  else
    check "$name: exit $code, '$re'" "[ $rc -eq $code ] && grep -Eq -- \"$re\" '$T/o' '$T/e'"
  fi
}

"$NPUSIM" run --dump-regcmd "$T/conv.bin" >/dev/null 2>&1
/usr/bin/python3 - "$T" <<'PY'
import struct, sys
T = sys.argv[1]
d = open(f"{T}/conv.bin", "rb").read()
w = [struct.unpack_from("<Q", d, i)[0] for i in range(0, len(d), 8)]
for i, x in enumerate(w):
    if (x & 0xffff) == 0x1040 and (x >> 48) == 0x0201:  # CNA_CBUF_CON0: 9 data + 5 weight banks
        w[i] = (x & ~(0xffffffff << 16)) | (0x59 << 16)
open(f"{T}/bad.bin", "wb").write(b"".join(struct.pack("<Q", x) for x in w))
open(f"{T}/odd.bin", "wb").write(d[:12])
open(f"{T}/empty.bin", "wb").write(b"")
PY

# lint: 0 clean, 1 an error found, 2 bad input
expect "lint clean stream" 0 "0 error\(s\), 0 warning\(s\)" -- lint "$T/conv.bin"
expect "lint bank overflow" 1 "9 \+ 5 banks exceed the 12 CBUF banks" -- lint "$T/bad.bin"
expect "lint missing file" 2 "^npusim: error: cannot open regcmd file '.*none.bin'" -- lint "$T/none.bin"
expect "lint directory" 2 "^npusim: error: cannot open regcmd file '.*' \(a directory\)" -- lint "$T"
expect "lint truncated file" 2 "^npusim: error: .*12 bytes is not a whole number of 64-bit regcmd entries" -- lint "$T/odd.bin"
expect "lint bad --base" 2 "^npusim: error: --base 'zz' is not a number" -- lint "$T/conv.bin" --base zz
expect "lint unknown platform" 2 "^npusim: error: unknown platform 'nosuch'" -- lint "$T/conv.bin" -p nosuch
expect "lint unknown option" 2 "^npusim: error: .*--nosuch" -- lint "$T/conv.bin" --nosuch
expect "lint tnpuv2 --base" 2 "^npusim: error: --base does not apply to lint --platform tnpuv2" -- lint "$T/conv.bin" -p tnpuv2 --base 0

# replay: 0 the tasks completed, 1 a fault (or timeout), 2 bad input
expect "replay clean stream" 0 "1 task\(s\) completed of 1" -- replay "$T/conv.bin" --mode full
expect "replay fault" 1 "INTERRUPT_RAW_STATUS 0x4000" -- replay "$T/bad.bin"
expect "replay missing file" 2 "^npusim: error: cannot open regcmd file '.*none.bin'" -- replay "$T/none.bin"
expect "replay empty buffer (a kick with zero tasks faults)" 1 "TASK_NUMBER = 0 \(0x0\): kick with zero tasks" -- replay "$T/empty.bin"
expect "replay truncated file" 2 "^npusim: error: .*12 bytes is not a whole number" -- replay "$T/odd.bin"
expect "replay --tasks out of range" 2 "^npusim: error: --tasks 1000000000: out of range" -- replay "$T/conv.bin" --tasks 1000000000
expect "replay bad --load" 2 "^npusim: error: --load 'x': expected FILE@ADDR" -- replay "$T/conv.bin" --load x
expect "replay missing --load file" 2 "^npusim: error: cannot open --load file '.*none.bin'" -- replay "$T/conv.bin" --load "$T/none.bin@0x1000"
expect "replay bad --core-mask" 2 "^npusim: error: --core-mask '7': " -- replay "$T/conv.bin" --core-mask 7
expect "replay unknown mode" 2 "^npusim: error: .*--mode" -- replay "$T/conv.bin" --mode fast
expect "replay tnpuv2" 2 "^npusim: error: replay runs RKNPU regcmd buffers" -- replay "$T/conv.bin" -p tnpuv2
expect "replay --rtl in timing mode" 2 "^npusim: error: --rtl" -- replay "$T/conv.bin" --rtl core

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
