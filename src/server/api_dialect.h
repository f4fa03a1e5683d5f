// The seam every generation API goes through. An ApiDialect says how a body
// becomes the engine's input (ParsedRequest: one translation per API, into the
// one engine contract of engine/service.h), how the engine's deltas and result
// become bytes (a ResponseEncoder: one JSON body, or the API's SSE frames) and
// how errors look (ErrorDialect). generation_routes.cc runs every dialect the
// same way: parse, normalise, generate on a worker thread, stream or answer,
// log. Adding an API is one parser, one encoder and one table entry.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/service.h"
#include "server/errors.h"
#include "server/request_parser.h"
#include "server/response_builder.h"

namespace cairn::server {

// Turns one request's engine output into the API's wire format. One instance
// per request, so it may keep state (open content blocks, text offsets).
class ResponseEncoder {
 public:
  virtual ~ResponseEncoder() = default;
  // Frames sent once a stream commits to status 200, before any delta ("" = none).
  virtual std::string StreamStart() = 0;
  // A frame that is legal at any point of the stream and resets client idle timers.
  virtual std::string KeepAlive() = 0;
  // Frames for one delta ("" when it carries nothing to send).
  virtual std::string Delta(const engine::GenerationDelta& delta) = 0;
  // The closing frames: final chunk / usage / [DONE], or message_delta + message_stop.
  virtual std::string StreamEnd(const engine::GenerationResult& result) = 0;
  // An error after the 200 went out, as the API's in-stream error frame.
  virtual std::string StreamError(const ApiError& error) = 0;
  // The non-streaming response body.
  virtual Json Body(const engine::GenerationResult& result) = 0;
};

struct ApiDialect {
  const char* route;      // for the request log line
  const char* id_prefix;  // response ids: "chatcmpl-", "cmpl-", "msg_"
  ErrorDialect errors;
  ParseResult (*parse)(std::string_view body);
  std::unique_ptr<ResponseEncoder> (*make_encoder)(const ParsedRequest& request, const ResponseMeta& meta);
};

// POST /v1/chat/completions, POST /v1/completions (openai_encoders.cc).
extern const ApiDialect kOpenAiChatDialect;
extern const ApiDialect kOpenAiCompletionDialect;
// POST /v1/responses (responses_encoder.cc).
extern const ApiDialect kOpenAiResponsesDialect;
// POST /v1/messages (anthropic_encoder.cc).
extern const ApiDialect kAnthropicMessagesDialect;

}  // namespace cairn::server
