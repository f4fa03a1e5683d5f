#!/usr/bin/env bash
# Configures and builds Cairn (Release, runtime ISA dispatch) into build/.
# Usage: scripts/build.sh [extra cmake args...]
# CAIRN_BUILD_TARGETS="cairn" builds only those targets (default: everything).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
targets=()
for t in ${CAIRN_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
