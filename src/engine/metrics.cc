#include "engine/metrics.h"

#include <fmt/format.h>

namespace cairn::engine {

void Histogram::Observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += v;
  ++count_;
}

void Histogram::Write(const std::string& name, const std::string& help, std::string* out) const {
  *out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    *out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cumulative);
  }
  cumulative += counts_.back();
  *out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, cumulative, name, sum_, name,
                      count_);
}

EngineMetrics::EngineMetrics()
    : ttft_({0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120}),
      decode_speed_({1, 2, 5, 10, 20, 50, 100, 200, 500}) {}

void EngineMetrics::Record(const RequestRecord& r) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_;
  if (r.failed) {
    ++failed_;
    return;
  }
  if (r.finish_reason == "cancelled") ++cancelled_;
  prompt_tokens_ += static_cast<uint64_t>(r.prompt_tokens);
  cached_tokens_ += static_cast<uint64_t>(r.cached_tokens);
  generated_tokens_ += static_cast<uint64_t>(r.completion_tokens);
  ttft_.Observe(r.ttft_seconds);
  if (r.completion_tokens > 1) decode_speed_.Observe(r.decode_tokens_per_sec);
}

void EngineMetrics::RecordSpec(const std::string& mode, const spec::SpecStats& stats) {
  std::lock_guard<std::mutex> lock(mutex_);
  SpecCounters& c = spec_[mode];
  ++c.requests;
  c.rounds += static_cast<uint64_t>(stats.rounds);
  c.drafted += static_cast<uint64_t>(stats.drafted);
  c.accepted += static_cast<uint64_t>(stats.accepted);
  c.committed += static_cast<uint64_t>(stats.committed);
  c.target_forwards += static_cast<uint64_t>(stats.target_forwards);
  if (c.accepted_per_round.size() < stats.accept_histogram.size()) {
    c.accepted_per_round.resize(stats.accept_histogram.size(), 0);
  }
  for (size_t j = 0; j < stats.accept_histogram.size(); ++j) {
    c.accepted_per_round[j] += static_cast<uint64_t>(stats.accept_histogram[j]);
  }
}

