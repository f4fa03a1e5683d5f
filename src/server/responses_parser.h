// OpenAI Responses API requests (POST /v1/responses) -> the engine's input
// (OpenAI chat-shaped messages and function tools, as every dialect produces).
//
// Mapping:
// * `instructions` -> a system message first;
// * `input` as a string -> one user message; as items:
//   - `message` (also role-only items): user/system/developer/assistant with
//     string content or input_text/output_text parts (developer -> system);
//     input_image/input_file parts -> 400 (no vision model);
//   - `function_call` {call_id, name, arguments} -> tool_calls of an
//     assistant message (consecutive calls share one);
//   - `function_call_output` {call_id, output} -> a `tool` message;
//   - `reasoning` {summary/content texts} -> reasoning_content of the next
//     assistant message;
//   - other item types (local_shell_call, custom_tool_call, web_search_call,
//     ...) are dropped with a warning in the log;
// * `tools`: function tools are kept; every other type Codex and friends send
//   (custom, local_shell, web_search, file_search, mcp, ...) is dropped with a
//   warning, never a 400 that stops the client;
// * `tool_choice` "auto"/"none"/"required"/{type: function, name};
// * `reasoning.effort` -> reasoning_effort ("none" also turns enable_thinking off);
// * `max_output_tokens` -> max_tokens; `store` (default true) and
//   `previous_response_id` -> ParsedRequest (resolved by the generation route
//   against the server's ResponseStore); `parallel_tool_calls`, `text`,
//   `truncation`, `include`, `metadata`, `user` are accepted and ignored.
#pragma once

#include <string_view>

#include "server/request_parser.h"

namespace cairn::server {

ParseResult ParseResponsesRequest(std::string_view body);

}  // namespace cairn::server
