// Anthropic Messages responses for the generation seam (api_dialect.h): the
// message object, and the typed SSE events of a stream:
//   message_start, ping,
//   content_block_start / content_block_delta (thinking_delta, text_delta,
//   input_json_delta) / content_block_stop per block, in order (a tool_use
//   block opens when the engine has a call's name and gets one
//   input_json_delta per piece of its arguments as they are generated),
//   message_delta (stop_reason, stop_sequence, usage), message_stop;
//   `error` for a failure after the 200 went out; `ping` as keep-alive.
//
// Usage: cache_read_input_tokens = prompt tokens served by the prefix cache;
// cache_creation_input_tokens = the rest when the request stores into the
// cache (it always does unless cache_prompt/cache_store is false): Cairn
// caches every prompt, so `cache_control` marks are accepted and not needed;
// input_tokens = what was neither read from nor written to the cache.
#include <fmt/format.h>

#include "core/log.h"
#include "server/anthropic_parser.h"
#include "server/api_dialect.h"

namespace cairn::server {
namespace {

std::string Event(std::string_view name, const Json& data) {
  return fmt::format("event: {}\ndata: {}\n\n", name, DumpJson(data));
}

std::string StopReason(const engine::GenerationResult& result) {
  if (result.finish_reason == "tool_calls") return "tool_use";
  if (result.finish_reason == "length") return "max_tokens";
  if (!result.stop_sequence.empty()) return "stop_sequence";
  return "end_turn";  // end of turn, or a cancelled generation
}

Json StopSequence(const engine::GenerationResult& result) {
  return result.stop_sequence.empty() ? Json() : Json(result.stop_sequence);
}

// A tool call's arguments (a JSON text from the engine) as the tool_use input object.
Json ToolInput(const Json& function) {
  const Json& arguments = function.contains("arguments") ? function["arguments"] : Json();
  if (arguments.is_object()) return arguments;
  if (arguments.is_string()) {
    Json parsed = Json::parse(arguments.get<std::string>(), nullptr, false);
    if (parsed.is_object()) return parsed;
  }
  LogWarn("anthropic response: tool call arguments are not a JSON object; sending an empty input");
  return Json::object();
}

const Json kNoCalls = Json::array();
const Json kNoFunction = Json::object();

std::string ArgumentsText(const Json& function) {
  const Json& arguments = function.contains("arguments") ? function["arguments"] : Json();
  return arguments.is_string() ? arguments.get<std::string>() : DumpJson(ToolInput(function));
}

class AnthropicEncoder final : public ResponseEncoder {
 public:
  AnthropicEncoder(const ParsedRequest& request, ResponseMeta meta)
      : meta_(std::move(meta)),
        stores_in_cache_(request.options.use_prefix_cache && request.options.store_in_cache) {}

  std::string StreamStart() override {
    Json message = {{"id", meta_.id},          {"type", "message"},         {"role", "assistant"},
                    {"model", meta_.model},    {"content", Json::array()},  {"stop_reason", nullptr},
                    {"stop_sequence", nullptr}, {"usage", {{"input_tokens", 0}, {"output_tokens", 0}}}};
    return Event("message_start", {{"type", "message_start"}, {"message", std::move(message)}}) + KeepAlive();
  }

  std::string KeepAlive() override { return Event("ping", {{"type", "ping"}}); }

