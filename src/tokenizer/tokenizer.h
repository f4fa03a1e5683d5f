// Tokenizer: text <-> token ids for byte-level BPE ("gpt2") and SentencePiece
// BPE ("llama") vocabularies.
//
// Encode pipeline (Hugging Face's order):
//   text -> split out added tokens matched in the raw text (special_tokens.h)
//        -> each fragment: normalize (NFC when the vocabulary says so)
//           -> split out added tokens flagged "normalized"
//           -> each piece: BPE: regex pre-tokenize -> per-word merges
//                          SPM: space prefix + "▁" escaping -> score merges
// Added tokens honour HF's lstrip/rstrip (the match swallows the whitespace on
// that side) and single_word (no match when a word character touches it).
// parse_special follows llama.cpp and HF (`encode_special_tokens`): control
// tokens (<|im_start|>) are recognised in text only with parse_special=true;
// user-defined added tokens (<think>) are recognised always, as both do.
//
// All methods are const and thread-safe (the BPE word cache locks internally).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocabulary.h"

namespace cairn::tokenizer {

class BpeModel;
class SpmModel;
class PreTokenizer;
class SpecialTokenMatcher;

class Tokenizer {
 public:
  // Validates the vocabulary (FinalizeVocabulary) and builds the tables.
  // Throws cairn::Error on bad metadata (sizes, ids, unknown pre-tokenizer).
  explicit Tokenizer(Vocabulary vocab);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  const Vocabulary& vocab() const { return vocab_; }
  size_t size() const { return vocab_.size(); }

  // Tokenizes `text` (any bytes; no BOS/EOS).
  std::vector<TokenId> Encode(std::string_view text, bool parse_special = false) const;
  // Same, adding BOS/EOS when `add_special` and the vocabulary asks for them
  // (add_bos / add_eos), as for a fresh prompt.
  std::vector<TokenId> Encode(std::string_view text, bool parse_special, bool add_special) const;
  // Appends to `out` (reuse a buffer in hot paths).
  void EncodeAppend(std::string_view text, bool parse_special, std::vector<TokenId>& out) const;

  // The text the models see: fragments normalized, added tokens as their
  // text, whitespace swallowed by lstrip/rstrip tokens dropped. For byte-level
  // BPE, DecodeBytes(Encode(t, p), true) == NormalizedText(t, p).
  std::string NormalizedText(std::string_view text, bool parse_special = false) const;

  // Raw bytes a token stands for: byte-level alphabet decoded, "▁" -> " ",
  // <0xXX> -> the byte. Control tokens give their text when `render_special`,
  // otherwise nothing. Out-of-range ids throw cairn::Error.
  std::string TokenToBytes(TokenId id, bool render_special = false) const;

  // Concatenated token bytes (may be invalid UTF-8 when cut mid-character).
  // SPM vocabularies with a space prefix lose the leading space, as HF does.
  std::string DecodeBytes(std::span<const TokenId> ids, bool render_special = false) const;
  // DecodeBytes with ill-formed UTF-8 replaced by U+FFFD.
  std::string Decode(std::span<const TokenId> ids, bool render_special = false) const;

  TokenId bos() const { return vocab_.bos; }
  TokenId eos() const { return vocab_.eos; }
  TokenId eot() const { return vocab_.eot; }
  TokenId pad() const { return vocab_.pad; }
  bool add_bos() const { return vocab_.add_bos; }
  TokenType type(TokenId id) const;
  // Control tokens (and unknown/unused ones): never shown as text by default.
  bool IsControl(TokenId id) const;
  // End-of-generation: eos, eot, eom, and control tokens with well-known
  // end texts (<|im_end|>, <|endoftext|>, <|eot_id|>, ...).
  bool IsEndOfGeneration(TokenId id) const;
  // Whether the SPM decoder strips the space prefix from the first piece.
  bool strips_leading_space() const { return vocab_.model == ModelKind::kSpm && vocab_.add_space_prefix; }

 private:
  // `at_start`: the piece begins at offset 0 of the input (SPM prefix rules).
  void EncodeFragment(std::string_view text, bool at_start, std::vector<TokenId>& out) const;
  // Splits `text` at added tokens (both stages, normalizing in between):
  // on_text(piece, at_start) for text to tokenize, on_token(id) for added tokens.
  template <typename OnText, typename OnToken>
  void SplitText(std::string_view text, bool parse_special, OnText&& on_text,
                 OnToken&& on_token) const;
  void CheckId(TokenId id) const;

  Vocabulary vocab_;
  std::vector<std::string> token_bytes_;  // [n_vocab] raw bytes of each token
  std::vector<bool> end_of_generation_;   // [n_vocab]
  std::unique_ptr<PreTokenizer> pre_tokenizer_;  // BPE only
  std::unique_ptr<BpeModel> bpe_;
  std::unique_ptr<SpmModel> spm_;
  // Added tokens (user-defined; control ones flagged): matched in the raw
  // text, and (normalized content) in the normalized text.
  std::unique_ptr<SpecialTokenMatcher> raw_tokens_;
  std::unique_ptr<SpecialTokenMatcher> normalized_tokens_;
};

}  // namespace cairn::tokenizer
