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

// Text normalization applied to text between added tokens before
// tokenization (Hugging Face tokenizer.json "normalizer"). llama.cpp GGUF files
// have none; Cairn's converter stores it as cairn.tokenizer.normalizer.
enum class Normalizer {
  kNone,
  kNfc,  // Unicode NFC (Qwen2/Qwen3 tokenizer.json)
};

// Hugging Face added-token options (tokenizer.json added_tokens[i]), as bits
// of Vocabulary::attrs. llama.cpp GGUF files have none (all zero).
enum TokenAttr : uint8_t {
  kAttrLstrip = 1,      // the match also takes the whitespace on its left
  kAttrRstrip = 2,      // ... and on its right
  kAttrSingleWord = 4,  // only matches when no word character touches it
  kAttrNormalized = 8,  // matched in the normalized text (after the normalizer)
};

// SPM: which text pieces (the text start, and text after each added token) get
// the "▁" space prefix when add_space_prefix is set. llama.cpp GGUF files use
// kEveryPiece; Cairn's converter stores the others as cairn.tokenizer.space_prefix.
enum class SpacePrefix : uint8_t {
  kEveryPiece,       // llama.cpp, and HF's Prepend("▁") normalizer
  kMetaspaceAlways,  // HF Metaspace "always": every piece not starting with a space
  kMetaspaceFirst,   // HF Metaspace "first": only a piece at text offset 0, ditto
};

std::string_view ModelKindName(ModelKind kind);  // "gpt2" / "llama"
std::string_view SpacePrefixName(SpacePrefix rule);  // "every-piece" / "metaspace-always" / ...
// Parses a SpacePrefixName; throws cairn::Error for unknown names.
SpacePrefix ParseSpacePrefixName(std::string_view name);
std::string_view NormalizerName(Normalizer kind);  // "none" / "nfc"
// Parses a NormalizerName; throws cairn::Error for unknown names.
Normalizer ParseNormalizerName(std::string_view name);
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
  SpacePrefix space_prefix = SpacePrefix::kEveryPiece;  // SPM: where (see SpacePrefix)
  bool ignore_merges = false;     // BPE: a word that is a token is emitted whole
  Normalizer normalizer = Normalizer::kNone;
  std::vector<uint8_t> attrs;     // [n_vocab] TokenAttr bits, or empty (= all zero)

  std::string chat_template;  // tokenizer.chat_template (may be empty)

  size_t size() const { return tokens.size(); }
  TokenType type(TokenId id) const {
    return types.empty() ? TokenType::kNormal : types[static_cast<size_t>(id)];
  }
  uint8_t attr(TokenId id) const { return attrs.empty() ? 0 : attrs[static_cast<size_t>(id)]; }
  // Finds a token by its exact stored text (linear; for loaders, not hot paths).
  TokenId FindToken(std::string_view text) const;
};

// Validates sizes and ids (throws cairn::Error naming the problem) and applies
// the fallbacks llama.cpp applies to incomplete metadata: an end-of-turn id
// found by well-known token text when none is given.
void FinalizeVocabulary(Vocabulary& vocab);

}  // namespace cairn::tokenizer
