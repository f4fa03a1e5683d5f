#!/usr/bin/env bash
# End-to-end tests with the official OpenAI Python SDK (installed into a
# private venv), in three stages:
#
#   1. tests/e2e: the real HTTP layer over a deterministic fake engine
#      (build/tests/cairn_fake_server), so the suite can assert exact texts.
#      CAIRN_E2E_SERVER_CMD runs it against another command.
#   2. tests/e2e_real: the real `cairn serve` on real models (tiny random
#      qwen3/qwen35 models made with `cairn mkmodel`, and the default model):
#      lossless prefix cache, speculative decoding == baseline, generation
#      features, a bounded load test. CAIRN_BIN picks the binary (default
#      build/cairn); CAIRN_E2E_THREADS the server threads (default 1).
#   3. tests/e2e_cli: the real agent CLIs from npm (Claude Code, Codex, OpenCode,
#      qwen-code) run headless against `cairn serve` on Qwen2.5-Coder-1.5B
#      (fetched when missing), each fixing a bug in a scratch repository; every
#      request answered, tool calls executed, follow-ups served from the cache.
#      CAIRN_E2E_CLI_PROMPTS=full runs the clients' own full prompts.
#
# CAIRN_E2E_STAGES selects stages ("fake real cli" by default; e.g. "real").
# Extra arguments go to pytest (e.g. -k lossless -x).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/e2e-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv --system-site-packages "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt

run_pytest() {  # timeout_s, dir, args...: pytest's status; "no tests collected" (5) is a failure
  local limit=$1 dir=$2; shift 2
  set +e
  timeout "$limit" "$venv/bin/python" -m pytest -q -p no:cacheprovider --durations=5 "$dir" "$@"
  local rc=$?
  set -e
  if [ $rc -eq 5 ]; then echo "e2e: no tests collected in $dir"; return 1; fi
  return $rc
}

rc=0
for stage in ${CAIRN_E2E_STAGES:-fake real cli}; do
  case $stage in
    fake)
      echo "== e2e (fake engine): tests/e2e"
      CAIRN_E2E_SERVER_CMD="${CAIRN_E2E_SERVER_CMD:-$(pwd)/build/tests/cairn_fake_server}" \
        run_pytest 900 tests/e2e "$@" || rc=1
      ;;
    real)
      echo "== e2e (real models): tests/e2e_real"
      CAIRN_BIN="${CAIRN_BIN:-$(pwd)/build/cairn}" \
        run_pytest "${CAIRN_E2E_REAL_TIMEOUT:-2400}" tests/e2e_real "$@" || rc=1
      ;;
    cli)
      echo "== e2e (agent CLIs from npm on a real model): tests/e2e_cli"
      CAIRN_BIN="${CAIRN_BIN:-$(pwd)/build/cairn}" \
        run_pytest "${CAIRN_E2E_CLI_SUITE_TIMEOUT:-2400}" tests/e2e_cli "$@" || rc=1
      ;;
    *) echo "e2e: unknown stage '$stage'"; exit 2 ;;
  esac
done
exit $rc
