// OpenAI Responses API output for the generation seam (api_dialect.h): the
// `response` object and its typed SSE events, each with a sequence_number:
//   response.created, response.in_progress,
//   per output item: response.output_item.added, then
//     reasoning: content_part.added, reasoning_text.delta..., reasoning_text.done, content_part.done
//     message:   content_part.added, output_text.delta..., output_text.done, content_part.done
//     function_call: function_call_arguments.delta... (one per piece of the
//                    arguments, as the engine parses them), function_call_arguments.done
//   response.output_item.done; finally response.completed (or
//   response.incomplete when max_output_tokens cut the answer), or
//   response.failed for an error after the 200 went out.
// Usage: input_tokens, input_tokens_details.cached_tokens (prefix-cache
// hits), output_tokens. output_tokens_details.reasoning_tokens is 0: the
// engine does not count reasoning tokens separately yet.
#include <fmt/format.h>

#include <chrono>
#include <string_view>

#include "core/log.h"
#include "server/api_dialect.h"
#include "server/responses_parser.h"

namespace cairn::server {
namespace {

std::string Event(const Json& data) {
  return fmt::format("event: {}\ndata: {}\n\n", data["type"].get<std::string>(), DumpJson(data));
}

const Json kNoCalls = Json::array();
const Json kNoFunction = Json::object();

std::string ArgumentsText(const Json& function) {
  const Json& arguments = function.contains("arguments") ? function["arguments"] : Json();
  return arguments.is_string() ? arguments.get<std::string>() : DumpJson(arguments.is_null() ? Json::object() : arguments);
}

class ResponsesEncoder final : public ResponseEncoder {
 public:
  ResponsesEncoder(const ParsedRequest& request, ResponseMeta meta)
      : meta_(std::move(meta)),
        store_(request.store),
        previous_(request.previous_response_id),
        max_tokens_(request.options.max_tokens),
        temperature_(request.options.temperature),
        top_p_(request.options.top_p),
        tools_(ResponseTools(request.input.tools)),
        tool_choice_(request.input.template_kwargs.value("tool_choice", Json("auto"))) {
    if (tool_choice_.is_object()) tool_choice_ = {{"type", "function"}, {"name", tool_choice_["function"]["name"]}};
  }

  std::string StreamStart() override {
    Json response = Envelope("in_progress");
    std::string frames = Emit({{"type", "response.created"}, {"response", response}});
    frames += Emit({{"type", "response.in_progress"}, {"response", response}});
    return frames;
  }

  // Responses has no comment or ping event; an SSE comment line is legal
  // anywhere and resets idle timers (the SDK's parser skips it).
  std::string KeepAlive() override { return ": keep-alive\n\n"; }

  // Tool calls stream as the engine parses them (service.h): a fragment with
  // an id adds a function_call item, every arguments piece is a
  // function_call_arguments.delta of it, and the next item (or the end)
  // finishes it with function_call_arguments.done and output_item.done.
  std::string Delta(const engine::GenerationDelta& delta) override {
    std::string frames;
    const Json& calls = delta.tool_calls.is_array() ? delta.tool_calls : kNoCalls;
    // Pieces of the open call precede the delta's text in the answer (text
    // only follows a call once it ended).
    size_t next = 0;
    while (next < calls.size() && ContinuesOpenCall(calls[next])) frames += ToolFragment(calls[next++]);
    if (!delta.reasoning.empty()) frames += AppendText("reasoning", delta.reasoning);
    if (!delta.content.empty()) frames += AppendText("message", delta.content);
    for (; next < calls.size(); ++next) frames += ToolFragment(calls[next]);
    return frames;
  }

  std::string StreamEnd(const engine::GenerationResult& result) override {
    std::string frames = CloseItem();
    Json response = Final(result, items_);
    const bool complete = response["status"] == "completed";
    frames += Emit({{"type", complete ? "response.completed" : "response.incomplete"}, {"response", response}});
    return frames;
  }

  std::string StreamError(const ApiError& error) override {
    Json response = Envelope("failed");
    response["error"] = {{"code", error.status >= 500 ? "server_error" : "invalid_request"}, {"message", error.message}};
    return Emit({{"type", "response.failed"}, {"response", response}});
  }

