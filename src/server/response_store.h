// The bounded server-side store behind the Responses API's `store` and
// `previous_response_id`: response id -> the whole conversation that response
// ended (engine-shaped messages, its own answer last), so a follow-up request
// may send only its new items. Least recently used entries go first once
// either bound is reached. Thread-safe.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "engine/service.h"

namespace cairn::server {

class ResponseStore {
 public:
  ResponseStore(size_t max_entries, size_t max_bytes) : max_entries_(max_entries), max_bytes_(max_bytes) {}

  void Put(const std::string& id, engine::Json conversation);
  // The conversation of `id` (and marks it recently used), or nothing.
  std::optional<engine::Json> Get(const std::string& id);

  size_t size() const;
  size_t bytes() const;

 private:
  struct Entry {
    std::string id;
    engine::Json conversation;
    size_t bytes = 0;
  };
  void EvictOverBudget();  // with mutex_ held

  const size_t max_entries_;
  const size_t max_bytes_;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  size_t bytes_ = 0;
};

}  // namespace cairn::server
