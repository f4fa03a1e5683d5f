// Tool-call extraction from a finished answer (chat completions with `tools`).
//
// Two native syntaxes, detected by markers regardless of the model:
//   Hermes JSON (Qwen2.5/Qwen3):
//     <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>
//   XML function form (Qwen3-Coder, Qwen3.5):
//     <tool_call>\n<function=f>\n<parameter=k>\nvalue\n</parameter>\n</function>\n</tool_call>
//     (the closing </tool_call> is optional). Parameter values are raw text:
//     coerced by the tool's JSON-schema type when the request's tools give one,
//     otherwise short single-line scalars (true/false/null/numbers) are coerced
//     and everything else stays a string.
// Several calls may follow each other. Text outside the calls is content. A
// call cut off by max_tokens (opener without a complete body) is dropped, not
// shown as markup; a block that does not parse stays in the content verbatim.
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

// A fresh "call_<24 hex>" id.
std::string NewToolCallId();

// Texts that open a tool call; the streaming gate (tool_calls_gate.h) holds
// text back from the first of these on.
const std::vector<std::string>& ToolCallOpeners();

}  // namespace cairn::engine
