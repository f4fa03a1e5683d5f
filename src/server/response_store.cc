#include "server/response_store.h"

namespace cairn::server {

void ResponseStore::Put(const std::string& id, engine::Json conversation) {
  const size_t bytes = conversation.dump(-1, ' ', false, engine::Json::error_handler_t::replace).size() + id.size();
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(id); it != index_.end()) {
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
  }
  if (bytes > max_bytes_ || max_entries_ == 0) return;  // could never fit
  lru_.push_front(Entry{id, std::move(conversation), bytes});
  index_[id] = lru_.begin();
  bytes_ += bytes;
  EvictOverBudget();
}

std::optional<engine::Json> ResponseStore::Get(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->conversation;
}

size_t ResponseStore::size() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}

size_t ResponseStore::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

void ResponseStore::EvictOverBudget() {
  while (!lru_.empty() && (lru_.size() > max_entries_ || bytes_ > max_bytes_)) {
    bytes_ -= lru_.back().bytes;
    index_.erase(lru_.back().id);
    lru_.pop_back();
  }
}

}  // namespace cairn::server
