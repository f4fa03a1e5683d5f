#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <array>

#include "core/error.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm_model.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace cairn::tokenizer {
namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // "▁" U+2581

// Replaces every "▁" by a space.
std::string UnescapeSpm(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    if (text.substr(pos, 3) == kSpmSpace) {
      out.push_back(' ');
      pos += 3;
    } else {
      out.push_back(text[pos++]);
    }
  }
  return out;
}

bool IsAddedTokenType(TokenType type) {
  return type == TokenType::kControl || type == TokenType::kUserDefined ||
         type == TokenType::kUnknown;
}

// One pass of HF's added-token split (AddedVocabulary::find_matches) over
// `text`: leftmost-longest matches; a single_word match touching a word
// character is skipped (the search resumes after it); lstrip/rstrip widen the
// match over adjacent whitespace, never back into the previous match.
template <typename OnText, typename OnToken>
void SplitAtAddedTokens(const SpecialTokenMatcher& matcher, const Vocabulary& vocab,
                        std::string_view text, bool parse_special, OnText&& on_text,
                        OnToken&& on_token) {
  size_t done = 0;  // end of the last emitted piece
  size_t from = 0;  // where the next search starts
  SpecialTokenMatcher::Match m;
  while (from < text.size() && matcher.FindNext(text, from, m, parse_special)) {
    size_t start = m.pos;
    size_t stop = m.pos + m.size;
    from = stop;
    const uint8_t attr = vocab.attr(m.id);
    if ((attr & kAttrSingleWord) != 0 &&
        (EndsWithWordChar(text.substr(0, start)) || StartsWithWordChar(text.substr(stop)))) {
      continue;
    }
    if ((attr & kAttrLstrip) != 0) {
      start = std::max(done, start - WhiteSpaceSuffixLength(text.substr(0, start)));
    }
    if ((attr & kAttrRstrip) != 0) {
      stop += WhiteSpacePrefixLength(text.substr(stop));
      from = stop;
    }
    if (start > done) on_text(text.substr(done, start - done));
    on_token(m.id);
    done = stop;
  }
  if (done < text.size()) on_text(text.substr(done));
}

}  // namespace

Tokenizer::Tokenizer(Vocabulary vocab) : vocab_(std::move(vocab)) {
  FinalizeVocabulary(vocab_);
  const size_t n = vocab_.size();

  token_bytes_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string& text = vocab_.tokens[i];
    const TokenType type = vocab_.type(static_cast<TokenId>(i));
    if (IsAddedTokenType(type)) {
      token_bytes_[i] = text;  // added tokens are stored as plain text
    } else if (vocab_.model == ModelKind::kBpe) {
      token_bytes_[i] = ByteLevelDecode(text);
    } else if (const int b = ParseByteTokenName(text); type == TokenType::kByte && b >= 0) {
      token_bytes_[i] = std::string(1, static_cast<char>(b));
    } else {
      token_bytes_[i] = UnescapeSpm(text);
    }
  }

  raw_tokens_ = std::make_unique<SpecialTokenMatcher>();
  normalized_tokens_ = std::make_unique<SpecialTokenMatcher>();
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<TokenId>(i);
    const TokenType type = vocab_.type(id);
    if (type != TokenType::kUserDefined && type != TokenType::kControl &&
        type != TokenType::kUnknown) {
      continue;
    }
    const bool control = type != TokenType::kUserDefined;
    if ((vocab_.attr(id) & kAttrNormalized) != 0) {
      std::string content;  // HF matches the normalized form of the token text
      AppendNormalized(vocab_.normalizer, vocab_.tokens[i], content);
      normalized_tokens_->Add(content, id, control);
    } else {
      raw_tokens_->Add(vocab_.tokens[i], id, control);
    }
  }

  end_of_generation_.assign(n, false);
  for (TokenId id : {vocab_.eos, vocab_.eot, vocab_.eom}) {
    if (id != kNoToken) end_of_generation_[static_cast<size_t>(id)] = true;
  }
  static constexpr std::array<std::string_view, 10> kEndTexts = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
      "<|eom_id|>", "<EOT>",      "_<EOT>",  "<|end_of_text|>", "<end_of_utterance>"};
  for (size_t i = 0; i < n; ++i) {
    if (vocab_.type(static_cast<TokenId>(i)) != TokenType::kControl) continue;
    for (std::string_view text : kEndTexts) {
      if (vocab_.tokens[i] == text) end_of_generation_[i] = true;
    }
  }

  if (vocab_.model == ModelKind::kBpe) {
    pre_tokenizer_ = std::make_unique<PreTokenizer>(PreTokenizerPatterns(vocab_.pre));
    bpe_ = std::make_unique<BpeModel>(vocab_, token_bytes_);
  } else {
    spm_ = std::make_unique<SpmModel>(vocab_);
  }
}

Tokenizer::~Tokenizer() = default;

void Tokenizer::CheckId(TokenId id) const {
  if (id < 0 || static_cast<size_t>(id) >= vocab_.size()) {
    Fail("token id {} is out of range (vocabulary has {} tokens)", id, vocab_.size());
  }
}

TokenType Tokenizer::type(TokenId id) const {
  CheckId(id);
  return vocab_.type(id);
}

