#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# npusim CLI end to end: bundled run, output check, trace content, determinism, error handling.
set -u
NPUSIM="$1"
EX="$(cd "$(dirname "$0")/../../examples" && pwd)"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   - $1"; else echo "FAIL - $1"; fails=$((fails + 1)); fi; }

"$NPUSIM" run --trace "$T/t1.json" --report "$T/r1.json" >"$T/out1.txt" 2>"$T/err1.txt"; rc=$?
check "bundled run exits 0" "[ $rc -eq 0 ]"
check "report has the per-layer cycles line" "grep -Eq '^conv3x3_int8 +Conv2D 3x3/1 p1 \\+bias \\+ReLU +1x16x32x32 +1x32x32x32' '$T/out1.txt'"
check "output equals the reference (bit-exact or within 1 LSB)" "grep -Eq 'worse, max \\|diff\\| [01] -> (bit-exact|within 1 LSB)' '$T/out1.txt'"
check "nothing on stderr" "[ ! -s '$T/err1.txt' ]"
check "trace and report are valid JSON with complete PC/CNA/CORE/DPU/DMA events" "python3 - '$T/t1.json' '$T/r1.json' <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
ev = t['traceEvents']
names = {(e['pid'], e['tid']): e['args']['name'] for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name'}
tracks = {names[(e['pid'], e['tid'])] for e in ev if e['ph'] == 'X' and e['dur'] > 0}
need = {'PC', 'CNA', 'CORE', 'DPU', 'DMA read', 'DMA write'}
assert need <= tracks, need - tracks
assert r['ok'], r
PY"
# 32x32 px x 32 ch x 16 ch x 9 taps / 1024 = 4608 cycles at the peak, over the profile's dense
# MAC efficiency (as listed by platforms -v).
eff=$("$NPUSIM" platforms -v | awk '/^rk3588 /{on=1} on && $1=="npu.conv_mac_efficiency"{print $3; exit}')
check "compute cycles = 4608 / npu.conv_mac_efficiency ($eff)" "python3 - '$T/r1.json' '$eff' <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1])); eff = float(sys.argv[2])
assert r['layers'][0]['cycles']['compute'] == math.ceil(4608 / eff - 1e-9), (r['layers'][0]['cycles'], eff)
PY"
"$NPUSIM" run --trace "$T/t2.json" --report "$T/r2.json" >"$T/out2.txt" 2>&1
check "second run: byte-identical report" "cmp -s '$T/r1.json' '$T/r2.json' && cmp -s '$T/out1.txt' '$T/out2.txt'"
check "second run: byte-identical trace" "cmp -s '$T/t1.json' '$T/t2.json'"

"$NPUSIM" run --platform nosuch >"$T/o" 2>"$T/e"; rc=$?
check "unknown platform: non-zero exit" "[ $rc -ne 0 ]"
check "unknown platform: one-line error naming it" "[ \$(wc -l <'$T/e') -eq 1 ] && grep -q \"unknown platform 'nosuch'\" '$T/e'"
"$NPUSIM" run missing.onnx >"$T/o" 2>"$T/e"; rc=$?
check "missing model: non-zero exit" "[ $rc -ne 0 ]"
check "missing model: one-line error naming it" "[ \$(wc -l <'$T/e') -eq 1 ] && grep -q \"model file 'missing.onnx' not found\" '$T/e'"
echo '{"in_c": 16, "kernel": 40}' >"$T/bad.json"
"$NPUSIM" run "$T/bad.json" >"$T/o" 2>"$T/e"; rc=$?
check "bad layer file: exit 2 naming the key" "[ $rc -eq 2 ] && grep -q \"'kernel' must be an integer in \\[1, 31\\]\" '$T/e'"
# A layer whose input (128 x 56 x 56 = 392 KiB) exceeds the 384 KiB CBUF: the single-conv path is
# the model compiler's conv lowering, which tiles it into row bands (it used to be refused).
echo '{"name": "big3x3", "in_c": 128, "in_h": 56, "in_w": 56, "out_c": 128, "kernel": 3, "pad": 1}' >"$T/big.json"
"$NPUSIM" run "$T/big.json" >"$T/o" 2>&1; rc=$?
check "a layer beyond the CBUF is tiled into several tasks, bit-exact" "[ $rc -eq 0 ] && grep -Eq '^big3x3 .* 0 +[2-9] ' '$T/o' && grep -q 'max |diff| 0 -> bit-exact' '$T/o'"
"$NPUSIM" run --mode timing >"$T/o" 2>&1; rc=$?
check "timing mode runs and reports cycles" "[ $rc -eq 0 ] && grep -q 'mode timing' '$T/o'"
"$NPUSIM" run --dump-regcmd "$T/conv.bin" >/dev/null 2>&1
check "decode names registers and fields" "\"$NPUSIM\" decode '$T/conv.bin' | grep -q 'CNA.CONV_CON3 = 0x00210009  CONV_X_STRIDE=1 CONV_Y_STRIDE=1'"
check "decode shows the task-ending entries" "\"$NPUSIM\" decode '$T/conv.bin' | grep -q 'OP_ENABLE blocks=0x1d'"
check "lint: the driver's stream is clean" "\"$NPUSIM\" lint '$T/conv.bin' | grep -q '0 error(s), 0 warning(s)'"
python3 -c "
import struct,sys
d=bytearray(open('$T/conv.bin','rb').read())
w=[struct.unpack_from('<Q',d,i)[0] for i in range(0,len(d),8)]
for i,x in enumerate(w):
    if (x & 0xffff) == 0x1040 and (x >> 48) == 0x0201:   # CNA_CBUF_CON0: 9 data + 5 weight banks
        w[i] = (x & ~(0xffffffff << 16)) | (0x59 << 16)
open('$T/bad.bin','wb').write(b''.join(struct.pack('<Q',x) for x in w))
"
"$NPUSIM" lint "$T/bad.bin" >"$T/o" 2>&1; rc=$?
check "lint: bank overflow is an error naming register and field" "[ $rc -eq 1 ] && grep -q 'CNA.CBUF_CON0.DATA_BANK+WEIGHT_BANK = 0xe: 9 + 5 banks exceed the 12 CBUF banks' '$T/o'"
"$NPUSIM" replay "$T/bad.bin" >"$T/o" 2>&1; rc=$?
check "replay: the fault stops the task with a diagnostic" "[ $rc -eq 1 ] && grep -q 'INTERRUPT_RAW_STATUS 0x4000' '$T/o' && grep -q 'exceed the 12 CBUF banks' '$T/o'"
check "decode of a missing file fails with one line" "! \"$NPUSIM\" decode '$T/none.bin' 2>'$T/e' && [ \$(wc -l <'$T/e') -eq 1 ]"
head -c 12 "$T/conv.bin" >"$T/odd.bin"
"$NPUSIM" decode "$T/odd.bin" >"$T/o" 2>&1; rc=$?
check "decode of a truncated file names the problem" "[ $rc -eq 2 ] && grep -q '12 bytes is not a whole number of 64-bit regcmd entries' '$T/o'"
"$NPUSIM" run "$EX/conv1x1_memory_bound.json" --cores 0 --report "$T/solo.json" >/dev/null 2>&1
"$NPUSIM" run "$EX/conv1x1_memory_bound.json" --cores 0,1,2 --report "$T/three.json" >/dev/null 2>&1
check "three concurrent cores each run slower than one alone (DDR contention)" "python3 - '$T/solo.json' '$T/three.json' <<'PY'
import json, sys
solo = json.load(open(sys.argv[1]))['layers'][0]['cycles']['total']
three = [l['cycles']['total'] for l in json.load(open(sys.argv[2]))['layers']]
print('solo', solo, 'concurrent', three)
assert len(three) == 3 and all(t > solo for t in three), (solo, three)
PY"
"$NPUSIM" run --platform rk3562 --report "$T/ddr.json" >/dev/null 2>&1
"$NPUSIM" run --platform rk3562 --sram --report "$T/sram.json" >"$T/o" 2>&1
check "rk3562 NBUF: tensors in on-chip SRAM, output still exact, fewer cycles, no DDR writes" "grep -q 'both in NBUF' '$T/o' && python3 - '$T/ddr.json' '$T/sram.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
ld, ls = d['layers'][0], s['layers'][0]
assert s['ok'] and s['output_check']['worse'] == 0
assert ls['cycles']['total'] < ld['cycles']['total'], (ls['cycles'], ld['cycles'])
assert ls['ddr_write_bytes'] == 0 and ls['sram_write_bytes'] == ld['ddr_write_bytes']
PY"
"$NPUSIM" --version | grep -q '^npusim [0-9]'; check "--version" "[ $? -eq 0 ]"
"$NPUSIM" run --reference "$T/none.onnx" >"$T/o" 2>"$T/e"; rc=$?
check "run --reference on a missing model: exit 2, one line naming it" "[ $rc -eq 2 ] && [ \$(wc -l <'$T/e') -eq 1 ] && grep -q 'none.onnx' '$T/e'"
"$NPUSIM" iss "$T/none.elf" >"$T/o" 2>"$T/e"; rc=$?
check "iss on a missing ELF: exit 2 naming it" "[ $rc -eq 2 ] && grep -q 'none.elf' '$T/e'"
"$NPUSIM" specs >"$T/o" 2>&1; rc=$?
check "specs lists the RKNN, tnpuv2 and MindSpore Lite Micro platforms" "[ $rc -eq 0 ] && grep -q '^RK3588 ' '$T/o' && grep -q '^tnpuv2 ' '$T/o' && grep -q '^ws63 ' '$T/o'"
"$NPUSIM" check --platform nosuch "$T/none.onnx" >"$T/o" 2>"$T/e"; rc=$?
check "check with an unknown platform: non-zero exit naming it" "[ $rc -ne 0 ] && grep -qi 'nosuch' '$T/e'"
check "platforms lists the MCU targets" "\"$NPUSIM\" platforms | grep -q '^ws63 '"
for sub in run platforms decode lint replay iss check specs; do "$NPUSIM" $sub --help >/dev/null; check "$sub --help" "[ $? -eq 0 ]"; done
"$NPUSIM" platforms | grep -q '^rk3588 '; check "platforms lists rk3588" "[ $? -eq 0 ]"
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed" >/dev/null
[ $fails -eq 0 ]
