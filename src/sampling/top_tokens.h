// Selecting the most likely tokens of a logit row without sorting the
// vocabulary. The order everywhere in sampling is "higher logit first, lower
// id first on equal logits" (Better below), which makes every truncation and
// tie-break deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace cairn::sampling {

struct Candidate {
  float logit;
  int32_t id;
};

// Strict weak order: a is ranked before b.
inline bool Better(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Writes the min(k, #finite) best tokens of logits[vocab] to *out, sorted by
// Better. -inf logits are never selected. Cost: one pass with a size-k heap
// (O(n + k log k log n) typical) for k << n, nth_element otherwise.
void SelectTopTokens(std::span<const float> logits, size_t k, std::vector<Candidate>* out);

// Index of the largest logit, lowest index on ties; -1 if every logit is -inf.
int32_t ArgmaxLogit(std::span<const float> logits);

}  // namespace cairn::sampling
