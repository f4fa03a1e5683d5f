// Vocabulary <-> GGUF `tokenizer.*` metadata (llama-cpp-notes.md §4.3).
#pragma once

#include <string>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/vocabulary.h"

namespace cairn::tokenizer {

// Cairn-only metadata, absent from llama.cpp's files (then: no normalizer, no
// added-token options, i.e. llama.cpp's behaviour):
// - string: NormalizerName ("nfc"); written only when not "none".
inline constexpr const char* kNormalizerKey = "cairn.tokenizer.normalizer";
// - string: SpacePrefixName; written only for SPM when not "every-piece".
inline constexpr const char* kSpacePrefixKey = "cairn.tokenizer.space_prefix";
// - i32 array [n_vocab]: TokenAttr bits; written only when any is set.
inline constexpr const char* kTokenAttrsKey = "cairn.tokenizer.token_attrs";

// Reads tokenizer.ggml.* and tokenizer.chat_template. Throws cairn::Error
// naming the key when metadata is missing, mistyped or inconsistent.
// Defaults follow llama.cpp: SPM adds BOS and a space prefix unless the file
// says otherwise; Llama-3-style pre-tokenizers ignore merges for whole words.
Vocabulary VocabularyFromGguf(const gguf::GgufFile& file);

// Opens a GGUF (model or vocab-only) and reads its vocabulary.
Vocabulary LoadGgufVocabulary(const std::string& path);

// Writes the vocabulary as tokenizer.* metadata.
void WriteVocabularyToGguf(const Vocabulary& vocab, gguf::GgufWriter& writer);

}  // namespace cairn::tokenizer
