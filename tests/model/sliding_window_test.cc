// gemma3 sliding-window attention on a random tiny model (5 sliding layers
// with a 24-token window + 1 global layer, 64-token KV blocks), with prompts
// far beyond the window: split invariance, bounded sliding memory with true
// byte accounting, window checkpoints = split passes, snapshot/restore,
// truncation inside the kept window, and speculative rollback
// (docs/sliding-window.md).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "model/model.h"
#include "model/test_models.h"
#include "model/verify_capture.h"

namespace cairn::model {
namespace {

std::vector<int32_t> RandomTokens(int n, uint32_t seed, int vocab = 150000) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& x : t) x = static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab));
  return t;
}

int64_t LiveSwaBlocks(const SequenceState& st) {
  int64_t n = 0;
  for (const auto& b : st.swa_blocks()) n += b != nullptr;
  return n;
}

class SlidingWindowTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { model_ = Model::Load(test::TinyModelPath("gemma3")).release(); }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }

  // All logits, fed in pieces ending at `cuts`; chunk_tokens per Forward.
  std::vector<float> Run(const std::vector<int32_t>& tokens, const std::vector<size_t>& cuts, int threads,
                         int64_t chunk_tokens = 256, SequenceState* out_state = nullptr) {
    ThreadPool pool(threads);
    auto state = NewState();
    SequenceState& st = out_state ? *out_state : *state;
    std::vector<float> all;
    size_t begin = 0;
    std::vector<size_t> ends = cuts;
    ends.push_back(tokens.size());
    for (size_t end : ends) {
      if (end <= begin) continue;
      ForwardRequest req;
      req.tokens = std::span<const int32_t>(tokens.data() + begin, end - begin);
      req.all_logits = true;
      req.chunk_tokens = chunk_tokens;
      ForwardResult res;
      model_->Forward(st, req, &res, pool);
      all.insert(all.end(), res.logits.data(), res.logits.data() + res.logits.size());
      begin = end;
    }
    return all;
  }

  void CheckWindowCheckpoints();
  // States of the K cache type under test (k_q8_: `--cache-type-k q8_0`).
  std::unique_ptr<SequenceState> NewState() const { return model_->NewState(DType::kF16, k_q8_); }

  static Model* model_;
  bool k_q8_ = false;
};
Model* SlidingWindowTest::model_ = nullptr;

TEST_F(SlidingWindowTest, ConfigHasFiveSlidingLayersPerGlobal) {
  const ModelConfig& cfg = model_->config();
  ASSERT_EQ(cfg.arch, Arch::kGemma3);
  EXPECT_EQ(cfg.sliding_window, 24);
  EXPECT_EQ(cfg.n_sliding_layers(), 5);
  EXPECT_EQ(cfg.n_attn_layers(), 1);
  EXPECT_EQ(cfg.layer_kinds[5], LayerKind::kAttention);
  EXPECT_TRUE(cfg.checkpointed());
  EXPECT_FLOAT_EQ(cfg.rope_theta_local, 10000.0f);
  EXPECT_FLOAT_EQ(cfg.attn_scale, 0.125f);   // 1/sqrt(64)
}

// One-shot, chunked (random cuts and a 7-token chunk size) and token-by-token
// give bit-identical logits at every position, 300 tokens = 12 windows.
TEST_F(SlidingWindowTest, SplitInvariantBeyondTheWindow) {
  const int n = getenv("CAIRN_SANITIZED") ? 120 : 300;
  const auto tokens = RandomTokens(n, 11);
  const std::vector<float> one_shot = Run(tokens, {}, 2, 1024);
  std::mt19937 rng(3);
  std::vector<size_t> cuts;
  for (size_t p = 1 + rng() % 40; p < tokens.size(); p += 1 + rng() % 40) cuts.push_back(p);
  EXPECT_EQ(Run(tokens, cuts, 1), one_shot) << "chunked differs";
  EXPECT_EQ(Run(tokens, {}, 2, 7), one_shot) << "7-token chunks differ";
  std::vector<size_t> every;
  for (size_t p = 1; p < tokens.size(); ++p) every.push_back(p);
  EXPECT_EQ(Run(tokens, every, 2), one_shot) << "token-by-token differs";
}

