#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installable (issue 17 acceptance 4): `cmake --install` into a temporary prefix, the tree moved
# to another place, then run/check/iss and the MCU path from there with the source and build trees
# hidden (a private mount namespace lays an empty tmpfs over both, so any path into them fails),
# from cwd=/ with no NPUSIM_* variable set. Also: the installed binary holds neither the source nor
# the build directory's path, and it reads the installed data (a profile removed from the installed
# tree disappears from `npusim platforms`).
# Usage: install_test.sh SOURCE_DIR BUILD_DIR
set -u
SRC="$(cd "$1" && pwd)"; BUILD="$(cd "$2" && pwd)"
T=$(mktemp -d /tmp/npusim-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   - $1"; else echo "FAIL - $1"; fails=$((fails + 1)); fi; }
for v in $(env | grep -o '^NPUSIM_[A-Z_]*\|^RVISS_[A-Z_]*'); do unset "$v"; done

cmake --install "$BUILD" --prefix "$T/prefix" >"$T/install.log" 2>&1
check "cmake --install into a temporary prefix" "[ -x '$T/prefix/bin/npusim' ]"
mv "$T/prefix" "$T/moved"  # relocatable: nothing depends on the prefix it was installed to
P="$T/moved"
for d in profiles specs presets firmware examples tnpuv2; do
  check "share/npusim/$d installed" "[ -d '$P/share/npusim/$d' ] && [ -n \"\$(ls -A '$P/share/npusim/$d')\" ]"
done
check "installed binary holds no source-tree path ($SRC)" "! grep -qaF '$SRC/' '$P/bin/npusim'"
check "installed binary holds no build-tree path ($BUILD)" "! grep -qaF '$BUILD/' '$P/bin/npusim'"

# Test inputs, made before the trees are hidden: a zoo model and an MCU model (the reference
# executor's golden for --expect is made from the installed tree itself).
mkdir -p "$T/in"
cp "$BUILD/tests/unit/compiler/zoo/mobilenetv2_qdq.onnx" "$T/in/" 2>/dev/null
/usr/bin/python3 "$SRC/tests/mcu/gen_mcu_models.py" "$T/mcu" >/dev/null 2>&1 && cp "$T/mcu/cnn_kws_int8.onnx" "$T/in/"
check "test inputs ready (zoo MobileNetV2, MCU cnn_kws_int8)" "[ -f '$T/in/mobilenetv2_qdq.onnx' ] && [ -f '$T/in/cnn_kws_int8.onnx' ]"

cat >"$T/runs.sh" <<RUNS
set -u
cd /
N="$P/bin/npusim"; I="$T/in"; O="$T/out"; mkdir -p "\$O"
find "$SRC" "$BUILD" -mindepth 1 2>/dev/null | wc -l >"\$O/visible"
"\$N" run >"\$O/run.txt" 2>&1; echo \$? >"\$O/run.rc"
"\$N" run --reference "\$I/mobilenetv2_qdq.onnx" --output "\$O/golden.npy" >"\$O/ref.txt" 2>&1; echo \$? >"\$O/ref.rc"
"\$N" run -p rk3588 "\$I/mobilenetv2_qdq.onnx" -q --output "\$O/y.npy" --expect "\$O/golden.npy" --atol 0.25 >"\$O/model.txt" 2>&1; echo \$? >"\$O/model.rc"
"\$N" check -p rk3588 "\$I/mobilenetv2_qdq.onnx" >"\$O/check.txt" 2>&1; echo \$? >"\$O/check.rc"
"\$N" iss -p ws63 "$P/share/npusim/firmware/mcu_selftest_ws63.elf" >"\$O/iss.txt" 2>&1; echo \$? >"\$O/iss.rc"
"\$N" run -p ws63 "\$I/cnn_kws_int8.onnx" --skip-check --output "\$O/kws.npy" >"\$O/mcu.txt" 2>&1; echo \$? >"\$O/mcu.rc"
RUNS
# Hide both trees: BUILD first (it may sit inside SRC, which then covers it too).
hidden=no
if unshare -m true 2>/dev/null; then
  unshare -m bash -c "mount -t tmpfs none '$BUILD' && mount -t tmpfs none '$SRC' && bash '$T/runs.sh'" 2>"$T/unshare.err" \
    && hidden=yes
  check "runs in a private mount namespace with both trees hidden ($(head -c 200 "$T/unshare.err"))" "[ $hidden = yes ]"
else
  echo "note: no private mount namespace here (unshare -m needs CAP_SYS_ADMIN): the trees stay visible;"
  echo "      the path grep above and the data probe below still prove the binary does not use them"
  bash "$T/runs.sh"
fi
O="$T/out"
[ "$hidden" = yes ] && check "source and build trees were hidden during the runs" "[ \"\$(cat '$O/visible')\" = 0 ]"
check "run (bundled example): exit 0, bit-exact" "[ \"\$(cat '$O/run.rc')\" = 0 ] && grep -q 'bit-exact' '$O/run.txt'"
check "run --reference --output: exit 0, golden written" "[ \"\$(cat '$O/ref.rc')\" = 0 ] && [ -s '$O/golden.npy' ]"
check "run -p rk3588 zoo MobileNetV2 --output --expect: exit 0, pass" \
  "[ \"\$(cat '$O/model.rc')\" = 0 ] && grep -q '^expect .* -> pass' '$O/model.txt' && [ -s '$O/y.npy' ]"
check "check -p rk3588: exit 0 or 10 (CPU fallback), per-node verdicts" \
  "rc=\$(cat '$O/check.rc'); { [ \$rc = 0 ] || [ \$rc = 10 ]; } && grep -q 'summary:' '$O/check.txt'"
check "iss -p ws63 (installed firmware ELF): exit 0" "[ \"\$(cat '$O/iss.rc')\" = 0 ]"
check "MCU run on ws63: exit 0, equal to the reference, output written" \
  "[ \"\$(cat '$O/mcu.rc')\" = 0 ] && grep -q 'equal to the reference' '$O/mcu.txt' && [ -s '$O/kws.npy' ]"
for f in run ref model check iss mcu; do
  [ "$(cat "$O/$f.rc" 2>/dev/null)" = 0 ] || { echo "--- $f:"; tail -5 "$O/$f.txt"; }
done

# It reads the installed data: a profile removed from the installed tree is gone from `platforms`.
rm "$P/share/npusim/profiles/rk2118.json"
check "platforms lists what the installed tree holds (rk2118 removed -> absent)" \
  "! (cd / && '$P/bin/npusim' platforms) | grep -q '^rk2118 ' && (cd / && '$P/bin/npusim' platforms) | grep -q '^rk3588 '"
NPUSIM_PROFILE_DIR="$SRC/hwdesc/profiles" "$P/bin/npusim" platforms | grep -q '^rk2118 '
check "NPUSIM_PROFILE_DIR overrides the profile directory" "[ $? = 0 ]"
exit $((fails > 0))
