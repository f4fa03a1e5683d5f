#include "server/request_fields.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace cairn::server {
namespace {

// Maximum bracket depth outside strings; scanning first keeps deeply nested
// bodies away from nlohmann's recursive copy/dump/destroy paths.
int MaxDepth(std::string_view body) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') max_depth = std::max(max_depth, ++depth);
    else if (c == ']' || c == '}') --depth;
  }
  return max_depth;
}

std::vector<std::pair<int32_t, float>> ParseLogitBias(const Json& bias) {
  if (!bias.is_object()) throw FieldError("logit_bias", "must be an object mapping token ids to numbers");
  std::vector<std::pair<int32_t, float>> out;
  for (const auto& [key, value] : bias.items()) {
    std::string name = "logit_bias[" + key + "]";
    int64_t id = -1;
    bool digits = !key.empty() && key.size() <= 10 &&
                  key.find_first_not_of("0123456789") == std::string::npos;
    if (digits) id = std::stoll(key);
    if (!digits || id > INT32_MAX) throw FieldError(name, "key must be a token id (a non-negative integer)");
    if (!value.is_number()) throw FieldError(name, "must be a number, got " + TypeName(value));
    double number = value.get<double>();
    if (!std::isfinite(number) || number < -100 || number > 100) {
      throw FieldError(name, "must be between -100 and 100");
    }
    out.emplace_back(static_cast<int32_t>(id), static_cast<float>(number));
  }
  return out;
}

}  // namespace


std::string Quote(const Json& value) {
  std::string text = value.is_string()
                         ? value.get<std::string>()
                         : value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  return "'" + text + "'";
}

std::string TypeName(const Json& value) {
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

const Json* Field(const Json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

double GetNumber(const Json& body, const char* name, double min, double max) {
  const Json& value = *Field(body, name);
  if (!value.is_number()) throw FieldError(name, "must be a number, got " + TypeName(value));
  double number = value.get<double>();
  if (!std::isfinite(number) || number < min || number > max) {
    throw FieldError(name, fmt::format("must be between {} and {}, got {}", min, max, number));
  }
  return number;
}

int64_t GetInteger(const Json& value, const std::string& name, int64_t min, int64_t max) {
  int64_t number = 0;
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX}) {
      throw FieldError(name, fmt::format("must be at most {}", max));
    }
    number = value.get<int64_t>();
  } else if (value.is_number_float()) {
    double d = value.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e18) {
      throw FieldError(name, "must be an integer, got " + Quote(value));
    }
    number = static_cast<int64_t>(d);
  } else {
    throw FieldError(name, "must be an integer, got " + TypeName(value));
  }
  if (number < min || number > max) {
    throw FieldError(name, fmt::format("must be between {} and {}, got {}", min, max, number));
  }
  return number;
}

bool GetBool(const Json& body, const char* name) {
  const Json& value = *Field(body, name);
  if (!value.is_boolean()) throw FieldError(name, "must be a boolean, got " + TypeName(value));
  return value.get<bool>();
}

std::string GetString(const Json& value, const std::string& name) {
  if (!value.is_string()) throw FieldError(name, "must be a string, got " + TypeName(value));
  return value.get<std::string>();
}

std::vector<std::string> ParseStop(const Json& stop, const std::string& name) {
  std::vector<std::string> out;
  if (stop.is_string()) {
    if (!stop.get<std::string>().empty()) out.push_back(stop.get<std::string>());
    return out;
  }
  if (!stop.is_array()) throw FieldError(name, "must be a string or a list of strings");
  if (stop.size() > 16) throw FieldError(name, "at most 16 stop strings are supported");
  for (size_t i = 0; i < stop.size(); ++i) {
    std::string text = GetString(stop[i], fmt::format("{}[{}]", name, i));
    if (!text.empty()) out.push_back(std::move(text));
  }
  return out;
}

