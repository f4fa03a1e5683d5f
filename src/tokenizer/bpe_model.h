// Byte-level BPE (tokenizer.ggml.model = "gpt2"): merges pairs of adjacent
// symbols by merge rank until no ranked pair remains.
//
// Works on token ids over raw bytes: each word starts as one symbol per byte
// (the single-byte tokens) and a merge (left id, right id) -> (rank, result id)
// table drives the loop, so no strings are built while merging. Symbols form a
// doubly linked list and candidate pairs a min-heap ordered by (rank, position)
// — lowest rank first, leftmost on ties, as HF tokenizers and llama.cpp do —
// giving O(n log n) per word. Results are cached per word (word_cache.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocabulary.h"
#include "tokenizer/word_cache.h"

namespace cairn::tokenizer {

class BpeModel {
 public:
  // `token_bytes[id]` is the raw byte string of each token (byte-level decoded).
  // Merges whose parts or result are not tokens are ignored.
  BpeModel(const Vocabulary& vocab, const std::vector<std::string>& token_bytes);

  // Appends the ids of one pre-tokenized word (raw bytes, non-empty).
  void EncodeWord(std::string_view word, std::vector<TokenId>& out) const;

  size_t merge_count() const { return merge_count_; }
  const WordCache& cache() const { return cache_; }

 private:
  struct Merge {
    uint64_t key = kEmptyKey;  // (left << 32) | right
    int32_t rank = 0;
    TokenId result = kNoToken;
  };
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};

  const Merge* FindMerge(TokenId left, TokenId right) const;
  void InsertMerge(TokenId left, TokenId right, int32_t rank, TokenId result);
  void MergeWord(std::string_view word, std::vector<TokenId>& out) const;

  std::array<TokenId, 256> byte_token_{};  // single-byte token per byte value
  std::vector<Merge> table_;               // open addressing, power-of-two size
  size_t merge_count_ = 0;
  bool ignore_merges_ = false;
  std::unordered_map<std::string, TokenId> whole_word_;  // only with ignore_merges
  mutable WordCache cache_{1 << 16};
};

}  // namespace cairn::tokenizer
