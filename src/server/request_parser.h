// Request parsing: HTTP body text -> engine::GenerationInput + GenerationOptions.
//
// Pure functions (no I/O, no engine), so they can be unit-tested and fuzzed.
// Unknown fields are ignored (clients send many we do not use); known fields
// with the wrong type or range are rejected with a message that names the
// field path, e.g. "messages[2].role: unknown role 'robot'".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/service.h"

namespace cairn::server {

struct ParsedRequest {
  engine::GenerationInput input;
  engine::GenerationOptions options;
  std::string model;            // echoed back in responses (the engine serves one model)
  bool stream = false;
  bool include_usage = false;   // stream_options.include_usage
  // The request set its answer limit (max_tokens, max_completion_tokens,
  // max_output_tokens); otherwise the server's --default-max-tokens applies.
  bool max_tokens_given = false;
  // /v1/completions legacy `logprobs: N` (parallel-array shape); -1 = not asked.
  int legacy_logprobs = -1;
  // What NormalizeVolatilePrefix removed (reported in x_cairn.cache.normalized).
  engine::Json normalized = engine::Json::array();
  // Server-side conversation state (Responses API): continue the stored
  // conversation of this response id, and/or store this one under its id.
  std::string previous_response_id;
  bool store = false;
  std::string response_id;  // set by the generation route: this response's id (the store key)
};

struct ParseResult {
  std::optional<ParsedRequest> request;
  std::string error;            // set when request is empty
  bool ok() const { return request.has_value(); }
};

// Bodies nested deeper than this are refused before parsing (protects every
// later recursive walk of the document).
inline constexpr int kMaxJsonDepth = 64;

// POST /v1/chat/completions.
ParseResult ParseChatRequest(std::string_view body);
// POST /v1/completions.
ParseResult ParseCompletionRequest(std::string_view body);

// Parses a body into a JSON object, or returns false with `error` set
// (invalid JSON, too deep, not an object). Shared by the small routes.
bool ParseJsonObject(std::string_view body, engine::Json& out, std::string& error);

}  // namespace cairn::server
