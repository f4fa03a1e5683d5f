#include "engine/tool_calls.h"

#include <cstdio>
#include <random>

namespace cairn::engine {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kCallOpen = "<tool_call>";
constexpr std::string_view kCallClose = "</tool_call>";
constexpr std::string_view kFunctionOpen = "<function=";
constexpr std::string_view kFunctionClose = "</function>";
constexpr std::string_view kParamOpen = "<parameter=";
constexpr std::string_view kParamClose = "</parameter>";

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// The JSON-schema type of parameter `key` of tool `name` ("" when unknown).
std::string SchemaType(const Json& tools, const std::string& name, const std::string& key) {
  if (!tools.is_array()) return {};
  for (const Json& tool : tools) {
    if (!tool.is_object()) continue;
    const Json& fn = tool.contains("function") ? tool["function"] : tool;
    if (!fn.is_object() || fn.value("name", std::string()) != name) continue;
    const Json* params = fn.contains("parameters") ? &fn["parameters"] : nullptr;
    if (params == nullptr || !params->is_object() || !params->contains("properties")) return {};
    const Json& props = (*params)["properties"];
    if (!props.is_object() || !props.contains(key) || !props[key].is_object()) return {};
    const Json& type = props[key].value("type", Json());
    if (type.is_string()) return type.get<std::string>();
    if (type.is_array()) {
      for (const Json& t : type) {
        if (t.is_string() && t.get<std::string>() != "null") return t.get<std::string>();
      }
    }
    return {};
  }
  return {};
}

// A raw XML parameter value as JSON, by schema type or (untyped) by shape.
Json CoerceValue(std::string_view raw, const std::string& type) {
  const std::string text(raw);
  if (type == "string") return text;
  if (type.empty()) {
    if (text.size() > 32 || text.find('\n') != std::string::npos) return text;
    const Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_boolean() || parsed.is_null() || parsed.is_number()) {
      if (!parsed.is_discarded()) return parsed;
    }
    return text;
  }
  const Json parsed = Json::parse(Trim(text), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return text;
  if (text == "null" || Trim(text) == "null") return nullptr;
  if ((type == "integer" || type == "number") && parsed.is_number()) return parsed;
  if (type == "boolean" && parsed.is_boolean()) return parsed;
  if (type == "object" && parsed.is_object()) return parsed;
  if (type == "array" && parsed.is_array()) return parsed;
  return text;
}

// Parses "<function=NAME>" params "</function>" starting at `body[0]`; on
// success appends a call and returns the bytes consumed; 0 on failure.
// `closed`: the enclosing block is complete, so a missing </function> is tolerated.
size_t ParseXmlFunction(std::string_view body, bool closed, const Json& tools,
                        std::vector<ToolCall>& calls) {
  if (!StartsWith(body, kFunctionOpen)) return 0;
  const size_t name_end = body.find('>', kFunctionOpen.size());
  if (name_end == std::string_view::npos) return 0;
  const std::string name(Trim(body.substr(kFunctionOpen.size(), name_end - kFunctionOpen.size())));
  if (name.empty()) return 0;
  Json args = Json::object();
  size_t pos = name_end + 1;
  for (;;) {
    while (pos < body.size() && IsSpace(body[pos])) ++pos;
    const std::string_view rest = body.substr(pos);
    if (StartsWith(rest, kFunctionClose)) {
      pos += kFunctionClose.size();
      break;
    }
    if (rest.empty() && closed) break;  // </function> omitted inside a closed block
    if (!StartsWith(rest, kParamOpen)) return 0;
    const size_t key_end = rest.find('>', kParamOpen.size());
    if (key_end == std::string_view::npos) return 0;
    const std::string key(Trim(rest.substr(kParamOpen.size(), key_end - kParamOpen.size())));
    const size_t value_end = rest.find(kParamClose, key_end + 1);
    if (value_end == std::string_view::npos) return 0;  // truncated value
    std::string_view value = rest.substr(key_end + 1, value_end - key_end - 1);
    // The template writes "\n" around each value; exactly one is markup.
    if (StartsWith(value, "\n")) value.remove_prefix(1);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    args[key] = CoerceValue(value, SchemaType(tools, name, key));
    pos += value_end + kParamClose.size();
  }
  calls.push_back({NewToolCallId(), name, args.dump()});
  return pos;
}

// Hermes JSON body {"name": ..., "arguments": ...}; false when it is not one.
bool ParseJsonCall(std::string_view body, std::vector<ToolCall>& calls) {
  const Json parsed = Json::parse(Trim(body), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return false;
  const auto name = parsed.find("name");
  if (name == parsed.end() || !name->is_string()) return false;
  std::string arguments = "{}";
  for (const char* key : {"arguments", "parameters"}) {
    const auto it = parsed.find(key);
    if (it == parsed.end()) continue;
    arguments = it->is_string() ? it->get<std::string>() : it->dump();
    break;
  }
  calls.push_back({NewToolCallId(), name->get<std::string>(), std::move(arguments)});
  return true;
}

// One <tool_call> block body (between the tags): XML functions or a JSON call.
bool ParseBlock(std::string_view body, bool closed, const Json& tools,
                std::vector<ToolCall>& calls) {
  const std::string_view trimmed = Trim(body);
  if (!StartsWith(trimmed, kFunctionOpen)) return closed && ParseJsonCall(trimmed, calls);
  std::vector<ToolCall> found;
  size_t pos = 0;
  while (pos < trimmed.size()) {
    const size_t used = ParseXmlFunction(trimmed.substr(pos), closed, tools, found);
    if (used == 0) return false;
    pos += used;
    while (pos < trimmed.size() && IsSpace(trimmed[pos])) ++pos;
  }
  calls.insert(calls.end(), found.begin(), found.end());
  return !found.empty();
}

}  // namespace

const std::vector<std::string>& ToolCallOpeners() {
  static const std::vector<std::string> openers = {std::string(kCallOpen),
                                                   std::string(kFunctionOpen)};
  return openers;
}

std::string NewToolCallId() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  const uint64_t a = rng();
  const uint64_t b = rng();
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016llx%08llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b & 0xffffffffull));
  return std::string("call_") + buf;
}

