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