  // Tool calls stream as the engine parses them (service.h): a fragment with
  // an id opens a tool_use block, every arguments piece is an
  // input_json_delta of it, and the next block (or the end) closes it.
  std::string Delta(const engine::GenerationDelta& delta) override {
    std::string frames;
    const Json& calls = delta.tool_calls.is_array() ? delta.tool_calls : kNoCalls;
    // Pieces of the call whose block is open precede the delta's text in the
    // answer (text only follows a call once it ended).
    size_t next = 0;
    while (next < calls.size() && ContinuesOpenCall(calls[next])) frames += ToolFragment(calls[next++]);
    if (!delta.reasoning.empty()) {
      frames += Open("thinking", {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
      frames += BlockDelta({{"type", "thinking_delta"}, {"thinking", delta.reasoning}});
    }
    if (!delta.content.empty()) {
      frames += Open("text", {{"type", "text"}, {"text", ""}});
      frames += BlockDelta({{"type", "text_delta"}, {"text", delta.content}});
    }
    for (; next < calls.size(); ++next) frames += ToolFragment(calls[next]);
    return frames;
  }

  std::string StreamEnd(const engine::GenerationResult& result) override {
    std::string frames = Close();
    frames += Event("message_delta", {{"type", "message_delta"},
                                      {"delta", {{"stop_reason", StopReason(result)}, {"stop_sequence", StopSequence(result)}}},
                                      {"usage", Usage(result)},
                                      {"x_cairn", XCairnJson(result)}});
    frames += Event("message_stop", {{"type", "message_stop"}});
    return frames;
  }

  std::string StreamError(const ApiError& error) override {
    return Event("error", Json::parse(ErrorBody(error, ErrorDialect::kAnthropic)));
  }

  Json Body(const engine::GenerationResult& result) override {
    Json content = Json::array();
    if (!result.reasoning.empty()) {
      content.push_back({{"type", "thinking"}, {"thinking", result.reasoning}, {"signature", ""}});
    }
    if (!result.content.empty()) content.push_back({{"type", "text"}, {"text", result.content}});
    for (const Json& call : result.tool_calls) {
      const Json& function = call.contains("function") ? call["function"] : Json::object();
      content.push_back({{"type", "tool_use"},
                         {"id", call.value("id", NewResponseId("toolu_"))},
                         {"name", function.value("name", "")},
                         {"input", ToolInput(function)}});
    }
    return {{"id", meta_.id},
            {"type", "message"},
            {"role", "assistant"},
            {"model", meta_.model},
            {"content", std::move(content)},
            {"stop_reason", StopReason(result)},
            {"stop_sequence", StopSequence(result)},
            {"usage", Usage(result)},
            {"x_cairn", XCairnJson(result)}};
  }

 private:
  Json Usage(const engine::GenerationResult& result) const {
    const int64_t read = result.cached_tokens;
    const int64_t created = stores_in_cache_ ? result.prompt_tokens - read : 0;
    return {{"input_tokens", result.prompt_tokens - read - created},
            {"cache_creation_input_tokens", created},
            {"cache_read_input_tokens", read},
            {"output_tokens", result.completion_tokens}};
  }

  // Opens a block of `kind` unless one is open already (closing another kind first).
  std::string Open(const std::string& kind, Json block) {
    if (open_ == kind && kind != "tool_use") return "";
    std::string frames = Close();
    open_ = kind;
    frames += Event("content_block_start",
                    {{"type", "content_block_start"}, {"index", index_}, {"content_block", std::move(block)}});
    return frames;
  }

  bool ContinuesOpenCall(const Json& fragment) const {
    return open_ == "tool_use" && !fragment.contains("id") && fragment.value("index", int64_t{-1}) == tool_index_;
  }

  // One tool_calls fragment: {index, id, function: {name, arguments}} opens a
  // call, {index, function: {arguments}} continues it.
  std::string ToolFragment(const Json& fragment) {
    const Json& function = fragment.contains("function") ? fragment["function"] : kNoFunction;
    const int64_t index = fragment.value("index", int64_t{0});
    std::string frames;
    if (fragment.contains("id")) {
      frames += Close();
      frames += Open("tool_use", {{"type", "tool_use"},
                                  {"id", fragment["id"]},
                                  {"name", function.value("name", "")},
                                  {"input", Json::object()}});
      tool_index_ = index;
    }
    const std::string arguments = ArgumentsText(function);
    if (arguments.empty()) return frames;
    if (open_ != "tool_use" || index != tool_index_) {
      LogWarn("anthropic stream: arguments of tool call {} after its block closed; dropped", index);
      return frames;
    }
    frames += BlockDelta({{"type", "input_json_delta"}, {"partial_json", arguments}});
    return frames;
  }

  std::string BlockDelta(Json delta) {
    return Event("content_block_delta", {{"type", "content_block_delta"}, {"index", index_}, {"delta", std::move(delta)}});
  }

  std::string Close() {
    if (open_.empty()) return "";
    open_.clear();
    return Event("content_block_stop", {{"type", "content_block_stop"}, {"index", index_++}});
  }

  ResponseMeta meta_;
  bool stores_in_cache_;
  std::string open_;  // kind of the open content block ("" = none)
  int index_ = 0;     // index of the open (or next) content block
  int64_t tool_index_ = -1;  // engine index of the call whose tool_use block is open
};

std::unique_ptr<ResponseEncoder> MakeAnthropicEncoder(const ParsedRequest& request, const ResponseMeta& meta) {
  return std::make_unique<AnthropicEncoder>(request, meta);
}

}  // namespace

const ApiDialect kAnthropicMessagesDialect{"/v1/messages", "msg_", ErrorDialect::kAnthropic,
                                           ParseAnthropicMessagesRequest, MakeAnthropicEncoder};

}  // namespace cairn::server
