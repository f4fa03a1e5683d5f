#include "tokenizer/hf_import.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

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
    if (!UsesByteLevel(tokenizer)) {
      Fail("tokenizer.json: only byte-level BPE is supported (SentencePiece-style BPE needs the "
           "original tokenizer.model scores)");
    }

    Vocabulary vocab;
    vocab.model = ModelKind::kBpe;
    vocab.pre = DetectPre(tokenizer);
    vocab.ignore_merges = model.value("ignore_merges", false);

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
    std::vector<bool> present(n, false);
    for (const auto& [text, id] : model["vocab"].items()) {
      const auto i = id.get<size_t>();
      vocab.tokens[i] = text;
      present[i] = true;
    }
    if (tokenizer.contains("added_tokens")) {
      for (const json& added : tokenizer["added_tokens"]) {
        const auto i = added["id"].get<size_t>();
        vocab.tokens[i] = added["content"].get<std::string>();
        vocab.types[i] = added.value("special", false) ? TokenType::kControl
                                                       : TokenType::kUserDefined;
        present[i] = true;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (!present[i]) {  // same placeholder name llama.cpp's converter uses
        vocab.tokens[i] = "[PAD" + std::to_string(i) + "]";
        vocab.types[i] = TokenType::kUnused;
      }
    }

    const json& merges = model["merges"];
    vocab.merges.reserve(merges.size());
    for (const json& merge : merges) {
      if (merge.is_string()) {
        vocab.merges.push_back(merge.get<std::string>());
      } else if (merge.is_array() && merge.size() == 2) {
        vocab.merges.push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
      } else {
        Fail("tokenizer.json: merge entry {} is neither 'a b' nor [a, b]", vocab.merges.size());
      }
    }

    vocab.bos = ConfigTokenId(config, "bos_token", vocab);
    vocab.eos = ConfigTokenId(config, "eos_token", vocab);
    vocab.pad = ConfigTokenId(config, "pad_token", vocab);
    vocab.unk = ConfigTokenId(config, "unk_token", vocab);
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
