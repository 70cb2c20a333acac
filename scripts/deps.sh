#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian packages npusim needs (idempotent: apt runs only when something is missing).
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build ccache pkg-config python3
  libsystemc-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libflatbuffers-dev flatbuffers-compiler
  python3-onnx python3-numpy clang
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "npusim: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
