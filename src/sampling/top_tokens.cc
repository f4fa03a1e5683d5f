#include "sampling/top_tokens.h"

#include <algorithm>
#include <limits>

namespace cairn::sampling {

void SelectTopTokens(std::span<const float> logits, size_t k, std::vector<Candidate>* out) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  out->clear();
  if (k == 0) return;
  const size_t n = logits.size();
  if (k * 8 >= n) {
    // Large k: nth_element over every finite candidate.
    for (size_t i = 0; i < n; ++i) {
      if (logits[i] > kNegInf) out->push_back({logits[i], static_cast<int32_t>(i)});
    }
    if (out->size() > k) {
      std::nth_element(out->begin(), out->begin() + k, out->end(), Better);
      out->resize(k);
    }
    std::sort(out->begin(), out->end(), Better);
    return;
  }
  // Small k: min-heap (worst on top) of the best k seen so far. Ids arrive in
  // ascending order, so a later token with an equal logit is never better and
  // one strict compare against the worst logit rejects almost every token.
  out->reserve(k);
  size_t i = 0;
  for (; i < n && out->size() < k; ++i) {
    if (logits[i] > kNegInf) {
      out->push_back({logits[i], static_cast<int32_t>(i)});
      std::push_heap(out->begin(), out->end(), Better);
    }
  }
  float worst = out->empty() ? kNegInf : out->front().logit;
  for (; i < n; ++i) {
    if (logits[i] > worst) {
      std::pop_heap(out->begin(), out->end(), Better);
      out->back() = {logits[i], static_cast<int32_t>(i)};
      std::push_heap(out->begin(), out->end(), Better);
      worst = out->front().logit;
    }
  }
  std::sort_heap(out->begin(), out->end(), Better);
}

int32_t ArgmaxLogit(std::span<const float> logits) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float best = kNegInf;
  int32_t best_id = -1;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] > best) {  // strict: the lowest index wins ties
      best = logits[i];
      best_id = static_cast<int32_t>(i);
    }
  }
  return best_id;
}

}  // namespace cairn::sampling
