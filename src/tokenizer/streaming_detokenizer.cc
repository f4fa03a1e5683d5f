#include "tokenizer/streaming_detokenizer.h"

#include "tokenizer/utf8.h"

namespace cairn::tokenizer {

std::string StreamingDetokenizer::Push(TokenId id) {
  std::string piece = tokenizer_.TokenToBytes(id, render_special_);
  if (piece.empty()) return {};
  if (at_start_) {
    if (tokenizer_.strips_leading_space() && piece[0] == ' ') piece.erase(0, 1);
    at_start_ = false;
  }
  pending_ += piece;
  const size_t hold = IncompleteUtf8Tail(pending_);
  const size_t ready = pending_.size() - hold;
  if (ready == 0) return {};
  std::string out = SanitizeUtf8(std::string_view(pending_).substr(0, ready));
  pending_.erase(0, ready);
  return out;
}

std::string StreamingDetokenizer::Flush() {
  std::string out = SanitizeUtf8(pending_);
  Reset();
  return out;
}

void StreamingDetokenizer::Reset() {
  pending_.clear();
  at_start_ = true;
}

}  // namespace cairn::tokenizer
