// Anthropic Messages API: request translation, the typed SSE events and the
// message object, errors in Anthropic's shape, count_tokens, and the
// volatile-prefix normalisation (Claude Code's billing header).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/anthropic_parser.h"
#include "server/api_dialect.h"
#include "server/prompt_normalize.h"
#include "server_test_util.h"
#include "tool_stream_util.h"

namespace cairn::server::testing {
namespace {

Json MessagesBody(const std::string& user, Json extra = Json::object()) {
  Json body = {{"model", "claude-test"}, {"max_tokens", 64}, {"messages", {{{"role", "user"}, {"content", user}}}}};
  for (auto& [key, value] : extra.items()) body[key] = value;
  return body;
}

ParsedRequest MustParse(const Json& body) {
  ParseResult parsed = ParseAnthropicMessagesRequest(body.dump());
  EXPECT_TRUE(parsed.ok()) << parsed.error;
  return parsed.ok() ? *parsed.request : ParsedRequest{};
}

std::string ParseError(const Json& body) {
  ParseResult parsed = ParseAnthropicMessagesRequest(body.dump());
  EXPECT_FALSE(parsed.ok());
  return parsed.error;
}

// (event name, data) pairs of an SSE body.
std::vector<std::pair<std::string, Json>> Events(const std::string& raw) {
  std::vector<std::pair<std::string, Json>> events;
  size_t pos = 0;
  while (true) {
    size_t end = raw.find("\n\n", pos);
    if (end == std::string::npos) break;
    std::string frame = raw.substr(pos, end - pos);
    pos = end + 2;
    size_t nl = frame.find('\n');
    if (frame.rfind("event: ", 0) != 0 || nl == std::string::npos) continue;
    events.emplace_back(frame.substr(7, nl - 7), Json::parse(frame.substr(nl + 7)));
  }
  return events;
}

std::vector<std::string> Names(const std::vector<std::pair<std::string, Json>>& events) {
  std::vector<std::string> names;
  for (const auto& [name, data] : events) {
    names.push_back(name);
    EXPECT_EQ(data["type"], name);  // every event's data repeats its name as type
  }
  return names;
}

TEST(AnthropicParser, SystemBlocksToolsAndToolResults) {
  Json body = Json::parse(R"({
    "model": "m", "max_tokens": 100, "temperature": 0.2, "top_k": 5, "stop_sequences": ["END"],
    "system": [{"type": "text", "text": "You are helpful.", "cache_control": {"type": "ephemeral"}},
               {"type": "text", "text": "Be brief."}],
    "tools": [{"name": "read", "description": "Read a file",
               "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
              {"type": "web_search_20250305", "name": "web_search"}],
    "tool_choice": {"type": "any"},
    "thinking": {"type": "enabled", "budget_tokens": 1024},
    "metadata": {"user_id": "u"},
    "messages": [
      {"role": "user", "content": "Read main.py"},
      {"role": "assistant", "content": [
         {"type": "thinking", "thinking": "I should read it.", "signature": "x"},
         {"type": "text", "text": "Reading."},
         {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "main.py"}}]},
      {"role": "user", "content": [
         {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "def add(a, b): return a - b"}]},
         {"type": "text", "text": "Fix it."}]}]})");
  ParsedRequest request = MustParse(body);
  const Json& m = *request.input.messages;
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0], Json({{"role", "system"}, {"content", "You are helpful.\nBe brief."}}));
  EXPECT_EQ(m[1], Json({{"role", "user"}, {"content", "Read main.py"}}));
  EXPECT_EQ(m[2]["role"], "assistant");
  EXPECT_EQ(m[2]["content"], "Reading.");
  EXPECT_EQ(m[2]["reasoning_content"], "I should read it.");
  EXPECT_EQ(m[2]["tool_calls"][0]["id"], "toolu_1");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["name"], "read");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["arguments"]["path"], "main.py");
  EXPECT_EQ(m[3], Json({{"role", "tool"}, {"tool_call_id", "toolu_1"}, {"content", "def add(a, b): return a - b"}}));
  EXPECT_EQ(m[4], Json({{"role", "user"}, {"content", "Fix it."}}));
  // The server tool is dropped; the client tool becomes a function tool.
  ASSERT_EQ(request.input.tools.size(), 1u);
  EXPECT_EQ(request.input.tools[0]["function"]["name"], "read");
  EXPECT_EQ(request.input.tools[0]["function"]["parameters"]["type"], "object");
  EXPECT_EQ(request.input.template_kwargs["tool_choice"], "required");
  EXPECT_EQ(request.input.template_kwargs["enable_thinking"], true);
  EXPECT_EQ(request.options.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(request.options.max_tokens, 100);
  EXPECT_FLOAT_EQ(request.options.temperature, 0.2f);
  EXPECT_EQ(request.options.top_k, 5);
}

