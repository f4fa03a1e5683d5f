// Memo of rendered conversation prefixes across requests.
//
// Message starts need messages[0:i] rendered for every i (O(n^2) template work:
// ~17 ms CPU for a 30-message, 48 KB agent prompt). Agent clients resend the
// same conversation plus a message or two each turn, so the prefixes of the
// previous turn come back verbatim: a prefix render is a pure function of
// (template, tools, kwargs, messages[0:i]), keyed here by a chained 64-bit
// hash of exactly those. A collision could only misplace a message start
// (diagnostics and checkpoint placement), never change the prompt tokens.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace cairn::engine {

class PrefixRenderMemo {
 public:
  explicit PrefixRenderMemo(size_t capacity = 512) : capacity_(capacity) {}

  std::shared_ptr<const std::string> Find(uint64_t key);
  void Insert(uint64_t key, std::shared_ptr<const std::string> text);

 private:
  using Entry = std::pair<uint64_t, std::shared_ptr<const std::string>>;
  size_t capacity_;
  std::mutex mu_;
  std::list<Entry> lru_;  // most recent first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> index_;
};

// 64-bit FNV-1a of `bytes` continuing from `seed`.
uint64_t HashBytes(std::string_view bytes, uint64_t seed = 1469598103934665603ull);

}  // namespace cairn::engine
