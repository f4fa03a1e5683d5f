// Tool calls in a finished answer (chat completions with `tools`), and the
// pieces shared with the streaming side.
//
// ParseToolCalls runs the incremental parser (tool_call_stream.h) over the
// whole text, so it finds exactly what a stream of the same text sends:
//   Hermes JSON (Qwen2.5/Qwen3):
//     <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>
//   XML function form (Qwen3-Coder, Qwen3.5):
//     <tool_call>\n<function=f>\n<parameter=k>\nvalue\n</parameter>\n</function>\n</tool_call>
//     (the closing tags are optional at the end of the answer), parameter
//     values coerced by the tools' JSON-schema types (tool_call_xml.h).
// Arguments are compact JSON object texts. Text outside the calls is content
// (trimmed when there are calls). A block that does not parse stays in the
// content verbatim; markup cut off before a call's name is dropped; a call cut
// off after it keeps the arguments it had (see tool_call_stream.h).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cairn::engine {

struct ToolCall {
  std::string id;         // "call_" + 24 random hex digits
  std::string name;
  std::string arguments;  // a JSON object, serialized (OpenAI's function.arguments)
};

struct ParsedToolCalls {
  std::string content;          // text outside the calls (trimmed when there are calls)
  std::vector<ToolCall> calls;  // in output order
};

// `tools`: the request's OpenAI tool definitions (or null) for schema coercion.
ParsedToolCalls ParseToolCalls(std::string_view text,
                               const nlohmann::ordered_json& tools = nullptr);

// OpenAI message.tool_calls: [{id, type: "function", function: {name, arguments}}].
nlohmann::ordered_json ToOpenAiToolCalls(const std::vector<ToolCall>& calls);

// The function object of one OpenAI tool definition ({type, function: {...}}
// or a bare {name, parameters}); null when it is not an object.
const nlohmann::ordered_json* ToolFunction(const nlohmann::ordered_json& tool);

// A fresh "call_<24 hex>" id.
std::string NewToolCallId();

// Texts that open a tool call; the streaming gate (tool_calls_gate.h) holds
// text back from the first of these on.
const std::vector<std::string>& ToolCallOpeners();

}  // namespace cairn::engine