TEST(AnthropicParser, MidConversationSystemTurnStaysInPlace) {
  // Claude Code 2.1 sends its environment block as a system turn after the first user message.
  const ParsedRequest r = MustParse(MessagesBody("x", {{"system", "top"},
                                                   {"messages", {{{"role", "user"}, {"content", "hi"}},
                                                                 {{"role", "system"},
                                                                  {"content", {{{"type", "text"}, {"text", "env"}}}}},
                                                                 {{"role", "user"}, {"content", "go"}}}}}));
  const Json& m = *r.input.messages;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0]["role"], "system");
  EXPECT_EQ(m[1]["content"], "hi");
  EXPECT_EQ(m[2]["role"], "system");
  EXPECT_EQ(m[2]["content"], "env");
  EXPECT_EQ(m[3]["content"], "go");
}

TEST(AnthropicParser, ToolChoiceAndThinkingForms) {
  EXPECT_EQ(MustParse(MessagesBody("x", {{"tool_choice", {{"type", "tool"}, {"name", "f"}}}}))
                .input.template_kwargs["tool_choice"]["function"]["name"],
            "f");
  EXPECT_EQ(MustParse(MessagesBody("x", {{"tool_choice", {{"type", "none"}}}})).input.template_kwargs["tool_choice"],
            "none");
  EXPECT_EQ(MustParse(MessagesBody("x", {{"thinking", {{"type", "disabled"}}}})).input.template_kwargs["enable_thinking"],
            false);
  EXPECT_FALSE(MustParse(MessagesBody("x")).input.template_kwargs.contains("enable_thinking"));
}

TEST(AnthropicParser, BadRequestsNameTheField) {
  Json no_max = MessagesBody("x");
  no_max.erase("max_tokens");
  EXPECT_EQ(ParseError(no_max), "max_tokens: is required");
  EXPECT_NE(ParseError(MessagesBody("x", {{"messages", {{{"role", "robot"}, {"content", "x"}}}}})).find("messages[0].role"),
            std::string::npos);
  Json image = MessagesBody("x");
  image["messages"][0]["content"] = Json::parse(R"([{"type":"image","source":{"type":"base64","data":"AA=="}}])");
  EXPECT_NE(ParseError(image).find("no vision"), std::string::npos);
  EXPECT_NE(ParseError(MessagesBody("x", {{"tool_choice", {{"type", "sometimes"}}}})).find("tool_choice.type"),
            std::string::npos);
  EXPECT_NE(ParseError(MessagesBody("x", {{"messages", Json::array()}})).find("must not be empty"), std::string::npos);
  // count_tokens needs no max_tokens.
  EXPECT_TRUE(ParseAnthropicCountTokensRequest(no_max.dump()).ok());
}

