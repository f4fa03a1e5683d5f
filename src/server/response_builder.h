// OpenAI response objects built from engine results: chat.completion,
// chat.completion.chunk, text_completion (+ chunks), usage, logprobs and the
// x_cairn statistics block.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/service.h"

namespace cairn::server {

using engine::Json;

// Fixed per request: every chunk of a stream repeats id, created and model.
struct ResponseMeta {
  std::string id;         // chatcmpl-... / cmpl-...
  int64_t created = 0;    // unix seconds
  std::string model;
};

// "chatcmpl-" + 24 random alphanumerics.
std::string NewResponseId(std::string_view prefix);
ResponseMeta NewResponseMeta(std::string_view id_prefix, std::string model);

Json UsageJson(const engine::GenerationResult& result);
// x_cairn: accounting, timings (queue excluded from ttft), rates, cache, spec.
Json XCairnJson(const engine::GenerationResult& result);

// Chat logprobs entry list ({token, logprob, bytes, top_logprobs[]}).
Json ChatLogprobsContent(const std::vector<engine::TokenLogprob>& logprobs);
// Legacy completions shape: {tokens, token_logprobs, top_logprobs, text_offset}.
// `text_offset_base` is where the first token starts in the generated text.
Json LegacyLogprobs(const std::vector<engine::TokenLogprob>& logprobs, int64_t text_offset_base);

Json ChatCompletionJson(const ResponseMeta& meta, const engine::GenerationResult& result,
                        bool with_logprobs);
Json CompletionJson(const ResponseMeta& meta, const engine::GenerationResult& result,
                    bool with_logprobs);

// Streaming pieces. Each returns a whole SSE frame ("data: ...\n\n").
std::string SseFrame(const Json& payload);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

std::string ChatRoleChunk(const ResponseMeta& meta);
// An empty-delta chunk: spec-legal bytes that reset client idle timers.
std::string ChatKeepAliveChunk(const ResponseMeta& meta);
// Empty string when the delta carries nothing to send.
std::string ChatDeltaChunk(const ResponseMeta& meta, const engine::GenerationDelta& delta,
                           bool with_logprobs);
std::string ChatFinalChunk(const ResponseMeta& meta, const engine::GenerationResult& result,
                           bool include_usage);

std::string CompletionKeepAliveChunk(const ResponseMeta& meta);
std::string CompletionDeltaChunk(const ResponseMeta& meta, const engine::GenerationDelta& delta,
                                 bool with_logprobs, int64_t text_offset_base);
std::string CompletionFinalChunk(const ResponseMeta& meta, const engine::GenerationResult& result,
                                 bool include_usage);

// An in-stream error frame for errors after the 200 status went out.
std::string StreamErrorFrame(int status, const std::string& message);

// Serialises with invalid UTF-8 replaced (token texts may be partial UTF-8).
std::string DumpJson(const Json& json);

}  // namespace cairn::server
