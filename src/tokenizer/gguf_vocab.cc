#include "tokenizer/gguf_vocab.h"

#include "core/error.h"

namespace cairn::tokenizer {
namespace {

TokenId OptionalId(const gguf::GgufFile& file, std::string_view key) {
  const gguf::Value* value = file.Find(key);
  if (value == nullptr) return kNoToken;
  const int64_t id = value->AsI64();
  // Some converters write -1 (as i32) or 0xFFFFFFFF (as u32) for "none".
  if (id < 0 || id == 0xFFFFFFFF) return kNoToken;
  if (id > INT32_MAX) Fail("GGUF key '{}' holds token id {} (too large)", key, id);
  return static_cast<TokenId>(id);
}

bool UsesIgnoreMerges(std::string_view pre) {
  return pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe" || pre == "falcon3" ||
         pre == "pixtral";
}

// llama.cpp's BPE default when the file has no tokenizer.ggml.add_bos_token:
// BOS for the Llama 3 family (and tekken, chameleon), none otherwise (qwen2,
// smollm, gpt-2, ...). The key, when present, wins.
bool BpeAddsBosByDefault(std::string_view pre) {
  return UsesIgnoreMerges(pre) || pre == "falcon-h1" || pre == "midm-2.0" || pre == "lfm2" || pre == "tekken" ||
         pre == "chameleon";
}

}  // namespace

Vocabulary VocabularyFromGguf(const gguf::GgufFile& file) {
  Vocabulary vocab;
  const std::string model = file.GetString("tokenizer.ggml.model");
  vocab.model = ParseModelKind(model);
  vocab.tokens = file.Get("tokenizer.ggml.tokens").AsStrings();
  if (const gguf::Value* types = file.Find("tokenizer.ggml.token_type")) {
    const std::vector<int64_t> raw = types->AsI64s();
    vocab.types.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] < 0 || raw[i] > 6) {
        Fail("GGUF tokenizer.ggml.token_type[{}] = {} is not a token type (0..6)", i, raw[i]);
      }
      vocab.types.push_back(static_cast<TokenType>(raw[i]));
    }
  }
  if (const gguf::Value* scores = file.Find("tokenizer.ggml.scores")) {
    vocab.scores = scores->AsF32s();
  }
  if (vocab.model == ModelKind::kBpe) {
    vocab.pre = file.GetString("tokenizer.ggml.pre", "default");
    if (const gguf::Value* merges = file.Find("tokenizer.ggml.merges")) {
      vocab.merges = merges->AsStrings();
    } else {
      Fail("GGUF has a gpt2 (BPE) tokenizer but no tokenizer.ggml.merges");
    }
    vocab.ignore_merges = UsesIgnoreMerges(vocab.pre);
    vocab.add_bos = BpeAddsBosByDefault(vocab.pre);
    vocab.add_space_prefix = false;
  } else {
    vocab.pre = "default";
    vocab.add_bos = true;
    vocab.add_space_prefix = true;
    if (vocab.tokens.size() > 2) {  // SentencePiece's conventional ids, overridden below
      vocab.unk = 0;
      vocab.bos = 1;
      vocab.eos = 2;
    }
  }
  const auto id_or = [&](std::string_view key, TokenId fallback) {
    return file.Find(key) != nullptr ? OptionalId(file, key) : fallback;
  };
  vocab.bos = id_or("tokenizer.ggml.bos_token_id", vocab.bos);
  vocab.eos = id_or("tokenizer.ggml.eos_token_id", vocab.eos);
  vocab.eot = id_or("tokenizer.ggml.eot_token_id", kNoToken);
  vocab.eom = id_or("tokenizer.ggml.eom_token_id", kNoToken);
  vocab.unk = id_or("tokenizer.ggml.unknown_token_id", vocab.unk);
  vocab.pad = id_or("tokenizer.ggml.padding_token_id", kNoToken);
  vocab.sep = id_or("tokenizer.ggml.seperator_token_id", kNoToken);  // sic: GGUF spelling
  vocab.add_bos = file.GetBool("tokenizer.ggml.add_bos_token", vocab.add_bos);
  vocab.add_eos = file.GetBool("tokenizer.ggml.add_eos_token", false);
  vocab.add_space_prefix = file.GetBool("tokenizer.ggml.add_space_prefix", vocab.add_space_prefix);
  vocab.chat_template = file.GetString("tokenizer.chat_template", "");
  // Cairn's own keys (written by `cairn convert-tokenizer`); llama.cpp files
  // lack them, which means no normalizer and no added-token options.
  vocab.normalizer = ParseNormalizerName(file.GetString(kNormalizerKey, "none"));
  vocab.space_prefix = ParseSpacePrefixName(file.GetString(kSpacePrefixKey, "every-piece"));
  if (const gguf::Value* attrs = file.Find(kTokenAttrsKey)) {
    const std::vector<int64_t> raw = attrs->AsI64s();
    vocab.attrs.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] < 0 || raw[i] > 15) Fail("GGUF {}[{}] = {} is not 0..15", kTokenAttrsKey, i, raw[i]);
      vocab.attrs.push_back(static_cast<uint8_t>(raw[i]));
    }
  }
  FinalizeVocabulary(vocab);
  return vocab;
}

