// Bounded, thread-safe cache of pre-tokenized word -> token ids.
//
// Real text repeats words constantly ("the", " {", "\n    "), so caching the
// BPE result of each word skips most merge work. The bound is a simple one:
// when the cache holds `capacity` words it is cleared and refilled, which keeps
// memory fixed (about capacity * ~64 bytes) without LRU bookkeeping on every
// hit; the working set of a prompt refills within a few kilobytes of text.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocabulary.h"

namespace cairn::tokenizer {

class WordCache {
 public:
  explicit WordCache(size_t capacity) : capacity_(capacity) {}

  // Appends the cached ids of `word` to `out` and returns true on a hit.
  bool Lookup(std::string_view word, std::vector<TokenId>& out) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = map_.find(word);
    if (it == map_.end()) return false;
    out.insert(out.end(), it->second.begin(), it->second.end());
    return true;
  }

  void Insert(std::string_view word, const TokenId* ids, size_t count) {
    if (capacity_ == 0 || word.size() > kMaxWordBytes) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (map_.size() >= capacity_) map_.clear();
    map_.try_emplace(std::string(word), ids, ids + count);
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
  }

 private:
  // Longer words are rare (long runs, base64) and would bloat the cache.
  static constexpr size_t kMaxWordBytes = 256;

  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::vector<TokenId>, Hash, std::equal_to<>> map_;
};

}  // namespace cairn::tokenizer