TEST(AnthropicEncoder, StreamEventsForThinkingTextAndToolUse) {
  ParsedRequest request = MustParse(MessagesBody("x"));
  ResponseMeta meta{"msg_test", 0, "m"};
  auto encoder = kAnthropicMessagesDialect.make_encoder(request, meta);
  std::string raw = encoder->StreamStart();
  engine::GenerationDelta think, text1, text2, calls;
  think.reasoning = "hmm";
  text1.content = "Hel";
  text2.content = "lo";
  calls.tool_calls = Json::parse(
      R"([{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.py\"}"}}])");
  for (const auto* d : {&think, &text1, &text2, &calls}) raw += encoder->Delta(*d);
  engine::GenerationResult result;
  result.finish_reason = "tool_calls";
  result.prompt_tokens = 100;
  result.cached_tokens = 60;
  result.completion_tokens = 9;
  raw += encoder->StreamEnd(result);

  auto events = Events(raw);
  EXPECT_EQ(Names(events),
            (std::vector<std::string>{"message_start", "ping", "content_block_start", "content_block_delta",
                                      "content_block_stop", "content_block_start", "content_block_delta",
                                      "content_block_delta", "content_block_stop", "content_block_start",
                                      "content_block_delta", "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(events[0].second["message"]["id"], "msg_test");
  EXPECT_EQ(events[2].second["content_block"]["type"], "thinking");
  EXPECT_EQ(events[3].second["delta"], Json({{"type", "thinking_delta"}, {"thinking", "hmm"}}));
  EXPECT_EQ(events[5].second["index"], 1);
  EXPECT_EQ(events[6].second["delta"], Json({{"type", "text_delta"}, {"text", "Hel"}}));
  EXPECT_EQ(events[9].second["index"], 2);
  EXPECT_EQ(events[9].second["content_block"]["type"], "tool_use");
  EXPECT_EQ(events[9].second["content_block"]["id"], "call_1");
  EXPECT_EQ(events[9].second["content_block"]["name"], "read");
  EXPECT_EQ(events[10].second["delta"]["type"], "input_json_delta");
  EXPECT_EQ(Json::parse(events[10].second["delta"]["partial_json"].get<std::string>())["path"], "a.py");
  const Json& delta = events[12].second;
  EXPECT_EQ(delta["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(delta["usage"]["output_tokens"], 9);
  EXPECT_EQ(delta["usage"]["cache_read_input_tokens"], 60);
  EXPECT_EQ(delta["usage"]["cache_creation_input_tokens"], 40);
  EXPECT_EQ(delta["usage"]["input_tokens"], 0);
}

TEST(AnthropicEncoder, ToolUseInputStreamsInPieces) {
  const StreamedAnswer answer = TwoCallAnswer();
  ASSERT_EQ(answer.result.tool_calls.size(), 2u);
  ParsedRequest request = MustParse(MessagesBody("x"));
  auto encoder = kAnthropicMessagesDialect.make_encoder(request, ResponseMeta{"msg_t", 0, "m"});
  std::string raw = encoder->StreamStart();
  for (const auto& delta : answer.deltas) raw += encoder->Delta(delta);
  raw += encoder->StreamEnd(answer.result);

  // Blocks in answer order: text, tool_use, tool_use, text; each closed
  // before the next opens; a tool_use gets its input in several pieces.
  std::vector<Json> blocks;
  std::vector<std::string> inputs, texts;
  std::vector<int> pieces;
  int open = -1;
  for (const auto& [name, data] : Events(raw)) {
    if (name == "content_block_start") {
      EXPECT_EQ(open, -1) << "a block opened before the previous one closed";
      open = data["index"];
      EXPECT_EQ(open, static_cast<int>(blocks.size()));
      blocks.push_back(data["content_block"]);
      inputs.emplace_back();
      texts.emplace_back();
      pieces.push_back(0);
    } else if (name == "content_block_delta") {
      EXPECT_EQ(data["index"], open);
      if (data["delta"]["type"] == "input_json_delta") {
        inputs.back() += data["delta"]["partial_json"].get<std::string>();
        EXPECT_EQ(blocks.back()["type"], "tool_use");
        EXPECT_EQ(blocks.back()["input"], Json::object());
        ++pieces.back();
      } else {
        texts.back() += data["delta"]["text"].get<std::string>();
      }
    } else if (name == "content_block_stop") {
      EXPECT_EQ(data["index"], open);
      open = -1;
    } else if (name == "message_delta") {
      EXPECT_EQ(data["delta"]["stop_reason"], "tool_use");
    }
  }
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0]["type"], "text");
  EXPECT_EQ(texts[0], "Reading.\n");
  for (size_t i = 1; i <= 2; ++i) {
    const Json& call = answer.result.tool_calls[i - 1];
    EXPECT_EQ(blocks[i]["type"], "tool_use");
    EXPECT_EQ(blocks[i]["id"], call["id"]);
    EXPECT_EQ(blocks[i]["name"], "read");
    EXPECT_GT(pieces[i], 3) << "input_json_delta should come in several pieces";
    EXPECT_EQ(inputs[i], call["function"]["arguments"]);
  }
  EXPECT_EQ(Json::parse(inputs[2]), Json::parse(R"({"path":"README.md","lines":[1,2]})"));
  EXPECT_EQ(blocks[3]["type"], "text");
  EXPECT_EQ(texts[3], "Done.");
  // The message body of the same answer carries the same calls whole.
  Json body = encoder->Body(answer.result);
  EXPECT_EQ(body["content"][1]["input"], Json::parse(R"({"path":"src/main.py","limit":20})"));
}

TEST(AnthropicEncoder, MessageBodyAndStopReasons) {
  ParsedRequest request = MustParse(MessagesBody("x", {{"cache_prompt", false}}));
  auto encoder = kAnthropicMessagesDialect.make_encoder(request, ResponseMeta{"msg_1", 0, "m"});
  engine::GenerationResult result;
  result.content = "done";
  result.reasoning = "why";
  result.finish_reason = "stop";
  result.stop_sequence = "END";
  result.prompt_tokens = 10;
  result.completion_tokens = 2;
  result.tool_calls = Json::parse(R"([{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}])");
  Json body = encoder->Body(result);
  EXPECT_EQ(body["type"], "message");
  EXPECT_EQ(body["role"], "assistant");
  ASSERT_EQ(body["content"].size(), 3u);
  EXPECT_EQ(body["content"][0], Json({{"type", "thinking"}, {"thinking", "why"}, {"signature", ""}}));
  EXPECT_EQ(body["content"][1], Json({{"type", "text"}, {"text", "done"}}));
  EXPECT_EQ(body["content"][2]["input"], Json({{"a", 1}}));
  EXPECT_EQ(body["stop_reason"], "stop_sequence");
  EXPECT_EQ(body["stop_sequence"], "END");
  // Nothing stored in the cache: every prompt token is plain input.
  EXPECT_EQ(body["usage"]["input_tokens"], 10);
  EXPECT_EQ(body["usage"]["cache_creation_input_tokens"], 0);
  result.stop_sequence.clear();
  EXPECT_EQ(encoder->Body(result)["stop_reason"], "end_turn");
  result.finish_reason = "length";
  EXPECT_EQ(encoder->Body(result)["stop_reason"], "max_tokens");
}

TEST(AnthropicHttp, MessagesNonStreamingStreamingAndCountTokens) {
  LiveServer live;
  auto client = live.Client();
  auto res = client.Post("/v1/messages?beta=true", MessagesBody("hello").dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  Json body = Json::parse(res->body);
  EXPECT_EQ(body["id"].get<std::string>().rfind("msg_", 0), 0u);
  EXPECT_EQ(body["model"], "claude-test");
  EXPECT_EQ(body["content"][0]["text"], "HELLO");
  EXPECT_EQ(body["stop_reason"], "end_turn");

  StreamReply reply = PostStream(live.server->port(), "/v1/messages", MessagesBody("[think] hey", {{"stream", true}}).dump());
  ASSERT_EQ(reply.status, 200);
  auto events = Events(reply.raw);
  std::string text, thinking;
  for (const auto& [name, data] : events) {
    if (name != "content_block_delta") continue;
    if (data["delta"]["type"] == "text_delta") text += data["delta"]["text"].get<std::string>();
    if (data["delta"]["type"] == "thinking_delta") thinking += data["delta"]["thinking"].get<std::string>();
  }
  EXPECT_EQ(text, "HEY");
  EXPECT_EQ(thinking, "thinking...");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().first, "message_start");
  EXPECT_EQ(events.back().first, "message_stop");

  auto count = client.Post("/v1/messages/count_tokens", MessagesBody("hello").dump(), "application/json");
  ASSERT_EQ(count->status, 200) << count->body;
  // "<|user|>hello\n<|assistant|>" = 27 byte tokens in the fake.
  EXPECT_EQ(Json::parse(count->body)["input_tokens"], 27);
}

TEST(AnthropicHttp, ErrorsHaveAnthropicShape) {
  ServerOptions options;
  options.api_key = "k";
  LiveServer live(options);
  auto client = live.Client();
  auto unauthorized = client.Post("/v1/messages", MessagesBody("x").dump(), "application/json");
  ASSERT_EQ(unauthorized->status, 401);
  Json error = Json::parse(unauthorized->body);
  EXPECT_EQ(error["type"], "error");
  EXPECT_EQ(error["error"]["type"], "authentication_error");

  httplib::Headers key = {{"x-api-key", "k"}, {"anthropic-version", "2023-06-01"}};
  auto bad = client.Post("/v1/messages", key, "{not json", "application/json");
  ASSERT_EQ(bad->status, 400);
  EXPECT_EQ(Json::parse(bad->body)["error"]["type"], "invalid_request_error");
  auto rejected = client.Post("/v1/messages", key, MessagesBody("[reject]").dump(), "application/json");
  ASSERT_EQ(rejected->status, 400);
  EXPECT_EQ(Json::parse(rejected->body)["type"], "error");
  auto ok = client.Post("/v1/messages", key, MessagesBody("hi").dump(), "application/json");
  EXPECT_EQ(ok->status, 200);
  // The OpenAI routes keep OpenAI's shape.
  auto openai = client.Post("/v1/chat/completions", "{}", "application/json");
  EXPECT_TRUE(Json::parse(openai->body)["error"].contains("code"));
}

TEST(PromptNormalize, RemovesClaudeCodeBillingHeaderLines) {
  engine::GenerationInput input;
  input.messages = Json::array({{{"role", "system"},
                                 {"content", "x-anthropic-billing-header: cc_version=2.1.332.5ac; cc_entrypoint=cli;\n"
                                             "You are Claude Code."}},
                                {{"role", "user"}, {"content", "x-anthropic-billing-header: keep user text"}}});
  Json changes = NormalizeVolatilePrefix(input);
  EXPECT_EQ((*input.messages)[0]["content"], "You are Claude Code.");
  EXPECT_EQ((*input.messages)[1]["content"], "x-anthropic-billing-header: keep user text");
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0]["rule"], "anthropic-billing-header");
  EXPECT_EQ(changes[0]["where"], "messages[0]");
  // Two requests whose headers differ normalise to the same prompt.
  engine::GenerationInput other = input;
  (*other.messages)[0]["content"] = "x-anthropic-billing-header: cc_version=2.1.332.307; cch=abc;\nYou are Claude Code.";
  NormalizeVolatilePrefix(other);
  EXPECT_EQ((*other.messages)[0], (*input.messages)[0]);
  engine::GenerationInput plain;
  plain.messages = Json::array({{{"role", "system"}, {"content", "no header"}}});
  EXPECT_TRUE(NormalizeVolatilePrefix(plain).empty());
}