Vocabulary LoadGgufVocabulary(const std::string& path) {
  const auto file = gguf::GgufFile::Open(path);
  try {
    return VocabularyFromGguf(*file);
  } catch (const Error& e) {
    Fail("{}: {}", path, e.what());
  }
}

void WriteVocabularyToGguf(const Vocabulary& vocab, gguf::GgufWriter& writer) {
  using gguf::Value;
  writer.Set("tokenizer.ggml.model", Value::String(std::string(ModelKindName(vocab.model))));
  if (vocab.model == ModelKind::kBpe) writer.Set("tokenizer.ggml.pre", Value::String(vocab.pre));
  writer.Set("tokenizer.ggml.tokens", Value::StringArray(vocab.tokens));
  std::vector<int32_t> types(vocab.size(), static_cast<int32_t>(TokenType::kNormal));
  for (size_t i = 0; i < vocab.types.size(); ++i) types[i] = static_cast<int32_t>(vocab.types[i]);
  writer.Set("tokenizer.ggml.token_type", Value::I32Array(std::move(types)));
  if (!vocab.scores.empty()) writer.Set("tokenizer.ggml.scores", Value::F32Array(vocab.scores));
  if (vocab.model == ModelKind::kBpe) {
    writer.Set("tokenizer.ggml.merges", Value::StringArray(vocab.merges));
  }
  const auto put_id = [&](const char* key, TokenId id) {
    if (id != kNoToken) writer.Set(key, Value::U32(static_cast<uint32_t>(id)));
  };
  put_id("tokenizer.ggml.bos_token_id", vocab.bos);
  put_id("tokenizer.ggml.eos_token_id", vocab.eos);
  put_id("tokenizer.ggml.eot_token_id", vocab.eot);
  put_id("tokenizer.ggml.eom_token_id", vocab.eom);
  put_id("tokenizer.ggml.unknown_token_id", vocab.unk);
  put_id("tokenizer.ggml.padding_token_id", vocab.pad);
  put_id("tokenizer.ggml.seperator_token_id", vocab.sep);
  writer.Set("tokenizer.ggml.add_bos_token", Value::Bool(vocab.add_bos));
  writer.Set("tokenizer.ggml.add_eos_token", Value::Bool(vocab.add_eos));
  if (vocab.model == ModelKind::kSpm) {
    writer.Set("tokenizer.ggml.add_space_prefix", Value::Bool(vocab.add_space_prefix));
  }
  if (!vocab.chat_template.empty()) {
    writer.Set("tokenizer.chat_template", Value::String(vocab.chat_template));
  }
  if (vocab.model == ModelKind::kSpm && vocab.space_prefix != SpacePrefix::kEveryPiece) {
    writer.Set(kSpacePrefixKey, Value::String(std::string(SpacePrefixName(vocab.space_prefix))));
  }
  if (vocab.normalizer != Normalizer::kNone) {
    writer.Set(kNormalizerKey, Value::String(std::string(NormalizerName(vocab.normalizer))));
  }
  bool any_attr = false;
  for (uint8_t a : vocab.attrs) any_attr |= a != 0;
  if (any_attr) {  // [n_vocab]: callers may have appended tokens without attributes
    std::vector<int32_t> attrs(vocab.size(), 0);
    for (size_t i = 0; i < vocab.attrs.size() && i < attrs.size(); ++i) attrs[i] = vocab.attrs[i];
    writer.Set(kTokenAttrsKey, Value::I32Array(std::move(attrs)));
  }
}

}  // namespace cairn::tokenizer
