#include "server/request_parser.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace cairn::server {
namespace {

using engine::Json;

// Thrown inside this file only; ParseChatRequest/ParseCompletionRequest turn
// it into ParseResult::error, so the public functions never throw.
class FieldError : public std::runtime_error {
 public:
  FieldError(const std::string& field, const std::string& message)
      : std::runtime_error(field + ": " + message) {}
};

// Short, printable rendering of a client value for error messages.
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

// A present, non-null field (null counts as "not given", as OpenAI does).
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

// Integers may arrive as 100 or 100.0; anything else fractional is an error.
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

// Message content: a string, null (-> ""), or a list of typed parts whose text
// parts are joined with newlines; image/audio/file parts are dropped (no
// multimodal support), unknown part types likewise.
std::string ContentText(const Json& content, const std::string& name) {
  if (content.is_null()) return "";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw FieldError(name, "must be a string, null or a list of content parts, got " +
                               TypeName(content));
  }
  std::string text;
  bool first = true;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    std::string part_name = fmt::format("{}[{}]", name, i);
    if (part.is_string()) {  // lenient: a bare string part
      if (!first) text += '\n';
      text += part.get<std::string>();
      first = false;
      continue;
    }
    if (!part.is_object()) throw FieldError(part_name, "must be an object, got " + TypeName(part));
    const Json* type = Field(part, "type");
    if (type && !type->is_string()) throw FieldError(part_name + ".type", "must be a string");
    bool is_text = type ? (*type == "text" || *type == "input_text") : part.contains("text");
    if (!is_text) continue;
    const Json* part_text = Field(part, "text");
    if (!part_text) throw FieldError(part_name + ".text", "is required for a text part");
    if (!first) text += '\n';
    text += GetString(*part_text, part_name + ".text");
    first = false;
  }
  return text;
}

Json ParseToolCalls(const Json& calls, const std::string& name) {
  if (!calls.is_array()) throw FieldError(name, "must be an array, got " + TypeName(calls));
  Json out = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    std::string call_name = fmt::format("{}[{}]", name, i);
    const Json& call = calls[i];
    if (!call.is_object()) throw FieldError(call_name, "must be an object, got " + TypeName(call));
    Json copy = call;
    const Json* function = Field(call, "function");
    if (!function || !function->is_object()) {
      throw FieldError(call_name + ".function", "must be an object");
    }
    const Json* fn_name = Field(*function, "name");
    if (!fn_name) throw FieldError(call_name + ".function.name", "is required");
    GetString(*fn_name, call_name + ".function.name");
    if (const Json* arguments = Field(*function, "arguments"); arguments && arguments->is_string()) {
      // Templates iterate arguments as a mapping. Clients send a JSON string;
      // one that does not parse (a truncated call) is passed on as text
      // rather than failing the whole conversation.
      Json parsed = Json::parse(arguments->get<std::string>(), nullptr, false);
      if (!parsed.is_discarded()) copy["function"]["arguments"] = std::move(parsed);
    }
    out.push_back(std::move(copy));
  }
  return out;
}

bool KnownRole(const std::string& role) {
  return role == "system" || role == "developer" || role == "user" || role == "assistant" ||
         role == "tool" || role == "function";
}

Json ParseMessages(const Json& body) {
  const Json* messages = Field(body, "messages");
  if (!messages) throw FieldError("messages", "is required");
  if (!messages->is_array()) throw FieldError("messages", "must be an array, got " + TypeName(*messages));
  if (messages->empty()) throw FieldError("messages", "must not be empty");
  Json out = Json::array();
  for (size_t i = 0; i < messages->size(); ++i) {
    const Json& message = (*messages)[i];
    std::string name = fmt::format("messages[{}]", i);
    if (!message.is_object()) throw FieldError(name, "must be an object, got " + TypeName(message));
    const Json* role = Field(message, "role");
    if (!role) throw FieldError(name + ".role", "is required");
    std::string role_text = GetString(*role, name + ".role");
    if (!KnownRole(role_text)) throw FieldError(name + ".role", "unknown role " + Quote(*role));
    Json converted = {{"role", role_text}};
    auto content_it = message.find("content");
    converted["content"] =
        ContentText(content_it == message.end() ? Json() : *content_it, name + ".content");
    // `reasoning` is the other servers' spelling of reasoning_content.
    for (const char* key : {"reasoning_content", "reasoning"}) {
      if (const Json* reasoning = Field(message, key); reasoning && !converted.contains("reasoning_content")) {
        converted["reasoning_content"] = GetString(*reasoning, name + "." + key);
      }
    }
    if (const Json* calls = Field(message, "tool_calls")) {
      converted["tool_calls"] = ParseToolCalls(*calls, name + ".tool_calls");
    }
    for (const char* key : {"tool_call_id", "name"}) {
      if (const Json* value = Field(message, key)) {
        converted[key] = GetString(*value, name + "." + key);
      }
    }
    out.push_back(std::move(converted));
  }
  return out;
}

