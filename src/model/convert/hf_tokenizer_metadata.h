// Tokenizer metadata for converted and random-initialised models.
#pragma once

#include <string>

namespace cairn::gguf {
class GgufWriter;
}

namespace cairn::model {

// Adds tokenizer.ggml.* keys and tokenizer.chat_template from
// HF_DIR/tokenizer.json (+ tokenizer_config.json) when present; does nothing
// when the directory has no tokenizer.json. When the model's embedding has
// more rows (n_vocab) than the tokenizer has tokens, the token list is padded
// with "[PAD<i>]" entries of type unused, as llama.cpp's converter does.
void AddTokenizerMetadata(const std::string& hf_dir, int n_vocab, gguf::GgufWriter* writer);

// Number of tokens (vocabulary plus added tokens) of HF_DIR/tokenizer.json;
// 0 when there is no tokenizer.json.
int CountHfTokenizerTokens(const std::string& hf_dir);

}  // namespace cairn::model
