#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian packages npusim needs (idempotent: apt runs only when something is missing).
#   scripts/deps.sh         what building and the test suite need
#   scripts/deps.sh --ci    also what CI adds for the sweep tests (tests/sweep): a single-node Slurm
#                           (slurm-wlm, munge; scripts/slurm-local.sh), headless Chromium (HTML
#                           pages) and Xvfb (GTKWave opening a VCD, tests/e2e/trace_test.sh)
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build ccache pkg-config python3
  libsystemc-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libelf-dev gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc gdb-multiarch
  libonnx-dev libprotobuf-dev protobuf-compiler libflatbuffers-dev flatbuffers-compiler
  python3-onnx python3-numpy clang libyaml-cpp-dev
  verilator gtkwave
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libdrm-dev
)
if [ "${1:-}" = "--ci" ]; then
  PKGS+=(slurm-wlm munge chromium xvfb)
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from another distribution channel (e.g. a nodesource package that bundles npm):
# install Debian's only when the commands are missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "npusim: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# onnxruntime oracle for tests/oracle (its package carries the native binaries; no install script).
ORT_NODE_VERSION=1.30.0
ORT_DIR="$(cd "$(dirname "$0")/.." && pwd)/tests/oracle"
if ! node -e "process.exit(require('$ORT_DIR/node_modules/onnxruntime-node/package.json').version === '$ORT_NODE_VERSION' ? 0 : 1)" 2>/dev/null; then
  echo "npusim: installing onnxruntime-node@$ORT_NODE_VERSION into tests/oracle/node_modules"
  npm install --ignore-scripts --no-save --no-package-lock --prefix "$ORT_DIR" "onnxruntime-node@$ORT_NODE_VERSION"
fi
