// Request parsing: every field, every error message names its field.
#include "server/request_parser.h"
#include "server/request_fields.h"

#include <gtest/gtest.h>

#include <string>

namespace cairn::server {
namespace {

using engine::Json;

ParsedRequest Chat(const Json& body) {
  ParseResult result = ParseChatRequest(body.dump());
  EXPECT_TRUE(result.ok()) << result.error;
  return result.ok() ? *result.request : ParsedRequest{};
}

std::string ChatError(const std::string& body) {
  ParseResult result = ParseChatRequest(body);
  EXPECT_FALSE(result.ok()) << body;
  return result.error;
}

std::string ErrorFor(const Json& body) { return ChatError(body.dump()); }

Json WithUser(Json body) {
  body["messages"] = Json::array({{{"role", "user"}, {"content", "hi"}}});
  return body;
}

TEST(RequestParser, MinimalChatUsesDefaults) {
  ParsedRequest r = Chat(WithUser(Json::object()));
  ASSERT_TRUE(r.input.messages);
  EXPECT_EQ(*r.input.messages, Json::parse(R"([{"role":"user","content":"hi"}])"));
  EXPECT_FALSE(r.input.prompt);
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.include_usage);
  EXPECT_EQ(r.options.max_tokens, kDefaultAnswerTokens);
  EXPECT_EQ(r.options.temperature, 0.0f);
  EXPECT_TRUE(r.options.use_prefix_cache);
  EXPECT_TRUE(r.options.store_in_cache);
  EXPECT_TRUE(r.input.tools.is_null());
  EXPECT_EQ(r.input.template_kwargs, Json::object());
}

TEST(RequestParser, SamplingFields) {
  ParsedRequest r = Chat(WithUser({{"model", "m"}, {"temperature", 0.7}, {"top_p", 0.9}, {"top_k", 40},
                                   {"min_p", 0.05}, {"seed", 42}, {"presence_penalty", 0.5},
                                   {"frequency_penalty", -0.5}, {"repetition_penalty", 1.1},
                                   {"max_tokens", 77}, {"ignore_eos", true}, {"cache_prompt", false},
                                   {"cache_store", false}, {"spec", "lookup"}, {"n", 1}}));
  EXPECT_EQ(r.model, "m");
  EXPECT_FLOAT_EQ(r.options.temperature, 0.7f);
  EXPECT_FLOAT_EQ(r.options.top_p, 0.9f);
  EXPECT_EQ(r.options.top_k, 40);
  EXPECT_FLOAT_EQ(r.options.min_p, 0.05f);
  ASSERT_TRUE(r.options.seed);
  EXPECT_EQ(*r.options.seed, 42u);
  EXPECT_FLOAT_EQ(r.options.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.options.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(r.options.repetition_penalty, 1.1f);
  EXPECT_EQ(r.options.max_tokens, 77);
  EXPECT_TRUE(r.options.ignore_eos);
  EXPECT_FALSE(r.options.use_prefix_cache);
  EXPECT_FALSE(r.options.store_in_cache);
  EXPECT_EQ(r.options.spec_mode, "lookup");
}

TEST(RequestParser, MaxCompletionTokensWinsAndIntegralFloatsAccepted) {
  EXPECT_EQ(Chat(WithUser({{"max_tokens", 10}, {"max_completion_tokens", 20}})).options.max_tokens, 20);
  EXPECT_EQ(Chat(WithUser({{"max_tokens", 10.0}})).options.max_tokens, 10);
  EXPECT_EQ(Chat(WithUser({{"max_tokens", nullptr}})).options.max_tokens, kDefaultAnswerTokens);
}

TEST(RequestParser, SeedMinusOneAndTopKMinusOneMeanOff) {
  ParsedRequest r = Chat(WithUser({{"seed", -1}, {"top_k", -1}}));
  EXPECT_FALSE(r.options.seed);
  EXPECT_EQ(r.options.top_k, 0);
}

TEST(RequestParser, StopStringOrList) {
  EXPECT_EQ(Chat(WithUser({{"stop", "END"}})).options.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(Chat(WithUser({{"stop", {"a", "", "b"}}})).options.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ErrorFor(WithUser({{"stop", 3}})), "stop: must be a string or a list of strings");
  EXPECT_EQ(ErrorFor(WithUser({{"stop", {"a", 1}}})), "stop[1]: must be a string, got a number");
}

TEST(RequestParser, LogitBias) {
  ParsedRequest r = Chat(WithUser({{"logit_bias", {{"15", 5}, {"7", -100}}}}));
  ASSERT_EQ(r.options.logit_bias.size(), 2u);
  EXPECT_EQ(r.options.logit_bias[0], (std::pair<int32_t, float>{15, 5.0f}));
  EXPECT_EQ(r.options.logit_bias[1], (std::pair<int32_t, float>{7, -100.0f}));
  EXPECT_EQ(ErrorFor(WithUser({{"logit_bias", {{"x", 1}}}})),
            "logit_bias[x]: key must be a token id (a non-negative integer)");
  EXPECT_EQ(ErrorFor(WithUser({{"logit_bias", {{"1", "a"}}}})), "logit_bias[1]: must be a number, got a string");
  EXPECT_EQ(ErrorFor(WithUser({{"logit_bias", {{"1", 101}}}})), "logit_bias[1]: must be between -100 and 100");
  EXPECT_EQ(ErrorFor(WithUser({{"logit_bias", {1, 2}}})),
            "logit_bias: must be an object mapping token ids to numbers");
}

TEST(RequestParser, LogprobsAndStream) {
  ParsedRequest r = Chat(WithUser({{"logprobs", true}, {"top_logprobs", 3}, {"stream", true},
                                   {"stream_options", {{"include_usage", true}}}}));
  EXPECT_TRUE(r.options.logprobs);
  EXPECT_EQ(r.options.top_logprobs, 3);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(Chat(WithUser({{"top_logprobs", 2}})).options.logprobs);
  EXPECT_EQ(ErrorFor(WithUser({{"top_logprobs", 21}})), "top_logprobs: must be between 0 and 20, got 21");
  EXPECT_EQ(ErrorFor(WithUser({{"logprobs", 1}})), "logprobs: must be a boolean, got a number");
  EXPECT_EQ(ErrorFor(WithUser({{"stream", "yes"}})), "stream: must be a boolean, got a string");
  EXPECT_EQ(ErrorFor(WithUser({{"stream_options", 1}})), "stream_options: must be an object");
}

TEST(RequestParser, ContentForms) {
  ParsedRequest r = Chat({{"messages",
                           {{{"role", "system"}, {"content", nullptr}},
                            {{"role", "user"},
                             {"content",
                              {{{"type", "text"}, {"text", "a"}},
                               {{"type", "image_url"}, {"image_url", {{"url", "data:"}}}},
                               {{"type", "text"}, {"text", "b"}}}}}}}});
  EXPECT_EQ((*r.input.messages)[0]["content"], "");
  EXPECT_EQ((*r.input.messages)[1]["content"], "a\nb");
  EXPECT_EQ(ChatError(R"({"messages":[{"role":"user","content":5}]})"),
            "messages[0].content: must be a string, null or a list of content parts, got a number");
  EXPECT_EQ(ChatError(R"({"messages":[{"role":"user","content":[{"type":"text"}]}]})"),
            "messages[0].content[0].text: is required for a text part");
  EXPECT_EQ(ChatError(R"({"messages":[{"role":"user","content":[{"type":"text","text":1}]}]})"),
            "messages[0].content[0].text: must be a string, got a number");
}

TEST(RequestParser, AssistantToolCallArgumentsAreParsed) {
  Json body = {{"messages",
                {{{"role", "user"}, {"content", "weather?"}},
                 {{"role", "assistant"},
                  {"content", nullptr},
                  {"reasoning", "look it up"},
                  {"tool_calls",
                   {{{"id", "call_1"},
                     {"type", "function"},
                     {"function", {{"name", "get_weather"}, {"arguments", R"({"city":"Paris"})"}}}},
                    {{"id", "call_2"},
                     {"type", "function"},
                     {"function", {{"name", "broken"}, {"arguments", "{\"city\":"}}}}}}},
                 {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "sunny"}}}},
               {"tools", {{{"type", "function"}, {"function", {{"name", "get_weather"}}}}}},
               {"tool_choice", "auto"}};
  ParsedRequest r = Chat(body);
  const Json& assistant = (*r.input.messages)[1];
  EXPECT_EQ(assistant["reasoning_content"], "look it up");
  EXPECT_EQ(assistant["tool_calls"][0]["function"]["arguments"], Json::parse(R"({"city":"Paris"})"));
  EXPECT_EQ(assistant["tool_calls"][1]["function"]["arguments"], "{\"city\":");  // kept as text
  EXPECT_EQ((*r.input.messages)[2]["tool_call_id"], "call_1");
  EXPECT_EQ(r.input.tools.size(), 1u);
  EXPECT_EQ(r.input.template_kwargs["tool_choice"], "auto");
  EXPECT_EQ(ChatError(R"({"messages":[{"role":"assistant","tool_calls":[{"function":{}}]}]})"),
            "messages[0].tool_calls[0].function.name: is required");
  EXPECT_EQ(ChatError(R"({"messages":[{"role":"assistant","tool_calls":{}}]})"),
            "messages[0].tool_calls: must be an array, got an object");
  EXPECT_EQ(ErrorFor(WithUser({{"tools", "x"}})), "tools: must be an array, got a string");
}

TEST(RequestParser, TemplateKwargs) {
  ParsedRequest r = Chat(WithUser({{"chat_template_kwargs", {{"enable_thinking", true}, {"x", 1}}},
                                   {"enable_thinking", false}, {"reasoning_effort", "low"}}));
  EXPECT_EQ(r.input.template_kwargs,
            Json::parse(R"({"enable_thinking":false,"x":1,"reasoning_effort":"low"})"));
  EXPECT_EQ(ErrorFor(WithUser({{"chat_template_kwargs", {1}}})), "chat_template_kwargs: must be an object");
  EXPECT_EQ(ErrorFor(WithUser({{"enable_thinking", "no"}})), "enable_thinking: must be a boolean, got a string");
}

TEST(RequestParser, MessageErrorsNameTheField) {
  EXPECT_EQ(ChatError("{}"), "messages: is required");
  EXPECT_EQ(ChatError(R"({"messages":[]})"), "messages: must not be empty");
  EXPECT_EQ(ChatError(R"({"messages":"hi"})"), "messages: must be an array, got a string");
  EXPECT_EQ(ChatError(R"({"messages":[1]})"), "messages[0]: must be an object, got a number");
  EXPECT_EQ(ChatError(R"({"messages":[{"content":"x"}]})"), "messages[0].role: is required");
  EXPECT_EQ(ChatError(R"({"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},
                          {"role":"robot","content":"c"}]})"),
            "messages[2].role: unknown role 'robot'");
  EXPECT_EQ(ChatError(R"({"messages":[{"role":7}]})"), "messages[0].role: must be a string, got a number");
  EXPECT_EQ(ChatError(R"({"messages":[{"role":"tool","content":"x","tool_call_id":3}]})"),
            "messages[0].tool_call_id: must be a string, got a number");
}

