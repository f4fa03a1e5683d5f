// Tokenizer metadata for converted models.
#pragma once

#include <string>

namespace cairn::gguf {
class GgufWriter;
}

namespace cairn::model {

// Adds tokenizer.ggml.* keys and tokenizer.chat_template from
// HF_DIR/tokenizer.json (+ tokenizer_config.json) when present; does nothing
// when the directory has no tokenizer.json.
void AddTokenizerMetadata(const std::string& hf_dir, gguf::GgufWriter* writer);

}  // namespace cairn::model
