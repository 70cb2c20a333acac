#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The stream runner decides correctly: with a stand-in npusim (fake_npusim.py) that answers like
npusim, run_stream.py passes a perfect run, ignores a difference in a padded (masked) channel,
and fails on an unknown register, a lint error, a missing task and a wrong output byte."""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
fake = os.path.join(here, "fake_npusim.py")
cases = [("good", "all", 0), ("corrupt_pad", "replay", 0), ("unknown", "decode", 1),
         ("lint_error", "lint", 1), ("short_tasks", "replay", 1), ("corrupt_real", "replay", 1),
         ("good", "replay_bin", 0)]
bad = 0
with tempfile.TemporaryDirectory() as out:
    for name in ("mesa_conv_int8", "mtx_matmul_int8"):
        subprocess.run([sys.executable, os.path.join(root, "tools/streams/make_streams.py"), out, "--only", name],
                       check=True, capture_output=True)
    for mode, check, want in cases:
        stream = "mtx_matmul_int8" if check == "replay_bin" else "mesa_conv_int8"
        env = dict(os.environ, FAKE_NPUSIM_MODE=mode)
        p = subprocess.run([sys.executable, os.path.join(here, "run_stream.py"), "--npusim", fake, "--stream-dir",
                            os.path.join(out, stream), "--check", check], env=env, capture_output=True, text=True)
        status = "ok" if p.returncode == want else "WRONG"
        bad += p.returncode != want
        print(f"{status}: mode {mode}, check {check}: exit {p.returncode} (want {want}): {p.stdout.strip()[:200]}")
print(f"runner_selftest: {len(cases) - bad} of {len(cases)} decisions right")
sys.exit(1 if bad else 0)