TEST(PromptNormalize, HttpRequestsShareThePrefixAndReportIt) {
  LiveServer live;
  auto client = live.Client();
  auto request = [&](const std::string& version) {
    Json body = MessagesBody("hello", {{"system", "x-anthropic-billing-header: cc_version=" + version + ";\nSystem."}});
    return Json::parse(client.Post("/v1/messages", body.dump(), "application/json")->body);
  };
  Json first = request("2.1.332.5ac");
  Json second = request("2.1.332.307");
  EXPECT_EQ(live.service.last_input.messages->at(0)["content"], "System.");
  EXPECT_EQ(first["x_cairn"]["cache"]["normalized"][0]["rule"], "anthropic-billing-header");
  // The fake caches the longest common prefix with the previous prompt: with
  // the header gone the two prompts are identical, so all but the last token
  // is a cache read.
  const Json& usage = second["usage"];
  EXPECT_EQ(usage["input_tokens"].get<int64_t>() + usage["cache_creation_input_tokens"].get<int64_t>(), 1);
  EXPECT_GT(usage["cache_read_input_tokens"].get<int64_t>(), 20);
}

TEST(PromptNormalize, CanBeTurnedOff) {
  ServerOptions options;
  options.prompt_normalize = false;
  LiveServer live(options);
  auto client = live.Client();
  Json body = MessagesBody("hello", {{"system", "x-anthropic-billing-header: v;\nSystem."}});
  ASSERT_EQ(client.Post("/v1/messages", body.dump(), "application/json")->status, 200);
  EXPECT_EQ(live.service.last_input.messages->at(0)["content"], "x-anthropic-billing-header: v;\nSystem.");
}

}  // namespace
}  // namespace cairn::server::testing
