#!/usr/bin/env bash
# Compile-only check of the core and kernels layers for aarch64 (Highway NEON
# and, where GCC allows, SVE targets): every src/core and src/kernels source is
# compiled with -c for armv8-a, and the kernels additionally for
# armv8.2-a+dotprod (the sdot path of the int8 dot kernels).
# Needs: apt-get install g++-aarch64-linux-gnu (headers of libhwy-dev and
# libfmt-dev are reused from /usr/include; they are target-independent).
set -euo pipefail
cd "$(dirname "$0")/.."
CXX="${CAIRN_ARM_CXX:-aarch64-linux-gnu-g++}"
if ! command -v "$CXX" >/dev/null; then
  echo "check-arm-compile: $CXX not found (apt-get install g++-aarch64-linux-gnu)" >&2
  exit 1
fi

# Only hwy and fmt from the host include dir: the cross compiler must not see
# the host's x86 system headers.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/include"
ln -s /usr/include/hwy "$work/include/hwy"
ln -s /usr/include/fmt "$work/include/fmt"

flags=(-std=c++20 -O2 -Wall -Wextra -Wno-unused-parameter -Werror
       -DHWY_WANT_AVX3_DL "-DHWY_DISABLED_TARGETS=(HWY_SSSE3|HWY_SSE4)"
       -isystem "$work/include" -Isrc)

shopt -s nullglob
failed=0
compile() {  # compile <arch> <file>
  if ! "$CXX" "${flags[@]}" -march="$1" -c "$2" -o "$work/out.o"; then
    echo "FAILED ($1): $2" >&2
    failed=1
  fi
}
count=0
for f in src/core/*.cc src/core/*/*.cc src/kernels/*.cc src/kernels/*/*.cc; do
  compile armv8-a "$f"
  count=$((count + 1))
done
for f in src/kernels/matmul*.cc src/kernels/gemm*.cc src/kernels/dot*.cc; do
  compile armv8.2-a+dotprod "$f"
  count=$((count + 1))
done
if [ "$failed" = 0 ]; then
  echo "check-arm-compile: OK ($count compilations with $("$CXX" -dumpfullversion))"
else
  echo "check-arm-compile: FAILED" >&2
  exit 1
fi
