#include "tokenizer/hf_import.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/spm_model.h"

namespace cairn::tokenizer {
namespace {

using nlohmann::json;

// HF Split regexes of known models (as written in their tokenizer.json).
constexpr std::string_view kHfQwen2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr std::string_view kHfQwen35 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}"
    "\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr std::string_view kHfLlama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Collects the pre-tokenizer steps (flattening Sequence).
void CollectSteps(const json& node, std::vector<const json*>& steps) {
  if (!node.is_object()) return;
  if (node.value("type", "") == "Sequence") {
    const json& list = node.contains("pretokenizers") ? node["pretokenizers"] : node["decoders"];
    if (list.is_array()) {
      for (const json& step : list) CollectSteps(step, steps);
    }
    return;
  }
  steps.push_back(&node);
}

std::string DetectPre(const json& tokenizer) {
  std::vector<const json*> steps;
  if (tokenizer.contains("pre_tokenizer")) CollectSteps(tokenizer["pre_tokenizer"], steps);
  std::vector<std::string> regexes;
  bool byte_level_regex = false;
  for (const json* step : steps) {
    const std::string type = step->value("type", "");
    if (type == "Split") {
      const json& pattern = (*step)["pattern"];
      if (pattern.contains("Regex")) {
        regexes.push_back(pattern["Regex"].get<std::string>());
      } else {
        Fail("tokenizer.json: Split pre-tokenizer with a plain string pattern is not supported");
      }
    } else if (type == "ByteLevel") {
      byte_level_regex = step->value("use_regex", true);
    } else {
      Fail("tokenizer.json: pre-tokenizer step '{}' is not supported", type);
    }
  }
  if (regexes.empty() && byte_level_regex) return "gpt-2";
  if (regexes.size() == 1 && !byte_level_regex) {
    const std::string pre = DetectPreFromRegex(regexes[0]);
    if (!pre.empty()) return pre;
    Fail("tokenizer.json: unrecognised pre-tokenizer regex (no matching tokenizer.ggml.pre id): {}",
         regexes[0]);
  }
  Fail("tokenizer.json: unsupported pre-tokenizer layout ({} Split regexes, ByteLevel regex {})",
       regexes.size(), byte_level_regex ? "on" : "off");
}

bool UsesByteLevel(const json& tokenizer) {
  std::vector<const json*> steps;
  if (tokenizer.contains("pre_tokenizer")) CollectSteps(tokenizer["pre_tokenizer"], steps);
  if (tokenizer.contains("decoder")) CollectSteps(tokenizer["decoder"], steps);
  for (const json* step : steps) {
    if (step->value("type", "") == "ByteLevel") return true;
  }
  return false;
}

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // "▁" U+2581

// What tokenizer.json's "normalizer" does, in the terms Cairn supports.
struct NormalizerSteps {
  Normalizer unicode = Normalizer::kNone;  // NFC
  bool prepend_space = false;              // Prepend("▁"): SentencePiece space prefix
  bool escape_spaces = false;              // Replace(" " -> "▁"): SentencePiece spaces
};

void CollectNormalizer(const json& node, NormalizerSteps& steps) {
  if (node.is_null()) return;
  const std::string type = node.value("type", "");
  if (type == "Sequence") {
    for (const json& step : node.at("normalizers")) CollectNormalizer(step, steps);
  } else if (type == "NFC") {
    steps.unicode = Normalizer::kNfc;
  } else if (type == "Prepend" && node.value("prepend", "") == kSpmSpace) {
    steps.prepend_space = true;
  } else if (type == "Replace" && node.contains("pattern") &&
             node["pattern"].value("String", "") == " " && node.value("content", "") == kSpmSpace) {
    steps.escape_spaces = true;
  } else if (type == "Prepend" || type == "Replace") {  // other arguments
    Fail("tokenizer.json: normalizer {} {} is not supported (only Prepend(\"▁\") and "
         "Replace(\" \" -> \"▁\") of SentencePiece-style tokenizers)",
         type, node.dump());
  } else {
    Fail("tokenizer.json: normalizer '{}' is not supported (supported: NFC, Sequence, and "
         "Prepend/Replace of SentencePiece-style BPE); refusing to import rather than produce "
         "different token ids",
         type);
  }
}

NormalizerSteps ParseNormalizer(const json& tokenizer) {
  NormalizerSteps steps;
  if (tokenizer.contains("normalizer")) CollectNormalizer(tokenizer["normalizer"], steps);
  return steps;
}

// Token texts and types (model vocab + added tokens, holes filled) and the
// HF added-token options as TokenAttr bits.
void ImportTokens(const json& tokenizer, const json& model, Vocabulary& vocab) {
  // Ids may have holes (or added tokens beyond the model vocabulary).
  size_t n = 0;
  for (const auto& [text, id] : model["vocab"].items()) n = std::max(n, id.get<size_t>() + 1);
  if (tokenizer.contains("added_tokens")) {
    for (const json& added : tokenizer["added_tokens"]) {
      n = std::max(n, added["id"].get<size_t>() + 1);
    }
  }
  if (n == 0) Fail("tokenizer.json has an empty vocabulary");
  vocab.tokens.assign(n, std::string());
  vocab.types.assign(n, TokenType::kNormal);
  vocab.attrs.assign(n, 0);
  std::vector<bool> present(n, false);
  for (const auto& [text, id] : model["vocab"].items()) {
    const auto i = id.get<size_t>();
    vocab.tokens[i] = text;
    present[i] = true;
  }
  if (tokenizer.contains("added_tokens")) {
    for (const json& added : tokenizer["added_tokens"]) {
      const auto i = added["id"].get<size_t>();
      const bool special = added.value("special", false);
      vocab.tokens[i] = added["content"].get<std::string>();
      vocab.types[i] = special ? TokenType::kControl : TokenType::kUserDefined;
      // HF's defaults when a field is absent: normalized = !special, others false.
      uint8_t attr = 0;
      if (added.value("lstrip", false)) attr |= kAttrLstrip;
      if (added.value("rstrip", false)) attr |= kAttrRstrip;
      if (added.value("single_word", false)) attr |= kAttrSingleWord;
      if (added.value("normalized", !special)) attr |= kAttrNormalized;
      vocab.attrs[i] = attr;
      present[i] = true;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!present[i]) {  // same placeholder name llama.cpp's converter uses
      vocab.tokens[i] = "[PAD" + std::to_string(i) + "]";
      vocab.types[i] = TokenType::kUnused;
    }
  }
}

std::vector<std::string> ImportMerges(const json& model) {
  const json& merges = model["merges"];
  std::vector<std::string> out;
  out.reserve(merges.size());
  for (const json& merge : merges) {
    if (merge.is_string()) {
      out.push_back(merge.get<std::string>());
    } else if (merge.is_array() && merge.size() == 2) {
      out.push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
    } else {
      Fail("tokenizer.json: merge entry {} is neither 'a b' nor [a, b]", out.size());
    }
  }
  return out;
}

// SentencePiece-style BPE (byte_fallback, "▁" for spaces: Llama 2, Mistral,
// TinyLlama) becomes the `llama` vocabulary: SpmModel merges the adjacent pair
// whose result has the highest score, HF's BPE the pair with the lowest merge
// rank. Scoring each merge result -rank (its first merge) makes them agree;
// tokens no merge produces get -inf, which SpmModel never forms by merging.
// Exact unless two merges with different ranks produce the same token and
// compete (not the case for SentencePiece-derived merges, whose ranks follow
// the result's score).
void ImportSpm(const json& model, const NormalizerSteps& steps, Vocabulary& vocab) {
  if (!steps.escape_spaces) {
    Fail("tokenizer.json: BPE with byte_fallback but without the Replace(\" \" -> \"▁\") "
         "normalizer is not supported");
  }
  vocab.model = ModelKind::kSpm;
  vocab.pre = "default";
  vocab.add_space_prefix = steps.prepend_space;
  std::unordered_map<std::string, size_t> by_text;
  by_text.reserve(vocab.size() * 2);
  for (size_t i = 0; i < vocab.size(); ++i) by_text.emplace(vocab.tokens[i], i);
  vocab.scores.assign(vocab.size(), -std::numeric_limits<float>::infinity());
  const std::vector<std::string> merges = ImportMerges(model);
  if (merges.size() > (1u << 24)) Fail("tokenizer.json: too many merges for float scores");
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& merge = merges[rank];
    const size_t space = merge.find(' ');
    if (space == std::string::npos) Fail("tokenizer.json: merge '{}' has no space", merge);
    const std::string result = merge.substr(0, space) + merge.substr(space + 1);
    const auto it = by_text.find(result);
    if (it == by_text.end()) Fail("tokenizer.json: merge '{}' produces no token", merge);
    float& score = vocab.scores[it->second];
    if (std::isinf(score)) score = -static_cast<float>(rank);
  }
  for (size_t i = 0; i < vocab.size(); ++i) {
    if (vocab.types[i] == TokenType::kNormal && ParseByteTokenName(vocab.tokens[i]) >= 0) {
      vocab.types[i] = TokenType::kByte;
    }
    if ((vocab.attrs[i] & kAttrNormalized) != 0 && steps.prepend_space) {
      Fail("tokenizer.json: added token '{}' is 'normalized' under a Prepend normalizer (HF "
           "would match it only after a space); not supported",
           vocab.tokens[i]);
    }
  }
  if (model.contains("unk_token") && model["unk_token"].is_string()) {
    vocab.unk = vocab.FindToken(model["unk_token"].get<std::string>());
    if (vocab.unk != kNoToken) vocab.types[static_cast<size_t>(vocab.unk)] = TokenType::kUnknown;
  }
}

