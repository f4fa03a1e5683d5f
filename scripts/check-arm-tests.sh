#!/usr/bin/env bash
# AArch64 (NEON / SVE) kernels, executed: cross-builds the core and kernels
# test binaries and matmul_bench for aarch64 (Debian's g++-aarch64-linux-gnu,
# arm64 multiarch libraries: scripts/install-deps.sh) and runs them under
# qemu-aarch64 on several emulated CPUs, so every Arm target Highway dispatches
# to is checked bit for bit against the scalar reference (the MatMul tests run
# each test body once per target the CPU supports):
#   build-arm          -march=armv8-a (the default build; no dotprod)
#     -cpu max                            SVE2, SVE, NEON (core_tests too)
#     -cpu max,sve-default-vector-length=32   + SVE_256 (256-bit vectors)
#     -cpu max,sve-default-vector-length=16   + SVE2_128
#     -cpu cortex-a53                     NEON on an Armv8.0 CPU: any newer
#                                         instruction would die with SIGILL
#     matmul_bench BM_WidthCompute (widths 1 and 8, every quantized type) on
#                                         -cpu cortex-a72 (NEON): runs, not a timing
#   build-arm-dotprod  -march=armv8.2-a+dotprod (the sdot path of the int8
#                      dots), NEON only (HWY_COMPILE_ONLY_STATIC)
#     -cpu neoverse-n1                    NEON with sdot
# and audits the binaries (tests/kernels/isa_audit.py: NEON and baseline code
# free of SVE, dotprod in the armv8-a build, I8MM, ...). Only the matmul and
# quantization tests run under qemu (CAIRN_ARM_TEST_FILTER): the float
# attention tests take minutes there and have no Arm-specific code. The Q8_0 K
# cache's scores do (NEON int16 pairs; SVE: the scalar loop): its writer test
# and its reference test (small shapes) run.
#
# Measured from scratch on the 2-core development VM: 318 s (cross builds
# 211 s, qemu runs and audit 107 s).
#
# Missing tools or arm64 packages: a clear message and exit 0 (skipped), or
# exit 1 with CAIRN_ARM_TESTS_REQUIRED=1.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
filter="${CAIRN_ARM_TEST_FILTER:-MatMul*:Quant*:Activation*:Norm*:Rope*:Softmax*:KvWrite*:KvQ8*:AttentionQ8KTest.MatchesReference:Conv1d*:GatedDelta*}"
jobs="${CAIRN_ARM_JOBS:-$(nproc)}"

skip() {
  echo "check-arm-tests: SKIPPED: $*" >&2
  if [ "${CAIRN_ARM_TESTS_REQUIRED:-0}" = 1 ]; then exit 1; fi
  exit 0
}
command -v aarch64-linux-gnu-g++ >/dev/null || skip "aarch64-linux-gnu-g++ not found (apt-get install g++-aarch64-linux-gnu)"
command -v qemu-aarch64 >/dev/null || skip "qemu-aarch64 not found (apt-get install qemu-user)"
command -v aarch64-linux-gnu-objdump >/dev/null || skip "aarch64-linux-gnu-objdump not found (binutils-aarch64-linux-gnu)"
for lib in libhwy.so libfmt.so libxxhash.so libgtest.a libbenchmark.so; do
  [ -e "/usr/lib/aarch64-linux-gnu/$lib" ] ||
    skip "/usr/lib/aarch64-linux-gnu/$lib missing (dpkg --add-architecture arm64; apt-get install the :arm64 packages of scripts/install-deps.sh)"
done

elapsed() { echo "$(( $(date +%s) - start ))s"; }

configure() {  # configure <dir> <flags>
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
    -DCAIRN_KERNELS_ONLY=ON -DCMAKE_CXX_FLAGS="$2" --no-warn-unused-cli >/dev/null
}

# run <label> <cpu> <binary> [args...]: one binary under qemu with that CPU.
run() {
  local label="$1" cpu="$2"
  shift 2
  echo "-- [$(elapsed)] $label (qemu-aarch64 -cpu $cpu)"
  local log
  log="$(mktemp)"
  if ! qemu-aarch64 -cpu "$cpu" "$@" >"$log" 2>&1; then
    cat "$log"
    rm -f "$log"
    echo "check-arm-tests: FAILED: $label" >&2
    exit 1
  fi
  grep -E "^\[  PASSED  \]|checked on:|^\[==========\] .* ran" "$log" || tail -3 "$log"
  rm -f "$log"
}

echo "-- [$(elapsed)] building build-arm (armv8-a) and build-arm-dotprod (armv8.2-a+dotprod)"
configure build-arm -march=armv8-a
# The dotprod build compiles only Highway's static target (NEON with sdot):
# a fifth of the compile time of all six Arm targets; its SVE targets would
# run the same NEON code with the same sdot path.
configure build-arm-dotprod "-march=armv8.2-a+dotprod -DHWY_COMPILE_ONLY_STATIC"
cmake --build build-arm -j"$jobs" --target kernels_tests core_tests matmul_bench >/dev/null
cmake --build build-arm-dotprod -j"$jobs" --target kernels_tests >/dev/null

kt=build-arm/tests/kernels_tests
kd=build-arm-dotprod/tests/kernels_tests
run "core_tests" max build-arm/tests/core_tests
run "kernels_tests, armv8-a build" max "$kt" --gtest_filter="$filter"
run "MatMul tests, 256-bit SVE" max,sve-default-vector-length=32 "$kt" --gtest_filter='MatMulTest.*'
run "MatMul tests, 128-bit SVE2" max,sve-default-vector-length=16 "$kt" --gtest_filter='MatMulTest.*'
run "MatMul tests on an Armv8.0 CPU" cortex-a53 "$kt" --gtest_filter='MatMulTest.*:Quant*'
run "kernels_tests, dotprod build (NEON only)" neoverse-n1 "$kd" --gtest_filter='MatMulTest.*:Quant*'
echo "-- [$(elapsed)] matmul_bench BM_WidthCompute widths 1 and 8 (NEON; qemu: runs, not a timing)"
CAIRN_BENCH_NO_CALIBRATION=1 qemu-aarch64 -cpu cortex-a72 build-arm/bench/matmul_bench \
  --benchmark_filter='BM_WidthCompute/.*/(1|8)/' --benchmark_min_time=0.01 >/tmp/check-arm-bench.$$ 2>&1 || {
  cat /tmp/check-arm-bench.$$
  rm -f /tmp/check-arm-bench.$$
  echo "check-arm-tests: FAILED: matmul_bench" >&2
  exit 1
}
echo "   $(grep -c '^BM_WidthCompute' /tmp/check-arm-bench.$$) benchmarks ran ($(grep -m1 'MatMul target' /tmp/check-arm-bench.$$))"
rm -f /tmp/check-arm-bench.$$

echo "-- [$(elapsed)] ISA audit"
python3 tests/kernels/isa_audit.py "$kt" build-arm/bench/matmul_bench
python3 tests/kernels/isa_audit.py --arm-dotprod "$kd"
# The audit must see the sdot of the dotprod build when told it is armv8-a.
if python3 tests/kernels/isa_audit.py "$kd" >/dev/null; then
  echo "check-arm-tests: FAILED: the audit did not flag AdvSIMD dotprod in $kd" >&2
  exit 1
fi
echo "check-arm-tests: OK in $(elapsed) ($(aarch64-linux-gnu-g++ -dumpfullversion), $(qemu-aarch64 --version | head -1))"