TEST(RequestParser, RangeAndTypeErrors) {
  EXPECT_EQ(ErrorFor(WithUser({{"temperature", "hot"}})), "temperature: must be a number, got a string");
  EXPECT_EQ(ErrorFor(WithUser({{"temperature", -1}})), "temperature: must be between 0 and 100, got -1");
  EXPECT_EQ(ErrorFor(WithUser({{"top_p", 1.5}})), "top_p: must be between 0 and 1, got 1.5");
  EXPECT_EQ(ErrorFor(WithUser({{"max_tokens", 0}})), "max_tokens: must be between 1 and 2147483647, got 0");
  EXPECT_EQ(ErrorFor(WithUser({{"max_tokens", 1.5}})), "max_tokens: must be an integer, got '1.5'");
  EXPECT_EQ(ErrorFor(WithUser({{"max_tokens", true}})), "max_tokens: must be an integer, got a boolean");
  EXPECT_EQ(ErrorFor(WithUser({{"top_k", "5"}})), "top_k: must be an integer, got a string");
  EXPECT_EQ(ErrorFor(WithUser({{"presence_penalty", 3}})), "presence_penalty: must be between -2 and 2, got 3");
  EXPECT_EQ(ErrorFor(WithUser({{"n", 2}})), "n: only n=1 is supported");
  EXPECT_EQ(ErrorFor(WithUser({{"spec", "warp"}})),
            "spec: unknown mode 'warp' (expected lookup, draft, mtp, baseline or auto)");
  EXPECT_EQ(ErrorFor(WithUser({{"cache_prompt", 1}})), "cache_prompt: must be a boolean, got a number");
  EXPECT_EQ(ErrorFor(WithUser({{"seed", "x"}})), "seed: must be an integer, got a string");
  EXPECT_EQ(ErrorFor(WithUser({{"model", 5}})), "model: must be a string, got a number");
  EXPECT_EQ(ErrorFor(WithUser({{"max_tokens", 18446744073709551615u}})),
            "max_tokens: must be at most 2147483647");
}

