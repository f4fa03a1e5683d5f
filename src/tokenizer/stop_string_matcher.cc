#include "tokenizer/stop_string_matcher.h"

#include <algorithm>

namespace cairn::tokenizer {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stop_strings) {
  for (size_t i = 0; i < stop_strings.size(); ++i) {
    if (stop_strings[i].empty()) continue;
    stops_.push_back(std::move(stop_strings[i]));
    original_index_.push_back(static_cast<int>(i));
  }
}

StopStringMatcher::Result StopStringMatcher::Push(std::string_view chunk) {
  Result result;
  if (stopped_) {
    result.stopped = true;
    return result;
  }
  held_.append(chunk);

  // Earliest complete occurrence of any stop string wins.
  size_t best_pos = std::string::npos;
  int best = -1;
  for (size_t i = 0; i < stops_.size(); ++i) {
    const size_t pos = held_.find(stops_[i]);
    if (pos < best_pos) {
      best_pos = pos;
      best = static_cast<int>(i);
    }
  }
  if (best >= 0) {
    result.text = held_.substr(0, best_pos);
    result.stopped = true;
    result.stop_index = original_index_[static_cast<size_t>(best)];
    stopped_ = true;
    held_.clear();
    return result;
  }

  // Hold back the longest suffix that is a proper prefix of a stop string.
  // Bounded: suffixes longer than the longest stop string cannot qualify.
  size_t keep = 0;
  for (const std::string& stop : stops_) {
    const size_t max_len = std::min(stop.size() - 1, held_.size());
    for (size_t len = max_len; len > keep; --len) {
      if (std::string_view(held_).substr(held_.size() - len) ==
          std::string_view(stop).substr(0, len)) {
        keep = len;
        break;
      }
    }
  }
  result.text = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return result;
}

std::string StopStringMatcher::Flush() {
  std::string out = stopped_ ? std::string() : std::move(held_);
  held_.clear();
  return out;
}

}  // namespace cairn::tokenizer
