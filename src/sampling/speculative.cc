#include "sampling/speculative.h"

#include <algorithm>

#include "core/error.h"

namespace cairn::sampling {
namespace {

float DraftProb(const DraftToken& draft) {
  if (draft.q == nullptr) return 1.0f;
  const float q = draft.q->Prob(draft.token);
  if (!(q > 0.0f)) Fail("speculative: draft token {} has probability 0 under its draft distribution", draft.token);
  return q;
}

}  // namespace

int32_t SampleResidual(const Distribution& p, const DraftToken& draft, Rng& rng) {
  const std::span<const int32_t> ids = p.ids();
  const std::span<const float> probs = p.probs();
  const double u = rng.Uniform();

  // Residual weights r_j = max(0, p_j - q(ids[j])) over p's support, computed
  // by merging the two ascending id lists. First pass: total; second: walk.
  auto residual = [&](auto&& visit) {
    if (draft.q == nullptr) {
      for (size_t j = 0; j < ids.size(); ++j) {
        if (!visit(j, ids[j] == draft.token ? 0.0f : probs[j])) return;
      }
      return;
    }
    const std::span<const int32_t> q_ids = draft.q->ids();
    const std::span<const float> q_probs = draft.q->probs();
    size_t m = 0;
    for (size_t j = 0; j < ids.size(); ++j) {
      while (m < q_ids.size() && q_ids[m] < ids[j]) ++m;
      const float q = (m < q_ids.size() && q_ids[m] == ids[j]) ? q_probs[m] : 0.0f;
      if (!visit(j, std::max(0.0f, probs[j] - q))) return;
    }
  };

  double total = 0.0;
  residual([&](size_t, float r) {
    total += r;
    return true;
  });
  if (!(total > 0.0)) {
    double p_total = 0.0;
    for (float x : probs) p_total += x;
    return ids[SampleIndex(probs, p_total, u)];
  }

  const double target = u * total;
  double cum = 0.0;
  int32_t chosen = -1;
  residual([&](size_t j, float r) {
    if (r <= 0.0f) return true;
    cum += r;
    chosen = ids[j];  // the last positive one if rounding runs past the end
    return !(target < cum);
  });
  return chosen;
}

AcceptDecision AcceptOrResample(const Distribution& p, const DraftToken& draft, Rng& rng) {
  CAIRN_CHECK(draft.token >= 0 && draft.token < p.vocab_size());
  if (p.greedy()) {
    const int32_t best = p.Argmax();
    return {draft.token == best, best};
  }
  // Accept iff u < p(x) / q(x), written without the division.
  const double q = DraftProb(draft);
  const double u = rng.Uniform();
  if (u * q < static_cast<double>(p.Prob(draft.token))) return {true, draft.token};
  return {false, SampleResidual(p, draft, rng)};
}

VerifyResult VerifyDraft(Sampler& sampler, TokenHistory& history, std::span<const float> target_logits,
                         std::span<const DraftToken> drafts) {
  const size_t vocab = static_cast<size_t>(sampler.vocab_size());
  if (target_logits.size() != (drafts.size() + 1) * vocab) {
    Fail("speculative: {} target logits for {} drafts and vocabulary {} (want (k + 1) * vocab)",
         target_logits.size(), drafts.size(), vocab);
  }
  VerifyResult result;
  result.tokens.reserve(drafts.size() + 1);
  Distribution p;
  for (size_t i = 0; i <= drafts.size(); ++i) {
    sampler.ComputeDistribution(target_logits.subspan(i * vocab, vocab), history, &p);
    if (i == drafts.size()) {  // every draft accepted: bonus token from p_k
      result.tokens.push_back(sampler.Annotate(p.Sample(sampler.rng())));
      history.Append(result.tokens.back().token);
      break;
    }
    const AcceptDecision decision = AcceptOrResample(p, drafts[i], sampler.rng());
    result.tokens.push_back(sampler.Annotate(decision.token));
    history.Append(decision.token);
    if (!decision.accepted) break;
    ++result.num_accepted;
  }
  return result;
}

}  // namespace cairn::sampling
