#include "server/response_builder.h"

#include <chrono>
#include <random>

#include "server/errors.h"

namespace cairn::server {
namespace {

// The bytes of a token as ints, as OpenAI sends them (lets clients rebuild
// characters split across tokens).
Json BytesJson(const std::string& text) {
  Json bytes = Json::array();
  for (unsigned char c : text) bytes.push_back(static_cast<int>(c));
  return bytes;
}

Json ChoiceLogprobs(const engine::GenerationDelta& delta) {
  return Json{{"content", ChatLogprobsContent(delta.logprobs)}};
}

Json ChunkEnvelope(const ResponseMeta& meta, std::string_view object) {
  return Json{{"id", meta.id}, {"object", object}, {"created", meta.created}, {"model", meta.model}};
}

double Rate(int64_t tokens, double seconds) {
  return seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0;
}

}  // namespace

std::string DumpJson(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string NewResponseId(std::string_view prefix) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return id;
}

ResponseMeta NewResponseMeta(std::string_view id_prefix, std::string model) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return ResponseMeta{NewResponseId(id_prefix),
                      std::chrono::duration_cast<std::chrono::seconds>(now).count(),
                      std::move(model)};
}

Json UsageJson(const engine::GenerationResult& result) {
  return Json{{"prompt_tokens", result.prompt_tokens},
              {"completion_tokens", result.completion_tokens},
              {"total_tokens", result.prompt_tokens + result.completion_tokens},
              {"prompt_tokens_details", {{"cached_tokens", result.cached_tokens}}}};
}

Json XCairnJson(const engine::GenerationResult& result) {
  int64_t fresh = result.prompt_tokens - result.cached_tokens;
  Json x = {{"prompt_tokens", result.prompt_tokens},
            {"cached_tokens", result.cached_tokens},
            {"completion_tokens", result.completion_tokens},
            {"ttft_seconds", result.ttft_seconds},
            {"prefill_seconds", result.prefill_seconds},
            // null, not 0, when nothing fresh was read: a rate over a
            // fully cached prompt would be meaningless.
            {"prefill_tokens_per_sec", nullptr},
            {"decode_seconds", result.decode_seconds},
            {"decode_tokens_per_sec", Rate(result.completion_tokens, result.decode_seconds)},
            {"queue_seconds", result.queue_seconds},
            {"cache", result.cache},
            {"spec", result.spec}};
  if (fresh > 0 && result.prefill_seconds > 0) x["prefill_tokens_per_sec"] = Rate(fresh, result.prefill_seconds);
  if (result.report_token_ids) x["completion_token_ids"] = result.completion_ids;
  Json trace = Json::array();
  for (const auto& mark : result.prefill_trace) trace.push_back(Json::array({mark.position, mark.seconds}));
  x["prefill_trace"] = std::move(trace);
  return x;
}

Json ChatLogprobsContent(const std::vector<engine::TokenLogprob>& logprobs) {
  Json content = Json::array();
  for (const auto& entry : logprobs) {
    Json top = Json::array();
    for (const auto& [text, logprob] : entry.top) {
      top.push_back({{"token", text}, {"logprob", logprob}, {"bytes", BytesJson(text)}});
    }
    content.push_back({{"token", entry.text},
                       {"logprob", entry.logprob},
                       {"bytes", BytesJson(entry.text)},
                       {"top_logprobs", std::move(top)}});
  }
  return content;
}

Json LegacyLogprobs(const std::vector<engine::TokenLogprob>& logprobs, int64_t text_offset_base) {
  Json tokens = Json::array(), token_logprobs = Json::array(), top = Json::array(),
       offsets = Json::array();
  int64_t offset = text_offset_base;
  for (const auto& entry : logprobs) {
    tokens.push_back(entry.text);
    token_logprobs.push_back(entry.logprob);
    Json alternatives = Json::object();
    for (const auto& [text, logprob] : entry.top) alternatives[text] = logprob;
    top.push_back(std::move(alternatives));
    offsets.push_back(offset);
    offset += static_cast<int64_t>(entry.text.size());
  }
  return Json{{"tokens", std::move(tokens)},
              {"token_logprobs", std::move(token_logprobs)},
              {"top_logprobs", std::move(top)},
              {"text_offset", std::move(offsets)}};
}

Json ChatCompletionJson(const ResponseMeta& meta, const engine::GenerationResult& result,
                        bool with_logprobs) {
  Json message = {{"role", "assistant"}, {"content", result.content}};
  if (!result.tool_calls.empty()) {
    if (result.content.empty()) message["content"] = nullptr;  // as OpenAI sends a pure tool call
    message["tool_calls"] = result.tool_calls;
  }
  if (!result.reasoning.empty()) {
    // Both spellings: DeepSeek/llama.cpp clients read reasoning_content,
    // vLLM/OpenRouter-style clients read reasoning.
    message["reasoning_content"] = result.reasoning;
    message["reasoning"] = result.reasoning;
  }
  Json choice = {{"index", 0}, {"message", std::move(message)}, {"logprobs", nullptr},
                 {"finish_reason", result.finish_reason}};
  if (with_logprobs) choice["logprobs"] = {{"content", ChatLogprobsContent(result.logprobs)}};
  Json body = ChunkEnvelope(meta, "chat.completion");
  body["choices"] = Json::array({std::move(choice)});
  body["usage"] = UsageJson(result);
  body["x_cairn"] = XCairnJson(result);
  return body;
}