// Sliding blocks wholly out of the window are freed; the byte count is the
// sum over the blocks actually held.
TEST_F(SlidingWindowTest, SlidingMemoryIsBoundedByTheWindow) {
  const auto tokens = RandomTokens(400, 12);
  const ModelConfig& cfg = model_->config();
  auto st = model_->NewState();
  std::vector<size_t> every;
  for (size_t p = 1; p < tokens.size(); ++p) every.push_back(p);
  Run(tokens, every, 2, 256, st.get());
  const int64_t B = st->kv_layout().block_tokens;
  // Decode: the window of the next token (23 positions) spans at most 2 blocks.
  EXPECT_LE(LiveSwaBlocks(*st), (cfg.sliding_window - 1 + B - 1) / B + 1);
  EXPECT_EQ(st->blocks().size(), static_cast<size_t>((400 + B - 1) / B));   // global KV: every block
  size_t expect = 0;
  for (const auto& b : st->blocks()) expect += b->bytes();
  expect += static_cast<size_t>(LiveSwaBlocks(*st)) * st->swa_layout().BlockBytes();
  EXPECT_EQ(st->bytes(), expect);
  // Prefill in 100-token chunks: at most window + chunk positions live.
  auto pre = model_->NewState();
  Run(tokens, {}, 2, 100, pre.get());
  EXPECT_LE(LiveSwaBlocks(*pre), (cfg.sliding_window - 1 + 100 + B - 1) / B + 1);
}

// Window checkpoints inside one pass equal the blob of a pass ending there;
// restoring one (global KV from the full run) and continuing is bit-exact.
// With an F16 K cache and with a Q8_0 one (whose window blobs zero the quads
// and scales of the positions past the checkpoint).
TEST_F(SlidingWindowTest, WindowCheckpointsEqualSplitPassesAndResume) {
  for (const bool k_q8 : {false, true}) {
    SCOPED_TRACE(k_q8 ? "q8_0 K" : "f16 K");
    k_q8_ = k_q8;
    CheckWindowCheckpoints();
  }
}

void SlidingWindowTest::CheckWindowCheckpoints() {
  ThreadPool pool(2);
  const auto tokens = RandomTokens(260, 41);
  const std::vector<int64_t> positions = {1, 23, 24, 63, 64, 65, 100, 150, 200, 260};
  auto state = NewState();
  ForwardRequest req;
  req.tokens = tokens;
  req.all_logits = true;
  req.chunk_tokens = 100;
  req.checkpoint_positions = positions;
  std::vector<RecurrentSnapshotRef> taken;
  req.on_checkpoint = [&](RecurrentSnapshotRef snap) { taken.push_back(std::move(snap)); };
  ForwardResult with;
  model_->Forward(*state, req, &with, pool);
  const std::vector<float> cold = Run(tokens, {}, 2, 1024);
  ASSERT_EQ(with.logits.size(), cold.size());
  EXPECT_EQ(0, std::memcmp(with.logits.data(), cold.data(), with.logits.bytes()));
  ASSERT_EQ(taken.size(), positions.size());
  const StateSnapshot full = state->Snapshot();
  for (size_t i = 0; i < positions.size(); ++i) {
    const int64_t pos = positions[i];
    ASSERT_EQ(taken[i]->position(), pos);
    auto ref = NewState();
    ForwardRequest head;
    head.tokens = std::span<const int32_t>(tokens.data(), static_cast<size_t>(pos));
    head.chunk_tokens = 33;
    ForwardResult ignored;
    model_->Forward(*ref, head, &ignored, pool);
    const RecurrentSnapshotRef expect = ref->SnapshotRecurrent();
    ASSERT_EQ(taken[i]->bytes(), expect->bytes());
    EXPECT_EQ(0, std::memcmp(taken[i]->data(), expect->data(), expect->bytes())) << "checkpoint at " << pos;
    if (pos == static_cast<int64_t>(tokens.size())) continue;
    auto resumed = NewState();
    resumed->RestorePrefix(full.blocks, pos, taken[i]);
    ForwardRequest rest;
    rest.tokens = std::span<const int32_t>(tokens).subspan(static_cast<size_t>(pos));
    rest.all_logits = true;
    ForwardResult cont;
    model_->Forward(*resumed, rest, &cont, pool);
    EXPECT_EQ(0, std::memcmp(cont.logits.data(), cold.data() + pos * model_->n_vocab(), cont.logits.bytes()))
        << "resumed at " << pos;
  }
}

