// SentencePiece-style BPE (tokenizer.ggml.model = "llama"): starting from one
// symbol per UTF-8 character, repeatedly merges the adjacent pair whose
// concatenation is the highest-scoring token (leftmost on ties). Symbols left
// that are not tokens fall back to <0xXX> byte tokens (or <unk>). A token
// scored -inf is never formed by merging (HF BPE imports: no merge makes it).
//
// The caller has already escaped spaces to "▁" and added the space prefix
// (tokenizer.cc), so this class sees exactly the text SentencePiece models see.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocabulary.h"

namespace cairn::tokenizer {

class SpmModel {
 public:
  explicit SpmModel(const Vocabulary& vocab);

  // Appends the ids for `text` (already escaped).
  void Encode(std::string_view text, std::vector<TokenId>& out) const;

  // Id of the <0xXX> token for byte `b`, or kNoToken.
  TokenId ByteToken(uint8_t b) const { return byte_token_[b]; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  TokenId Find(std::string_view text) const;

  std::unordered_map<std::string, TokenId, Hash, std::equal_to<>> by_text_;
  std::vector<float> scores_;  // [n_vocab]; all zero when the vocabulary has none
  std::array<TokenId, 256> byte_token_{};
  TokenId unk_ = kNoToken;
};

// "<0xAB>" -> 0xAB; -1 when `text` is not a byte token name.
int ParseByteTokenName(std::string_view text);

}  // namespace cairn::tokenizer
