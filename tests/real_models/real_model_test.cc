// Cairn against llama.cpp (commit 3f545bec) on real published GGUF files.
//
// Goldens in tests/real_models/golden/<model>/ were recorded by
// tools/make_real_goldens.py (exact commands in the JSON files and the
// README there). Model files come from tools/fetch_models.py's cache
// ($CAIRN_MODEL_CACHE, else $XDG_CACHE_HOME/cairn/models, else
// ~/.cache/cairn/models); a test whose file is absent skips and says so.
//
//  * Tokenize: ids identical to llama-tokenize on a corpus, every case.
//  * Greedy: the prompt ids identical to llama-completion's, then 64 greedy
//    tokens identical. The one allowed divergence is a near-tie: at the first
//    differing step llama.cpp's token must be Cairn's runner-up with Cairn's
//    top-2 logit margin below kNearTie; the case then stops there (what
//    follows is a different text) and the margin is printed.
//  * Perplexity: llama-perplexity's protocol (model/perplexity.h) within 0.5%
//    of llama.cpp's running PPL after the same number of chunks.
//
// Runtime: without CAIRN_REAL_FULL=1 the 1.5B file runs the first
// kLargeGreedyCases greedy cases, and perplexity scores the first
// RealModel::quick_ppl_chunks chunks (CI has 2 cores).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/test_paths.h"
#include "model/model.h"
#include "model/perplexity.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"

