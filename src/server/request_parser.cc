#include "server/request_parser.h"

#include "server/request_fields.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace cairn::server {
namespace {

using engine::Json;

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

}  // namespace

ParseResult ParseChatRequest(std::string_view body) { return ParseWith(body, ParseChatFields); }

ParseResult ParseCompletionRequest(std::string_view body) {
  return ParseWith(body, ParseCompletionFields);
}

}  // namespace cairn::server
