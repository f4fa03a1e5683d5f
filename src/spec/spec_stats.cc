#include "spec/spec_stats.h"

#include <fmt/format.h>

namespace cairn::spec {

std::string SpecStats::Summary() const {
  std::string hist;
  for (size_t j = 0; j < accept_histogram.size(); ++j) {
    if (accept_histogram[j] == 0) continue;
    hist += fmt::format("{}{}:{}", hist.empty() ? "" : " ", j, accept_histogram[j]);
  }
  return fmt::format(
      "{}: {} tokens in {:.3f}s ({:.1f} tok/s), cap {}, {} rounds, {} target forwards, drafted {}, accepted {} "
      "({:.1f}%), {:.2f} committed/round, accept-length histogram [{}]",
      mode, committed, seconds, tokens_per_second(), cap, rounds, target_forwards, drafted, accepted,
      100.0 * acceptance_rate(), mean_committed_per_round(), hist);
}

}  // namespace cairn::spec
