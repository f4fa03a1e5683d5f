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
  if (cache != nullptr) {
    out += "# HELP cairn_cache_hits_total Prefix-cache lookups by hit kind.\n# TYPE cairn_cache_hits_total counter\n";
    for (int k = 0; k < cache::kNumHitKinds; ++k) {
      out += fmt::format("cairn_cache_hits_total{{kind=\"{}\"}} {}\n", cache::ToString(static_cast<cache::HitKind>(k)),
                         cache->hits[k]);
    }
    counter("cairn_cache_reused_tokens_total", "Prompt tokens reused from the prefix cache.", cache->reused_tokens);
    out += "# HELP cairn_cache_evictions_total Prefix-cache evictions by reason.\n# TYPE cairn_cache_evictions_total counter\n";
    for (int k = 0; k < cache::kNumEvictReasons; ++k) {
      out += fmt::format("cairn_cache_evictions_total{{reason=\"{}\"}} {}\n",
                         cache::ToString(static_cast<cache::EvictReason>(k)), cache->evictions[k]);
    }
    out += fmt::format("# HELP cairn_cache_bytes Bytes held by the prefix cache.\n# TYPE cairn_cache_bytes gauge\n"
                       "cairn_cache_bytes {}\n", cache->bytes_held);
    out += fmt::format("# HELP cairn_cache_budget_bytes Prefix-cache budget.\n# TYPE cairn_cache_budget_bytes gauge\n"
                       "cairn_cache_budget_bytes {}\n", cache->budget_bytes);
    out += fmt::format("# HELP cairn_cache_entries Cached conversations/branches.\n# TYPE cairn_cache_entries gauge\n"
                       "cairn_cache_entries {}\n", cache->entries);
  }
  out += extra;
  return out;
}

}  // namespace cairn::engine
