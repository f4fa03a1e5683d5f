// The plain description of a tokenizer: everything needed to build one, with
// no behaviour attached. Filled from GGUF metadata (gguf_vocab.h) or from a
// Hugging Face tokenizer.json (hf_import.h); Tokenizer (tokenizer.h) is built
// from it. Field meanings follow the `tokenizer.ggml.*` GGUF keys
// (../shared/reference/llama-cpp-notes.md §4.3).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::tokenizer {

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

// tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,      // special tokens (<|im_end|>); text only with parse_special
  kUserDefined = 4,  // added non-special tokens (<think>); always matched as text
  kUnused = 5,
  kByte = 6,         // SentencePiece byte-fallback tokens <0xXX>
};

// tokenizer.ggml.model.
enum class ModelKind {
  kBpe,  // "gpt2": byte-level BPE with merges
  kSpm,  // "llama": SentencePiece BPE with scores and byte fallback
};

std::string_view ModelKindName(ModelKind kind);  // "gpt2" / "llama"
// Parses tokenizer.ggml.model; throws cairn::Error for unsupported models.
ModelKind ParseModelKind(std::string_view name);

struct Vocabulary {
  ModelKind model = ModelKind::kBpe;
  std::string pre = "default";       // tokenizer.ggml.pre (pre-tokenizer regex id)
  std::vector<std::string> tokens;   // [n_vocab] token text as stored in GGUF
  std::vector<TokenType> types;      // [n_vocab] or empty (= all normal)
  std::vector<float> scores;         // [n_vocab] SPM scores, or empty
  std::vector<std::string> merges;   // BPE merges "left right", rank = index

  TokenId bos = kNoToken;
  TokenId eos = kNoToken;
  TokenId eot = kNoToken;   // end of turn (<|im_end|>, <|eot_id|>)
  TokenId eom = kNoToken;   // end of message (tool call pause)
  TokenId unk = kNoToken;
  TokenId pad = kNoToken;
  TokenId sep = kNoToken;

  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // SPM: prepend "▁" to the text
  bool ignore_merges = false;     // BPE: a word that is a token is emitted whole

  std::string chat_template;  // tokenizer.chat_template (may be empty)

  size_t size() const { return tokens.size(); }
  TokenType type(TokenId id) const {
    return types.empty() ? TokenType::kNormal : types[static_cast<size_t>(id)];
  }
  // Finds a token by its exact stored text (linear; for loaders, not hot paths).
  TokenId FindToken(std::string_view text) const;
};

// Validates sizes and ids (throws cairn::Error naming the problem) and applies
// the fallbacks llama.cpp applies to incomplete metadata: an end-of-turn id
// found by well-known token text when none is given.
void FinalizeVocabulary(Vocabulary& vocab);

}  // namespace cairn::tokenizer
