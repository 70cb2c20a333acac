#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# npusim sweep --slurm against a real Slurm (a single-node cluster from scripts/slurm-local.sh in
# CI): the 30-point sweep as a job array through sbatch, then --status and --collect; the merged
# CSV and JSON must be byte-identical to the local run of the same spec. Skipped (exit 77) when no
# Slurm controller answers.
source "$(dirname "$0")/common.sh"
if ! command -v sbatch >/dev/null || ! sinfo -h >/dev/null 2>&1; then
  skip "no Slurm reachable (sinfo fails; SLURM_CONF=${SLURM_CONF:-unset}); start one with" \
       "eval \"\$(scripts/slurm-local.sh start)\" (what .ci/run does)"
fi
write_spec "$T/s.json"
"$NPUSIM" sweep "$T/s.json" -j 2 -q -o "$T/local" >/dev/null || fail "local sweep failed"
# Submit without waiting, follow with --status, then --collect: the path a cluster user takes.
out="$("$NPUSIM" sweep "$T/s.json" -o "$T/slurm" --slurm --array-chunk 10 --time 10:00)" || fail "submission failed: $out"
echo "$out"
job="$(sed -n 's/^submitted job \([0-9]*\) (3 tasks)$/\1/p' <<<"$out")"
[ -n "$job" ] || fail "expected 'submitted job N (3 tasks)'"
grep -q -- "--array=0-2" "$T/slurm/slurm/submit-1.sh" 2>/dev/null && fail "the array belongs on the sbatch line, not in the script"
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 0.5
done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || fail "job $job still queued after 300 s"
st="$("$NPUSIM" sweep "$T/s.json" -o "$T/slurm" --status)"
echo "$st"
grep -q "30 points: 30 done (30 ok, 0 problem, 0 failed), 0 to run" <<<"$st" || fail "--status after the job"
grep -q "job $job (submission 1, 30 points in 3 tasks): no task queued or running" <<<"$st" || fail "--status names the job"
for i in 0 1 2; do
  grep -q "array task $i: 10 point(s) ran" "$T/slurm/slurm/submit-1_${job}_$i.out" || fail "task $i log"
done
"$NPUSIM" sweep "$T/s.json" -o "$T/slurm" --collect || fail "--collect failed"
cmp "$T/local/sweep.csv" "$T/slurm/sweep.csv" || fail "Slurm sweep.csv differs from the local run"
cmp "$T/local/sweep.json" "$T/slurm/sweep.json" || fail "Slurm sweep.json differs from the local run"
# A second submission finds nothing to do; --wait runs a rerun of one point to completion.
out="$("$NPUSIM" sweep "$T/s.json" -o "$T/slurm" --slurm)"
grep -q "30 points, 30 done, 0 to run on Slurm" <<<"$out" || fail "nothing should be resubmitted"
id="$("$NPUSIM" sweep "$T/s.json" --list | awk 'NR == 7 {print $2}')"
out="$("$NPUSIM" sweep "$T/s.json" -o "$T/slurm" --slurm --wait --point "$id")" || fail "--wait --point: $out"
grep -q "1 to run on Slurm" <<<"$out" || fail "--point should submit one point"
cmp "$T/local/points/$id.json" "$T/slurm/points/$id.json" || fail "the rerun point's result differs from the local one"
cmp "$T/local/sweep.json" "$T/slurm/sweep.json" || fail "sweep.json changed after the rerun"
echo "PASS"
