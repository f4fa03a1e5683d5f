#!/usr/bin/env bash
# Fresh machine -> every test: installs dependencies, builds Release and runs
# all unit tests, then an AddressSanitizer/UBSan build of the tests, then the
# fuzz targets for a bounded time on their seed corpora.
# CAIRN_TEST_QUICK=1 skips the sanitizer and fuzz stages (for local iteration).
set -euo pipefail
cd "$(dirname "$0")/.."
export CAIRN_SHARED_DIR="${CAIRN_SHARED_DIR:-$(cd .. && pwd)/shared}"

scripts/install-deps.sh

echo "== release build + unit tests"
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 900

if [ "${CAIRN_TEST_QUICK:-0}" = 1 ]; then exit 0; fi

echo "== AddressSanitizer + UBSan build + unit tests"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAIRN_SANITIZE=ON \
  -DCAIRN_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$(nproc)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 CAIRN_SANITIZED=1 \
  ctest --test-dir build-asan --output-on-failure -j"$(nproc)" --timeout 1800

echo "== fuzz targets (bounded)"
scripts/fuzz.sh "${CAIRN_FUZZ_SECONDS:-60}"