void ParseSharedOptions(const Json& body, ParsedRequest& request) {
  engine::GenerationOptions& options = request.options;
  if (const Json* model = Field(body, "model")) request.model = GetString(*model, "model");
  if (Field(body, "stream")) request.stream = GetBool(body, "stream");
  if (const Json* stream_options = Field(body, "stream_options")) {
    if (!stream_options->is_object()) throw FieldError("stream_options", "must be an object");
    if (Field(*stream_options, "include_usage")) {
      request.include_usage = GetBool(*stream_options, "include_usage");
    }
  }
  // max_completion_tokens is the newer name; it wins when both are present.
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (const Json* value = Field(body, key)) {
      options.max_tokens = static_cast<int>(GetInteger(*value, key, 1, INT32_MAX));
      request.max_tokens_given = true;
    }
  }
  if (Field(body, "temperature")) options.temperature = float(GetNumber(body, "temperature", 0, 100));
  if (Field(body, "top_p")) options.top_p = float(GetNumber(body, "top_p", 0, 1));
  if (const Json* top_k = Field(body, "top_k")) {
    // -1 is llama.cpp's spelling of "off".
    options.top_k = static_cast<int>(std::max<int64_t>(0, GetInteger(*top_k, "top_k", -1, INT32_MAX)));
  }
  if (Field(body, "min_p")) options.min_p = float(GetNumber(body, "min_p", 0, 1));
  if (const Json* seed = Field(body, "seed")) {
    int64_t value = GetInteger(*seed, "seed", INT64_MIN, INT64_MAX);
    if (value != -1) options.seed = static_cast<uint64_t>(value);  // -1 = random (llama.cpp)
  }
  if (Field(body, "presence_penalty")) {
    options.presence_penalty = float(GetNumber(body, "presence_penalty", -2, 2));
  }
  if (Field(body, "frequency_penalty")) {
    options.frequency_penalty = float(GetNumber(body, "frequency_penalty", -2, 2));
  }
  if (Field(body, "repetition_penalty")) {
    options.repetition_penalty = float(GetNumber(body, "repetition_penalty", 0.01, 10));
  }
  if (const Json* bias = Field(body, "logit_bias")) options.logit_bias = ParseLogitBias(*bias);
  if (const Json* stop = Field(body, "stop")) options.stop = ParseStop(*stop);
  if (const Json* n = Field(body, "n")) {
    if (GetInteger(*n, "n", INT64_MIN, INT64_MAX) != 1) throw FieldError("n", "only n=1 is supported");
  }
  if (Field(body, "ignore_eos")) options.ignore_eos = GetBool(body, "ignore_eos");
  if (Field(body, "cache_prompt")) options.use_prefix_cache = GetBool(body, "cache_prompt");
  if (Field(body, "cache_store")) options.store_in_cache = GetBool(body, "cache_store");
  if (Field(body, "return_token_ids")) options.return_token_ids = GetBool(body, "return_token_ids");
  if (const Json* spec = Field(body, "spec")) {
    std::string mode = GetString(*spec, "spec");
    if (!mode.empty() && mode != "lookup" && mode != "draft" && mode != "mtp" &&
        mode != "baseline" && mode != "auto") {
      throw FieldError("spec", "unknown mode " + Quote(*spec) +
                                   " (expected lookup, draft, mtp, baseline or auto)");
    }
    options.spec_mode = mode;
  }
}

ParseResult ParseWith(std::string_view body, void (*fields)(const Json& body, ParsedRequest& request)) {
  ParseResult result;
  Json json;
  if (!ParseJsonObject(body, json, result.error)) return result;
  try {
    ParsedRequest request;
    // Without a limit the answer may run to kDefaultAnswerTokens (the engine
    // also stops at the context end): agent clients (Codex, OpenCode) send none
    // and write whole files in one tool call, which the engine's 512 would cut.
    request.options.max_tokens = kDefaultAnswerTokens;
    fields(json, request);
    ParseSharedOptions(json, request);
    result.request = std::move(request);
  } catch (const FieldError& e) {
    result.error = e.what();
  } catch (const std::exception& e) {  // nlohmann type errors: never expected, never fatal
    result.error = std::string("invalid request: ") + e.what();
  }
  return result;
}

bool ParseJsonObject(std::string_view body, Json& out, std::string& error) {
  if (MaxDepth(body) > kMaxJsonDepth) {
    error = fmt::format("request body: JSON nested deeper than {} levels", kMaxJsonDepth);
    return false;
  }
  try {
    out = Json::parse(body.begin(), body.end());
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for 1e400
    error = std::string("request body is not valid JSON: ") + e.what();
    return false;
  }
  if (!out.is_object()) {
    error = "request body: must be a JSON object, got " + TypeName(out);
    return false;
  }
  return true;
}

}  // namespace cairn::server
