#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# npusim sweep locally on the build zoo: 30 points in parallel; every point's totals equal a direct
# `npusim run` of the same inputs (the independent expectation); a sweep killed midway (SIGKILL)
# and restarted runs only the missing points, leaves finished result files untouched and merges
# to the same bytes; Ctrl-C (SIGINT) stops cleanly with exit 130; failed points are listed with
# their error and rerun alone; a full-mode point carries the numerics check; usage errors.
source "$(dirname "$0")/common.sh"
write_spec "$T/s.json"

out="$("$NPUSIM" sweep "$T/s.json" -j 2 -o "$T/a")" || fail "sweep exited $?: $out"
echo "$out"
grep -q "30 points, 0 done, 30 to run" <<<"$out" || fail "expected 30 points to run"
grep -q "ran 30 points" <<<"$out" || fail "expected 30 points run"
[ "$(wc -l <"$T/a/sweep.csv")" -eq 31 ] || fail "sweep.csv should have a header and 30 rows"
[ "$(ls "$T/a/points" | wc -l)" -eq 30 ] || fail "expected 30 result files"
[ -z "$(ls "$T/a/work")" ] || fail "work/ should be empty after the sweep"

# Independent expectation: points 0, 17 and 29 run directly give the same totals.
for i in 0 17 29; do
  args="$("$PY" - "$T/a/sweep.json" "$i" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["points"][int(sys.argv[2])]
a = [p["model"], "--mode", p["mode"], "--platform", p["platform"], "--core-mask", p["core_mask"]]
for k, v in p["params"].items(): a += ["--param", f"{k}={v}"]
print(" ".join(a))
PY
)"
  # shellcheck disable=SC2086
  "$NPUSIM" run $args --quiet --report "$T/direct$i.json" >/dev/null || fail "direct run of point $i failed"
  "$PY" - "$T/a/sweep.json" "$i" "$T/direct$i.json" <<'PY' || fail "point $i differs from its direct run"
import json, sys
p = json.load(open(sys.argv[1]))["points"][int(sys.argv[2])]
d = json.load(open(sys.argv[3]))
t = d["totals"]
for k in ("latency_ps", "ddr_read_bytes", "ddr_write_bytes", "tasks", "npu_layers", "cpu_layers"):
    assert p["totals"][k] == t[k], (k, p["totals"][k], t[k])
assert p["totals"]["macs"] == sum(l["macs"] for l in d["layers"])
assert [(l["name"], l["bound"], l["cycles"]) for l in p["layers"]] == \
       [(l["name"], l["bound"], l["cycles"]["total"]) for l in d["layers"]]
PY
done

# Kill midway, restart: only the missing points run.
"$NPUSIM" sweep "$T/s.json" -j 1 -q -o "$T/b" >"$T/b.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
  n=$( (ls "$T/b/points" 2>/dev/null || true) | wc -l)
  [ "$n" -ge 4 ] && break
  sleep 0.02
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
sleep 0.5  # the running child got SIGTERM through PDEATHSIG
done_before=$(ls "$T/b/points" | wc -l)
echo "killed after $done_before points"
[ "$done_before" -ge 4 ] && [ "$done_before" -lt 30 ] || fail "kill should land midway (had $done_before)"
if pgrep -f -- "--report $T/b/" >/dev/null; then fail "a point of the killed sweep is still running"; fi
(cd "$T/b/points" && stat -c '%i %Y %n' -- * | sort) >"$T/before.txt"
out="$("$NPUSIM" sweep "$T/s.json" -j 2 -o "$T/b")" || fail "restart exited $?"
echo "$out"
grep -q "30 points, $done_before done, $((30 - done_before)) to run" <<<"$out" || fail "restart should see $done_before done"
grep -q "ran $((30 - done_before)) points" <<<"$out" || fail "restart should run only the $((30 - done_before)) missing"
(cd "$T/b/points" && stat -c '%i %Y %n' -- * | sort) | grep -F -x -f "$T/before.txt" | wc -l >"$T/kept.txt"
[ "$(cat "$T/kept.txt")" -eq "$done_before" ] || fail "finished result files were rewritten"
cmp "$T/a/sweep.csv" "$T/b/sweep.csv" || fail "resumed sweep.csv differs from the uninterrupted run"
cmp "$T/a/sweep.json" "$T/b/sweep.json" || fail "resumed sweep.json differs from the uninterrupted run"
out="$("$NPUSIM" sweep "$T/s.json" -o "$T/b")"
grep -q "30 points, 30 done, 0 to run" <<<"$out" || fail "a finished sweep should run nothing"

# Ctrl-C (SIGINT): the running points are stopped, their work files removed, exit 130; a restart
# completes the sweep with the same bytes.
"$NPUSIM" sweep "$T/s.json" -j 2 -q -o "$T/c" >"$T/c.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
  [ "$( (ls "$T/c/points" 2>/dev/null || true) | wc -l)" -ge 3 ] && break
  sleep 0.02
