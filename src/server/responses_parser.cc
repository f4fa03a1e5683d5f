#include "server/responses_parser.h"

#include <fmt/format.h>

#include "core/log.h"
#include "server/request_fields.h"

namespace cairn::server {
namespace {

// Text of a message's content: a string or a list of text parts.
std::string PartsText(const Json& content, const std::string& name) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw FieldError(name, "must be a string or a list of content parts, got " + TypeName(content));
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string part_name = fmt::format("{}[{}]", name, i);
    const Json& part = content[i];
    if (!part.is_object()) throw FieldError(part_name, "must be an object, got " + TypeName(part));
    const std::string type = part.contains("type") && part["type"].is_string() ? part["type"].get<std::string>() : "";
    if (type == "input_image" || type == "input_file" || type == "input_audio") {
      throw FieldError(part_name, "'" + type + "' content is not supported: the served model has no such input");
    }
    if (type != "input_text" && type != "output_text" && type != "text" && type != "summary_text" &&
        type != "reasoning_text") {
      continue;  // refusal and future part types carry no prompt text
    }
    const Json* part_text = Field(part, "text");
    if (!part_text) throw FieldError(part_name + ".text", "is required for a text part");
    if (!text.empty()) text += '\n';
    text += GetString(*part_text, part_name + ".text");
  }
  return text;
}

struct Conversation {
  Json messages = Json::array();
  std::string pending_reasoning;  // a reasoning item waiting for its assistant message

  Json& Assistant(bool reuse_last) {
    if (!reuse_last || messages.empty() || messages.back()["role"] != "assistant") {
      messages.push_back({{"role", "assistant"}, {"content", ""}});
    }
    Json& message = messages.back();
    if (!pending_reasoning.empty()) {
      message["reasoning_content"] = pending_reasoning;
      pending_reasoning.clear();
    }
    return message;
  }
};

void AddMessageItem(const Json& item, const std::string& name, Conversation& conversation) {
  const Json* role = Field(item, "role");
  if (!role) throw FieldError(name + ".role", "is required");
  std::string role_text = GetString(*role, name + ".role");
  if (role_text == "developer") role_text = "system";
  if (role_text != "user" && role_text != "system" && role_text != "assistant") {
    throw FieldError(name + ".role", "must be user, system, developer or assistant, got " + Quote(*role));
  }
  auto content_it = item.find("content");
  const std::string text = content_it == item.end() ? "" : PartsText(*content_it, name + ".content");
  if (role_text == "assistant") {
    Json& message = conversation.Assistant(false);
    message["content"] = text;
  } else {
    conversation.messages.push_back({{"role", role_text}, {"content", text}});
  }
}

void AddItems(const Json& input, Conversation& conversation) {
  if (input.is_string()) {
    conversation.messages.push_back({{"role", "user"}, {"content", input}});
    return;
  }
  if (!input.is_array()) throw FieldError("input", "must be a string or a list of items, got " + TypeName(input));
  for (size_t i = 0; i < input.size(); ++i) {
    const std::string name = fmt::format("input[{}]", i);
    const Json& item = input[i];
    if (!item.is_object()) throw FieldError(name, "must be an object, got " + TypeName(item));
    const std::string type = item.contains("type") && item["type"].is_string() ? item["type"].get<std::string>()
                                                                                : (item.contains("role") ? "message" : "");
    if (type == "message") {
      AddMessageItem(item, name, conversation);
    } else if (type == "function_call") {
      const Json* call_id = Field(item, "call_id");
      const Json* fn = Field(item, "name");
      if (!call_id) throw FieldError(name + ".call_id", "is required");
      if (!fn) throw FieldError(name + ".name", "is required");
      Json arguments = Json::object();
      if (const Json* args = Field(item, "arguments")) {
        const std::string text = GetString(*args, name + ".arguments");
        Json parsed = Json::parse(text, nullptr, false);
        arguments = parsed.is_discarded() ? Json(text) : parsed;  // a truncated call stays text
      }
      Json& message = conversation.Assistant(true);
      if (!message.contains("tool_calls")) message["tool_calls"] = Json::array();
      message["tool_calls"].push_back({{"id", GetString(*call_id, name + ".call_id")},
                                       {"type", "function"},
                                       {"function", {{"name", GetString(*fn, name + ".name")}, {"arguments", arguments}}}});
    } else if (type == "function_call_output") {
      const Json* call_id = Field(item, "call_id");
      if (!call_id) throw FieldError(name + ".call_id", "is required");
      auto output_it = item.find("output");
      const std::string output = output_it == item.end() || output_it->is_null() ? "" : PartsText(*output_it, name + ".output");
      conversation.messages.push_back(
          {{"role", "tool"}, {"tool_call_id", GetString(*call_id, name + ".call_id")}, {"content", output}});
    } else if (type == "reasoning") {
      std::string text;
      for (const char* key : {"content", "summary"}) {
        if (const Json* parts = Field(item, key); parts && text.empty()) text = PartsText(*parts, name + "." + key);
      }
      conversation.pending_reasoning += text;
    } else {
      LogWarn("responses request: dropping input item {} of type '{}' (not supported)", name, type);
    }
  }
}

