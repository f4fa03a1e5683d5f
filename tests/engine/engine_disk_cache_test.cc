// The disk tier through the engine on tiny dense, hybrid and sliding-window
// models: a restarted engine serves a resumed conversation from disk, and the
// tokens equal those of a cold run and of a RAM hit. Packs of another model
// are misses; clearing and per-entry removal reach both tiers.
#include <gtest/gtest.h>

#include "common/temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "model/test_models.h"

namespace cairn::engine {
namespace {

namespace fs = std::filesystem;

// Fresh directory per test (cairn_engine_disk_XXXXXX under /tmp).
using TempDir = test::TempDir;

std::unique_ptr<Engine> MakeEngine(const std::string& arch, const std::string& dir, uint64_t seed = 1,
                                   bool k_q8 = false) {
  EngineOptions o;
  o.k_q8 = k_q8;
  o.model_path = test::TinyModelPath(arch, DType::kF32, false, seed);
  o.threads = 2;
  o.cache_min_reuse = 8;
  o.spec_mode = "baseline";
  o.disk_cache = true;
  o.cache_dir = dir;
  o.cache_disk_gb = 1;
  return Engine::Create(o);
}

Json Conversation(int turns) {
  Json messages = Json::array();
  messages.push_back({{"role", "system"},
                      {"content", "You are a careful assistant for a code base in /home/user/project. Answer "
                                  "briefly and cite the files you read, with their full paths and line numbers."}});
  for (int t = 0; t < turns; ++t) {
    messages.push_back({{"role", "user"}, {"content", "Turn " + std::to_string(t) + ": what does parse_header do?"}});
    if (t + 1 < turns) {
      messages.push_back({{"role", "assistant"}, {"content", "It reads header line " + std::to_string(t) + "."}});
    }
  }
  return messages;
}

GenerationResult Generate(Engine& engine, const Json& messages, bool use_cache) {
  GenerationInput input;
  input.messages = messages;
  GenerationOptions options;
  options.max_tokens = 16;
  options.ignore_eos = true;
  options.use_prefix_cache = use_cache;
  return engine.Generate(input, options, nullptr, nullptr);
}

class EngineDiskCache : public ::testing::TestWithParam<std::string> {};

TEST_P(EngineDiskCache, ColdRamHitAndDiskHitAfterRestartAreIdentical) {
  TempDir dir;
  const Json turn2 = Conversation(2);
  std::vector<int32_t> reference;
  {
    const std::unique_ptr<Engine> engine = MakeEngine(GetParam(), dir.path());
    ASSERT_TRUE(engine->CacheListing()["disk"]["enabled"].get<bool>()) << engine->CacheListing()["disk"].dump();
    reference = Generate(*engine, turn2, false).completion_ids;
    ASSERT_EQ(reference.size(), 16u);
    EXPECT_EQ(Generate(*engine, turn2, true).completion_ids, reference);
    const GenerationResult ram = Generate(*engine, turn2, true);
    EXPECT_EQ(ram.completion_ids, reference);
    EXPECT_GT(ram.cached_tokens, 0);
    EXPECT_FALSE(ram.cache.contains("disk_tokens")) << ram.cache.dump();
  }  // the engine's end finishes the queued writes
  const std::unique_ptr<Engine> engine = MakeEngine(GetParam(), dir.path());
  const Json listing = engine->CacheListing();
  EXPECT_GT(listing["disk"]["block_records"].get<int64_t>(), 0) << listing["disk"].dump();
  EXPECT_EQ(listing["entries"].size(), 0u);   // RAM starts empty
  const GenerationResult disk = Generate(*engine, turn2, true);
  EXPECT_EQ(disk.completion_ids, reference);
  EXPECT_GT(disk.cached_tokens, 0) << disk.cache.dump();
  EXPECT_EQ(disk.cache["disk_tokens"].get<int64_t>(), disk.cached_tokens) << disk.cache.dump();
  EXPECT_GT(disk.cache["disk_bytes"].get<int64_t>(), 0);
  // The restored prefix now lives in RAM too: the next turn hits there.
  const Json turn3 = Conversation(3);
  const GenerationResult cold3 = Generate(*engine, turn3, false);
  const GenerationResult hit3 = Generate(*engine, turn3, true);
  EXPECT_EQ(hit3.completion_ids, cold3.completion_ids);
  EXPECT_GT(hit3.cached_tokens, 0);
  EXPECT_NE(engine->MetricsText().find("cairn_disk_cache_hits_total 1"), std::string::npos);
}

TEST_P(EngineDiskCache, AnotherModelsPacksAreMissesAndClearEmptiesBothTiers) {
  TempDir dir;
  const Json turn2 = Conversation(2);
  {
    const std::unique_ptr<Engine> engine = MakeEngine(GetParam(), dir.path(), /*seed=*/1);
    Generate(*engine, turn2, true);
  }
  {
    const std::unique_ptr<Engine> other = MakeEngine(GetParam(), dir.path(), /*seed=*/3);
    const GenerationResult r = Generate(*other, turn2, true);
    EXPECT_EQ(r.cached_tokens, 0) << r.cache.dump();
    const Json disk = other->CacheListing()["disk"];
    ASSERT_FALSE(disk["rejected"].empty()) << disk.dump();
    EXPECT_NE(disk["rejected"][0]["reason"].get<std::string>().find("another model"), std::string::npos);
  }
  const std::unique_ptr<Engine> engine = MakeEngine(GetParam(), dir.path(), /*seed=*/1);
  // Per-entry removal by the id GET /cache shows: RAM after a hit, then disk.
  Generate(*engine, turn2, true);
  Json listing = engine->CacheListing();
  ASSERT_FALSE(listing["entries"].empty());
  ASSERT_FALSE(listing["disk"]["entries"].empty());
  engine->ClearCache();
  listing = engine->CacheListing();
  EXPECT_TRUE(listing["entries"].empty());
  EXPECT_EQ(listing["disk"]["bytes"].get<uint64_t>(), 0u) << listing["disk"].dump();
  EXPECT_EQ(Generate(*engine, turn2, true).cached_tokens, 0);
  // Wait for the write-behind of that request, then remove its entry by id.
  engine->cache().disk()->Flush();
  listing = engine->CacheListing();
  ASSERT_EQ(listing["entries"].size(), 1u);
  const std::string id = listing["entries"][0]["id"].get<std::string>();
  ASSERT_EQ(listing["disk"]["entries"].size(), 1u);
  EXPECT_EQ(listing["disk"]["entries"][0]["id"], id);   // one id space for both tiers
  EXPECT_TRUE(engine->RemoveCacheEntry(id));
  EXPECT_FALSE(engine->RemoveCacheEntry(id));
  listing = engine->CacheListing();
  EXPECT_TRUE(listing["entries"].empty());
  EXPECT_TRUE(listing["disk"]["entries"].empty());
}

// --cache-type-k q8_0 on the hybrid: an F16 engine on the same directory
// rejects its packs as another state layout, and after a restart the Q8_0 K
// engine serves the conversation from disk with the tokens of its cold run.
TEST(EngineDiskCacheQ8K, PacksRestoreAfterRestartAndAreAnotherLayoutForF16) {
  TempDir dir;
  const Json turn2 = Conversation(2);
  std::vector<int32_t> reference;
  {
    const std::unique_ptr<Engine> engine = MakeEngine("qwen35", dir.path(), 1, /*k_q8=*/true);
    reference = Generate(*engine, turn2, false).completion_ids;
    ASSERT_EQ(reference.size(), 16u);
    EXPECT_EQ(Generate(*engine, turn2, true).completion_ids, reference);
  }
  {
    const std::unique_ptr<Engine> f16 = MakeEngine("qwen35", dir.path());
    EXPECT_EQ(Generate(*f16, turn2, true).cached_tokens, 0);
    const Json disk = f16->CacheListing()["disk"];
    ASSERT_FALSE(disk["rejected"].empty()) << disk.dump();
    EXPECT_NE(disk["rejected"][0]["reason"].get<std::string>().find("k=q8_0"), std::string::npos) << disk.dump();
  }
  const std::unique_ptr<Engine> engine = MakeEngine("qwen35", dir.path(), 1, /*k_q8=*/true);
  const GenerationResult restored = Generate(*engine, turn2, true);
  EXPECT_EQ(restored.completion_ids, reference);
  EXPECT_GT(restored.cached_tokens, 0) << restored.cache.dump();
  EXPECT_EQ(restored.cache["disk_tokens"].get<int64_t>(), restored.cached_tokens) << restored.cache.dump();
}

// Under the sanitizers (CAIRN_SANITIZED=1) the hybrid model alone.
std::vector<std::string> DiskModels() {
  const char* sanitized = std::getenv("CAIRN_SANITIZED");
  if (sanitized != nullptr && std::string(sanitized) == "1") return {"qwen35"};
  return {"qwen3", "qwen35", "gemma3"};
}

INSTANTIATE_TEST_SUITE_P(Models, EngineDiskCache, ::testing::ValuesIn(DiskModels()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace cairn::engine
