// Reply tails fed by the decoders (model/reply_tail.h, spec::DecodeOptions::tail):
// after a plain or speculative decode, restoring ANY logged position of the
// reply through Model::RestorePrefix gives the recurrent state and next
// logits bit-identical to a cold prefill of the same tokens.
#include <gtest/gtest.h>

#include <cstring>

#include "model/reply_tail.h"
#include "spec/lookup_drafter.h"
#include "spec/speculative_decoder.h"
#include "spec_test_util.h"

namespace cairn::spec {
namespace {

using test::NextLogits;
using test::Pool;
using test::TinyModel;

sampling::SamplingParams Greedy() {
  sampling::SamplingParams p;
  p.temperature = 0.0f;
  return p;
}

struct Decoded {
  std::vector<int32_t> fed;  // prompt + every fed (committed) token
  RecurrentSnapshotRef tail;
  std::unique_ptr<model::SequenceState> state;
};

Decoded Decode(const model::Model& m, const std::vector<int32_t>& prompt, Drafter* drafter, int n, int64_t reach) {
  Decoded d;
  d.state = m.NewState();
  sampling::Sampler sampler(Greedy(), m.n_vocab());
  sampling::TokenHistory history(prompt);
  const PrefillOutput pre = Prefill(m, *d.state, prompt, false, Pool());
  model::ReplyTail tail(m.config(), reach);
  tail.Begin(*d.state);
  DecodeOptions o;
  o.max_tokens = n;
  o.cap = 4;
  o.tail = &tail;
  const DecodeOutput out = drafter != nullptr
                               ? DecodeSpeculative(m, *d.state, pre.last_logits, {}, sampler, history, *drafter, o, Pool())
                               : DecodePlain(m, *d.state, pre.last_logits, sampler, history, o, Pool());
  d.fed = prompt;
  for (size_t i = 0; i + 1 < out.tokens.size(); ++i) d.fed.push_back(out.tokens[i].token);
  EXPECT_EQ(d.state->n_tokens(), static_cast<int64_t>(d.fed.size()));
  d.tail = tail.Snapshot();
  return d;
}

void ExpectEveryTailPositionRestoresExactly(const model::Model& m, const Decoded& d, int64_t reach,
                                            const std::string& what) {
  ASSERT_NE(d.tail, nullptr) << what;
  const int64_t base = d.tail->position();
  const int64_t logged = static_cast<int64_t>(d.tail->replay_tokens().size());
  const int64_t end = static_cast<int64_t>(d.fed.size());
  EXPECT_EQ(base + logged, end) << what;
  EXPECT_GE(logged, std::min<int64_t>(reach, end - 24)) << what << ": the tail covers the last `reach` positions";
  EXPECT_LE(logged, 2 * reach + 5) << what;  // one round (<= cap + 1 tokens) past 2 * reach at most
  const KvBlockTable blocks = d.state->Snapshot().blocks;
  for (int64_t p = base; p <= end; ++p) {
    auto restored = m.NewState();
    m.RestorePrefix(*restored, blocks, p, d.tail, Pool());
    auto cold = m.NewState();
    Prefill(m, *cold, std::vector<int32_t>(d.fed.begin(), d.fed.begin() + p), false, Pool());
    ASSERT_EQ(restored->n_tokens(), p);
    EXPECT_EQ(std::memcmp(restored->recurrent(), cold->recurrent(), cold->recurrent_floats() * sizeof(float)), 0)
        << what << ": recurrent state at " << p;
    const std::vector<float> a = NextLogits(m, *restored, 777);
    const std::vector<float> b = NextLogits(m, *cold, 777);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what << ": logits after " << p;
  }
}

TEST(ReplyTailDecode, PlainDecodeEveryLoggedPositionRestoresBitExactly) {
  const model::Model& m = TinyModel("qwen35");
  const std::vector<int32_t> prompt = test::Prompt(1, 24);
  for (const int64_t reach : {4, 7}) {
    const Decoded d = Decode(m, prompt, nullptr, 20, reach);
    ExpectEveryTailPositionRestoresExactly(m, d, reach, "plain, reach " + std::to_string(reach));
  }
}

TEST(ReplyTailDecode, SpeculativeDecodeLogsOnlyCommittedTokens) {
  const model::Model& m = TinyModel("qwen35");
  const std::vector<int32_t> prompt = test::Prompt(2, 24);
  LookupDrafter lookup;
  const Decoded d = Decode(m, prompt, &lookup, 24, 6);
  ExpectEveryTailPositionRestoresExactly(m, d, 6, "lookup");
  test::RandomDrafter random(m.n_vocab(), 5);
  const Decoded r = Decode(m, prompt, &random, 16, 5);
  ExpectEveryTailPositionRestoresExactly(m, r, 5, "random drafts (rejections)");
}

TEST(ReplyTailDecode, AShortReplyIsLoggedWhole) {
  const model::Model& m = TinyModel("qwen35");
  const std::vector<int32_t> prompt = test::Prompt(3, 24);
  const Decoded d = Decode(m, prompt, nullptr, 5, 16);
  ASSERT_NE(d.tail, nullptr);
  EXPECT_EQ(d.tail->position(), static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(d.tail->replay_tokens().size(), 4u);
  EXPECT_EQ(d.tail->held_bytes() - d.tail->bytes(),
            4 * model::ReplyTail::TokenBytes(m.config()) + 4 * sizeof(int32_t));
}

}  // namespace
}  // namespace cairn::spec