// Snapshot at 200 tokens (past 8 windows), restore elsewhere, continue: bit-exact,
// and the snapshot is unchanged by both continuations.
TEST_F(SlidingWindowTest, SnapshotRestoreBitExact) {
  ThreadPool pool(2);
  const auto prefix = RandomTokens(200, 21);
  const auto suffix = RandomTokens(90, 22);
  auto a = model_->NewState();
  ForwardRequest req;
  ForwardResult res;
  req.tokens = prefix;
  model_->Forward(*a, req, &res, pool);
  StateSnapshot snap = a->Snapshot();
  std::vector<uint8_t> blob(snap.recurrent->data(), snap.recurrent->data() + snap.recurrent->bytes());
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
  EXPECT_EQ(0, std::memcmp(blob.data(), snap.recurrent->data(), blob.size()));
}

// Truncation works while the window of the new length is still held, and is
// refused (changing nothing) once it was freed.
TEST_F(SlidingWindowTest, TruncateInsideTheKeptWindowOnly) {
  ThreadPool pool(2);
  const auto tokens = RandomTokens(200, 51);
  auto st = model_->NewState();
  ForwardRequest req;
  ForwardResult res;
  req.tokens = std::span<const int32_t>(tokens.data(), 150);
  model_->Forward(*st, req, &res, pool);
  req.tokens = std::span<const int32_t>(tokens.data() + 150, 50);   // one Forward: start 150 kept
  model_->Forward(*st, req, &res, pool);
  EXPECT_FALSE(st->Truncate(40));   // window of 40 was freed at the second call
  EXPECT_EQ(st->n_tokens(), 200);
  ASSERT_TRUE(st->Truncate(160));
  req.tokens = std::span<const int32_t>(tokens.data() + 160, 40);
  req.all_logits = true;
  ForwardResult again;
  model_->Forward(*st, req, &again, pool);
  const std::vector<float> cold = Run(tokens, {}, 2, 1024);
  EXPECT_EQ(0, std::memcmp(again.logits.data(), cold.data() + 160 * model_->n_vocab(), again.logits.bytes()));
}

// Verification passes (short, and longer than the window in small chunks)
// rolled back to every accept length leave the state of a plain pass.
TEST_F(SlidingWindowTest, VerifyRollbackExactBeyondTheWindow) {
  ThreadPool pool(2);
  const auto prompt = RandomTokens(170, 31);
  const auto next = RandomTokens(1, 33);
  struct Pass { int tokens; int64_t chunk; };
  for (const Pass pass : {Pass{6, 256}, Pass{40, 9}}) {
    const auto block = RandomTokens(pass.tokens, 32 + pass.tokens);
    for (int j = 1; j <= pass.tokens; j += (pass.tokens > 10 ? 13 : 1)) {
      auto spec = model_->NewState();
      ForwardRequest req;
      ForwardResult res;
      req.tokens = prompt;
      model_->Forward(*spec, req, &res, pool);
      VerifyCapture capture;
      req.tokens = block;
      req.all_logits = true;
      req.verify = &capture;
      req.chunk_tokens = pass.chunk;
      model_->Forward(*spec, req, &res, pool);
      model_->RollbackVerify(*spec, capture, j, pool);

      auto plain = model_->NewState();
      std::vector<int32_t> accepted(prompt);
      accepted.insert(accepted.end(), block.begin(), block.begin() + j);
      ForwardRequest plain_req;
      plain_req.tokens = accepted;
      model_->Forward(*plain, plain_req, &res, pool);
      ASSERT_EQ(spec->n_tokens(), plain->n_tokens());
      ForwardRequest next_req;
      next_req.tokens = next;
      ForwardResult a, b;
      model_->Forward(*spec, next_req, &a, pool);
      model_->Forward(*plain, next_req, &b, pool);
      EXPECT_EQ(0, std::memcmp(a.logits.data(), b.logits.data(), a.logits.bytes()))
          << "pass " << pass.tokens << " j=" << j;
    }
  }
}

}  // namespace
}  // namespace cairn::model