  Json Body(const engine::GenerationResult& result) override {
    Json items = Json::array();
    if (!result.reasoning.empty()) {
      items.push_back({{"type", "reasoning"}, {"id", ItemId("rs")}, {"summary", Json::array()},
                       {"content", {{{"type", "reasoning_text"}, {"text", result.reasoning}}}}, {"status", "completed"}});
    }
    if (!result.content.empty() || result.tool_calls.empty()) {
      items.push_back(MessageItem(ItemId("msg"), result.content, "completed"));
    }
    for (const Json& call : result.tool_calls) {
      const Json& function = call.contains("function") ? call["function"] : Json::object();
      items.push_back({{"type", "function_call"}, {"id", ItemId("fc")}, {"call_id", call.value("id", ItemId("call"))},
                       {"name", function.value("name", "")}, {"arguments", ArgumentsText(function)},
                       {"status", "completed"}});
    }
    return Final(result, items);
  }

 private:
  static Json ResponseTools(const Json& tools) {
    Json out = Json::array();
    if (!tools.is_array()) return out;
    for (const Json& tool : tools) {
      Json flat = {{"type", "function"}, {"name", tool["function"].value("name", "")}};
      if (tool["function"].contains("description")) flat["description"] = tool["function"]["description"];
      flat["parameters"] = tool["function"].value("parameters", Json::object());
      flat["strict"] = false;
      out.push_back(std::move(flat));
    }
    return out;
  }

  static Json MessageItem(const std::string& id, const std::string& text, const char* status) {
    return {{"type", "message"}, {"id", id}, {"status", status}, {"role", "assistant"},
            {"content", {{{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}}}}};
  }

  Json Envelope(const char* status) const {
    return {{"id", meta_.id},
            {"object", "response"},
            {"created_at", meta_.created},
            {"status", status},
            {"model", meta_.model},
            {"output", Json::array()},
            {"parallel_tool_calls", true},
            {"tool_choice", tool_choice_},
            {"tools", tools_},
            {"temperature", temperature_},
            {"top_p", top_p_},
            {"max_output_tokens", max_tokens_},
            {"previous_response_id", previous_.empty() ? Json() : Json(previous_)},
            {"store", store_},
            {"error", nullptr},
            {"incomplete_details", nullptr}};
  }

  Json Final(const engine::GenerationResult& result, const Json& items) const {
    const bool truncated = result.finish_reason == "length";
    Json response = Envelope(truncated ? "incomplete" : "completed");
    response["output"] = items;
    if (truncated) response["incomplete_details"] = {{"reason", "max_output_tokens"}};
    response["usage"] = {{"input_tokens", result.prompt_tokens},
                         {"input_tokens_details", {{"cached_tokens", result.cached_tokens}, {"cache_write_tokens", 0}}},
                         {"output_tokens", result.completion_tokens},
                         {"output_tokens_details", {{"reasoning_tokens", 0}}},
                         {"total_tokens", result.prompt_tokens + result.completion_tokens}};
    response["x_cairn"] = XCairnJson(result);
    return response;
  }

  std::string ItemId(const char* prefix) { return fmt::format("{}_{}_{}", prefix, meta_.id.substr(5), next_item_++); }

  std::string Emit(Json event) {
    event["sequence_number"] = sequence_++;
    return Event(event);
  }

  // Appends text to the open item of `kind` ("reasoning" or "message"),
  // opening it (and closing another) first.
  std::string AppendText(const std::string& kind, const std::string& text) {
    std::string frames;
    if (open_kind_ != kind) {
      frames += CloseItem();
      open_kind_ = kind;
      open_text_.clear();
      const bool reasoning = kind == "reasoning";
      open_id_ = ItemId(reasoning ? "rs" : "msg");
      Json item = reasoning ? Json{{"type", "reasoning"}, {"id", open_id_}, {"summary", Json::array()},
                                   {"content", Json::array()}, {"status", "in_progress"}}
                            : Json{{"type", "message"}, {"id", open_id_}, {"status", "in_progress"},
                                   {"role", "assistant"}, {"content", Json::array()}};
      frames += Emit({{"type", "response.output_item.added"}, {"output_index", items_.size()}, {"item", item}});
      frames += Emit({{"type", "response.content_part.added"}, {"item_id", open_id_}, {"output_index", items_.size()},
                      {"content_index", 0}, {"part", Part("")}});
    }
    open_text_ += text;
    Json delta = {{"type", kind == "reasoning" ? "response.reasoning_text.delta" : "response.output_text.delta"},
                  {"item_id", open_id_}, {"output_index", items_.size()}, {"content_index", 0}, {"delta", text}};
    if (kind == "message") delta["logprobs"] = Json::array();
    frames += Emit(std::move(delta));
    return frames;
  }

  bool ContinuesOpenCall(const Json& fragment) const {
    return open_kind_ == "function_call" && !fragment.contains("id") &&
           fragment.value("index", int64_t{-1}) == call_index_;
  }

