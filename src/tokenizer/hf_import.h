// Import of Hugging Face tokenizers (tokenizer.json + tokenizer_config.json)
// into a Vocabulary, for `cairn convert-tokenizer` and the model converter.
//
// Supported:
// - byte-level BPE (model.type "BPE" with a ByteLevel pre-tokenizer or
//   decoder). The pre-tokenizer id is detected from the Split regex (Qwen2,
//   Qwen3.5, Llama 3) or GPT-2's built-in ByteLevel regex.
// - SentencePiece-style BPE (byte_fallback, with normalizer Prepend("▁") +
//   Replace(" " -> "▁") and no pre-tokenizer: Llama 2, TinyLlama; or a
//   Metaspace pre-tokenizer with split: false: newer Llama/Mistral) -> the
//   `llama` vocabulary with scores derived from merge ranks.
// - normalizer NFC (Qwen2/3), alone or in a Sequence; any other normalizer is
//   an error naming it (never silently different ids).
// Added tokens become control (special: true) or user-defined (special:
// false) tokens; lstrip/rstrip/single_word/normalized become TokenAttr bits.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "tokenizer/vocabulary.h"

namespace cairn::tokenizer {

// `config` may be null/empty (no tokenizer_config.json): then no bos/eos/pad
// ids, no chat template. Throws cairn::Error naming the unsupported feature.
Vocabulary FromHfTokenizerJson(const nlohmann::json& tokenizer,
                               const nlohmann::json& config = nlohmann::json());

// Reads and parses the files (config_path may be empty). Errors name the file.
Vocabulary LoadHfTokenizerFiles(const std::string& tokenizer_path,
                                const std::string& config_path = "");

// The `tokenizer.ggml.pre` id for a HF Split regex, or "" when unknown.
std::string DetectPreFromRegex(const std::string& regex);

}  // namespace cairn::tokenizer
