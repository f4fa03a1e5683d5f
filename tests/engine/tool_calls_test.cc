// Tool-call parsing (Hermes JSON and XML function forms) and the streaming gate.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

#include "engine/tool_calls.h"
#include "engine/tool_calls_gate.h"

namespace cairn::engine {
namespace {

using Json = nlohmann::ordered_json;

Json Args(const ToolCall& call) { return Json::parse(call.arguments); }

TEST(ToolCalls, HermesJsonSeveralCalls) {
  const std::string text =
      "I'll check both.\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\", \"n\": 3}}\n</tool_call>";
  const ParsedToolCalls parsed = ParseToolCalls(text);
  EXPECT_EQ(parsed.content, "I'll check both.");
  ASSERT_EQ(parsed.calls.size(), 2u);
  EXPECT_EQ(parsed.calls[0].name, "get_weather");
  EXPECT_EQ(Args(parsed.calls[0]), Json::parse(R"({"city":"Paris"})"));
  EXPECT_EQ(parsed.calls[1].name, "get_time");
  EXPECT_EQ(Args(parsed.calls[1])["n"], 3);
  EXPECT_NE(parsed.calls[0].id, parsed.calls[1].id);
  EXPECT_EQ(parsed.calls[0].id.rfind("call_", 0), 0u);
  EXPECT_EQ(parsed.calls[0].id.size(), 5u + 24u);
  EXPECT_EQ(parsed.calls[0].id.find_first_not_of("0123456789abcdef", 5), std::string::npos);

  const Json openai = ToOpenAiToolCalls(parsed.calls);
  ASSERT_EQ(openai.size(), 2u);
  EXPECT_EQ(openai[0]["type"], "function");
  EXPECT_EQ(openai[0]["function"]["name"], "get_weather");
  EXPECT_TRUE(openai[0]["function"]["arguments"].is_string());
}

TEST(ToolCalls, HermesArgumentsAsStringAndMissing) {
  const ParsedToolCalls parsed = ParseToolCalls(
      "<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"x\\\":1}\"}</tool_call>"
      "<tool_call>{\"name\": \"b\"}</tool_call>");
  ASSERT_EQ(parsed.calls.size(), 2u);
  EXPECT_EQ(parsed.calls[0].arguments, "{\"x\":1}");
  EXPECT_EQ(parsed.calls[1].arguments, "{}");
  EXPECT_EQ(parsed.content, "");
}

TEST(ToolCalls, XmlFunctionFormWithSchemaCoercion) {
  const Json tools = Json::parse(R"([{"type":"function","function":{"name":"edit","parameters":{
      "type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer"},
      "dry":{"type":"boolean"},"opts":{"type":"object"},"code":{"type":"string"}}}}}])");
  const std::string text =
      "Editing now.\n<tool_call>\n<function=edit>\n<parameter=path>\n123\n</parameter>\n"
      "<parameter=line>\n42\n</parameter>\n<parameter=dry>\nfalse\n</parameter>\n"
      "<parameter=opts>\n{\"a\": [1, 2]}\n</parameter>\n<parameter=code>\nif x:\n    y = 1\n\n</parameter>\n"
      "</function>\n</tool_call>";
  const ParsedToolCalls parsed = ParseToolCalls(text, tools);
  EXPECT_EQ(parsed.content, "Editing now.");
  ASSERT_EQ(parsed.calls.size(), 1u);
  const Json args = Args(parsed.calls[0]);
  EXPECT_EQ(args["path"], "123");  // schema says string: not coerced
  EXPECT_EQ(args["line"], 42);
  EXPECT_EQ(args["dry"], false);
  EXPECT_EQ(args["opts"], Json::parse(R"({"a":[1,2]})"));
  EXPECT_EQ(args["code"], "if x:\n    y = 1\n");
}

TEST(ToolCalls, XmlWithoutSchemaCoercesShortScalarsOnly) {
  const ParsedToolCalls parsed = ParseToolCalls(
      "<tool_call><function=f><parameter=n>7</parameter><parameter=b>true</parameter>"
      "<parameter=s>hello</parameter><parameter=z>null</parameter></function>");
  ASSERT_EQ(parsed.calls.size(), 1u);
  const Json args = Args(parsed.calls[0]);
  EXPECT_EQ(args["n"], 7);
  EXPECT_EQ(args["b"], true);
  EXPECT_EQ(args["s"], "hello");
  EXPECT_TRUE(args["z"].is_null());
}

TEST(ToolCalls, TruncatedCallIsDroppedAndJunkStaysContent) {
  EXPECT_EQ(ParseToolCalls("Sure.<tool_call>\n{\"name\": \"f\", \"argu").content, "Sure.");
  EXPECT_TRUE(ParseToolCalls("Sure.<tool_call>\n{\"name\": \"f\", \"argu").calls.empty());
  EXPECT_EQ(ParseToolCalls("x<tool_call><function=f><parameter=a>1").content, "x");
  const ParsedToolCalls junk = ParseToolCalls("a <tool_call>not json</tool_call> b");
  EXPECT_TRUE(junk.calls.empty());
  EXPECT_EQ(junk.content, "a <tool_call>not json</tool_call> b");
  const ParsedToolCalls plain = ParseToolCalls("  no calls here  ");
  EXPECT_EQ(plain.content, "  no calls here  ");
}

TEST(ToolCalls, IdsAreUnique) {
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.insert(NewToolCallId());
  EXPECT_EQ(ids.size(), 1000u);
}

std::string RunGate(const std::vector<std::string>& chunks, ToolCallGate& gate) {
  std::string shown;
  for (const std::string& c : chunks) shown += gate.Feed(c);
  shown += gate.Finish();
  return shown;
}

TEST(ToolCallGate, HoldsBackFromOpenerAtEverySplit) {
  const std::string text = "Let me look.<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
  for (size_t i = 0; i <= text.size(); ++i) {
    ToolCallGate gate;
    const std::string shown = RunGate({text.substr(0, i), text.substr(i)}, gate);
    ASSERT_EQ(shown, "Let me look.") << i;
    ASSERT_TRUE(gate.triggered());
    const ParsedToolCalls parsed = ParseToolCalls(gate.held());
    ASSERT_EQ(parsed.calls.size(), 1u) << i;
  }
  const std::string plain = "a < b and <tool is fine <function";
  for (size_t i = 0; i <= plain.size(); ++i) {
    ToolCallGate gate;
    ASSERT_EQ(RunGate({plain.substr(0, i), plain.substr(i)}, gate), plain) << i;
    ASSERT_FALSE(gate.triggered());
  }
}

}  // namespace
}  // namespace cairn::engine
