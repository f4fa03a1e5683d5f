#include "engine/tool_calls.h"

#include <cstdio>
#include <random>

#include "engine/tool_call_stream.h"

namespace cairn::engine {
namespace {

using Json = nlohmann::ordered_json;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

const std::vector<std::string>& ToolCallOpeners() {
  // ```json and ```\n{ open fenced calls (tool_call_hermes.h, FencedCall);
  // other code fences diverge from them within a few bytes.
  static const std::vector<std::string> openers = {"<tool_call>", "<function=", "```json", "```\n{"};
  return openers;
}

const Json* ToolFunction(const Json& tool) {
  if (!tool.is_object()) return nullptr;
  const Json* function = tool.contains("function") ? &tool["function"] : &tool;
  return function->is_object() ? function : nullptr;
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
  ToolCallStream stream(tools);
  ParsedToolCalls out;
  out.content = stream.Feed(text, /*final=*/true).content;
  out.calls = stream.calls();
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