bool Tokenizer::IsControl(TokenId id) const {
  const TokenType t = type(id);
  return t == TokenType::kControl || t == TokenType::kUnknown || t == TokenType::kUnused;
}

bool Tokenizer::IsEndOfGeneration(TokenId id) const {
  return id >= 0 && static_cast<size_t>(id) < vocab_.size() &&
         end_of_generation_[static_cast<size_t>(id)];
}

std::vector<TokenId> Tokenizer::Encode(std::string_view text, bool parse_special) const {
  std::vector<TokenId> out;
  EncodeAppend(text, parse_special, out);
  return out;
}

std::vector<TokenId> Tokenizer::Encode(std::string_view text, bool parse_special,
                                       bool add_special) const {
  std::vector<TokenId> out;
  if (add_special && vocab_.add_bos && vocab_.bos != kNoToken) out.push_back(vocab_.bos);
  EncodeAppend(text, parse_special, out);
  if (add_special && vocab_.add_eos && vocab_.eos != kNoToken) out.push_back(vocab_.eos);
  return out;
}

template <typename OnText, typename OnToken>
void Tokenizer::SplitText(std::string_view text, bool parse_special, OnText&& on_text,
                          OnToken&& on_token) const {
  if (vocab_.normalizer == Normalizer::kNone && normalized_tokens_->empty()) {
    SplitAtAddedTokens(
        *raw_tokens_, vocab_, text, parse_special,
        [&](std::string_view piece) { on_text(piece, piece.data() == text.data()); }, on_token);
    return;
  }
  std::string normalized;  // per fragment, as HF normalizes each split separately
  SplitAtAddedTokens(
      *raw_tokens_, vocab_, text, parse_special,
      [&](std::string_view fragment) {
        const bool fragment_at_start = fragment.data() == text.data();
        std::string_view base = fragment;
        if (!QuickCheckNormalized(vocab_.normalizer, fragment)) {
          normalized.clear();
          AppendNormalized(vocab_.normalizer, fragment, normalized);
          base = normalized;
        }
        SplitAtAddedTokens(
            *normalized_tokens_, vocab_, base, parse_special,
            [&](std::string_view piece) {
              on_text(piece, fragment_at_start && piece.data() == base.data());
            },
            on_token);
      },
      on_token);
}

void Tokenizer::EncodeAppend(std::string_view text, bool parse_special,
                             std::vector<TokenId>& out) const {
  SplitText(
      text, parse_special,
      [&](std::string_view piece, bool at_start) { EncodeFragment(piece, at_start, out); },
      [&](TokenId id) { out.push_back(id); });
}

std::string Tokenizer::NormalizedText(std::string_view text, bool parse_special) const {
  std::string out;
  SplitText(
      text, parse_special, [&](std::string_view piece, bool) { out.append(piece); },
      [&](TokenId id) { out.append(token_bytes_[static_cast<size_t>(id)]); });
  return out;
}

void Tokenizer::EncodeFragment(std::string_view text, bool at_start,
                               std::vector<TokenId>& out) const {
  if (bpe_) {
    // Thread-local scratch: pre-tokenized word views are rebuilt per fragment.
    thread_local std::vector<std::string_view> words;
    words.clear();
    pre_tokenizer_->Split(text, words);
    for (std::string_view word : words) bpe_->EncodeWord(word, out);
    return;
  }
  // SentencePiece sees spaces as "▁" and (optionally) one leading "▁". Every
  // piece starts the text or follows an added token: llama.cpp (and HF's
  // Prepend normalizer) prefix them all; HF's Metaspace skips pieces already
  // starting with a space or "▁", and with "first" all but the text start.
  std::string escaped;
  escaped.reserve(text.size() + 16);
  bool prefix = vocab_.add_space_prefix;
  if (vocab_.space_prefix != SpacePrefix::kEveryPiece) {
    prefix = prefix && !text.starts_with(' ') && !text.starts_with(kSpmSpace) &&
             (at_start || vocab_.space_prefix == SpacePrefix::kMetaspaceAlways);
  }
  if (prefix) escaped += kSpmSpace;
  for (char c : text) {
    if (c == ' ') {
      escaped += kSpmSpace;
    } else {
      escaped.push_back(c);
    }
  }
  spm_->Encode(escaped, out);
}

std::string Tokenizer::TokenToBytes(TokenId id, bool render_special) const {
  CheckId(id);
  if (!render_special && IsControl(id)) return {};
  return token_bytes_[static_cast<size_t>(id)];
}

std::string Tokenizer::DecodeBytes(std::span<const TokenId> ids, bool render_special) const {
  std::string out;
  bool strip_space = strips_leading_space();
  for (TokenId id : ids) {
    CheckId(id);
    if (!render_special && IsControl(id)) continue;
    std::string_view piece = token_bytes_[static_cast<size_t>(id)];
    if (strip_space && !piece.empty()) {
      if (piece[0] == ' ') piece.remove_prefix(1);
      strip_space = false;
    }
    out.append(piece);
  }
  return out;
}

std::string Tokenizer::Decode(std::span<const TokenId> ids, bool render_special) const {
  return SanitizeUtf8(DecodeBytes(ids, render_special));
}

}  // namespace cairn::tokenizer
