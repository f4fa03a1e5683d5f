// Tokenizer throughput on one core: a ~100k-token mixed prompt (repository
// C++ sources and Markdown docs, plus the prose/code/JSON/CJK texts of the HF
// golden corpus) encoded with the Qwen3 vocabulary.
//   Encode/warm: the per-word BPE cache is already filled (steady state of a
//                server that has seen similar text).
//   Encode/cold: a fresh tokenizer per iteration (first prompt after load).
// Reports bytes/s (MB/s) and tokens/s.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/hf_import.h"
#include "tokenizer/tokenizer.h"

namespace {

using cairn::tokenizer::Tokenizer;
using cairn::tokenizer::Vocabulary;

std::string SharedDir() {
  if (const char* env = std::getenv("CAIRN_SHARED_DIR")) return env;
  return CAIRN_SHARED_DIR;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const Vocabulary& Qwen3Vocab() {
  static const Vocabulary vocab = cairn::tokenizer::LoadHfTokenizerFiles(
      SharedDir() + "/testdata/qwen3-tokenizer/tokenizer.json",
      SharedDir() + "/testdata/qwen3-tokenizer/tokenizer_config.json");
  return vocab;
}

// Deterministic: sorted file order; stops at kTargetBytes (~100k tokens).
const std::string& Prompt() {
  static const std::string prompt = [] {
    constexpr size_t kTargetBytes = 330 * 1024;
    const std::filesystem::path root = CAIRN_SOURCE_DIR;
    std::vector<std::filesystem::path> files;
    for (const char* dir : {"src", "docs"}) {
      if (!std::filesystem::exists(root / dir)) continue;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(root / dir)) {
        const auto ext = entry.path().extension();
        if (entry.is_regular_file() && (ext == ".cc" || ext == ".h" || ext == ".md")) {
          files.push_back(entry.path());
        }
      }
    }
    std::sort(files.begin(), files.end());
    // Interleave sources with golden-corpus texts (prose, JSON, CJK, emoji).
    std::vector<std::string> golden;
    std::ifstream lines(root / "tests/tokenizer/golden/qwen3_hf_golden.jsonl");
    std::string line;
    while (std::getline(lines, line)) {
      if (!line.empty()) golden.push_back(nlohmann::json::parse(line)["text"].get<std::string>());
    }
    std::string text;
    size_t g = 0;
    for (size_t i = 0; text.size() < kTargetBytes && (i < files.size() || g < golden.size()); ++i) {
      if (i < files.size()) text += ReadFile(files[i]);
      for (int k = 0; k < 8 && g < golden.size(); ++k) text += golden[g++] + "\n";
    }
    if (text.size() > kTargetBytes) text.resize(kTargetBytes);
    return text;
  }();
  return prompt;
}

void Report(benchmark::State& state, size_t tokens) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * Prompt().size()));
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  state.counters["prompt_KiB"] = static_cast<double>(Prompt().size()) / 1024.0;
}

void BM_EncodeWarm(benchmark::State& state) {
  const Tokenizer tokenizer(Qwen3Vocab());
  size_t tokens = tokenizer.Encode(Prompt()).size();  // fills the word cache
  for (auto _ : state) {
    auto ids = tokenizer.Encode(Prompt());
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  Report(state, tokens);
}
BENCHMARK(BM_EncodeWarm)->Name("Encode/warm")->Unit(benchmark::kMillisecond);

void BM_EncodeCold(benchmark::State& state) {
  size_t tokens = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto tokenizer = std::make_unique<Tokenizer>(Qwen3Vocab());
    state.ResumeTiming();
    auto ids = tokenizer->Encode(Prompt());
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
    state.PauseTiming();
    tokenizer.reset();
    state.ResumeTiming();
  }
  Report(state, tokens);
}
BENCHMARK(BM_EncodeCold)->Name("Encode/cold")->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_Decode(benchmark::State& state) {
  const Tokenizer tokenizer(Qwen3Vocab());
  const auto ids = tokenizer.Encode(Prompt());
  for (auto _ : state) {
    auto text = tokenizer.Decode(ids);
    benchmark::DoNotOptimize(text.data());
  }
  Report(state, ids.size());
}
BENCHMARK(BM_Decode)->Name("Decode")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
