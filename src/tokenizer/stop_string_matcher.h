// Detects stop strings in streamed text, even when split across tokens.
//
// Feed it text chunks as they are detokenized. It returns the part that is
// safe to show: everything except the longest suffix that could still grow
// into a stop string (a proper prefix of one). When a stop string completes,
// it returns the text before it and reports the stop; the stop string itself
// and anything after it are never returned. Memory is bounded by the longest
// stop string.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cairn::tokenizer {

class StopStringMatcher {
 public:
  // Empty stop strings are ignored.
  explicit StopStringMatcher(std::vector<std::string> stop_strings);

  struct Result {
    std::string text;       // safe to emit now
    bool stopped = false;   // a stop string completed
    int stop_index = -1;    // index into the constructor's list when stopped
  };

  // Feeds one chunk. After a stop, further pushes return nothing.
  Result Push(std::string_view chunk);
  // End of stream without a stop: returns the held-back text.
  std::string Flush();

  bool stopped() const { return stopped_; }
  size_t held_bytes() const { return held_.size(); }

 private:
  std::vector<std::string> stops_;
  std::vector<int> original_index_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace cairn::tokenizer
