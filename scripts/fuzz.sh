#!/usr/bin/env bash
# Builds libFuzzer targets with clang and runs each for N seconds (default 60)
# on its seed corpus under fuzz/corpus/<target>/. Fails if any target crashes.
# Targets: $CAIRN_FUZZ_TARGETS (default: the parsers whose libraries are small:
# gguf, tokenizer, chat_template, memory_pressure, disk_pack, tool_call_stream); "all" adds server_request_fuzz, which links
# the whole server and engine stack.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCAIRN_BUILD_FUZZ=ON -DCAIRN_BUILD_TESTS=OFF -DCAIRN_BUILD_BENCH=OFF >/dev/null
shopt -s nullglob
targets=()
wanted="${CAIRN_FUZZ_TARGETS:-gguf_fuzz tokenizer_fuzz chat_template_fuzz memory_pressure_fuzz disk_pack_fuzz tool_call_stream_fuzz}"
for src in fuzz/*_fuzz.cc; do
  t="$(basename "$src" .cc)"
  if [ "$wanted" = all ] || [[ " $wanted " == *" $t "* ]]; then targets+=("$t"); fi
done
if ((${#targets[@]} == 0)); then echo "fuzz: no targets"; exit 0; fi
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}"
for t in "${targets[@]}"; do
  corpus="fuzz/corpus/${t%_fuzz}"
  work="build-fuzz/corpus-$t"
  mkdir -p "$work"
  echo "fuzz: $t for ${seconds}s (seeds: $corpus)"
  build-fuzz/"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    "$work" "$corpus" 2>&1 | tail -n 15
done