ParsedToolCalls ParseToolCalls(std::string_view text, const Json& tools) {
  ParsedToolCalls out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t call_at = text.find(kCallOpen, pos);
    const size_t fn_at = text.find(kFunctionOpen, pos);
    const size_t at = std::min(call_at, fn_at);
    if (at == std::string_view::npos) break;
    out.content.append(text.substr(pos, at - pos));
    if (at == call_at) {
      const size_t body_start = at + kCallOpen.size();
      const size_t close = text.find(kCallClose, body_start);
      const bool closed = close != std::string_view::npos;
      const size_t body_end = closed ? close : text.size();
      const size_t end = closed ? close + kCallClose.size() : text.size();
      if (!ParseBlock(text.substr(body_start, body_end - body_start), closed, tools, out.calls) &&
          closed) {
        out.content.append(text.substr(at, end - at));  // not a call: keep it visible
      }
      pos = end;  // an unclosed, unparsable block was cut by max_tokens: dropped
    } else {
      // A bare <function=...> block without the <tool_call> wrapper.
      const size_t used = ParseXmlFunction(text.substr(at), false, tools, out.calls);
      if (used == 0) {
        if (text.find(kFunctionClose, at) == std::string_view::npos) {
          pos = text.size();  // truncated: dropped
        } else {
          out.content.append(kFunctionOpen);
          pos = at + kFunctionOpen.size();
        }
      } else {
        pos = at + used;
      }
    }
  }
  if (pos < text.size()) out.content.append(text.substr(pos));
  if (!out.calls.empty()) out.content = std::string(Trim(out.content));
  return out;
}

Json ToOpenAiToolCalls(const std::vector<ToolCall>& calls) {
  Json out = Json::array();
  for (const ToolCall& call : calls) {
    out.push_back({{"id", call.id},
                   {"type", "function"},
                   {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
  }
  return out;
}

}  // namespace cairn::engine
