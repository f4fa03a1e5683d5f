#include "tokenizer/special_tokens.h"

#include <algorithm>

namespace cairn::tokenizer {

void SpecialTokenMatcher::Add(std::string_view text, TokenId id, bool control) {
  if (text.empty()) return;
  const auto first = static_cast<uint8_t>(text[0]);
  auto& bucket = by_first_byte_[first];
  for (const Entry& e : bucket) {
    if (e.text == text) return;  // first id registered for a text wins
  }
  bucket.push_back(Entry{std::string(text), id, control});
  std::stable_sort(bucket.begin(), bucket.end(),
                   [](const Entry& a, const Entry& b) { return a.text.size() > b.text.size(); });
  first_byte_[first] = true;
  ++count_;
}

bool SpecialTokenMatcher::FindNext(std::string_view text, size_t from, Match& match,
                                   bool include_control) const {
  if (count_ == 0) return false;
  for (size_t pos = from; pos < text.size(); ++pos) {
    const auto b = static_cast<uint8_t>(text[pos]);
    if (!first_byte_[b]) continue;
    const std::string_view rest = text.substr(pos);
    for (const Entry& e : by_first_byte_[b]) {
      if ((include_control || !e.control) && rest.starts_with(e.text)) {
        match = Match{pos, e.text.size(), e.id};
        return true;
      }
    }
  }
  return false;
}

}  // namespace cairn::tokenizer