// SentencePiece-style BPE whose spaces are handled by a Metaspace
// pre-tokenizer (newer Llama/Mistral conversions) instead of the normalizer.
void ImportMetaspace(const json& model, const json& pre, NormalizerSteps steps, Vocabulary& vocab) {
  if (steps.prepend_space || steps.escape_spaces) {
    Fail("tokenizer.json: both a Metaspace pre-tokenizer and Prepend/Replace normalizers");
  }
  if (pre.value("replacement", "") != kSpmSpace) {
    Fail("tokenizer.json: Metaspace replacement '{}' is not supported (only \"▁\")",
         pre.value("replacement", ""));
  }
  if (pre.value("split", true)) {
    Fail("tokenizer.json: Metaspace with split: true is not supported (words split at \"▁\")");
  }
  // prepend_scheme (tokenizers >= 0.15), else the older add_prefix_space flag.
  const std::string scheme =
      pre.contains("prepend_scheme") && pre["prepend_scheme"].is_string()
          ? pre["prepend_scheme"].get<std::string>()
          : (pre.value("add_prefix_space", true) ? "always" : "never");
  if (scheme != "always" && scheme != "first" && scheme != "never") {
    Fail("tokenizer.json: Metaspace prepend_scheme '{}' is not supported", scheme);
  }
  steps.escape_spaces = true;
  ImportSpm(model, steps, vocab);
  vocab.add_space_prefix = scheme != "never";
  vocab.space_prefix =
      scheme == "first" ? SpacePrefix::kMetaspaceFirst : SpacePrefix::kMetaspaceAlways;
}