Json ConvertTools(const Json& tools) {
  if (!tools.is_array()) throw FieldError("tools", "must be an array, got " + TypeName(tools));
  Json out = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string name = fmt::format("tools[{}]", i);
    const Json& tool = tools[i];
    if (!tool.is_object()) throw FieldError(name, "must be an object, got " + TypeName(tool));
    const std::string type = tool.contains("type") && tool["type"].is_string() ? tool["type"].get<std::string>() : "";
    if (type != "function") {
      LogWarn("responses request: dropping tool {} of type '{}': Cairn runs function tools only", name, type);
      continue;
    }
    const Json* tool_name = Field(tool, "name");
    if (!tool_name) throw FieldError(name + ".name", "is required");
    Json function = {{"name", GetString(*tool_name, name + ".name")}};
    if (const Json* description = Field(tool, "description")) {
      function["description"] = GetString(*description, name + ".description");
    }
    if (const Json* parameters = Field(tool, "parameters")) {
      if (!parameters->is_object()) throw FieldError(name + ".parameters", "must be an object");
      function["parameters"] = *parameters;
    }
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

Json ConvertToolChoice(const Json& choice) {
  if (choice.is_string()) {
    const std::string kind = choice.get<std::string>();
    if (kind == "auto" || kind == "none" || kind == "required") return choice;
    throw FieldError("tool_choice", "must be auto, none, required or an object, got " + Quote(choice));
  }
  if (!choice.is_object()) throw FieldError("tool_choice", "must be a string or an object");
  const Json* type = Field(choice, "type");
  if (type && type->is_string() && *type == "function") {
    const Json* name = Field(choice, "name");
    if (!name) throw FieldError("tool_choice.name", "is required for a function choice");
    return {{"type", "function"}, {"function", {{"name", GetString(*name, "tool_choice.name")}}}};
  }
  return "auto";  // hosted-tool choices: the tools themselves were dropped
}

void ParseResponsesFields(const Json& body, ParsedRequest& request) {
  Conversation conversation;
  if (const Json* instructions = Field(body, "instructions")) {
    conversation.messages.push_back({{"role", "system"}, {"content", GetString(*instructions, "instructions")}});
  }
  const Json* input = Field(body, "input");
  if (!input) throw FieldError("input", "is required");
  AddItems(*input, conversation);
  if (conversation.messages.empty()) throw FieldError("input", "must contain at least one message");
  request.input.messages = std::move(conversation.messages);
  if (const Json* tools = Field(body, "tools")) {
    Json converted = ConvertTools(*tools);
    if (!converted.empty()) request.input.tools = std::move(converted);
  }
  Json& kwargs = request.input.template_kwargs;
  if (const Json* choice = Field(body, "tool_choice")) kwargs["tool_choice"] = ConvertToolChoice(*choice);
  if (const Json* reasoning = Field(body, "reasoning")) {
    if (!reasoning->is_object()) throw FieldError("reasoning", "must be an object");
    if (const Json* effort = Field(*reasoning, "effort")) {
      const std::string level = GetString(*effort, "reasoning.effort");
      kwargs["reasoning_effort"] = level;
      kwargs["enable_thinking"] = level != "none";
    }
  }
  if (const Json* max_tokens = Field(body, "max_output_tokens")) {
    request.options.max_tokens = static_cast<int>(GetInteger(*max_tokens, "max_output_tokens", 1, INT32_MAX));
    request.max_tokens_given = true;
  }
  request.store = Field(body, "store") ? GetBool(body, "store") : true;  // the API's default
  if (const Json* previous = Field(body, "previous_response_id")) {
    request.previous_response_id = GetString(*previous, "previous_response_id");
  }
  if (Field(body, "parallel_tool_calls")) GetBool(body, "parallel_tool_calls");
}

}  // namespace

ParseResult ParseResponsesRequest(std::string_view body) { return ParseWith(body, ParseResponsesFields); }

}  // namespace cairn::server
