#include "server/anthropic_parser.h"

#include <fmt/format.h>

#include "core/log.h"
#include "server/request_fields.h"

namespace cairn::server {
namespace {

// Text of a block's `content` that may be a string or a list of text blocks
// (tool_result content). Non-text parts are refused like top-level images.
std::string BlockText(const Json& content, const std::string& name);

void RefuseMedia(const std::string& type, const std::string& name) {
  if (type == "image" || type == "document") {
    throw FieldError(name, "'" + type + "' content is not supported: the served model has no vision input");
  }
}

std::string BlockText(const Json& content, const std::string& name) {
  if (content.is_null()) return "";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw FieldError(name, "must be a string or a list of blocks, got " + TypeName(content));
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string block_name = fmt::format("{}[{}]", name, i);
    const Json& block = content[i];
    if (!block.is_object()) throw FieldError(block_name, "must be an object, got " + TypeName(block));
    const std::string type = GetString(block.value("type", Json("text")), block_name + ".type");
    RefuseMedia(type, block_name);
    if (type != "text") continue;
    const Json* part = Field(block, "text");
    if (!part) throw FieldError(block_name + ".text", "is required for a text block");
    if (!text.empty()) text += '\n';
    text += GetString(*part, block_name + ".text");
  }
  return text;
}

// The content of one message as a list of blocks (a string is one text block).
Json Blocks(const Json& content, const std::string& name) {
  if (content.is_string()) return Json::array({{{"type", "text"}, {"text", content}}});
  if (!content.is_array()) throw FieldError(name, "must be a string or a list of content blocks, got " + TypeName(content));
  return content;
}

void ConvertUser(const Json& content, const std::string& name, Json& out) {
  Json blocks = Blocks(content, name);
  std::string text;
  bool have_text = false;
  auto flush_text = [&] {
    if (have_text) out.push_back({{"role", "user"}, {"content", text}});
    text.clear();
    have_text = false;
  };
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string block_name = fmt::format("{}[{}]", name, i);
    const Json& block = blocks[i];
    if (!block.is_object()) throw FieldError(block_name, "must be an object, got " + TypeName(block));
    const Json* type_field = Field(block, "type");
    if (!type_field) throw FieldError(block_name + ".type", "is required");
    const std::string type = GetString(*type_field, block_name + ".type");
    RefuseMedia(type, block_name);
    if (type == "text") {
      const Json* part = Field(block, "text");
      if (!part) throw FieldError(block_name + ".text", "is required for a text block");
      if (have_text) text += '\n';
      text += GetString(*part, block_name + ".text");
      have_text = true;
    } else if (type == "tool_result") {
      flush_text();
      const Json* id = Field(block, "tool_use_id");
      if (!id) throw FieldError(block_name + ".tool_use_id", "is required");
      auto content_it = block.find("content");
      std::string result = BlockText(content_it == block.end() ? Json() : *content_it, block_name + ".content");
      if (Field(block, "is_error") && GetBool(block, "is_error")) result = "Error: " + result;
      out.push_back({{"role", "tool"}, {"tool_call_id", GetString(*id, block_name + ".tool_use_id")},
                     {"content", result}});
    }
    // Other user block types (search_result, container_upload, ...) carry
    // nothing a text model can use: skipped.
  }
  flush_text();
}

void ConvertAssistant(const Json& content, const std::string& name, Json& out) {
  Json blocks = Blocks(content, name);
  Json message = {{"role", "assistant"}, {"content", ""}};
  std::string text, reasoning;
  Json calls = Json::array();
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string block_name = fmt::format("{}[{}]", name, i);
    const Json& block = blocks[i];
    if (!block.is_object()) throw FieldError(block_name, "must be an object, got " + TypeName(block));
    const Json* type_field = Field(block, "type");
    if (!type_field) throw FieldError(block_name + ".type", "is required");
    const std::string type = GetString(*type_field, block_name + ".type");
    if (type == "text") {
      const Json* part = Field(block, "text");
      if (!part) throw FieldError(block_name + ".text", "is required for a text block");
      text += GetString(*part, block_name + ".text");
    } else if (type == "thinking") {
      if (const Json* thinking = Field(block, "thinking")) reasoning += GetString(*thinking, block_name + ".thinking");
    } else if (type == "tool_use") {
      const Json* id = Field(block, "id");
      const Json* tool = Field(block, "name");
      if (!id) throw FieldError(block_name + ".id", "is required");
      if (!tool) throw FieldError(block_name + ".name", "is required");
      const Json* input = Field(block, "input");
      calls.push_back({{"id", GetString(*id, block_name + ".id")},
                       {"type", "function"},
                       {"function", {{"name", GetString(*tool, block_name + ".name")},
                                     {"arguments", input ? *input : Json::object()}}}});
    }
  }
  message["content"] = text;
  if (!reasoning.empty()) message["reasoning_content"] = reasoning;
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  out.push_back(std::move(message));
}

