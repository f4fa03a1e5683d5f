// Anthropic Messages API requests -> the engine's input (the same
// GenerationInput the OpenAI routes produce: OpenAI-shaped messages and
// function tools, so the chat template sees one shape whatever the client).
//
// Mapping:
// * `system` (a string or text blocks, joined by "\n") -> a system message;
// * user text blocks -> a user message; `tool_result` blocks -> `tool`
//   messages (tool_call_id = tool_use_id), in block order; image and document
//   blocks -> 400 (no vision model);
// * assistant text -> content, `thinking` -> reasoning_content, `tool_use` ->
//   tool_calls (arguments = input); redacted_thinking is dropped;
// * `tools` [{name, description, input_schema}] -> function tools; server
//   tools (a `type` other than "custom", e.g. web_search_20250305) are dropped
//   with a warning in the log, never a 400;
// * `tool_choice` auto/any/tool/none -> "auto"/"required"/{function}/"none";
// * `thinking` {type: enabled|adaptive|disabled} -> enable_thinking;
// * `stop_sequences` -> stop strings; `metadata`, `cache_control` accepted
//   and ignored (Cairn caches every prefix on its own).
#pragma once

#include <string_view>

#include "server/request_parser.h"

namespace cairn::server {

// POST /v1/messages (max_tokens required, as Anthropic's API demands).
ParseResult ParseAnthropicMessagesRequest(std::string_view body);
// POST /v1/messages/count_tokens (same body; max_tokens not needed).
ParseResult ParseAnthropicCountTokensRequest(std::string_view body);

}  // namespace cairn::server