  // One tool_calls fragment: {index, id, function: {name, arguments}} opens a
  // call, {index, function: {arguments}} continues it.
  std::string ToolFragment(const Json& fragment) {
    const Json& function = fragment.contains("function") ? fragment["function"] : kNoFunction;
    const int64_t index = fragment.value("index", int64_t{0});
    std::string frames;
    if (fragment.contains("id")) {
      frames += CloseItem();
      open_kind_ = "function_call";
      open_id_ = ItemId("fc");
      open_text_.clear();
      call_id_ = fragment["id"].is_string() ? fragment["id"].get<std::string>() : ItemId("call");
      call_name_ = function.value("name", "");
      call_index_ = index;
      frames += Emit({{"type", "response.output_item.added"}, {"output_index", items_.size()},
                      {"item", FunctionCallItem("in_progress")}});
    }
    const std::string arguments = ArgumentsText(function);
    if (arguments.empty()) return frames;
    if (open_kind_ != "function_call" || index != call_index_) {
      LogWarn("responses stream: arguments of tool call {} after its item closed; dropped", index);
      return frames;
    }
    open_text_ += arguments;
    frames += Emit({{"type", "response.function_call_arguments.delta"}, {"item_id", open_id_},
                    {"output_index", items_.size()}, {"delta", arguments}});
    return frames;
  }

  // The open function_call item; its arguments are all streamed ones once completed.
  Json FunctionCallItem(const char* status) const {
    const bool done = std::string_view(status) == "completed";
    return {{"type", "function_call"}, {"id", open_id_}, {"call_id", call_id_}, {"name", call_name_},
            {"arguments", done ? open_text_ : ""}, {"status", status}};
  }

  Json Part(const std::string& text) const {
    if (open_kind_ == "reasoning") return {{"type", "reasoning_text"}, {"text", text}};
    return {{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}};
  }

  std::string CloseItem() {
    if (open_kind_.empty()) return "";
    std::string frames;
    if (open_kind_ == "function_call") {
      frames += Emit({{"type", "response.function_call_arguments.done"}, {"item_id", open_id_},
                      {"output_index", items_.size()}, {"arguments", open_text_}});
      Json item = FunctionCallItem("completed");
      frames += Emit({{"type", "response.output_item.done"}, {"output_index", items_.size()}, {"item", item}});
      items_.push_back(std::move(item));
      open_kind_.clear();
      return frames;
    }
    const bool reasoning = open_kind_ == "reasoning";
    Json done = {{"type", reasoning ? "response.reasoning_text.done" : "response.output_text.done"},
                 {"item_id", open_id_}, {"output_index", items_.size()}, {"content_index", 0}, {"text", open_text_}};
    if (!reasoning) done["logprobs"] = Json::array();
    frames += Emit(std::move(done));
    frames += Emit({{"type", "response.content_part.done"}, {"item_id", open_id_}, {"output_index", items_.size()},
                    {"content_index", 0}, {"part", Part(open_text_)}});
    Json item = reasoning ? Json{{"type", "reasoning"}, {"id", open_id_}, {"summary", Json::array()},
                                 {"content", {Part(open_text_)}}, {"status", "completed"}}
                          : MessageItem(open_id_, open_text_, "completed");
    frames += Emit({{"type", "response.output_item.done"}, {"output_index", items_.size()}, {"item", item}});
    items_.push_back(std::move(item));
    open_kind_.clear();
    return frames;
  }

  ResponseMeta meta_;
  bool store_;
  std::string previous_;
  int max_tokens_;
  float temperature_, top_p_;
  Json tools_;
  Json tool_choice_;
  int64_t sequence_ = 0;
  int next_item_ = 0;
  Json items_ = Json::array();  // streamed output items, completed
  std::string open_kind_;       // "reasoning" | "message" | "function_call" | "" (none open)
  std::string open_id_, open_text_;  // item id; its text (or arguments) so far
  std::string call_id_, call_name_;  // of the open function_call
  int64_t call_index_ = -1;          // its engine tool-call index
};

std::unique_ptr<ResponseEncoder> MakeResponsesEncoder(const ParsedRequest& request, const ResponseMeta& meta) {
  return std::make_unique<ResponsesEncoder>(request, meta);
}

}  // namespace

const ApiDialect kOpenAiResponsesDialect{"/v1/responses", "resp_", ErrorDialect::kOpenAi, ParseResponsesRequest,
                                         MakeResponsesEncoder};

}  // namespace cairn::server
