// Model-level exactness properties on random tiny models of every architecture:
// split invariance (one-shot = chunked = token-by-token, bit for bit),
// snapshot/restore, and speculative rollback at every accept length.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/model.h"
#include "model/test_models.h"
#include "model/verify_capture.h"

namespace cairn::model {
namespace {

struct Case {
  std::string arch;
  DType quant;
};

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  return info.param.arch + "_" + std::string(GetDTypeInfo(info.param.quant).name);
}

std::vector<int32_t> RandomTokens(int n, uint32_t seed, int vocab = 150000) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& x : t) x = static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab));
  return t;
}

class ForwardTest : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    model_ = Model::Load(test::TinyModelPath(GetParam().arch, GetParam().quant));
  }

  // All logits of `tokens` processed in chunks ending at `cuts` (then the rest).
  std::vector<float> RunSplit(const std::vector<int32_t>& tokens, const std::vector<size_t>& cuts, int threads) {
    ThreadPool pool(threads);
    auto state = model_->NewState();
    std::vector<float> all;
    size_t begin = 0;
    std::vector<size_t> ends = cuts;
    ends.push_back(tokens.size());
    for (size_t end : ends) {
      if (end <= begin) continue;
      ForwardRequest req;
      req.tokens = std::span<const int32_t>(tokens.data() + begin, end - begin);
      req.all_logits = true;
      ForwardResult res;
      model_->Forward(*state, req, &res, pool);
      all.insert(all.end(), res.logits.data(), res.logits.data() + res.logits.size());
      begin = end;
    }
    EXPECT_EQ(state->n_tokens(), static_cast<int64_t>(tokens.size()));
    return all;
  }

  std::unique_ptr<Model> model_;
};

TEST_P(ForwardTest, LogitsAreFiniteAndVaried) {
  ThreadPool pool(2);
  auto state = model_->NewState();
  const auto tokens = RandomTokens(20, 7);
  ForwardRequest req;
  req.tokens = tokens;
  ForwardResult res;
  model_->Forward(*state, req, &res, pool);
  ASSERT_EQ(res.n_rows, 1);
  double sum = 0, sum2 = 0;
  for (int64_t i = 0; i < model_->n_vocab(); ++i) {
    ASSERT_TRUE(std::isfinite(res.logits[i]));
    sum += res.logits[i];
    sum2 += res.logits[i] * res.logits[i];
  }
  const double mean = sum / model_->n_vocab();
  EXPECT_GT(sum2 / model_->n_vocab() - mean * mean, 1e-3);  // not a constant
}

// One-shot prefill, chunked prefill at random boundaries and token-by-token
// decode give bit-identical logits for every position, with 1 or 2 threads.
TEST_P(ForwardTest, SplitInvariantBitExact) {
  const int n = getenv("CAIRN_SANITIZED") ? 24 : 72;
  const auto tokens = RandomTokens(n, 11);
  const std::vector<float> one_shot = RunSplit(tokens, {}, 2);
  std::mt19937 rng(3);
  std::vector<size_t> cuts;
  for (size_t p = 1 + rng() % 30; p < tokens.size(); p += 1 + rng() % 30) cuts.push_back(p);
  EXPECT_EQ(RunSplit(tokens, cuts, 1), one_shot) << "chunked differs";
  std::vector<size_t> every;
  for (size_t p = 1; p < tokens.size(); ++p) every.push_back(p);
  EXPECT_EQ(RunSplit(tokens, every, 2), one_shot) << "token-by-token differs";
}

// Restoring a snapshot and continuing equals never having snapshotted; the
// snapshot itself is unchanged afterwards.
TEST_P(ForwardTest, SnapshotRestoreBitExact) {
  ThreadPool pool(2);
  const auto prefix = RandomTokens(70, 21);
  const auto suffix = RandomTokens(30, 22);
  auto a = model_->NewState();
  ForwardRequest req;
  ForwardResult res;
  req.tokens = prefix;
  model_->Forward(*a, req, &res, pool);
  StateSnapshot snap = a->Snapshot();
  auto checksum = [&](const StateSnapshot& s) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](const uint8_t* p, size_t n) {
      for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    };
    for (const auto& b : s.blocks) mix(b->Slab(0, 0), b->bytes());
    if (s.recurrent) mix(s.recurrent->data(), s.recurrent->bytes());
    return h;
  };
  const uint64_t before = checksum(snap);
  req.tokens = suffix;
  req.all_logits = true;
  ForwardResult direct;
  model_->Forward(*a, req, &direct, pool);

  auto b = model_->NewState();
  b->Restore(snap);
  ForwardResult restored;
  model_->Forward(*b, req, &restored, pool);
  ASSERT_EQ(direct.logits.size(), restored.logits.size());
  EXPECT_EQ(0, std::memcmp(direct.logits.data(), restored.logits.data(), direct.logits.bytes()));
  EXPECT_EQ(before, checksum(snap));
}

