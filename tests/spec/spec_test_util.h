// Shared helpers for speculative-decoding tests: tiny random models written
// once per process into a temp dir, prompts, and test-only drafters.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <memory>
#include <mutex>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/test_paths.h"
#include "core/thread_pool.h"
#include "model/convert/random_model.h"
#include "model/model.h"
#include "sampling/rng.h"
#include "spec/drafter.h"

namespace cairn::spec::test {

// CI's ASan/UBSan run sets CAIRN_SANITIZED=1: loops shrink.
inline bool Sanitized() {
  const char* env = std::getenv("CAIRN_SANITIZED");
  return env != nullptr && std::string(env) == "1";
}

inline std::string TempDir() {
  static const std::string dir = [] {
    std::filesystem::path p = std::filesystem::temp_directory_path() /
                              ("cairn-spec-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    return p.string();
  }();
  return dir;
}

// A tiny F32 random model ("llama" | "qwen3" | "qwen35"), cached per process;
// narrow_to: loaded with its matrices re-encoded to that type (a draft's
// --draft-quant).
inline const model::Model& TinyModel(const std::string& arch, uint64_t seed = 1, bool mtp = false,
                                     std::optional<DType> narrow_to = std::nullopt) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<model::Model>> models;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = arch + "-" + std::to_string(seed) + (mtp ? "-mtp" : "");
  const std::string loaded_key = key + (narrow_to ? "-" + std::string(GetDTypeInfo(*narrow_to).name) : "");
  auto it = models.find(loaded_key);
  if (it != models.end()) return *it->second;
  model::RandomModelOptions o;
  o.arch = arch;
  o.preset = "tiny";
  o.matrix_type = DType::kF32;
  o.mtp = mtp;
  o.seed = seed;
  o.threads = 2;
  o.tokenizer_dir = cairn::test::SharedDir() + "/testdata/qwen3-tokenizer";
  // Shared across test processes (ctest runs each test alone): written once
  // under a temporary name and renamed; rewritten when older than this binary.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "cairn-spec-test-models";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / (key + ".gguf")).string();
  std::error_code ec;
  const auto exe_time = std::filesystem::last_write_time("/proc/self/exe", ec);
  if (!std::filesystem::exists(path) || (!ec && std::filesystem::last_write_time(path) < exe_time)) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    model::WriteRandomModel(o, tmp);
    std::filesystem::rename(tmp, path);
  }
  model::Model::LoadOptions load;
  load.narrow_to = narrow_to;
  return *(models[loaded_key] = model::Model::Load(path, load));
}

inline ThreadPool& Pool() {
  static ThreadPool pool(2);
  return pool;
}

// Logits after feeding one more token to `st`.
inline std::vector<float> NextLogits(const model::Model& m, model::SequenceState& st, int32_t token) {
  model::ForwardRequest req;
  req.tokens = std::span<const int32_t>(&token, 1);
  model::ForwardResult r;
  m.Forward(st, req, &r, Pool());
  return std::vector<float>(r.logits.data(), r.logits.data() + m.n_vocab());
}

// Deterministic prompts: a few repeated phrases so lookup finds matches.
inline std::vector<int32_t> Prompt(int which, int length = 24) {
  sampling::Rng rng(1000 + which, 3);
  std::vector<int32_t> phrase(5);
  for (int32_t& t : phrase) t = static_cast<int32_t>(rng.NextU64() % 20000) + 100;
  std::vector<int32_t> p;
  while (static_cast<int>(p.size()) < length) {
    if (rng.Uniform() < 0.5) {
      p.insert(p.end(), phrase.begin(), phrase.end());
    } else {
      p.push_back(static_cast<int32_t>(rng.NextU64() % 20000) + 100);
    }
  }
  p.resize(static_cast<size_t>(length));
  return p;
}

// Proposes uniformly random tokens (one-hot q): exercises rejections.
class RandomDrafter : public Drafter {
 public:
  RandomDrafter(int32_t vocab, uint64_t seed, int32_t id_range = 20000) : vocab_(vocab), rng_(seed, 9), range_(id_range) {}
  std::string name() const override { return "random"; }
  void Begin(std::span<const int32_t>, std::span<const float>, int32_t) override {}
  void Propose(int max_k, std::vector<sampling::DraftToken>* drafts) override {
    drafts->clear();
    for (int i = 0; i < max_k; ++i) {
      drafts->push_back({static_cast<int32_t>(rng_.NextU64() % static_cast<uint64_t>(std::min(vocab_, range_))), nullptr});
    }
  }
  void Accept(std::span<const int32_t>, std::span<const float>, int32_t) override {}

 private:
  int32_t vocab_;
  sampling::Rng rng_;
  int32_t range_;
};

// Knows the true continuation (e.g. a baseline run) and proposes it with one
// token corrupted at a random offset, so every accept length 0..k occurs.
class OracleDrafter : public Drafter {
 public:
  OracleDrafter(std::vector<int32_t> truth, uint64_t seed) : truth_(std::move(truth)), rng_(seed, 11) {}
  std::string name() const override { return "oracle"; }
  void Begin(std::span<const int32_t>, std::span<const float>, int32_t) override { emitted_ = 1; }
  void Propose(int max_k, std::vector<sampling::DraftToken>* drafts) override {
    drafts->clear();
    const int bad = static_cast<int>(rng_.NextU64() % static_cast<uint64_t>(max_k + 1));  // max_k = none bad
    for (int i = 0; i < max_k && emitted_ + i < truth_.size(); ++i) {
      int32_t t = truth_[emitted_ + i];
      if (i == bad) t = (t + 1) % 1000;
      drafts->push_back({t, nullptr});
    }
  }
  void Accept(std::span<const int32_t> fed, std::span<const float>, int32_t) override { emitted_ += fed.size(); }

 private:
  std::vector<int32_t> truth_;
  sampling::Rng rng_;
  size_t emitted_ = 0;
};

}  // namespace cairn::spec::test