done
kill -INT "$pid"
set +e; wait "$pid"; rc=$?; set -e
cat "$T/c.log"
[ "$rc" -eq 130 ] || fail "an interrupted sweep exits 130 (got $rc)"
grep -q "^npusim: error: sweep interrupted, [0-9]* of 30 points have results (run the same command to continue)" \
  "$T/c.log" || fail "the interruption is reported"
[ -z "$(ls -A "$T/c/work")" ] || fail "work/ should be empty after an interruption: $(ls -R "$T/c/work")"
if pgrep -f -- "--report $T/c/" >/dev/null; then fail "a point of the interrupted sweep is still running"; fi
"$NPUSIM" sweep "$T/s.json" -j 2 -q -o "$T/c" >/dev/null || fail "restart after SIGINT failed"
cmp "$T/a/sweep.json" "$T/c/sweep.json" || fail "sweep.json after SIGINT and restart differs"

# Failed points: a model that cannot be loaded (garbage bytes), listed with npusim's error.
printf 'not an onnx model' >"$T/broken.onnx"
cat >"$T/f.json" <<SPEC
{"models": ["$ZOO/t_qlinear.onnx", "broken.onnx"], "platforms": ["rk3588"], "modes": ["timing", "full"]}
SPEC
set +e
out="$("$NPUSIM" sweep "$T/f.json" -q 2>&1)"; rc=$?
set -e
echo "$out"
[ "$rc" -eq 1 ] || fail "a sweep with a failed point exits 1 (got $rc)"
grep -q "^failed point [0-9a-f]\{16\} (broken.onnx on rk3588 .*cannot load" <<<"$out" || fail "the failed point names its error"
st="$("$NPUSIM" sweep "$T/f.json" --status)"
grep -q "4 done (2 ok, 0 problem, 2 failed), 0 to run" <<<"$st" || fail "--status counts: $st"
grep -q ",failed,3,.*cannot load" "$T/f-results/sweep.csv" || fail "sweep.csv lists the failure with exit code 3"
bad_id="$(grep -o '^  failed [0-9a-f]*' <<<"$st" | awk 'NR == 1 {print $2}')"
ok_id="$("$NPUSIM" sweep "$T/f.json" --list | awk '$3 ~ /t_qlinear/ && $NF == "full" {print $2}')"
set +e
out="$("$NPUSIM" sweep "$T/f.json" -q --only-failed 2>&1)"
set -e
grep -q "4 points, 4 done, 2 to run" <<<"$out" || fail "--only-failed should pick the two failed points"
grep -q "ran 2 points" <<<"$out" || fail "--only-failed should run two points"
cp "$T/f-results/points/$ok_id.json" "$T/ok-before.json"
set +e
out="$("$NPUSIM" sweep "$T/f.json" -q --point "$ok_id" 2>&1)"
set -e
grep -q "ran 1 points in .*: 1 ok" <<<"$out" || fail "--point should rerun exactly that point"
"$PY" - "$T/f-results/points/$ok_id.json" <<'PY' || fail "the full-mode point should carry the numerics check"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["inputs"]["mode"] == "full" and r["status"] == "ok", r["inputs"]
assert r["report"]["mode"] == "full" and "outputs" in r["report"], list(r["report"])
PY
cmp "$T/ok-before.json" "$T/f-results/points/$ok_id.json" || fail "a rerun point gives the same result file"
[ -n "$bad_id" ] || fail "no failed id in --status"

# Usage errors: one line, exit 2.
expect_usage() {  # expect_usage PATTERN ARGS...
  local pat="$1"; shift
  set +e; err="$("$NPUSIM" sweep "$@" 2>&1 >/dev/null)"; rc=$?; set -e
  [ "$rc" -eq 2 ] || fail "sweep $* should exit 2 (got $rc)"
  grep -q "^npusim: error: .*$pat" <<<"$err" || fail "sweep $*: expected '$pat' in: $err"
  [ "$(wc -l <<<"$err")" -eq 1 ] || fail "sweep $*: expected one line: $err"
}
expect_usage "--partition applies to --slurm submissions only" "$T/s.json" --partition x
expect_usage "--point 0123456789abcdef: no such point" "$T/s.json" --point 0123456789abcdef
expect_usage "-j applies to local runs" "$T/s.json" --slurm -j 2
expect_usage "--list, --status and --collect exclude each other" "$T/s.json" --status --collect
expect_usage "no sweep in" --status --results "$T/nowhere"
: >"$T/s.txt"
expect_usage "sweep spec '$T/s.txt': unknown format" "$T/s.txt"
echo "PASS"
