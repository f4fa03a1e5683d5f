// Unicode services the tokenizer needs beyond UTF-8 decoding: normalization
// (Hugging Face tokenizer.json "normalizer") and the character classes HF's
// added-token options test (lstrip/rstrip: White_Space; single_word: \w).
// Backed by utf8proc (Debian libutf8proc-dev).
#pragma once

#include <string>
#include <string_view>

#include "tokenizer/vocabulary.h"

namespace cairn::tokenizer {

// Appends `text` normalized with `kind` to `out`. Only well-formed UTF-8 runs
// are normalized; ill-formed bytes are copied unchanged (byte-level BPE must
// still encode them), and normalization never looks across them. Combining
// marks newer than Hugging Face tokenizers' Unicode tables are passed through
// as inert, as HF does (ids must match HF, not a newer Unicode).
void AppendNormalized(Normalizer kind, std::string_view text, std::string& out);

// True when `text` is certainly already normalized (no byte >= 0xCC: every
// code point is below U+0300, where nothing decomposes or combines), so
// callers can skip the copy. False means "maybe not".
bool QuickCheckNormalized(Normalizer kind, std::string_view text);

// Byte length of the run of Unicode White_Space at the end / start of `text`
// (what HF's `\s*$` / `^\s*` match for lstrip / rstrip).
size_t WhiteSpaceSuffixLength(std::string_view text);
size_t WhiteSpacePrefixLength(std::string_view text);

// Whether the last / first code point of `text` is a word character as Rust
// regex's Unicode `\w` defines it (letters, marks, decimal digits, letter
// numbers, connector punctuation, ZWNJ/ZWJ). Ill-formed bytes are not word
// characters. Used for HF's single_word added tokens.
bool EndsWithWordChar(std::string_view text);
bool StartsWithWordChar(std::string_view text);

}  // namespace cairn::tokenizer
