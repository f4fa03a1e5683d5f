#!/usr/bin/env bash
# End-to-end tests: starts the HTTP server on a free loopback port and drives
# it with the official OpenAI Python SDK (tests/e2e). By default the server is
# build/tests/cairn_fake_server (the real HTTP layer over a deterministic fake
# engine, so the suite can assert exact texts); set CAIRN_E2E_SERVER_CMD to run
# it against another command. Installs the SDK into a private venv.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/e2e-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv --system-site-packages "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt
export CAIRN_E2E_SERVER_CMD="${CAIRN_E2E_SERVER_CMD:-$(pwd)/build/tests/cairn_fake_server}"
set +e
"$venv/bin/python" -m pytest -q tests/e2e
rc=$?
set -e
if [ $rc -eq 5 ]; then echo "e2e: no tests collected"; exit 1; fi
exit $rc
