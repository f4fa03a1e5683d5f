#include "engine/prompt_message_starts.h"

#include <algorithm>

namespace cairn::engine {
namespace {

size_t CommonPrefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Longest common suffix of a and b, at most `cap` bytes.
size_t CommonSuffix(std::string_view a, std::string_view b, size_t cap) {
  const size_t n = std::min({a.size(), b.size(), cap});
  size_t i = 0;
  while (i < n && a[a.size() - 1 - i] == b[b.size() - 1 - i]) ++i;
  return i;
}

// The prefix render P diverged from `full` at `lcp`. P ends where message i
// starts; find x >= lcp where full[0:x] ends like P does (most common suffix
// bytes, then smallest x). Returns npos when nothing lines up.
size_t AlignPrefixEnd(std::string_view prefix, std::string_view full, size_t lcp) {
  constexpr size_t kMaxCompare = 256;  // bytes; bounds the work per candidate
  const size_t tail = prefix.size() - lcp;
  const size_t cap = std::min(tail, kMaxCompare);
  const size_t last = std::min(full.size(), lcp + tail);
  size_t best = std::string_view::npos;
  size_t best_len = 0;
  for (size_t x = lcp; x <= last; ++x) {
    const size_t len = CommonSuffix(prefix, full.substr(0, x), cap);
    if (len > best_len) {
      best_len = len;
      best = x;
    }
  }
  return best;
}

// Just after the first end-of-turn marker at or after `from` (and the newlines
// after it); npos when there is none.
size_t NextTurnStart(std::string_view full, size_t from, std::span<const std::string> turn_ends) {
  size_t best = std::string_view::npos;
  size_t best_end = 0;
  for (const std::string& marker : turn_ends) {
    const size_t pos = full.find(marker, from);
    if (pos < best) {
      best = pos;
      best_end = pos + marker.size();
    }
  }
  if (best == std::string_view::npos) return best;
  while (best_end < full.size() && full[best_end] == '\n') ++best_end;
  return best_end;
}

}  // namespace

std::vector<size_t> MessageByteStarts(size_t n_messages, std::string_view full,
                                      const std::function<std::string(size_t)>& render_prefix,
                                      std::span<const std::string> turn_ends) {
  std::vector<size_t> starts(n_messages, 0);
  for (size_t i = 1; i < n_messages; ++i) {
    const size_t prev = starts[i - 1];
    size_t start = std::string_view::npos;
    try {
      const std::string prefix = render_prefix(i);
      const size_t lcp = CommonPrefix(prefix, full);
      start = lcp == prefix.size() ? lcp : AlignPrefixEnd(prefix, full, lcp);
    } catch (const std::exception&) {
      // The template rejects this prefix: use the turn structure instead.
    }
    if (start == std::string_view::npos || start < prev) {
      start = NextTurnStart(full, prev, turn_ends);
    }
    if (start == std::string_view::npos || start < prev) start = prev;
    starts[i] = std::min(start, full.size());
  }
  return starts;
}

}  // namespace cairn::engine
