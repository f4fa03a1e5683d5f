// A first-come-first-served lock: requests run in arrival order (a plain
// mutex lets a busy thread barge ahead and starve others).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace cairn::engine {

class FifoLock {
 public:
  void lock() {
    std::unique_lock<std::mutex> guard(mutex_);
    const uint64_t ticket = next_ticket_++;
    cv_.wait(guard, [&] { return serving_ == ticket; });
  }
  void unlock() {
    std::lock_guard<std::mutex> guard(mutex_);
    ++serving_;
    cv_.notify_all();
  }
  // Requests waiting or running.
  uint64_t depth() {
    std::lock_guard<std::mutex> guard(mutex_);
    return next_ticket_ - serving_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  uint64_t next_ticket_ = 0;
  uint64_t serving_ = 0;
};

}  // namespace cairn::engine
