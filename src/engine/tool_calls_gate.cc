#include "engine/tool_calls_gate.h"

#include <algorithm>

#include "engine/tool_calls.h"

namespace cairn::engine {

ToolCallGate::ToolCallGate() : ToolCallGate(ToolCallOpeners()) {}

ToolCallGate::ToolCallGate(std::vector<std::string> openers) : openers_(std::move(openers)) {}

std::string ToolCallGate::Feed(std::string_view text) {
  held_.append(text);
  if (triggered_) return {};
  size_t first = std::string::npos;
  for (const std::string& opener : openers_) first = std::min(first, held_.find(opener));
  if (first != std::string::npos) {
    triggered_ = true;
    std::string out = held_.substr(0, first);
    held_.erase(0, first);
    return out;
  }
  // Hold back the longest suffix that could still become an opener.
  size_t keep = 0;
  for (const std::string& opener : openers_) {
    for (size_t k = std::min(held_.size(), opener.size() - 1); k > keep; --k) {
      if (held_.compare(held_.size() - k, k, opener, 0, k) == 0) {
        keep = k;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string ToolCallGate::Finish() {
  if (triggered_) return {};
  std::string out = std::move(held_);
  held_.clear();
  return out;
}

}  // namespace cairn::engine
