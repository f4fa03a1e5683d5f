#include "spec/spec_stats.h"

#include <fmt/format.h>

namespace cairn::spec {

double SpecStats::PerRoundMs(double total_seconds) const {
  return rounds > 0 ? 1e3 * total_seconds / static_cast<double>(rounds) : 0.0;
}

std::string SpecStats::Summary() const {
  std::string hist;
  for (size_t j = 0; j < accept_histogram.size(); ++j) {
    if (accept_histogram[j] == 0) continue;
    hist += fmt::format("{}{}:{}", hist.empty() ? "" : " ", j, accept_histogram[j]);
  }
  return fmt::format(
      "{}: {} tokens in {:.3f}s ({:.1f} tok/s), cap {}, {} rounds, {} target forwards, drafted {}, accepted {} "
      "({:.1f}%), {:.2f} committed/round, accept-length histogram [{}]; "
      "ms per round: draft {:.2f}, target {:.2f}",
      mode, committed, seconds, tokens_per_second(), cap, rounds, target_forwards, drafted, accepted,
      100.0 * acceptance_rate(), mean_committed_per_round(), hist, PerRoundMs(draft_seconds), PerRoundMs(verify_seconds));
}

}  // namespace cairn::spec
