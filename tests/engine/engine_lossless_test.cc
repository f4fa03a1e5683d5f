// The engine end to end (template -> tokens -> prefix cache -> prefill ->
// plain or speculative decode -> stop strings -> cache insert) on random tiny
// dense and hybrid models: every speculative mode, cold and after a cache hit,
// must produce exactly the token ids of cold plain decoding, including when a
// stop string, max_tokens or a client cancellation ends the decode in the
// middle of a verified round.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/test_models.h"

namespace cairn::engine {
namespace {

struct Arch {
  std::string name;
  bool mtp;
};

std::unique_ptr<Engine> MakeEngine(const Arch& arch, bool k_q8 = false) {
  EngineOptions o;
  o.k_q8 = k_q8;
  o.model_path = test::TinyModelPath(arch.name, DType::kF32, arch.mtp);
  o.draft_model_path = test::TinyModelPath("qwen3", DType::kF32, false, /*seed=*/2);
  o.threads = 2;
  o.cache_min_reuse = 8;
  o.spec_max_cap = 6;  // calibrates widths 1..7 only: enough to exercise every path
  return Engine::Create(o);
}

Json Conversation(int turns) {
  Json messages = Json::array();
  messages.push_back({{"role", "system"},
                      {"content", "You are a careful assistant for a code base. Answer briefly, cite files, and "
                                  "repeat the exact function names you were given when you refer to them."}});
  for (int t = 0; t < turns; ++t) {
    messages.push_back({{"role", "user"},
                        {"content", "Turn " + std::to_string(t) +
                                        ": please explain what parse_header(buf, len) does in src/net/http.c, and "
                                        "then what parse_header(buf, len) returns on error."}});
    if (t + 1 < turns) {
      messages.push_back({{"role", "assistant"}, {"content", "parse_header(buf, len) reads the header line " +
                                                                 std::to_string(t) + " and returns -1 on error."}});
    }
  }
  return messages;
}

GenerationResult Generate(Engine& engine, const Json& messages, const std::string& mode, bool use_cache, int max_tokens = 24,
                     std::vector<std::string> stop = {}, int cancel_after_deltas = -1) {
  GenerationInput input;
  input.messages = messages;
  GenerationOptions options;
  options.max_tokens = max_tokens;
  options.ignore_eos = true;
  options.spec_mode = mode;
  options.use_prefix_cache = use_cache;
  options.stop = std::move(stop);
  int deltas = 0;
  return engine.Generate(
      input, options,
      [&](const GenerationDelta&) { return cancel_after_deltas < 0 || ++deltas < cancel_after_deltas; }, nullptr);
}

class EngineLossless : public ::testing::TestWithParam<Arch> {
 protected:
  static std::vector<std::string> Modes(const Arch& arch) {
    std::vector<std::string> modes = {"lookup", "draft", "auto"};
    if (arch.mtp) modes.push_back("mtp");
    return modes;
  }
};

TEST_P(EngineLossless, EveryModeColdAndCachedMatchesColdBaseline) {
  const std::unique_ptr<Engine> engine = MakeEngine(GetParam());
  const Json turn1 = Conversation(1);
  const GenerationResult reference = Generate(*engine, turn1, "baseline", /*use_cache=*/false);
  ASSERT_EQ(reference.completion_ids.size(), 24u);
  for (const std::string& mode : Modes(GetParam())) {
    const GenerationResult cold = Generate(*engine, turn1, mode, false);
    EXPECT_EQ(cold.completion_ids, reference.completion_ids) << mode << " cold";
    EXPECT_EQ(cold.content, reference.content) << mode;
    EXPECT_EQ(cold.cached_tokens, 0);
    if (mode != "auto") {
      EXPECT_EQ(cold.spec["mode"], mode);
    }
    EXPECT_GE(cold.spec["rounds"].get<int64_t>(), 1) << mode;
    // Same prompt again with the cache on: the first run inserts, the second
    // hits; both must equal the cold plain answer.
    const GenerationResult warm1 = Generate(*engine, turn1, mode, true);
    const GenerationResult warm2 = Generate(*engine, turn1, mode, true);
    EXPECT_EQ(warm1.completion_ids, reference.completion_ids) << mode;
    EXPECT_EQ(warm2.completion_ids, reference.completion_ids) << mode << " after a cache hit";
    EXPECT_GT(warm2.cached_tokens, 0) << mode;
  }
}

TEST_P(EngineLossless, MultiTurnHitWithSpeculationMatchesCold) {
  const std::unique_ptr<Engine> engine = MakeEngine(GetParam());
  for (const std::string& mode : Modes(GetParam())) {
    engine->CacheListing();  // exercised while entries exist
    Generate(*engine, Conversation(2), mode, true);  // seeds the cache with turn 2's prompt + answer
    const Json turn3 = Conversation(3);
    const GenerationResult cold = Generate(*engine, turn3, "baseline", false);
    const GenerationResult hit = Generate(*engine, turn3, mode, true);
    EXPECT_EQ(hit.completion_ids, cold.completion_ids) << mode;
    EXPECT_GT(hit.cached_tokens, 0) << mode << ": " << hit.cache.dump();
  }
}

// x_cairn.prefill_trace: one (position, seconds) pair per prefill chunk,
// starting after the cached prefix and ending at the prompt's end.
void ExpectTraceCovers(const GenerationResult& r, int64_t chunk_tokens) {
  ASSERT_FALSE(r.prefill_trace.empty());
  int64_t position = r.cached_tokens;
  double seconds = 0;
  for (const auto& mark : r.prefill_trace) {
    EXPECT_GT(mark.position, position);
    EXPECT_LE(mark.position - position, chunk_tokens);
    EXPECT_GE(mark.seconds, seconds);
    position = mark.position;
    seconds = mark.seconds;
  }
  EXPECT_EQ(r.prefill_trace.back().position, r.prompt_tokens);
  EXPECT_DOUBLE_EQ(r.prefill_trace.back().seconds, r.prefill_seconds);
}

TEST(EnginePrefillTrace, ColdAndCachedRequestsTraceTheirSuffix) {
  EngineOptions o;
  o.model_path = test::TinyModelPath("qwen3", DType::kF32, false);
  o.threads = 1;
  o.cache_min_reuse = 8;
  o.prefill_chunk_tokens = 16;
  o.spec_mode = "baseline";
  const std::unique_ptr<Engine> engine = Engine::Create(o);
  const GenerationResult cold = Generate(*engine, Conversation(3), "baseline", true, 2);
  ASSERT_GT(cold.prompt_tokens, 48);
  ExpectTraceCovers(cold, 16);
  EXPECT_GE(static_cast<int64_t>(cold.prefill_trace.size()), cold.prompt_tokens / 16);
  const GenerationResult hit = Generate(*engine, Conversation(4), "baseline", true, 2);
  ASSERT_GT(hit.cached_tokens, 0) << hit.cache.dump();
  ExpectTraceCovers(hit, 16);
}

// Hybrid: a second session whose system prompt differs from the first one's
// only in its working-directory line resumes at the start of that line (a
// "mark" checkpoint the first session's prefill took), not from zero, and
// answers exactly as a cold run does.
// The tiny hybrid, plain decoding.
std::unique_ptr<Engine> TinyHybridEngine() {
  EngineOptions o;
  o.model_path = test::TinyModelPath("qwen35", DType::kF32, false);
  o.threads = 2;
  o.cache_min_reuse = 8;
  o.spec_mode = "baseline";
  return Engine::Create(o);
}

TEST(EngineMarks, AnotherSessionResumesAtTheVolatileLineItDivergesIn) {
  const std::unique_ptr<Engine> engine = TinyHybridEngine();
  auto session = [](const std::string& dir) {
    Json messages = Json::array();
    messages.push_back({{"role", "system"},
                        {"content", "You are a careful coding agent. Read files before editing them, keep changes "
                                    "small, run the tests after every edit and report what changed.\n"
                                    "Primary working directory: " + dir + "\nIs a git repository: true\n"
                                    "Answer briefly."}});
    messages.push_back({{"role", "user"}, {"content", "Fix the bug in add()."}});
    return messages;
  };
  const GenerationResult first = Generate(*engine, session("/home/alice/proj-a"), "baseline", true, 8);
  ASSERT_EQ(first.cached_tokens, 0);
  const GenerationResult second = Generate(*engine, session("/home/bob/proj-b"), "baseline", true, 8);
  EXPECT_EQ(second.cache["kind"], "mark") << second.cache.dump();
  EXPECT_GT(second.cached_tokens, 16) << second.cache.dump();
  EXPECT_LE(second.cached_tokens, second.cache["common_prefix"].get<int64_t>());
  EXPECT_GE(second.cached_tokens + 8, second.cache["common_prefix"].get<int64_t>()) << second.cache.dump();
  const GenerationResult cold = Generate(*engine, session("/home/bob/proj-b"), "baseline", false, 8);
  EXPECT_EQ(second.completion_ids, cold.completion_ids);
}

// Hybrid: the next prompt carries the reply back, re-rendered so that it
// differs two words before its end. The reply-tail checkpoint restores the
// state right there (kind "tail": base state + replayed recurrence inputs),
// and the answer equals a cold run's.
TEST(EngineReplyTail, NextPromptResumesInsideThePreviousReply) {
  const std::unique_ptr<Engine> engine = TinyHybridEngine();
  // The reply is steered to plain words (logit bias) so that its text
  // re-tokenizes to the same ids, as a real reply does.
  GenerationOptions options;
  options.max_tokens = 24;
  options.ignore_eos = true;
  options.spec_mode = "baseline";
  for (const char* word : {" alpha", " beta", " gamma", " delta"}) {
    const std::vector<int32_t> ids = engine->Tokenize(word, false);
    ASSERT_EQ(ids.size(), 1u) << word;
    options.logit_bias.emplace_back(ids[0], 100.0f);
  }
  GenerationInput turn1;
  turn1.prompt = "A log of the words the assistant said, one per step, for the record:";
  const GenerationResult first = engine->Generate(turn1, options, nullptr, nullptr);
  ASSERT_EQ(first.completion_ids.size(), 24u);
  const std::vector<int32_t> prompt1 = engine->Tokenize(*turn1.prompt, true);
  // Re-rendered reply: all but its last two words, then a new turn.
  const std::vector<int32_t> kept(first.completion_ids.begin(), first.completion_ids.end() - 2);
  GenerationInput turn2;
  turn2.prompt = *turn1.prompt + engine->Detokenize(kept) + "\nNext, list three more words:";
  const std::vector<int32_t> prompt2 = engine->Tokenize(*turn2.prompt, true);
  ASSERT_GE(prompt2.size(), prompt1.size() + kept.size());
  ASSERT_TRUE(std::equal(kept.begin(), kept.end(), prompt2.begin() + static_cast<std::ptrdiff_t>(prompt1.size())))
      << "the reply's text must re-tokenize to its ids";

  const GenerationResult second = engine->Generate(turn2, options, nullptr, nullptr);
  EXPECT_EQ(second.cache["kind"], "tail") << second.cache.dump();
  EXPECT_EQ(second.cached_tokens, second.cache["common_prefix"].get<int64_t>()) << second.cache.dump();
  EXPECT_GE(second.cached_tokens, static_cast<int64_t>(prompt1.size() + kept.size())) << second.cache.dump();
  EXPECT_GT(second.cache.value("replayed_tokens", 0), 0) << second.cache.dump();
  options.use_prefix_cache = false;
  const GenerationResult cold = engine->Generate(turn2, options, nullptr, nullptr);
  EXPECT_EQ(second.completion_ids, cold.completion_ids);

  // GET /cache lists the tail with the positions it reaches, and the
  // checkpoint bytes within their budget.
  const Json listing = engine->CacheListing();
  bool tail_listed = false;
  for (const Json& e : listing["entries"]) {
    for (const Json& c : e["checkpoints"]) tail_listed |= c["kind"] == "tail" && c.value("replay_tokens", 0) > 0;
  }
  EXPECT_TRUE(tail_listed) << listing.dump();
  EXPECT_GT(listing["checkpoint_bytes"].get<int64_t>(), 0);
  EXPECT_LE(listing["checkpoint_bytes"].get<int64_t>(), listing["checkpoint_budget_bytes"].get<int64_t>());
  EXPECT_NE(engine->MetricsText().find("cairn_cache_checkpoint_bytes "), std::string::npos);
}

// `store_in_cache = false` reads the cache and leaves it exactly as it was:
// repeating such a hit sees the same entries, reuses the same tokens and
// answers the same; the storing run that follows reuses as much again.
TEST_P(EngineLossless, ReadOnlyHitsLeaveTheCacheAsItWas) {
  const std::unique_ptr<Engine> engine = MakeEngine(GetParam());
  Generate(*engine, Conversation(2), "baseline", true);
  const Json before = engine->CacheListing();
  ASSERT_EQ(before["entries"].size(), 1u) << before.dump();
  const GenerationResult reference = Generate(*engine, Conversation(3), "baseline", false);
  GenerationInput input;
  input.messages = Conversation(3);
  GenerationOptions options;
  options.max_tokens = 24;
  options.ignore_eos = true;
  options.spec_mode = "baseline";
  options.store_in_cache = false;
  for (int repeat = 0; repeat < 2; ++repeat) {
    const GenerationResult hit = engine->Generate(input, options, nullptr, nullptr);
    EXPECT_GT(hit.cached_tokens, 0) << repeat;
    EXPECT_EQ(hit.completion_ids, reference.completion_ids) << repeat;
    const Json after = engine->CacheListing();
    ASSERT_EQ(after["entries"].size(), 1u) << repeat;
    EXPECT_EQ(after["bytes"], before["bytes"]) << repeat;
    EXPECT_EQ(after["entries"][0]["tokens"], before["entries"][0]["tokens"]) << repeat;
    EXPECT_EQ(after["entries"][0]["checkpoints"].size(), before["entries"][0]["checkpoints"].size()) << repeat;
  }
  options.store_in_cache = true;
  const GenerationResult first_store = engine->Generate(input, options, nullptr, nullptr);
  const GenerationResult after_store = Generate(*engine, Conversation(3), "baseline", true);
  EXPECT_EQ(first_store.completion_ids, reference.completion_ids);
  EXPECT_GT(after_store.cached_tokens, first_store.cached_tokens) << "the storing run inserted nothing";
  EXPECT_EQ(after_store.completion_ids, reference.completion_ids);
}

TEST_P(EngineLossless, StopStringInsideARoundEndsExactlyWhereBaselineEnds) {
  const std::unique_ptr<Engine> engine = MakeEngine(GetParam());
  const Json messages = Conversation(1);
  const GenerationResult full = Generate(*engine, messages, "baseline", false, 32);
  ASSERT_GE(full.content.size(), 12u);
  // A stop string from the middle of the answer: the answer must end right
  // before it, and whatever the decoder verified past it must not leak into
  // the cache (the next cached run must still equal the cold one).
  size_t at = std::string::npos;
  for (size_t i = full.content.size() / 3; i + 3 <= full.content.size() && at == std::string::npos; ++i) {
    const bool ascii = static_cast<unsigned char>(full.content[i]) < 0x80 &&
                       static_cast<unsigned char>(full.content[i + 1]) < 0x80 &&
                       static_cast<unsigned char>(full.content[i + 2]) < 0x80;
    if (ascii) at = i;
  }
  ASSERT_NE(at, std::string::npos) << "no ASCII run in " << full.content;
  const std::string stop = full.content.substr(at, 3);
  const GenerationResult base = Generate(*engine, messages, "baseline", false, 32, {stop});
  EXPECT_EQ(base.finish_reason, "stop");
  EXPECT_EQ(base.content.find(stop), std::string::npos);
  for (const std::string& mode : Modes(GetParam())) {
    const GenerationResult spec = Generate(*engine, messages, mode, true, 32, {stop});
    EXPECT_EQ(spec.content, base.content) << mode;
    EXPECT_EQ(spec.completion_ids, base.completion_ids) << mode;
    EXPECT_EQ(spec.finish_reason, "stop") << mode;
    const GenerationResult again = Generate(*engine, messages, mode, true, 32);
    EXPECT_EQ(again.completion_ids, full.completion_ids) << mode << " after a stopped run";
  }
}

TEST_P(EngineLossless, MaxTokensAndCancellationMidRoundKeepTheCacheExact) {
  const std::unique_ptr<Engine> engine = MakeEngine(GetParam());
  const Json messages = Conversation(2);
  const GenerationResult full = Generate(*engine, messages, "baseline", false, 20);
  for (const std::string& mode : Modes(GetParam())) {
    for (int max_tokens : {1, 2, 5}) {
      const GenerationResult r = Generate(*engine, messages, mode, true, max_tokens);
      EXPECT_EQ(r.finish_reason, "length");
      ASSERT_EQ(r.completion_ids.size(), static_cast<size_t>(max_tokens)) << mode;
      EXPECT_TRUE(std::equal(r.completion_ids.begin(), r.completion_ids.end(), full.completion_ids.begin())) << mode;
    }
    const GenerationResult cancelled = Generate(*engine, messages, mode, true, 20, {}, /*cancel_after_deltas=*/3);
    // gemma3 tiny's random output streams fewer than 3 text deltas in these 20
    // tokens (observed: it finishes by length), so the cancel need not fire
    // there; the retry below is checked either way.
    if (GetParam().name != "gemma3" || cancelled.finish_reason == "cancelled") {
      EXPECT_EQ(cancelled.finish_reason, "cancelled") << mode;
      EXPECT_LT(cancelled.completion_ids.size(), full.completion_ids.size()) << mode;
    }
    const GenerationResult retry = Generate(*engine, messages, mode, true, 20);
    EXPECT_EQ(retry.completion_ids, full.completion_ids) << mode << " retry after cancel";
    EXPECT_GT(retry.cached_tokens, 0);
  }
}

TEST_P(EngineLossless, SeededSamplingIsReproducibleInEveryModeAndCacheState) {
  const std::unique_ptr<Engine> engine = MakeEngine(GetParam());
  GenerationInput input;
  input.messages = Conversation(2);
  GenerationOptions options;
  options.max_tokens = 20;
  options.ignore_eos = true;
  options.temperature = 1.0f;
  options.seed = 7;
  for (const std::string& mode : Modes(GetParam())) {
    options.spec_mode = mode;
    options.use_prefix_cache = false;
    const GenerationResult first = engine->Generate(input, options, nullptr, nullptr);
    // Other requests in between move the engine's live acceptance estimates.
    Generate(*engine, Conversation(1), mode, true, 12);
    const GenerationResult again = engine->Generate(input, options, nullptr, nullptr);
    options.use_prefix_cache = true;
    engine->Generate(input, options, nullptr, nullptr);  // inserts
    const GenerationResult hit = engine->Generate(input, options, nullptr, nullptr);
    EXPECT_EQ(again.completion_ids, first.completion_ids) << mode;
    EXPECT_EQ(hit.completion_ids, first.completion_ids) << mode << " after a cache hit";
    EXPECT_GT(hit.cached_tokens, 0);
  }
}

TEST(EngineSpecModes, UnavailableModesAreRequestErrors) {
  EngineOptions o;
  o.model_path = test::TinyModelPath("qwen3", DType::kF32, false);
  o.threads = 1;
  const std::unique_ptr<Engine> engine = Engine::Create(o);
  EXPECT_THROW(Generate(*engine, Conversation(1), "draft", false), RequestError);
  EXPECT_THROW(Generate(*engine, Conversation(1), "mtp", false), RequestError);
  EXPECT_THROW(Generate(*engine, Conversation(1), "fast", false), RequestError);
  const GenerationResult r = Generate(*engine, Conversation(1), "auto", false, 8);
  EXPECT_TRUE(r.spec["mode"] == "lookup" || r.spec["mode"] == "baseline") << r.spec.dump();
  EXPECT_EQ(r.spec["requested"], "auto");
  EXPECT_NE(engine->MetricsText().find("cairn_spec_accepted_per_round_bucket"), std::string::npos);
  o.spec_mode = "mtp";
  EXPECT_THROW(Engine::Create(o), Error);
}

// --cache-type-k q8_0 is its own numeric class (kernels/attention_q8k-inl.h),
// and within it the same guarantee holds: every speculative mode, cold, after
// a hit and on a multi-turn hit, gives the cold plain decode's tokens.
TEST(EngineLosslessQ8K, EveryModeColdCachedAndMultiTurnMatchCold) {
  // gemma3: the sliding layers' K is Q8_0 too, and so are their window snapshots.
  for (const Arch& arch : {Arch{"qwen35", true}, Arch{"qwen3", false}, Arch{"gemma3", false}}) {
    const std::unique_ptr<Engine> engine = MakeEngine(arch, /*k_q8=*/true);
    const Json turn1 = Conversation(1);
    const GenerationResult reference = Generate(*engine, turn1, "baseline", /*use_cache=*/false);
    ASSERT_EQ(reference.completion_ids.size(), 24u);
    std::vector<std::string> modes = {"lookup", "draft"};
    if (arch.mtp) modes.push_back("mtp");
    for (const std::string& mode : modes) {
      EXPECT_EQ(Generate(*engine, turn1, mode, false).completion_ids, reference.completion_ids) << arch.name << mode;
      Generate(*engine, turn1, mode, true);
      const GenerationResult warm = Generate(*engine, turn1, mode, true);
      EXPECT_EQ(warm.completion_ids, reference.completion_ids) << arch.name << " " << mode << " after a hit";
      EXPECT_GT(warm.cached_tokens, 0) << arch.name << " " << mode;
      Generate(*engine, Conversation(2), mode, true);
      const GenerationResult cold3 = Generate(*engine, Conversation(3), "baseline", false);
      const GenerationResult hit3 = Generate(*engine, Conversation(3), mode, true);
      EXPECT_EQ(hit3.completion_ids, cold3.completion_ids) << arch.name << " " << mode;
      EXPECT_GT(hit3.cached_tokens, 0) << arch.name << " " << mode;
    }
  }
}

// Under the sanitizers (CAIRN_SANITIZED=1, 5-10x slower) only the hybrid
// model, whose state handling is the most involved, runs the full matrix.
std::vector<Arch> Archs() {
  const char* sanitized = std::getenv("CAIRN_SANITIZED");
  if (sanitized != nullptr && std::string(sanitized) == "1") return {Arch{"qwen35", true}};
  return {Arch{"qwen3", false}, Arch{"qwen35", true}, Arch{"llama", false}, Arch{"gemma3", false}};
}

INSTANTIATE_TEST_SUITE_P(Archs, EngineLossless, ::testing::ValuesIn(Archs()),
                         [](const ::testing::TestParamInfo<Arch>& info) { return info.param.name; });

}  // namespace
}  // namespace cairn::engine
