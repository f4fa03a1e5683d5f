// Per-request statistics of a decode (speculative or plain).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cairn::spec {

struct SpecStats {
  std::string mode;                       // "baseline", "lookup", "draft", "mtp"
  int cap = 0;                            // largest cap used (drafts per round)
  int64_t rounds = 0;                     // decode rounds (one target forward each)
  int64_t drafted = 0;                    // draft tokens verified
  int64_t accepted = 0;                   // draft tokens accepted
  int64_t committed = 0;                  // tokens emitted, incl. the one from the prefill logits
  int64_t target_forwards = 0;            // target Forward calls after prefill
  std::vector<int64_t> accept_histogram;  // [j] = rounds that accepted exactly j drafts
  double seconds = 0.0;                   // decode wall time (first token to last), excl. prefill
  double draft_seconds = 0.0;             // of which in Drafter::Propose
  double verify_seconds = 0.0;            // of which in target Forward passes (verify rounds and plain steps)

  // Tokens committed per round (each round commits accepted + 1).
  double mean_committed_per_round() const {
    return rounds > 0 ? static_cast<double>(committed - 1) / static_cast<double>(rounds) : 0.0;
  }
  // Fraction of verified drafts accepted.
  double acceptance_rate() const {
    return drafted > 0 ? static_cast<double>(accepted) / static_cast<double>(drafted) : 0.0;
  }
  double tokens_per_second() const { return seconds > 0.0 ? static_cast<double>(committed) / seconds : 0.0; }

  // Milliseconds per round of a part of `seconds`.
  double PerRoundMs(double total_seconds) const;

  // One line: mode, tok/s, rounds, drafted/accepted, mean committed, histogram.
  std::string Summary() const;
};

}  // namespace cairn::spec
