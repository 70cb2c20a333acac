#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README command 1: install packages, build npusim, run the bundled example on rk3588.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh npusim
exec build/sim/npusim run "$@"
