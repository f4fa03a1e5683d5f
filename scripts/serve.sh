#!/usr/bin/env bash
# Fresh machine -> running server: installs dependencies, builds, and starts
# `cairn serve` on the embedded default model. Extra args go to `cairn serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/cairn serve "$@"