Json CompletionJson(const ResponseMeta& meta, const engine::GenerationResult& result,
                    bool with_logprobs) {
  // Raw text, as streamed: reasoning the engine split out goes back in front.
  Json choice = {{"index", 0}, {"text", result.reasoning + result.content}, {"logprobs", nullptr},
                 {"finish_reason", result.finish_reason}};
  if (with_logprobs) choice["logprobs"] = LegacyLogprobs(result.logprobs, 0);
  Json body = ChunkEnvelope(meta, "text_completion");
  body["choices"] = Json::array({std::move(choice)});
  body["usage"] = UsageJson(result);
  body["x_cairn"] = XCairnJson(result);
  return body;
}

std::string SseFrame(const Json& payload) { return "data: " + DumpJson(payload) + "\n\n"; }

std::string ChatRoleChunk(const ResponseMeta& meta) {
  Json chunk = ChunkEnvelope(meta, "chat.completion.chunk");
  chunk["choices"] = Json::array(
      {{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr},
        {"finish_reason", nullptr}}});
  return SseFrame(chunk);
}

std::string ChatKeepAliveChunk(const ResponseMeta& meta) {
  Json chunk = ChunkEnvelope(meta, "chat.completion.chunk");
  chunk["choices"] = Json::array(
      {{{"index", 0}, {"delta", Json::object()}, {"logprobs", nullptr}, {"finish_reason", nullptr}}});
  return SseFrame(chunk);
}

std::string ChatDeltaChunk(const ResponseMeta& meta, const engine::GenerationDelta& delta,
                           bool with_logprobs) {
  bool has_logprobs = with_logprobs && !delta.logprobs.empty();
  const bool has_tool_calls = delta.tool_calls.is_array() && !delta.tool_calls.empty();
  if (delta.content.empty() && delta.reasoning.empty() && !has_logprobs && !has_tool_calls) return "";
  Json body = Json::object();
  if (has_tool_calls) body["tool_calls"] = delta.tool_calls;
  if (!delta.reasoning.empty()) {
    body["reasoning_content"] = delta.reasoning;
    body["reasoning"] = delta.reasoning;
  }
  if (!delta.content.empty()) body["content"] = delta.content;
  Json chunk = ChunkEnvelope(meta, "chat.completion.chunk");
  chunk["choices"] = Json::array({{{"index", 0}, {"delta", std::move(body)},
                                   {"logprobs", has_logprobs ? ChoiceLogprobs(delta) : Json()},
                                   {"finish_reason", nullptr}}});
  return SseFrame(chunk);
}

std::string ChatFinalChunk(const ResponseMeta& meta, const engine::GenerationResult& result,
                           bool include_usage) {
  Json chunk = ChunkEnvelope(meta, "chat.completion.chunk");
  chunk["choices"] = Json::array({{{"index", 0}, {"delta", Json::object()}, {"logprobs", nullptr},
                                   {"finish_reason", result.finish_reason}}});
  if (include_usage) chunk["usage"] = UsageJson(result);
  chunk["x_cairn"] = XCairnJson(result);
  return SseFrame(chunk);
}

std::string CompletionKeepAliveChunk(const ResponseMeta& meta) {
  Json chunk = ChunkEnvelope(meta, "text_completion");
  chunk["choices"] = Json::array({{{"index", 0}, {"text", ""}, {"logprobs", nullptr},
                                   {"finish_reason", nullptr}}});
  return SseFrame(chunk);
}

std::string CompletionDeltaChunk(const ResponseMeta& meta, const engine::GenerationDelta& delta,
                                 bool with_logprobs, int64_t text_offset_base) {
  bool has_logprobs = with_logprobs && !delta.logprobs.empty();
  // Completions stream raw text: reasoning (if the engine split any) is sent
  // as text too, in order.
  std::string text = delta.reasoning + delta.content;
  if (text.empty() && !has_logprobs) return "";
  Json chunk = ChunkEnvelope(meta, "text_completion");
  chunk["choices"] = Json::array(
      {{{"index", 0}, {"text", text},
        {"logprobs", has_logprobs ? LegacyLogprobs(delta.logprobs, text_offset_base) : Json()},
        {"finish_reason", nullptr}}});
  return SseFrame(chunk);
}

std::string CompletionFinalChunk(const ResponseMeta& meta, const engine::GenerationResult& result,
                                 bool include_usage) {
  Json chunk = ChunkEnvelope(meta, "text_completion");
  chunk["choices"] = Json::array({{{"index", 0}, {"text", ""}, {"logprobs", nullptr},
                                   {"finish_reason", result.finish_reason}}});
  if (include_usage) chunk["usage"] = UsageJson(result);
  chunk["x_cairn"] = XCairnJson(result);
  return SseFrame(chunk);
}

std::string StreamErrorFrame(int status, const std::string& message) {
  return "data: " + ErrorBody(ApiError{status, ErrorTypeForStatus(status), message}) + "\n\n";
}

}  // namespace cairn::server
