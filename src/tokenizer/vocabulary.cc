#include "tokenizer/vocabulary.h"

#include <array>

#include "core/error.h"

namespace cairn::tokenizer {

std::string_view ModelKindName(ModelKind kind) {
  return kind == ModelKind::kSpm ? "llama" : "gpt2";
}

ModelKind ParseModelKind(std::string_view name) {
  if (name == "gpt2") return ModelKind::kBpe;
  if (name == "llama") return ModelKind::kSpm;
  Fail("unsupported tokenizer model '{}' (supported: gpt2 = byte-level BPE, llama = SentencePiece)",
       name);
}

std::string_view SpacePrefixName(SpacePrefix rule) {
  switch (rule) {
    case SpacePrefix::kMetaspaceAlways: return "metaspace-always";
    case SpacePrefix::kMetaspaceFirst: return "metaspace-first";
    case SpacePrefix::kEveryPiece: break;
  }
  return "every-piece";
}

SpacePrefix ParseSpacePrefixName(std::string_view name) {
  if (name == "every-piece") return SpacePrefix::kEveryPiece;
  if (name == "metaspace-always") return SpacePrefix::kMetaspaceAlways;
  if (name == "metaspace-first") return SpacePrefix::kMetaspaceFirst;
  Fail("unsupported SentencePiece space prefix rule '{}' (supported: every-piece, "
       "metaspace-always, metaspace-first)",
       name);
}

std::string_view NormalizerName(Normalizer kind) {
  return kind == Normalizer::kNfc ? "nfc" : "none";
}

Normalizer ParseNormalizerName(std::string_view name) {
  if (name == "none") return Normalizer::kNone;
  if (name == "nfc") return Normalizer::kNfc;
  Fail("unsupported tokenizer normalizer '{}' (supported: none, nfc)", name);
}

TokenId Vocabulary::FindToken(std::string_view text) const {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == text) return static_cast<TokenId>(i);
  }
  return kNoToken;
}

namespace {

void CheckId(const Vocabulary& vocab, TokenId id, std::string_view what) {
  if (id != kNoToken && (id < 0 || static_cast<size_t>(id) >= vocab.size())) {
    Fail("tokenizer {} token id {} is out of range (vocabulary has {} tokens)", what, id,
         vocab.size());
  }
}

}  // namespace

void FinalizeVocabulary(Vocabulary& vocab) {
  if (vocab.tokens.empty()) Fail("tokenizer vocabulary is empty");
  if (vocab.tokens.size() > static_cast<size_t>(INT32_MAX)) Fail("tokenizer vocabulary too large");
  if (!vocab.types.empty() && vocab.types.size() != vocab.tokens.size()) {
    Fail("tokenizer token_type has {} entries but there are {} tokens", vocab.types.size(),
         vocab.tokens.size());
  }
  if (!vocab.scores.empty() && vocab.scores.size() != vocab.tokens.size()) {
    Fail("tokenizer scores has {} entries but there are {} tokens", vocab.scores.size(),
         vocab.tokens.size());
  }
  if (!vocab.attrs.empty() && vocab.attrs.size() != vocab.tokens.size()) {
    Fail("tokenizer token attributes have {} entries but there are {} tokens", vocab.attrs.size(),
         vocab.tokens.size());
  }
  for (size_t i = 0; i < vocab.attrs.size(); ++i) {
    if (vocab.attrs[i] > 15) Fail("tokenizer token {} has invalid attributes {}", i, vocab.attrs[i]);
  }
  for (size_t i = 0; i < vocab.types.size(); ++i) {
    const auto t = static_cast<int32_t>(vocab.types[i]);
    if (t < 0 || t > 6) Fail("tokenizer token {} has invalid token_type {}", i, t);
  }
  CheckId(vocab, vocab.bos, "bos");
  CheckId(vocab, vocab.eos, "eos");
  CheckId(vocab, vocab.eot, "eot");
  CheckId(vocab, vocab.eom, "eom");
  CheckId(vocab, vocab.unk, "unknown");
  CheckId(vocab, vocab.pad, "padding");
  CheckId(vocab, vocab.sep, "separator");

  // Models converted without an eot id still end turns with one of these
  // (llama.cpp's list; earlier entries are preferred).
  if (vocab.eot == kNoToken) {
    static constexpr std::array<std::string_view, 9> kEotTexts = {
        "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
        "<EOT>",      "_<EOT>",     "<｜end▁of▁sentence｜>", "<end_of_utterance>"};
    for (std::string_view text : kEotTexts) {
      vocab.eot = vocab.FindToken(text);
      if (vocab.eot != kNoToken) break;
    }
  }
}

}  // namespace cairn::tokenizer