namespace cairn {
namespace {

using nlohmann::json;

// Logit gap (Cairn's top1 minus llama.cpp's token, Cairn's logits) below which a different argmax
// from llama.cpp's counts as a near-tie. Both quantize activations the same
// way and keep f16 K/V, but summation orders differ (and llama.cpp rounds Q
// and the softmax to f16 for its attention products): through 24-30 layers of
// 4-bit weights that moves logits by up to ~0.5. Measured on the 1.5B file:
// first divergences at margins 0.02..0.52 (docs/real-models.md); rounding Cairn's
// Q to f16 as llama.cpp does moved the divergences but did not remove them.
constexpr float kNearTie = 0.6f;
// And most tokens must agree: a wiring error diverges within a few tokens.
constexpr double kMinIdenticalFraction = 0.9;
constexpr int kLargeGreedyCases = 3;
struct RealModel {
  const char* name;  // tools/fetch_models.py name (= golden dir)
  const char* file;  // file name in the cache
  bool large;
  // Perplexity chunks scored without CAIRN_REAL_FULL (the golden keeps
  // llama.cpp's running PPL after every chunk, so any prefix compares). The
  // 135M model scores all 12 (~15 s): its running PPL over the first chunks
  // moves by up to 0.5% when only the float summation order of the matmuls
  // changes (a tiny change flips int8 activation roundings, which a 135M
  // model does not average out in 1k tokens: -0.49% and -0.73% at 4 chunks
  // for two orders, -0.39% and -0.14% at 12).
  int quick_ppl_chunks;
};

constexpr RealModel kModels[] = {
    {"qwen2.5-coder-1.5b-instruct-q4_k_m", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", true, 2},
    {"qwen2.5-coder-0.5b-instruct-q4_k_m", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", false, 4},
    {"smollm2-135m-instruct-q4_1", "SmolLM2-135M-Instruct.Q4_1.gguf", false, 12},
};

std::string CacheDir() {  // same order as tools/fetch_models.py cache_dir()
  if (const char* d = std::getenv("CAIRN_MODEL_CACHE"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/cairn/models";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/cairn/models";
}

std::string GoldenPath(const RealModel& m, const std::string& what) {
  return test::SourceDir() + "/tests/real_models/golden/" + m.name + "/" + what;
}

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// Sets *path, or returns a reason to skip.
std::string Locate(const RealModel& m, const std::string& golden, std::string* path) {
  *path = CacheDir() + "/" + m.file;
  if (!std::filesystem::exists(*path)) {
    return std::string("model file ") + *path + " is absent (python3 tools/fetch_models.py " + m.name + ")";
  }
  if (!std::filesystem::exists(GoldenPath(m, golden))) return "no golden " + GoldenPath(m, golden);
  return "";
}

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

class RealModelTest : public testing::TestWithParam<RealModel> {};

TEST_P(RealModelTest, TokenizerMatchesLlamaTokenize) {
  const RealModel& m = GetParam();
  std::string path;
  if (std::string why = Locate(m, "tokenize.json", &path); !why.empty()) GTEST_SKIP() << why;
  const tokenizer::Tokenizer tok(tokenizer::LoadGgufVocabulary(path));
  const json golden = ReadJson(GoldenPath(m, "tokenize.json"));
  int same = 0, total = 0;
  for (const json& c : golden.at("cases")) {
    const std::string text = FromHex(c.at("hex").get<std::string>());
    const std::vector<int32_t> want = c.at("ids").get<std::vector<int32_t>>();
    const std::vector<int32_t> got = tok.Encode(text, c.at("parse_special").get<bool>(), /*add_special=*/true);
    ++total;
    same += got == want;
    EXPECT_EQ(got, want) << m.name << " case " << c.at("name").get<std::string>();
  }
  std::printf("%s: tokenizer cases identical %d/%d\n", m.name, same, total);
}

// Greedy decoding with Cairn: prefill, then one token at a time (argmax).
struct Step {
  int32_t top1, top2;
  float margin;
};

TEST_P(RealModelTest, GreedyMatchesLlamaCompletion) {
  const RealModel& m = GetParam();
  std::string path;
  if (std::string why = Locate(m, "greedy.json", &path); !why.empty()) GTEST_SKIP() << why;
  const bool full = std::getenv("CAIRN_REAL_FULL") != nullptr;
  auto model = model::Model::Load(path);
  const tokenizer::Tokenizer tok(tokenizer::LoadGgufVocabulary(path));
  const json golden = ReadJson(GoldenPath(m, "greedy.json"));
  ThreadPool pool(2);
  const int64_t V = model->n_vocab();
  int cases = 0, identical_cases = 0, same_tokens = 0, total_tokens = 0;
  for (const json& c : golden.at("cases")) {
    if (m.large && !full && cases >= kLargeGreedyCases) break;
    ++cases;
    const std::string prompt = c.at("prompt").get<std::string>();
    const std::vector<int32_t> want_prompt = c.at("prompt_ids").get<std::vector<int32_t>>();
    const std::vector<int32_t> want = c.at("ids").get<std::vector<int32_t>>();
    // llama.cpp stopped early on an end-of-generation token (absent from the session file).
    const bool eog = c.at("eog").get<bool>() && (want.empty() || !tok.IsEndOfGeneration(want.back()));
    // llama-completion parses special tokens in the prompt and adds BOS per the file's policy.
    const std::vector<int32_t> prompt_ids = tok.Encode(prompt, /*parse_special=*/true, /*add_special=*/true);
    ASSERT_EQ(prompt_ids, want_prompt) << m.name << " prompt " << prompt;

    auto state = model->NewState();
    model::ForwardResult res;
    model::ForwardRequest req;
    req.tokens = prompt_ids;
    model->Forward(*state, req, &res, pool);
    const size_t steps = want.size() + (eog ? 1 : 0);
    bool diverged = false;
    for (size_t i = 0; i < steps; ++i) {
      const float* l = res.logits.data();
      Step s{0, -1, 0};
      for (int64_t j = 1; j < V; ++j) {
        if (l[j] > l[s.top1]) s.top1 = static_cast<int32_t>(j);
      }
      for (int64_t j = 0; j < V; ++j) {
        if (j != s.top1 && (s.top2 < 0 || l[j] > l[s.top2])) s.top2 = static_cast<int32_t>(j);
      }
      s.margin = l[s.top1] - l[s.top2];
      if (i == want.size()) {  // llama.cpp stopped here on an end-of-generation token
        EXPECT_TRUE(tok.IsEndOfGeneration(s.top1))
            << m.name << " prompt " << prompt << ": llama.cpp ended at step " << i << ", Cairn picks " << s.top1;
        break;
      }
      ++total_tokens;
      if (s.top1 != want[i]) {
        // A near tie: llama.cpp's token is within kNearTie of Cairn's choice in
        // Cairn's logits (usually Cairn's second choice; with three tokens
        // within a few hundredths, possibly its third).
        const float gap = l[s.top1] - l[want[i]];
        const bool near_tie = gap < kNearTie;
        const int64_t rank = 1 + std::count_if(l, l + V, [&](float v) { return v > l[want[i]]; });
        std::printf("%s: prompt %s: step %zu: Cairn %d, llama.cpp %d (Cairn's #%d), Cairn top-2 margin %.4f, "
                    "logit gap to llama.cpp's token %.4f (%s)\n",
                    m.name, json(prompt).dump().c_str(), i, s.top1, want[i], static_cast<int>(rank), s.margin, gap,
                    near_tie ? "near-tie, accepted" : "NOT a near-tie");
        EXPECT_TRUE(near_tie) << m.name << " prompt " << prompt << " diverges at step " << i;
        diverged = true;
        break;
      }
      ++same_tokens;
      if (i + 1 == steps) break;
      const int32_t next = want[i];
      req.tokens = std::span<const int32_t>(&next, 1);
      model->Forward(*state, req, &res, pool);
    }
    identical_cases += !diverged;
  }
  EXPECT_GE(same_tokens, kMinIdenticalFraction * total_tokens) << m.name;
  std::printf("%s: greedy: %d/%d prompts identical, %d/%d tokens identical before any divergence\n", m.name,
              identical_cases, cases, same_tokens, total_tokens);
}

TEST_P(RealModelTest, PerplexityMatchesLlamaPerplexity) {
  const RealModel& m = GetParam();
  std::string path;
  if (std::string why = Locate(m, "perplexity.json", &path); !why.empty()) GTEST_SKIP() << why;
  const json golden = ReadJson(GoldenPath(m, "perplexity.json"));
  const std::string text_path = golden.at("text").get<std::string>();
  if (!std::filesystem::exists(text_path)) GTEST_SKIP() << "text " << text_path << " is absent";
  std::ifstream in(text_path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto model = model::Model::Load(path);
  const tokenizer::Tokenizer tok(tokenizer::LoadGgufVocabulary(path));
  const std::vector<int32_t> tokens = tok.Encode(text, /*parse_special=*/false, /*add_special=*/true);
  ThreadPool pool(2);
  const bool full = std::getenv("CAIRN_REAL_FULL") != nullptr;
  const std::vector<double> running = golden.at("chunk_running_ppl").get<std::vector<double>>();
  const int chunks = full ? golden.at("chunks").get<int>()
                          : std::min<int>(static_cast<int>(running.size()), m.quick_ppl_chunks);
  const model::PerplexityResult r = model::Perplexity(*model, tokens, golden.at("ctx").get<int>(), chunks,
                                                      tok.add_bos() ? tok.bos() : -1, DType::kF16, /*k_q8=*/false, pool);
  const double want = running.at(static_cast<size_t>(chunks) - 1);
  std::printf("%s: PPL Cairn %.4f, llama.cpp %.4f (%+.3f%%), %d chunks of %d\n", m.name, r.ppl, want,
              100.0 * (r.ppl / want - 1.0), r.chunks, golden.at("ctx").get<int>());
  EXPECT_EQ(r.chunks, chunks);
  EXPECT_NEAR(r.ppl / want, 1.0, 0.005);
}

INSTANTIATE_TEST_SUITE_P(Files, RealModelTest, testing::ValuesIn(kModels),
                         [](const testing::TestParamInfo<RealModel>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace cairn
