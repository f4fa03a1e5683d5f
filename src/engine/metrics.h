// Engine metrics in Prometheus text format: request and token counters,
// TTFT and decode-speed histograms, prefix-cache counters.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cache/cache_types.h"
#include "spec/spec_stats.h"

namespace cairn::engine {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}
  void Observe(double v);
  // Appends the exposition lines for `name`.
  void Write(const std::string& name, const std::string& help, std::string* out) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // last bucket = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

struct RequestRecord {
  std::string finish_reason;
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t completion_tokens = 0;
  double ttft_seconds = 0;
  double decode_tokens_per_sec = 0;
  bool failed = false;
};

class EngineMetrics {
 public:
  EngineMetrics();
  void Record(const RequestRecord& r);
  // Speculative-decoding counters of one finished decode, by mode.
  void RecordSpec(const std::string& mode, const spec::SpecStats& stats);
  // Prometheus text; `cache` adds the prefix-cache counters.
  std::string Text(const cache::CacheStats* cache, const std::string& extra = "") const;

 private:
  mutable std::mutex mutex_;
  uint64_t requests_ = 0;
  uint64_t failed_ = 0;
  uint64_t cancelled_ = 0;
  uint64_t prompt_tokens_ = 0;
  uint64_t cached_tokens_ = 0;
  uint64_t generated_tokens_ = 0;
  Histogram ttft_;
  Histogram decode_speed_;
  struct SpecCounters {
    uint64_t requests = 0, rounds = 0, drafted = 0, accepted = 0, committed = 0, target_forwards = 0;
    std::vector<uint64_t> accepted_per_round;  // [j] = rounds that accepted exactly j drafts
  };
  std::map<std::string, SpecCounters> spec_;  // by mode
};

}  // namespace cairn::engine