// A special-token entry of tokenizer_config.json: "text", {"content": "text"} or null.
std::string ConfigTokenText(const json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return {};
  const json& value = config[key];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  return {};
}

TokenId ConfigTokenId(const json& config, const char* key, const Vocabulary& vocab) {
  const std::string text = ConfigTokenText(config, key);
  if (text.empty()) return kNoToken;
  const TokenId id = vocab.FindToken(text);
  if (id == kNoToken) Fail("tokenizer_config.json: {} '{}' is not a token", key, text);
  return id;
}

std::string ChatTemplate(const json& config) {
  if (!config.is_object() || !config.contains("chat_template")) return {};
  const json& value = config["chat_template"];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {  // [{"name": "default", "template": "..."}, ...]
    for (const json& item : value) {
      if (item.value("name", "") == "default") return item.value("template", "");
    }
    if (!value.empty()) return value[0].value("template", "");
  }
  return {};
}

json ParseFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("cannot open '{}'", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    return json::parse(buffer.str());
  } catch (const json::exception& e) {
    Fail("'{}' is not valid JSON: {}", path, e.what());
  }
}

}  // namespace

std::string DetectPreFromRegex(const std::string& regex) {
  if (regex == kHfQwen2) return "qwen2";
  if (regex == kHfQwen35) return "qwen35";
  if (regex == kHfLlama3) return "llama3";
  return {};
}

