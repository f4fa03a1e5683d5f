// Finds added/special token texts inside input text.
//
// Matching is leftmost-longest (what HF tokenizers' added-vocabulary matcher
// does): scan for the first position where any token text starts, and take the
// longest token that matches there. A first-byte bitmap makes the scan cheap
// over ordinary text. Control tokens are registered with a flag so one matcher
// serves both parse_special modes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocabulary.h"

namespace cairn::tokenizer {

class SpecialTokenMatcher {
 public:
  struct Match {
    size_t pos = 0;
    size_t size = 0;
    TokenId id = kNoToken;
  };

  // Registers a token text (empty texts are ignored). `control` tokens are
  // only found when FindNext is asked to include them.
  void Add(std::string_view text, TokenId id, bool control = false);
  bool empty() const { return count_ == 0; }

  // Finds the leftmost match at or after `from`; false when there is none.
  bool FindNext(std::string_view text, size_t from, Match& match,
                bool include_control = true) const;

 private:
  struct Entry {
    std::string text;
    TokenId id;
    bool control;
  };
  std::array<bool, 256> first_byte_{};
  std::array<std::vector<Entry>, 256> by_first_byte_;  // each sorted longest first
  size_t count_ = 0;
};

}  // namespace cairn::tokenizer
