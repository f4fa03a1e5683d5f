// Exact byte accounting for shared objects: each distinct object (KV block or
// recurrent snapshot) counts once however many trie nodes reference it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "core/error.h"

namespace cairn::cache {

class ByteLedger {
 public:
  // Adds one reference to `object` of `bytes`; true when it was not held yet.
  bool Add(const void* object, size_t bytes) {
    Entry& e = entries_[object];
    if (e.refs++ == 0) {
      e.bytes = bytes;
      total_ += bytes;
      return true;
    }
    return false;
  }
  // Drops one reference; returns the bytes released (0 while still referenced).
  size_t Remove(const void* object) {
    auto it = entries_.find(object);
    CAIRN_CHECK(it != entries_.end());
    if (--it->second.refs > 0) return 0;
    const size_t bytes = it->second.bytes;
    total_ -= bytes;
    entries_.erase(it);
    return bytes;
  }
  bool Holds(const void* object) const { return entries_.count(object) != 0; }
  // References held on `object` (0 when absent).
  int64_t Refs(const void* object) const {
    auto it = entries_.find(object);
    return it == entries_.end() ? 0 : it->second.refs;
  }
  size_t total() const { return total_; }
  size_t objects() const { return entries_.size(); }
  void Clear() {
    entries_.clear();
    total_ = 0;
  }

 private:
  struct Entry {
    size_t bytes = 0;
    int64_t refs = 0;
  };
  std::unordered_map<const void*, Entry> entries_;
  size_t total_ = 0;
};

}  // namespace cairn::cache
