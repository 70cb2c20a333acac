#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README command 1: install packages, build npusim, and run the main job on the bundled default:
# the zoo's int8 MobileNetV2 (generated deterministically by tools/zoo/make_zoo.py into build/zoo)
# compiled for RK3588, run end to end on the simulated SoC, checked against the reference executor.
#   scripts/quickstart.sh                 the default above
#   scripts/quickstart.sh ARGS...         npusim run ARGS... instead (e.g. --platform rk3566 MODEL.onnx)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh npusim
if [ "$#" -gt 0 ]; then
  exec build/sim/npusim run "$@"
fi
if [ ! -f build/zoo/mobilenetv2_qdq.onnx ]; then
  /usr/bin/python3 tools/zoo/make_zoo.py build/zoo --models mobilenetv2
fi
exec build/sim/npusim run --platform rk3588 build/zoo/mobilenetv2_qdq.onnx --verify-tiling \
  --report build/zoo/mobilenetv2-rk3588-report.json --trace build/zoo/mobilenetv2-rk3588-trace.json
