// Incremental detokenization for streamed generation.
//
// Tokens do not align with characters: one emoji may span three byte tokens.
// Push() appends a token's bytes and returns only text that is complete UTF-8,
// holding back a trailing sequence that is valid so far but unfinished. Bytes
// that can never become valid (a stray continuation byte, a lead byte followed
// by ASCII) are replaced by U+FFFD as soon as that is certain; Flush() ends the
// stream and replaces a still-unfinished tail by U+FFFD. Concatenating all
// Push() results and Flush() equals Tokenizer::Decode of the same ids.
#pragma once

#include <string>

#include "tokenizer/tokenizer.h"

namespace cairn::tokenizer {

class StreamingDetokenizer {
 public:
  // `tokenizer` must outlive this object. Control tokens produce text only
  // when `render_special`.
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool render_special = false)
      : tokenizer_(tokenizer), render_special_(render_special) {}

  // Returns the newly completed text (possibly empty).
  std::string Push(TokenId id);
  // Returns the held-back tail (U+FFFD for unfinished bytes) and resets.
  std::string Flush();
  // Forgets everything (new stream).
  void Reset();

  // Bytes currently held back (0..3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer& tokenizer_;
  bool render_special_;
  bool at_start_ = true;  // SPM: the first piece loses its space prefix
  std::string pending_;
};

}  // namespace cairn::tokenizer
