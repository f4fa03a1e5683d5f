#include "model/convert/hf_tokenizer_metadata.h"

#include <filesystem>

#include "gguf/gguf_writer.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/hf_import.h"

namespace cairn::model {
namespace {

namespace fs = std::filesystem;

bool HasTokenizer(const std::string& hf_dir) { return !hf_dir.empty() && fs::exists(fs::path(hf_dir) / "tokenizer.json"); }

tokenizer::Vocabulary LoadVocabulary(const std::string& hf_dir) {
  const fs::path dir(hf_dir);
  const fs::path config = dir / "tokenizer_config.json";
  return tokenizer::LoadHfTokenizerFiles((dir / "tokenizer.json").string(),
                                          fs::exists(config) ? config.string() : std::string());
}

}  // namespace

int CountHfTokenizerTokens(const std::string& hf_dir) {
  if (!HasTokenizer(hf_dir)) return 0;
  return static_cast<int>(LoadVocabulary(hf_dir).size());
}

void AddTokenizerMetadata(const std::string& hf_dir, int n_vocab, gguf::GgufWriter* writer) {
  if (!HasTokenizer(hf_dir)) return;
  tokenizer::Vocabulary vocab = LoadVocabulary(hf_dir);
  const bool has_types = !vocab.types.empty();
  const bool has_scores = !vocab.scores.empty();
  for (int i = static_cast<int>(vocab.tokens.size()); i < n_vocab; ++i) {
    vocab.tokens.push_back("[PAD" + std::to_string(i) + "]");
    if (has_types) vocab.types.push_back(tokenizer::TokenType::kUnused);
    if (has_scores) vocab.scores.push_back(0.0f);
  }
  tokenizer::WriteVocabularyToGguf(vocab, *writer);
}

}  // namespace cairn::model
