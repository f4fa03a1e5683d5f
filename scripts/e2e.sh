#!/usr/bin/env bash
# End-to-end tests: starts build/cairn serve on a free loopback port with the
# embedded default model and drives it with the official OpenAI Python SDK.
# Installs the SDK (tests/e2e/requirements.txt) into a private venv.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/e2e-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv --system-site-packages "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt
export CAIRN_E2E_MODEL="${CAIRN_E2E_MODEL:-$(pwd)/models/cairn-default.gguf}"
export CAIRN_E2E_BINARY="${CAIRN_E2E_BINARY:-$(pwd)/build/cairn}"
set +e
"$venv/bin/python" -m pytest -q tests/e2e
rc=$?
set -e
if [ $rc -eq 5 ]; then echo "e2e: no tests collected"; exit 1; fi
exit $rc
