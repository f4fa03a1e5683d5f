#!/usr/bin/env bash
# Installs Cairn's build and test dependencies from Debian 12 packages.
# Idempotent: does nothing when every package is already installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libhwy-dev nlohmann-json3-dev libcpp-httplib-dev libcli11-dev libfmt-dev
  libpcre2-dev libutf8proc-dev libxxhash-dev libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev python3 python3-pip python3-venv python3-pytest
  g++-aarch64-linux-gnu
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The aarch64 stage of scripts/test.sh (scripts/check-arm-tests.sh): qemu-user
# runs cross-built test binaries, which link the arm64 builds of Highway,
# GoogleTest, Google Benchmark, fmt and xxHash from Debian's multiarch
# packages (docs/dependencies.md). Not fatal: without them that stage says
# why and skips. CAIRN_SKIP_ARM_DEPS=1 leaves them out.
arm_packages=(
  qemu-user binutils-aarch64-linux-gnu
  libhwy-dev:arm64 libgtest-dev:arm64 libbenchmark-dev:arm64 libfmt-dev:arm64 libxxhash-dev:arm64
)
if [ "${CAIRN_SKIP_ARM_DEPS:-0}" != 1 ] && [ "$(dpkg --print-architecture)" = amd64 ]; then
  arm_missing=()
  for p in "${arm_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || arm_missing+=("$p")
  done
  if ((${#arm_missing[@]})); then
    echo "install-deps: installing ${arm_missing[*]} (aarch64 tests under qemu)"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    added_arch=0
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      "${sudo_cmd[@]}" dpkg --add-architecture arm64
      added_arch=1
    fi
    if ! "${sudo_cmd[@]}" apt-get update -qq ||
       ! DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
           "${arm_missing[@]}"; then
      echo "install-deps: WARNING: the aarch64 test packages could not be installed;" \
           "scripts/check-arm-tests.sh will skip" >&2
      # A mirror without arm64 indexes would fail every later apt-get update.
      if [ "$added_arch" = 1 ]; then
        "${sudo_cmd[@]}" dpkg --remove-architecture arm64 2>/dev/null || true
        "${sudo_cmd[@]}" apt-get update -qq || true
      fi
    fi
  fi
fi