Json ConvertMessages(const Json& body) {
  Json out = Json::array();
  if (const Json* system = Field(body, "system")) {
    const std::string text = BlockText(*system, "system");
    if (!text.empty()) out.push_back({{"role", "system"}, {"content", text}});
  }
  const Json* messages = Field(body, "messages");
  if (!messages) throw FieldError("messages", "is required");
  if (!messages->is_array()) throw FieldError("messages", "must be an array, got " + TypeName(*messages));
  if (messages->empty()) throw FieldError("messages", "must not be empty");
  for (size_t i = 0; i < messages->size(); ++i) {
    const std::string name = fmt::format("messages[{}]", i);
    const Json& message = (*messages)[i];
    if (!message.is_object()) throw FieldError(name, "must be an object, got " + TypeName(message));
    const Json* role = Field(message, "role");
    if (!role) throw FieldError(name + ".role", "is required");
    const std::string role_text = GetString(*role, name + ".role");
    const Json* content = Field(message, "content");
    if (!content) throw FieldError(name + ".content", "is required");
    if (role_text == "user") {
      ConvertUser(*content, name + ".content", out);
    } else if (role_text == "assistant") {
      ConvertAssistant(*content, name + ".content", out);
    } else if (role_text == "system") {
      // Mid-conversation system turns (Claude Code 2.1 sends its environment
      // block this way, right after the first user message): a system message
      // in place; the template decides how to show it (see prompt_messages.cc).
      out.push_back({{"role", "system"}, {"content", BlockText(*content, name + ".content")}});
    } else {
      throw FieldError(name + ".role", "must be 'user', 'assistant' or 'system', got " + Quote(*role));
    }
  }
  return out;
}

Json ConvertTools(const Json& tools) {
  if (!tools.is_array()) throw FieldError("tools", "must be an array, got " + TypeName(tools));
  Json out = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string name = fmt::format("tools[{}]", i);
    const Json& tool = tools[i];
    if (!tool.is_object()) throw FieldError(name, "must be an object, got " + TypeName(tool));
    const std::string type = tool.contains("type") && tool["type"].is_string() ? tool["type"].get<std::string>() : "custom";
    const Json* tool_name = Field(tool, "name");
    if (!tool_name) throw FieldError(name + ".name", "is required");
    const std::string tool_name_text = GetString(*tool_name, name + ".name");
    const Json* schema = Field(tool, "input_schema");
    if (type != "custom" || !schema) {
      LogWarn("anthropic request: dropping server tool '{}' (type '{}'): Cairn runs client tools only", tool_name_text,
              type);
      continue;
    }
    if (!schema->is_object()) throw FieldError(name + ".input_schema", "must be an object");
    Json function = {{"name", tool_name_text}, {"parameters", *schema}};
    if (const Json* description = Field(tool, "description")) {
      function["description"] = GetString(*description, name + ".description");
    }
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

Json ConvertToolChoice(const Json& choice) {
  if (!choice.is_object()) throw FieldError("tool_choice", "must be an object");
  const Json* type = Field(choice, "type");
  if (!type) throw FieldError("tool_choice.type", "is required");
  const std::string kind = GetString(*type, "tool_choice.type");
  if (kind == "auto") return "auto";
  if (kind == "any") return "required";
  if (kind == "none") return "none";
  if (kind == "tool") {
    const Json* name = Field(choice, "name");
    if (!name) throw FieldError("tool_choice.name", "is required when type is 'tool'");
    return {{"type", "function"}, {"function", {{"name", GetString(*name, "tool_choice.name")}}}};
  }
  throw FieldError("tool_choice.type", "must be auto, any, tool or none, got " + Quote(*type));
}

void ParseAnthropicCommon(const Json& body, ParsedRequest& request) {
  request.input.messages = ConvertMessages(body);
  if (const Json* tools = Field(body, "tools")) {
    Json converted = ConvertTools(*tools);
    if (!converted.empty()) request.input.tools = std::move(converted);
  }
  Json& kwargs = request.input.template_kwargs;
  if (const Json* choice = Field(body, "tool_choice")) kwargs["tool_choice"] = ConvertToolChoice(*choice);
  if (const Json* thinking = Field(body, "thinking")) {
    if (!thinking->is_object()) throw FieldError("thinking", "must be an object");
    const Json* type = Field(*thinking, "type");
    if (!type) throw FieldError("thinking.type", "is required");
    const std::string kind = GetString(*type, "thinking.type");
    if (kind != "enabled" && kind != "disabled" && kind != "adaptive") {
      throw FieldError("thinking.type", "must be enabled, adaptive or disabled, got " + Quote(*type));
    }
    kwargs["enable_thinking"] = kind != "disabled";
  }
  if (const Json* stop = Field(body, "stop_sequences")) request.options.stop = ParseStop(*stop, "stop_sequences");
  if (const Json* metadata = Field(body, "metadata"); metadata && !metadata->is_object()) {
    throw FieldError("metadata", "must be an object");
  }
}

void ParseMessagesFields(const Json& body, ParsedRequest& request) {
  if (!Field(body, "max_tokens")) throw FieldError("max_tokens", "is required");
  ParseAnthropicCommon(body, request);
}

}  // namespace

ParseResult ParseAnthropicMessagesRequest(std::string_view body) { return ParseWith(body, ParseMessagesFields); }

ParseResult ParseAnthropicCountTokensRequest(std::string_view body) { return ParseWith(body, ParseAnthropicCommon); }

}  // namespace cairn::server
