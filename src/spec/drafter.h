// The drafter interface of speculative decoding (docs/speculative.md).
//
// Token protocol. At any time the sequence is
//   fed tokens  f_0 .. f_{N-1}   (in the target's state, committed)
//   pending     x_N              (committed and emitted, not yet fed)
// A round asks the drafter for up to k tokens d_1..d_k continuing
// [f..., x_N]; the target verifies [x_N, d_1..d_k] in one pass and accepts
// j drafts plus one target token b. Then [x_N, d_1..d_j] become fed and b is
// the new pending token. The drafter learns this through Accept(), which must
// also discard everything it derived from the rejected drafts d_{j+1}..d_k
// (rollback): after Accept the drafter is in the state a fresh drafter would
// reach by Begin() on the whole committed history.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sampling/distribution.h"
#include "sampling/sampling_params.h"
#include "sampling/speculative.h"

namespace cairn::spec {

// How a model-based drafter picks its tokens. Greedy drafts are argmax with a
// one-hot q (exact for any target temperature); with temperature > 0 the draft
// is sampled from the drafter's own processed distribution q, from its own Rng
// stream, and q goes to exact speculative sampling.
struct DraftSampling {
  // temperature 0 (the default here) = greedy drafts.
  sampling::SamplingParams params = [] {
    sampling::SamplingParams p;
    p.temperature = 0.0f;
    return p;
  }();
  uint64_t seed = 0;
};

class Drafter {
 public:
  virtual ~Drafter() = default;

  virtual std::string name() const = 0;
  // True when Begin/Accept need the target's final-norm hidden rows (MTP).
  virtual bool wants_target_hidden() const { return false; }

  // Starts a request. fed: the tokens in the target's state (the prompt);
  // fed_hidden: when wants_target_hidden(), target hidden rows
  // [rows][n_embd] of the LAST rows tokens of fed (a prefix-cache hit has
  // none for the cached part; rows >= 1), else empty; pending: the first
  // sampled token.
  virtual void Begin(std::span<const int32_t> fed, std::span<const float> fed_hidden, int32_t pending) = 0;

  // Up to max_k drafts continuing the committed history + pending (fewer, or
  // none, when the drafter has nothing useful). Entries' q pointers stay
  // valid until the next call on this drafter.
  virtual void Propose(int max_k, std::vector<sampling::DraftToken>* drafts) = 0;

  // After verification: newly_fed = [pending, accepted drafts] (j + 1
  // tokens, now in the target's state), their target hidden rows
  // ([j + 1][n_embd], only when wants_target_hidden()), and the new pending
  // token. Rolls back whatever the rejected drafts left behind.
  virtual void Accept(std::span<const int32_t> newly_fed, std::span<const float> newly_fed_hidden,
                      int32_t next_pending) = 0;
};

}  // namespace cairn::spec