// Checkpoints requested inside one pass (not at chunk limits) are the exact
// recurrent state a pass ending there leaves, and taking them changes no logit.
TEST_P(ForwardTest, InPassCheckpointsEqualSplitPasses) {
  ThreadPool pool(2);
  const auto tokens = RandomTokens(60, 41);
  const std::vector<int64_t> positions = {1, 17, 18, 40, 48, 60};  // 48 = a chunk limit, 60 = the end
  auto state = model_->NewState();
  ForwardRequest req;
  req.tokens = tokens;
  req.all_logits = true;
  req.chunk_tokens = 48;
  req.checkpoint_positions = {60, 17, 1, 40, 18, 48, 17};  // unordered, duplicated: taken once each
  std::vector<RecurrentSnapshotRef> taken;
  req.on_checkpoint = [&](RecurrentSnapshotRef snap) { taken.push_back(std::move(snap)); };
  ForwardResult with;
  model_->Forward(*state, req, &with, pool);

  auto plain = model_->NewState();
  ForwardRequest no_cp;
  no_cp.tokens = tokens;
  no_cp.all_logits = true;
  ForwardResult without;
  model_->Forward(*plain, no_cp, &without, pool);
  ASSERT_EQ(with.logits.size(), without.logits.size());
  EXPECT_EQ(0, std::memcmp(with.logits.data(), without.logits.data(), with.logits.bytes()));

  if (!model_->config().checkpointed()) {
    EXPECT_TRUE(taken.empty());  // dense models never need recurrent checkpoints
    return;
  }
  ASSERT_EQ(taken.size(), positions.size());
  for (size_t i = 0; i < positions.size(); ++i) {
    const int64_t pos = positions[i];
    ASSERT_EQ(taken[i]->position(), pos);
    // Reference: a pass that simply ends at pos.
    auto ref = model_->NewState();
    ForwardRequest head;
    head.tokens = std::span<const int32_t>(tokens.data(), static_cast<size_t>(pos));
    ForwardResult ignored;
    model_->Forward(*ref, head, &ignored, pool);
    const RecurrentSnapshotRef expect = ref->SnapshotRecurrent();
    ASSERT_EQ(taken[i]->bytes(), expect->bytes());
    EXPECT_EQ(0, std::memcmp(taken[i]->data(), expect->data(), expect->bytes())) << "checkpoint at " << pos;
    // Restoring it (KV from the full run) and continuing matches the full run.
    auto resumed = model_->NewState();
    resumed->RestorePrefix(state->Snapshot().blocks, pos, taken[i]);
    if (pos < static_cast<int64_t>(tokens.size())) {
      ForwardRequest rest;
      rest.tokens = std::span<const int32_t>(tokens).subspan(static_cast<size_t>(pos));
      rest.all_logits = true;
      ForwardResult cont;
      model_->Forward(*resumed, rest, &cont, pool);
      EXPECT_EQ(0, std::memcmp(cont.logits.data(), without.logits.data() + pos * model_->n_vocab(),
                               cont.logits.bytes()))
          << "resumed at " << pos;
    }
  }
}

// A verification pass over k+1 tokens rolled back to j accepted tokens leaves
// exactly the state of a pass over those j tokens: next logits bit-identical.
TEST_P(ForwardTest, VerifyRollbackEveryAcceptLength) {
  ThreadPool pool(2);
  const auto prompt = RandomTokens(20, 31);
  const auto block = RandomTokens(5, 32);
  const auto next = RandomTokens(1, 33);
  for (size_t j = 1; j <= block.size(); ++j) {
    auto spec = model_->NewState();
    ForwardRequest req;
    ForwardResult res;
    req.tokens = prompt;
    model_->Forward(*spec, req, &res, pool);
    VerifyCapture capture;
    req.tokens = block;
    req.all_logits = true;
    req.verify = &capture;
    model_->Forward(*spec, req, &res, pool);
    model_->RollbackVerify(*spec, capture, static_cast<int64_t>(j), pool);

    auto plain = model_->NewState();
    std::vector<int32_t> accepted(prompt);
    accepted.insert(accepted.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(j));
    ForwardRequest plain_req;
    plain_req.tokens = accepted;
    model_->Forward(*plain, plain_req, &res, pool);
    ASSERT_EQ(spec->n_tokens(), plain->n_tokens());
    if (spec->recurrent_floats() > 0) {
      EXPECT_EQ(0, std::memcmp(spec->recurrent(), plain->recurrent(), spec->recurrent_floats() * sizeof(float)))
          << "recurrent state differs at j=" << j;
    }
    ForwardRequest next_req;
    next_req.tokens = next;
    ForwardResult a, b;
    model_->Forward(*spec, next_req, &a, pool);
    model_->Forward(*plain, next_req, &b, pool);
    EXPECT_EQ(0, std::memcmp(a.logits.data(), b.logits.data(), a.logits.bytes())) << "j=" << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, ForwardTest,
                         testing::Values(Case{"llama", DType::kF32}, Case{"qwen3", DType::kF32},
                                         Case{"qwen35", DType::kF32}, Case{"qwen35", DType::kQ8_0},
                                         Case{"qwen3", DType::kQ4_K}, Case{"gemma3", DType::kF32}),
                         CaseName);

}  // namespace
}  // namespace cairn::model
