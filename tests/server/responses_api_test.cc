// OpenAI Responses API: input items -> engine messages, typed SSE events,
// the response object, store / previous_response_id, dropped tool types.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/api_dialect.h"
#include "server/response_store.h"
#include "server/responses_parser.h"
#include "server_test_util.h"
#include "tool_stream_util.h"

namespace cairn::server::testing {
namespace {

ParsedRequest MustParse(const Json& body) {
  ParseResult parsed = ParseResponsesRequest(body.dump());
  EXPECT_TRUE(parsed.ok()) << parsed.error;
  return parsed.ok() ? *parsed.request : ParsedRequest{};
}

std::vector<Json> EventData(const std::string& raw) {
  std::vector<Json> events;
  size_t pos = 0;
  for (size_t end; (end = raw.find("\n\n", pos)) != std::string::npos; pos = end + 2) {
    std::string frame = raw.substr(pos, end - pos);
    size_t data = frame.find("\ndata: ");
    if (frame.rfind("event: ", 0) != 0 || data == std::string::npos) continue;
    Json event = Json::parse(frame.substr(data + 7));
    EXPECT_EQ(frame.substr(7, data - 7), event["type"].get<std::string>());
    events.push_back(std::move(event));
  }
  return events;
}

TEST(ResponsesParser, CodexShapedInput) {
  Json body = Json::parse(R"json({
    "model": "gpt-5-codex", "instructions": "You are Codex.", "store": false, "stream": true,
    "max_output_tokens": 77, "reasoning": {"effort": "high", "summary": "auto"}, "parallel_tool_calls": false,
    "tools": [{"type": "function", "name": "shell", "description": "Run a command",
               "parameters": {"type": "object", "properties": {"command": {"type": "array"}}}},
              {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
              {"type": "local_shell"}, {"type": "web_search"}],
    "tool_choice": "auto",
    "input": [
      {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Sandbox: read-only"}]},
      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix add()"}]},
      {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look at the file."}]},
      {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{\"command\":[\"cat\",\"main.py\"]}"},
      {"type": "function_call_output", "call_id": "call_1", "output": "def add(a, b): return a - b"},
      {"role": "user", "content": "go on"},
      {"type": "local_shell_call", "id": "x"}]})json");
  ParsedRequest request = MustParse(body);
  const Json& m = *request.input.messages;
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0], Json({{"role", "system"}, {"content", "You are Codex."}}));
  EXPECT_EQ(m[1], Json({{"role", "system"}, {"content", "Sandbox: read-only"}}));
  EXPECT_EQ(m[2], Json({{"role", "user"}, {"content", "Fix add()"}}));
  EXPECT_EQ(m[3]["role"], "assistant");
  EXPECT_EQ(m[3]["reasoning_content"], "Look at the file.");
  EXPECT_EQ(m[3]["tool_calls"][0]["id"], "call_1");
  EXPECT_EQ(m[3]["tool_calls"][0]["function"]["arguments"]["command"][1], "main.py");
  EXPECT_EQ(m[4], Json({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "def add(a, b): return a - b"}}));
  EXPECT_EQ(m[5], Json({{"role", "user"}, {"content", "go on"}}));
  ASSERT_EQ(request.input.tools.size(), 1u);  // custom, local_shell, web_search dropped
  EXPECT_EQ(request.input.tools[0]["function"]["name"], "shell");
  EXPECT_EQ(request.input.template_kwargs["reasoning_effort"], "high");
  EXPECT_EQ(request.input.template_kwargs["enable_thinking"], true);
  EXPECT_EQ(request.options.max_tokens, 77);
  EXPECT_FALSE(request.store);
  EXPECT_TRUE(request.stream);
}

TEST(ResponsesParser, StringInputDefaultsAndErrors) {
  ParsedRequest request = MustParse({{"model", "m"}, {"input", "hi"}, {"previous_response_id", "resp_x"}});
  EXPECT_EQ(*request.input.messages, Json::parse(R"([{"role":"user","content":"hi"}])"));
  EXPECT_TRUE(request.store);
  EXPECT_EQ(request.previous_response_id, "resp_x");
  EXPECT_NE(ParseResponsesRequest(R"({"model":"m"})").error.find("input: is required"), std::string::npos);
  EXPECT_NE(ParseResponsesRequest(R"({"input":[{"role":"user","content":[{"type":"input_image","image_url":"x"}]}]})")
                .error.find("input_image"),
            std::string::npos);
  EXPECT_NE(ParseResponsesRequest(R"({"input":[{"type":"function_call","name":"f"}]})").error.find("call_id"),
            std::string::npos);
}

TEST(ResponsesEncoder, StreamEventsAndFinalResponse) {
  ParsedRequest request = MustParse({{"model", "m"}, {"input", "x"}});
  auto encoder = kOpenAiResponsesDialect.make_encoder(request, ResponseMeta{"resp_abc", 1, "m"});
  std::string raw = encoder->StreamStart();
  engine::GenerationDelta think, text, calls;
  think.reasoning = "hmm";
  text.content = "Hi";
  calls.tool_calls = Json::parse(R"([{"index":0,"id":"call_9","type":"function","function":{"name":"shell","arguments":"{}"}}])");
  for (const auto* d : {&think, &text, &calls}) raw += encoder->Delta(*d);
  engine::GenerationResult result;
  result.finish_reason = "tool_calls";
  result.prompt_tokens = 50;
  result.cached_tokens = 40;
  result.completion_tokens = 7;
  raw += encoder->StreamEnd(result);
  std::vector<Json> events = EventData(raw);
  std::vector<std::string> types;
  for (size_t i = 0; i < events.size(); ++i) {
    types.push_back(events[i]["type"]);
    EXPECT_EQ(events[i]["sequence_number"], static_cast<int64_t>(i));
  }
  EXPECT_EQ(types, (std::vector<std::string>{
                       "response.created", "response.in_progress", "response.output_item.added",
                       "response.content_part.added", "response.reasoning_text.delta", "response.reasoning_text.done",
                       "response.content_part.done", "response.output_item.done", "response.output_item.added",
                       "response.content_part.added", "response.output_text.delta", "response.output_text.done",
                       "response.content_part.done", "response.output_item.done", "response.output_item.added",
                       "response.function_call_arguments.delta", "response.function_call_arguments.done",
                       "response.output_item.done", "response.completed"}));
  const Json& final = events.back()["response"];
  EXPECT_EQ(final["status"], "completed");
  ASSERT_EQ(final["output"].size(), 3u);
  EXPECT_EQ(final["output"][0]["type"], "reasoning");
  EXPECT_EQ(final["output"][1]["content"][0]["text"], "Hi");
  EXPECT_EQ(final["output"][2]["call_id"], "call_9");
  EXPECT_EQ(final["usage"]["input_tokens_details"]["cached_tokens"], 40);
  EXPECT_EQ(final["usage"]["total_tokens"], 57);
  // Item ids of the stream and of the final response agree.
  EXPECT_EQ(events[2]["item"]["id"], final["output"][0]["id"]);
}

TEST(ResponsesEncoder, FunctionCallArgumentsStreamInPieces) {
  const StreamedAnswer answer = TwoCallAnswer();
  ASSERT_EQ(answer.result.tool_calls.size(), 2u);
  ParsedRequest request = MustParse({{"model", "m"}, {"input", "x"}});
  auto encoder = kOpenAiResponsesDialect.make_encoder(request, ResponseMeta{"resp_abc", 1, "m"});
  std::string raw = encoder->StreamStart();
  for (const auto& delta : answer.deltas) raw += encoder->Delta(delta);
  raw += encoder->StreamEnd(answer.result);
  const std::vector<Json> events = EventData(raw);

  // Items in answer order: message, function_call, function_call, message.
  // Each function_call: added (no arguments yet), several argument deltas,
  // arguments.done with their concatenation, output_item.done; the next
  // item is added only after that.
  std::vector<Json> added, done;
  std::string open_item, arguments;
  int deltas = 0;
  for (const Json& e : events) {
    const std::string type = e["type"];
    if (type == "response.output_item.added") {
      EXPECT_EQ(open_item, "") << "an item was added before the previous one was done";
      open_item = e["item"]["id"];
      EXPECT_EQ(e["output_index"], added.size());
      added.push_back(e["item"]);
      arguments.clear();
      deltas = 0;
    } else if (type == "response.function_call_arguments.delta") {
      EXPECT_EQ(e["item_id"], open_item);
      arguments += e["delta"].get<std::string>();
      ++deltas;
    } else if (type == "response.function_call_arguments.done") {
      EXPECT_EQ(e["item_id"], open_item);
      EXPECT_EQ(e["arguments"], arguments);
      EXPECT_GT(deltas, 3) << "function_call_arguments.delta should come in several pieces";
    } else if (type == "response.output_item.done") {
      EXPECT_EQ(e["item"]["id"], open_item);
      if (e["item"]["type"] == "function_call") {
        EXPECT_EQ(e["item"]["arguments"], arguments);
      }
      done.push_back(e["item"]);
      open_item.clear();
    }
  }
  ASSERT_EQ(added.size(), 4u);
  ASSERT_EQ(done.size(), 4u);
  EXPECT_EQ(added[0]["type"], "message");
  EXPECT_EQ(done[0]["content"][0]["text"], "Reading.\n");
  for (size_t i = 1; i <= 2; ++i) {
    const Json& call = answer.result.tool_calls[i - 1];
    EXPECT_EQ(added[i]["type"], "function_call");
    EXPECT_EQ(added[i]["arguments"], "");
    EXPECT_EQ(added[i]["status"], "in_progress");
    EXPECT_EQ(added[i]["call_id"], call["id"]);
    EXPECT_EQ(added[i]["name"], "read");
    EXPECT_EQ(done[i]["arguments"], call["function"]["arguments"]);
    EXPECT_EQ(done[i]["status"], "completed");
  }
  EXPECT_EQ(done[3]["content"][0]["text"], "Done.");
  const Json& final = events.back()["response"];
  EXPECT_EQ(final["output"], Json(done));
}

TEST(ResponsesEncoder, TruncatedAnswerIsIncomplete) {
  ParsedRequest request = MustParse({{"model", "m"}, {"input", "x"}});
  auto encoder = kOpenAiResponsesDialect.make_encoder(request, ResponseMeta{"resp_abc", 1, "m"});
  engine::GenerationResult result;
  result.content = "abc";
  result.finish_reason = "length";
  Json body = encoder->Body(result);
  EXPECT_EQ(body["status"], "incomplete");
  EXPECT_EQ(body["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(body["output"][0]["content"][0]["text"], "abc");
}

TEST(ResponseStore, BoundedByEntriesAndBytes) {
  ResponseStore store(2, 1 << 20);
  store.Put("a", Json::array({1}));
  store.Put("b", Json::array({2}));
  ASSERT_TRUE(store.Get("a"));  // a is now the most recently used
  store.Put("c", Json::array({3}));
  EXPECT_FALSE(store.Get("b"));
  EXPECT_TRUE(store.Get("a"));
  EXPECT_TRUE(store.Get("c"));
  ResponseStore tiny(10, 32);
  tiny.Put("big", Json(std::string(100, 'x')));
  EXPECT_FALSE(tiny.Get("big"));
  EXPECT_LE(tiny.bytes(), 32u);
}

TEST(ResponsesHttp, CreateStreamAndPreviousResponse) {
  LiveServer live;
  auto client = live.Client();
  auto res = client.Post("/v1/responses", Json({{"model", "m"}, {"input", "hello"}}).dump(), "application/json");
  ASSERT_EQ(res->status, 200) << res->body;
  Json first = Json::parse(res->body);
  EXPECT_EQ(first["object"], "response");
  EXPECT_EQ(first["id"].get<std::string>().rfind("resp_", 0), 0u);
  EXPECT_EQ(first["output"][0]["content"][0]["text"], "HELLO");

  // The follow-up sends only its new item; the server resumes the stored turns.
  Json follow = {{"model", "m"}, {"previous_response_id", first["id"]}, {"input", "next"}, {"instructions", "Sys."}};
  auto second = client.Post("/v1/responses", follow.dump(), "application/json");
  ASSERT_EQ(second->status, 200) << second->body;
  const Json& m = *live.service.last_input.messages;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0], Json({{"role", "system"}, {"content", "Sys."}}));
  EXPECT_EQ(m[1]["content"], "hello");
  EXPECT_EQ(m[2], Json({{"role", "assistant"}, {"content", "HELLO"}}));
  EXPECT_EQ(m[3]["content"], "next");

  auto unknown = client.Post("/v1/responses", Json({{"input", "x"}, {"previous_response_id", "resp_nope"}}).dump(),
                             "application/json");
  EXPECT_EQ(unknown->status, 400);
  EXPECT_NE(Json::parse(unknown->body)["error"]["message"].get<std::string>().find("resp_nope"), std::string::npos);

  // store: false leaves nothing to continue from.
  Json unstored = Json::parse(client.Post("/v1/responses", Json({{"input", "a"}, {"store", false}}).dump(),
                                          "application/json")->body);
  EXPECT_EQ(client.Post("/v1/responses", Json({{"input", "b"}, {"previous_response_id", unstored["id"]}}).dump(),
                        "application/json")->status,
            400);

  StreamReply reply = PostStream(live.server->port(), "/v1/responses",
                                 Json({{"input", "[think] hey"}, {"stream", true}}).dump());
  ASSERT_EQ(reply.status, 200);
  std::vector<Json> events = EventData(reply.raw);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front()["type"], "response.created");
  EXPECT_EQ(events.back()["type"], "response.completed");
  std::string text;
  for (const Json& e : events) {
    if (e["type"] == "response.output_text.delta") text += e["delta"].get<std::string>();
  }
  EXPECT_EQ(text, "HEY");
}

}  // namespace
}  // namespace cairn::server::testing
