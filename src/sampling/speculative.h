// Exact speculative sampling (Leviathan et al. 2023; Chen et al. 2023).
//
// A round drafts k tokens x_0..x_{k-1}, each from a draft distribution q_i
// (a drafter's processed distribution, or one-hot for lookup / n-gram / greedy
// drafts), and the target scores [pending, x_0..x_{k-1}] in one forward pass,
// giving k + 1 logit rows. For i = 0, 1, ...:
//   - p_i is the target's processed distribution of row i with the history
//     extended by the accepted x_0..x_{i-1} (penalties see them);
//   - accept x_i with probability min(1, p_i(x_i) / q_i(x_i));
//   - on the first rejection emit one token from the residual
//     normalise(max(0, p_i - q_i)) (one-hot q: p_i without x_i) and stop;
//   - if all k are accepted, emit a bonus token from p_k.
// Every emitted token is then an exact sample of sequential decoding from p.
// Greedy targets (temperature 0): accept while x_i == argmax p_i, then emit
// argmax p_i; identical to plain greedy decoding.
//
// RNG consumption (per round, from the target Sampler's Rng, in order):
//   temperature 0: none;
//   otherwise one Uniform() per verified draft token (the accept test, even
//   when its probability is 0 or 1), plus one for the residual sample after a
//   rejection or one for the bonus sample. Drafts must be drawn from a
//   different stream (e.g. Rng(seed, 1)), so that drafting does not shift the
//   target's stream.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/distribution.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"
#include "sampling/token_history.h"

namespace cairn::sampling {

struct DraftToken {
  int32_t token = -1;
  // The distribution the token was drawn from; nullptr = deterministic draft
  // (one-hot q on `token`). Must outlive the call.
  const Distribution* q = nullptr;
};

struct AcceptDecision {
  bool accepted = false;
  int32_t token = -1;  // the draft token if accepted, else the replacement
};

// One position: accept/reject the draft against p, resampling on rejection.
AcceptDecision AcceptOrResample(const Distribution& p, const DraftToken& draft, Rng& rng);

// A sample from normalise(max(0, p - q)) (q one-hot when draft.q is null);
// one Uniform(). Falls back to p if rounding leaves no residual mass (p <= q
// everywhere, which can only happen when p == q up to rounding).
int32_t SampleResidual(const Distribution& p, const DraftToken& draft, Rng& rng);

struct VerifyResult {
  int32_t num_accepted = 0;            // drafts accepted, 0..k
  std::vector<SampledToken> tokens;    // num_accepted + 1 emitted tokens (with logprobs)
};

// A whole round. target_logits: [k + 1][vocab] row-major, row i scored after
// x_{i-1} (row 0 after the pending token). Appends every emitted token to
// `history` (on return the history holds the committed tokens). Rows after
// the first rejection are never processed.
VerifyResult VerifyDraft(Sampler& sampler, TokenHistory& history, std::span<const float> target_logits,
                         std::span<const DraftToken> drafts);

}  // namespace cairn::sampling
