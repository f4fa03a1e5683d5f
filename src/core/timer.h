// Monotonic wall-clock helpers (seconds as double).
#pragma once

#include <chrono>

namespace cairn {

inline double NowSeconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

class Stopwatch {
 public:
  Stopwatch() : start_(NowSeconds()) {}
  double Seconds() const { return NowSeconds() - start_; }
  void Reset() { start_ = NowSeconds(); }

 private:
  double start_;
};

}  // namespace cairn
