// The decode loops: plain decoding (the reference) and speculative decoding
// (draft, verify in one target pass, accept, roll back, commit).
//
// Round of DecodeSpeculative (fed tokens f_0..f_{N-1} in `state`, pending
// token x_N already emitted and in `history`):
//   1. k = cap for this round (fixed, or CapController), clipped so the round
//      cannot overshoot max_tokens (k <= remaining - 1) or kMaxDraft;
//   2. drafts d_1..d_k from the drafter (it may return fewer; lookup may
//      return a longer match-scaled draft, clipped the same way);
//   3. ONE target Forward over [x_N, d_1..d_k] (all_logits, request.verify
//      set; want_hidden when the drafter reads target hidden states);
//   4. sampling::VerifyDraft: greedy = longest prefix equal to the target's
//      argmax; sampled = exact speculative sampling (one-hot q for lookup and
//      greedy drafts). It appends the j accepted drafts and the bonus /
//      correction token b to `history`;
//   5. Model::RollbackVerify(state, capture, j + 1): the KV length and the
//      recurrent state become exactly a pass over [x_N, d_1..d_j];
//   6. drafter->Accept([x_N, d_1..d_j], their hidden rows, b);
//   7. emit d_1..d_j, b in order; a stop token ends the decode at that token,
//      the tokens after it are dropped from `history` and from `state`
//      (RollbackVerify to the stop's position instead of j + 1).
// Each emitted token is the one plain decoding would produce (greedy) or an
// exact sample of it (temperature > 0); logprobs are the target's.
//
// Contract with the prefix cache / engine: at every point where the loop
// returns (and between rounds) `state` holds exactly the committed tokens
// except the last emitted one (prompt + output[0..n-2]), like plain decoding.
// Unverified drafts exist in `state` only inside step 3..5 of a round, so the
// engine may insert `state` into the prefix cache only after the decode call
// returns (or between rounds), keyed by history.tokens() minus the last
// token — never the drafts.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "model/model.h"
#include "model/reply_tail.h"
#include "model/verify_capture.h"
#include "sampling/sampler.h"
#include "sampling/token_history.h"
#include "spec/cap_controller.h"
#include "spec/drafter.h"
#include "spec/spec_stats.h"

namespace cairn::spec {

inline constexpr int kMaxDraft = 32;

// kLength: max_tokens; kStop: a stop token; kCaller: on_token returned false.
enum class FinishReason { kLength, kStop, kCaller };

struct DecodeOptions {
  int max_tokens = 64;                 // tokens to emit, incl. the first
  std::vector<int32_t> stop_tokens;    // EOS / EOT ids; the stop token is emitted, nothing after it
  int cap = 4;                         // drafts per round when controller == nullptr
  CapController* controller = nullptr; // adaptive cap (overrides cap)
  // Called for every emitted token, in order, as soon as its round is
  // verified (streaming). It must not touch `state`. Returning false ends the
  // decode at this token exactly as a stop token would (the engine's stop
  // strings and client cancellation): later tokens of the round are dropped
  // from `history` and rolled back from `state`.
  std::function<bool(const sampling::SampledToken&)> on_token;
  // prompt_hidden holds the target hidden rows of fed tokens [hidden_from, N)
  // only (after a prefix-cache hit the cached part has no hidden rows); the
  // drafter then starts from that suffix.
  int64_t hidden_from = 0;
  // Hybrid models: records every committed token's recurrence inputs so the
  // prefix cache can resume inside this reply (model/reply_tail.h). Begun by
  // the caller at the state's current position.
  model::ReplyTail* tail = nullptr;
};

struct DecodeOutput {
  std::vector<sampling::SampledToken> tokens;  // emitted tokens (with target logprobs when requested)
  FinishReason finish = FinishReason::kLength;
  SpecStats stats;
};

struct PrefillOutput {
  std::vector<float> last_logits;  // [n_vocab] after the last token
  std::vector<float> hidden;       // [n][n_embd] final-norm hidden rows, when requested
};

// Feeds `tokens` into `state`. With want_hidden every position's hidden row is
// kept (the forward runs in chunks of `chunk` rows with all logits, so the
// logits scratch stays chunk x vocab); otherwise one plain Forward.
PrefillOutput Prefill(const model::Model& model, model::SequenceState& state, std::span<const int32_t> tokens,
                      bool want_hidden, ThreadPool& pool, int64_t chunk = 64);

// Plain decoding: one Forward and one Sampler::Sample per token.
DecodeOutput DecodePlain(const model::Model& target, model::SequenceState& state, std::span<const float> last_logits,
                         sampling::Sampler& sampler, sampling::TokenHistory& history, const DecodeOptions& options,
                         ThreadPool& pool);

// Speculative decoding (see the file comment). prompt_hidden: the target's
// hidden rows of every fed token when drafter.wants_target_hidden().
DecodeOutput DecodeSpeculative(const model::Model& target, model::SequenceState& state,
                               std::span<const float> last_logits, std::span<const float> prompt_hidden,
                               sampling::Sampler& sampler, sampling::TokenHistory& history, Drafter& drafter,
                               const DecodeOptions& options, ThreadPool& pool);

}  // namespace cairn::spec
