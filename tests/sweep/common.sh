# SPDX-License-Identifier: MIT
# Shared by the sweep tests: arguments, skip/fail, the temporary folder, the ~30-point spec.
set -euo pipefail
NPUSIM="$1"
ZOO="$2"; [ -d "$ZOO" ] && ZOO="$(cd "$ZOO" && pwd)"
PY=/usr/bin/python3
fail() { echo "FAIL: $*" >&2; exit 1; }
# skip MESSAGE: exit 77 (ctest: skipped), or fail when NPUSIM_SWEEP_REQUIRE=1 (.ci/run sets it, so a
# CI run cannot go green without the Slurm and Chromium tests).
skip() {
  if [ "${NPUSIM_SWEEP_REQUIRE:-0}" = 1 ]; then fail "required but unavailable: $*"; fi
  echo "SKIP: $*"
  exit 77
}
if [ ! -f "$ZOO/mobilenetv2_qdq.onnx" ] || [ ! -f "$ZOO/t_qlinear.onnx" ]; then
  skip "the build zoo ($ZOO) is not generated (needs Debian python3-onnx)"
fi
T="$(mktemp -d /tmp/npusim-sweep-test.XXXXXX)"
trap 'rm -rf "$T"' EXIT

# 2 models x (rk3588: auto, 0_1; rk3576: auto, 0_1; rk3566: auto) x 3 DDR bandwidths = 30 points.
write_spec() {  # write_spec FILE
  cat >"$1" <<SPEC
{
  "name": "ci30",
  "models": ["$ZOO/mobilenetv2_qdq.onnx", "$ZOO/t_qlinear.onnx"],
  "platforms": ["rk3588", "rk3576", "rk3566"],
  "core_masks": ["auto", "0_1"],
  "modes": ["timing"],
  "params": {"memory.ddr_peak_bytes_per_s": {"from": 8e9, "to": 32e9, "factor": 2}}
}
SPEC
}