Vocabulary FromHfTokenizerJson(const json& tokenizer, const json& config) {
  try {
    if (!tokenizer.is_object() || !tokenizer.contains("model")) {
      Fail("tokenizer.json has no 'model' object");
    }
    const json& model = tokenizer["model"];
    const std::string model_type = model.value("type", "");
    if (model_type != "BPE") {
      Fail("tokenizer.json model type '{}' is not supported (only BPE)", model_type);
    }
    const NormalizerSteps steps = ParseNormalizer(tokenizer);
    Vocabulary vocab;
    vocab.normalizer = steps.unicode;
    ImportTokens(tokenizer, model, vocab);
    if (UsesByteLevel(tokenizer)) {
      if (steps.prepend_space || steps.escape_spaces) {
        Fail("tokenizer.json: Prepend/Replace normalizers with a ByteLevel tokenizer are not "
             "supported");
      }
      vocab.model = ModelKind::kBpe;
      vocab.pre = DetectPre(tokenizer);
      vocab.ignore_merges = model.value("ignore_merges", false);
      vocab.merges = ImportMerges(model);
    } else if (model.value("byte_fallback", false)) {
      const json& pre = tokenizer.contains("pre_tokenizer") ? tokenizer["pre_tokenizer"] : json();
      if (pre.is_null()) {
        ImportSpm(model, steps, vocab);
      } else if (pre.value("type", "") == "Metaspace") {
        ImportMetaspace(model, pre, steps, vocab);
      } else {
        Fail("tokenizer.json: pre-tokenizer '{}' with SentencePiece-style BPE is not supported "
             "(supported: none, with the Prepend/Replace normalizer, or Metaspace)",
             pre.value("type", "?"));
      }
    } else {
      Fail("tokenizer.json: BPE without a ByteLevel pre-tokenizer/decoder or byte_fallback is not "
           "supported");
    }

    vocab.bos = ConfigTokenId(config, "bos_token", vocab);
    vocab.eos = ConfigTokenId(config, "eos_token", vocab);
    vocab.pad = ConfigTokenId(config, "pad_token", vocab);
    if (const TokenId unk = ConfigTokenId(config, "unk_token", vocab); unk != kNoToken) {
      vocab.unk = unk;  // else keep model.unk_token (SentencePiece-style imports)
    }
    if (config.is_object()) {
      const auto flag = [&](const char* key) {
        return config.contains(key) && config[key].is_boolean() && config[key].get<bool>();
      };
      vocab.add_bos = flag("add_bos_token") && vocab.bos != kNoToken;
      vocab.add_eos = flag("add_eos_token") && vocab.eos != kNoToken;
    }
    vocab.chat_template = ChatTemplate(config);
    FinalizeVocabulary(vocab);
    return vocab;
  } catch (const json::exception& e) {
    Fail("tokenizer.json has an unexpected structure: {}", e.what());
  }
}

Vocabulary LoadHfTokenizerFiles(const std::string& tokenizer_path,
                                const std::string& config_path) {
  const json tokenizer = ParseFile(tokenizer_path);
  const json config = config_path.empty() ? json() : ParseFile(config_path);
  return FromHfTokenizerJson(tokenizer, config);
}

}  // namespace cairn::tokenizer