std::string EngineMetrics::Text(const cache::CacheStats* cache, const std::string& extra) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  auto counter = [&](const char* name, const char* help, uint64_t v) {
    out += fmt::format("# HELP {} {}\n# TYPE {} counter\n{} {}\n", name, help, name, name, v);
  };
  counter("cairn_requests_total", "Generation requests finished (any outcome).", requests_);
  counter("cairn_requests_failed_total", "Generation requests that failed.", failed_);
  counter("cairn_requests_cancelled_total", "Generation requests stopped by the client.", cancelled_);
  counter("cairn_prompt_tokens_total", "Prompt tokens of finished requests.", prompt_tokens_);
  counter("cairn_cached_tokens_total", "Prompt tokens served by the prefix cache.", cached_tokens_);
  counter("cairn_generated_tokens_total", "Tokens generated.", generated_tokens_);
  ttft_.Write("cairn_ttft_seconds", "Time to first token (queue excluded).", &out);
  decode_speed_.Write("cairn_decode_tokens_per_second", "Decode speed per request.", &out);
  if (!spec_.empty()) {
    auto labelled = [&](const char* name, const char* help, uint64_t SpecCounters::*field) {
      out += fmt::format("# HELP {} {}\n# TYPE {} counter\n", name, help, name);
      for (const auto& [mode, c] : spec_) out += fmt::format("{}{{mode=\"{}\"}} {}\n", name, mode, c.*field);
    };
    labelled("cairn_spec_requests_total", "Decodes by speculative mode (baseline = plain decoding).",
             &SpecCounters::requests);
    labelled("cairn_spec_rounds_total", "Decode rounds (one target forward each).", &SpecCounters::rounds);
    labelled("cairn_spec_drafted_tokens_total", "Draft tokens verified.", &SpecCounters::drafted);
    labelled("cairn_spec_accepted_tokens_total", "Draft tokens accepted.", &SpecCounters::accepted);
    labelled("cairn_spec_committed_tokens_total", "Tokens emitted by speculative or plain decoding.",
             &SpecCounters::committed);
    // Acceptance histogram: drafts accepted per round (le = j accepted).
    const char* h = "cairn_spec_accepted_per_round";
    out += fmt::format("# HELP {} Draft tokens accepted per round.\n# TYPE {} histogram\n", h, h);
    for (const auto& [mode, c] : spec_) {
      uint64_t cumulative = 0, sum = 0, count = 0;
      for (size_t j = 0; j < c.accepted_per_round.size(); ++j) {
        cumulative += c.accepted_per_round[j];
        sum += j * c.accepted_per_round[j];
        count += c.accepted_per_round[j];
        out += fmt::format("{}_bucket{{mode=\"{}\",le=\"{}\"}} {}\n", h, mode, j, cumulative);
      }
      out += fmt::format("{}_bucket{{mode=\"{}\",le=\"+Inf\"}} {}\n{}_sum{{mode=\"{}\"}} {}\n"
                         "{}_count{{mode=\"{}\"}} {}\n", h, mode, cumulative, h, mode, sum, h, mode, count);
    }
  }
  if (cache != nullptr) {
    out += "# HELP cairn_cache_hits_total Prefix-cache lookups by hit kind.\n# TYPE cairn_cache_hits_total counter\n";
    for (int k = 0; k < cache::kNumHitKinds; ++k) {
      out += fmt::format("cairn_cache_hits_total{{kind=\"{}\"}} {}\n", cache::ToString(static_cast<cache::HitKind>(k)),
                         cache->hits[k]);
    }
    counter("cairn_cache_reused_tokens_total", "Prompt tokens reused from the prefix cache.", cache->reused_tokens);
    counter("cairn_cache_inserts_total", "Prefix-cache inserts.", cache->inserts);
    counter("cairn_cache_short_prompt_refusals_total", "Inserts refused by the short-prompt guard.",
            cache->short_prompt_refusals);
    out += "# HELP cairn_cache_evictions_total Prefix-cache evictions by reason.\n# TYPE cairn_cache_evictions_total counter\n";
    for (int k = 0; k < cache::kNumEvictReasons; ++k) {
      out += fmt::format("cairn_cache_evictions_total{{reason=\"{}\"}} {}\n",
                         cache::ToString(static_cast<cache::EvictReason>(k)), cache->evictions[k]);
    }
    out += fmt::format("# HELP cairn_cache_bytes Bytes held by the prefix cache.\n# TYPE cairn_cache_bytes gauge\n"
                       "cairn_cache_bytes {}\n", cache->bytes_held);
    out += fmt::format("# HELP cairn_cache_budget_bytes Prefix-cache budget.\n# TYPE cairn_cache_budget_bytes gauge\n"
                       "cairn_cache_budget_bytes {}\n", cache->budget_bytes);
    out += fmt::format("# HELP cairn_cache_checkpoint_bytes Bytes of recurrent checkpoints (snapshots and reply-tail "
                       "logs), part of cairn_cache_bytes.\n# TYPE cairn_cache_checkpoint_bytes gauge\n"
                       "cairn_cache_checkpoint_bytes {}\n", cache->checkpoint_bytes);
    out += fmt::format("# HELP cairn_cache_checkpoint_budget_bytes Share of the budget checkpoints may hold.\n"
                       "# TYPE cairn_cache_checkpoint_budget_bytes gauge\ncairn_cache_checkpoint_budget_bytes {}\n",
                       cache->checkpoint_budget_bytes);
    out += fmt::format("# HELP cairn_cache_entries Cached conversations/branches.\n# TYPE cairn_cache_entries gauge\n"
                       "cairn_cache_entries {}\n", cache->entries);
  }
  out += extra;
  return out;
}

}  // namespace cairn::engine