TEST(RequestParser, BodyErrors) {
  EXPECT_EQ(ChatError("[1]"), "request body: must be a JSON object, got an array");
  EXPECT_NE(ChatError("{\"messages\": [").find("request body is not valid JSON"), std::string::npos);
  EXPECT_NE(ChatError("").find("request body is not valid JSON"), std::string::npos);
  EXPECT_EQ(ChatError(std::string(100000, '[')), "request body: JSON nested deeper than 64 levels");
  // Brackets inside strings do not count as nesting.
  Json deep_text = WithUser({});
  deep_text["messages"][0]["content"] = std::string(1000, '[');
  EXPECT_TRUE(ParseChatRequest(deep_text.dump()).ok());
}

TEST(RequestParser, UnknownFieldsAreIgnored) {
  ParsedRequest r = Chat(WithUser({{"prompt_cache_key", "abc"}, {"parallel_tool_calls", true},
                                   {"user", "me"}, {"response_format", {{"type", "text"}}}}));
  EXPECT_EQ(r.options.max_tokens, kDefaultAnswerTokens);
}

TEST(RequestParser, CompletionPrompt) {
  ParseResult r = ParseCompletionRequest(R"({"prompt":"Once","max_tokens":5,"logprobs":2,"stop":"."})");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(*r.request->input.prompt, "Once");
  EXPECT_FALSE(r.request->input.messages);
  EXPECT_EQ(r.request->legacy_logprobs, 2);
  EXPECT_TRUE(r.request->options.logprobs);
  EXPECT_EQ(r.request->options.top_logprobs, 2);
  EXPECT_EQ(r.request->options.stop, std::vector<std::string>{"."});

  ParseResult list = ParseCompletionRequest(R"({"prompt":["first","second"]})");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list.request->input.prompt, "first");
  EXPECT_EQ(list.request->legacy_logprobs, -1);

  EXPECT_EQ(ParseCompletionRequest("{}").error, "prompt: is required");
  EXPECT_EQ(ParseCompletionRequest(R"({"prompt":[]})").error, "prompt: must not be empty");
  EXPECT_EQ(ParseCompletionRequest(R"({"prompt":[[1,2]]})").error,
            "prompt[0]: must be a string (token-id prompts are not supported)");
  EXPECT_EQ(ParseCompletionRequest(R"({"prompt":3})").error, "prompt: must be a string, got a number");
  EXPECT_EQ(ParseCompletionRequest(R"({"prompt":"x","logprobs":99})").error,
            "logprobs: must be between 0 and 20, got 99");
}

}  // namespace
}  // namespace cairn::server