std::vector<std::string> ParseStop(const Json& stop) {
  std::vector<std::string> out;
  if (stop.is_string()) {
    if (!stop.get<std::string>().empty()) out.push_back(stop.get<std::string>());
    return out;
  }
  if (!stop.is_array()) throw FieldError("stop", "must be a string or a list of strings");
  if (stop.size() > 16) throw FieldError("stop", "at most 16 stop strings are supported");
  for (size_t i = 0; i < stop.size(); ++i) {
    std::string text = GetString(stop[i], fmt::format("stop[{}]", i));
    if (!text.empty()) out.push_back(std::move(text));
  }
  return out;
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

// Fields shared by both routes: sampling, penalties, limits, stop, stream,
// extensions. Logprobs differ per route and are parsed by the callers.
void ParseCommon(const Json& body, ParsedRequest& request) {
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

void ParseChatFields(const Json& body, ParsedRequest& request) {
  request.input.messages = ParseMessages(body);
  if (const Json* tools = Field(body, "tools")) {
    if (!tools->is_array()) throw FieldError("tools", "must be an array, got " + TypeName(*tools));
    for (size_t i = 0; i < tools->size(); ++i) {
      if (!(*tools)[i].is_object()) throw FieldError(fmt::format("tools[{}]", i), "must be an object");
    }
    if (!tools->empty()) request.input.tools = *tools;
  }
  Json& kwargs = request.input.template_kwargs;
  if (const Json* extra = Field(body, "chat_template_kwargs")) {
    if (!extra->is_object()) throw FieldError("chat_template_kwargs", "must be an object");
    for (const auto& [key, value] : extra->items()) kwargs[key] = value;
  }
  // Top-level shortcuts win over chat_template_kwargs: they are the more
  // specific spelling of the same setting.
  if (Field(body, "enable_thinking")) kwargs["enable_thinking"] = GetBool(body, "enable_thinking");
  if (const Json* effort = Field(body, "reasoning_effort")) {
    kwargs["reasoning_effort"] = GetString(*effort, "reasoning_effort");
  }
  if (const Json* choice = Field(body, "tool_choice")) {
    if (!choice->is_string() && !choice->is_object()) {
      throw FieldError("tool_choice", "must be a string or an object");
    }
    kwargs["tool_choice"] = *choice;
  }
  if (Field(body, "logprobs")) request.options.logprobs = GetBool(body, "logprobs");
  if (const Json* top = Field(body, "top_logprobs")) {
    request.options.top_logprobs = static_cast<int>(GetInteger(*top, "top_logprobs", 0, 20));
    // OpenAI demands logprobs=true alongside; asking for alternatives is
    // asking for logprobs, so accept it alone.
    if (request.options.top_logprobs > 0) request.options.logprobs = true;
  }
}

void ParseCompletionFields(const Json& body, ParsedRequest& request) {
  const Json* prompt = Field(body, "prompt");
  if (!prompt) throw FieldError("prompt", "is required");
  if (prompt->is_array()) {
    // A batch of prompts: only the first is served (n=1 per request).
    if (prompt->empty()) throw FieldError("prompt", "must not be empty");
    if (!(*prompt)[0].is_string()) {
      throw FieldError("prompt[0]", "must be a string (token-id prompts are not supported)");
    }
    request.input.prompt = (*prompt)[0].get<std::string>();
  } else {
    request.input.prompt = GetString(*prompt, "prompt");
  }
  if (const Json* logprobs = Field(body, "logprobs")) {
    // Legacy: an integer count of alternatives (0..20); a boolean is accepted too.
    int count = logprobs->is_boolean() ? (logprobs->get<bool>() ? 0 : -1)
                                       : static_cast<int>(GetInteger(*logprobs, "logprobs", 0, 20));
    if (count >= 0) {
      request.legacy_logprobs = count;
      request.options.logprobs = true;
      request.options.top_logprobs = count;
    }
  }
}

template <typename Fields>
ParseResult Parse(std::string_view body, Fields fields) {
  ParseResult result;
  Json json;
  if (!ParseJsonObject(body, json, result.error)) return result;
  try {
    ParsedRequest request;
    fields(json, request);
    ParseCommon(json, request);
    result.request = std::move(request);
  } catch (const FieldError& e) {
    result.error = e.what();
  } catch (const std::exception& e) {  // nlohmann type errors: never expected, never fatal
    result.error = std::string("invalid request: ") + e.what();
  }
  return result;
}

}  // namespace

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

ParseResult ParseChatRequest(std::string_view body) { return Parse(body, ParseChatFields); }

ParseResult ParseCompletionRequest(std::string_view body) {
  return Parse(body, ParseCompletionFields);
}

}  // namespace cairn::server
