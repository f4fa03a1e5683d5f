// ToolCallStream: the incremental tool-call parser. Every text is checked fed
// whole, byte by byte and in random chunkings: content and calls must be the
// same every way (the single source of truth for streamed and final calls).
#include "engine/tool_call_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace cairn::engine {
namespace {

using Json = nlohmann::ordered_json;

const Json kTools = Json::parse(R"([{"type":"function","function":{"name":"write","parameters":{
  "type":"object","properties":{"path":{"type":"string"},"body":{"type":"string"},"n":{"type":"integer"}}}}}])");

struct Parsed {
  std::string content;
  std::vector<ToolCall> calls;           // calls()
  Json streamed = Json::array();         // calls rebuilt from the fragments
  std::vector<std::vector<std::string>> pieces;  // argument pieces per call, as streamed
  int header_feed = -1;                  // the Feed that sent the first header
};

// Feeds `text` cut at `cuts` (sorted offsets); ids are call_0, call_1, ...
Parsed Feed(const std::string& text, const std::vector<size_t>& cuts, const Json& tools = kTools) {
  int next_id = 0;
  ToolCallStream stream(tools, [&] { return "call_" + std::to_string(next_id++); });
  Parsed run;
  size_t at = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    const size_t end = i < cuts.size() ? cuts[i] : text.size();
    const bool final = i == cuts.size();
    ToolCallOutput out = stream.Feed(std::string_view(text).substr(at, end - at), final);
    at = end;
    run.content += out.content;
    if (out.tool_calls.is_null()) continue;
    EXPECT_TRUE(out.tool_calls.is_array());
    for (const Json& f : out.tool_calls) {
      const size_t index = f["index"].get<size_t>();
      if (f.contains("id")) {
        // A header: {index, id, type, function: {name, arguments: ""}}, in index order.
        EXPECT_EQ(index, run.streamed.size());
        EXPECT_EQ(f["type"], "function");
        EXPECT_EQ(f["function"]["arguments"], "");
        run.streamed.push_back({{"id", f["id"]}, {"name", f["function"]["name"]}, {"arguments", ""}});
        run.pieces.emplace_back();
        if (run.header_feed < 0) run.header_feed = static_cast<int>(i);
      } else {
        EXPECT_EQ(f.size(), 2u) << f.dump();  // {index, function: {arguments}}
        EXPECT_LT(index, run.streamed.size());
        const std::string piece = f["function"]["arguments"];
        EXPECT_FALSE(piece.empty());
        run.streamed[index]["arguments"] = run.streamed[index]["arguments"].get<std::string>() + piece;
        run.pieces[index].push_back(piece);
      }
    }
  }
  run.calls = stream.calls();
  EXPECT_EQ(run.calls.size(), run.streamed.size());
  for (size_t i = 0; i < run.calls.size() && i < run.streamed.size(); ++i) {
    EXPECT_EQ(run.calls[i].id, run.streamed[i]["id"]);
    EXPECT_EQ(run.calls[i].name, run.streamed[i]["name"]);
    EXPECT_EQ(run.calls[i].arguments, run.streamed[i]["arguments"]);
  }
  return run;
}

Parsed Whole(const std::string& text, const Json& tools = kTools) { return Feed(text, {}, tools); }

Parsed ByteByByte(const std::string& text, const Json& tools = kTools) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < text.size(); ++i) cuts.push_back(i);
  return Feed(text, cuts, tools);
}

void ExpectSame(const Parsed& a, const Parsed& b, const std::string& what) {
  EXPECT_EQ(a.content, b.content) << what;
  ASSERT_EQ(a.calls.size(), b.calls.size()) << what;
  for (size_t i = 0; i < a.calls.size(); ++i) {
    EXPECT_EQ(a.calls[i].id, b.calls[i].id) << what;
    EXPECT_EQ(a.calls[i].name, b.calls[i].name) << what;
    EXPECT_EQ(a.calls[i].arguments, b.calls[i].arguments) << what;
  }
}

std::vector<std::string> Texts() {
  return {
      "plain text, no calls < <tool <function",
      "I'll check.\n<tool_call>\n{\"name\": \"get\", \"arguments\": {\"city\": \"Paris\", \"n\": [1, -2.5e3, true, null]}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"time\", \"arguments\": {}}\n</tool_call>\nDone.",
      "<tool_call>{\"name\": \"w\", \"arguments\": {\"code\": \"a\n\tb\\u00e9\\ud83d\\ude00 \\q\"}}</tool_call>",
      "<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": 1, \\\"s\\\": \\\"l1\\\\nl2\\\"}\"}</tool_call>",
      "<tool_call>{\"arguments\": {\"k\": \"v\"}, \"id\": 7, \"name\": \"late\"}</tool_call> after",
      "a <tool_call>not json</tool_call> b <tool_call>{\"nam\": 1}</tool_call> c",
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"xy\", oops}}</tool_call>tail",
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": [1, 2, }}</tool_call>",
      "Sure.<tool_call>\n{\"name\": \"f\", \"argu",
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"path\": \"src/ma",
      "Editing.\n<tool_call>\n<function=write>\n<parameter=path>\nsrc/a.py\n</parameter>\n<parameter=n>\n42\n"
      "</parameter>\n<parameter=body>\ndef f():\n    return \"</param\"\n\n</parameter>\n</function>\n</tool_call>\nok",
      "<tool_call>\n<function=f>\n<parameter=x>\n7\n</parameter>\n<function=g>\n<parameter=y>\ntrue\n</parameter>\n</tool_call>",
      "<tool_call><function=write><parameter=body>\nunfinished li",
      "<tool_call><function=f><parameter=a>1</parameter>",
      "use <function=foo> here, and <function=bar>\n<parameter=q>\nhi\n</parameter>\n</function> then",
      "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\nstray text</tool_call>end",
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}}}</tool_call><tool_call>{\"name\": \"g\", "
      "\"arguments\": {\"b\": 2}</tool_call>",
      "<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":1,}}\n{\"name\":\"g\",\"parameters\":{}}</tool_call>",
      "<tool_call></tool_call>x<tool_call>\n[1]</tool_call>",
      // Fenced calls (FencedCall): a declared tool's name first, else plain code.
      "Reading it.\n```json\n{\n  \"name\": \"write\",\n  \"arguments\": {\"path\": \"main.py\"}\n}\n```\nthen",
      "```\n{\"name\": \"write\", \"arguments\": {\"n\": 3}}\n```",
      "Example:\n```json\n{\"name\": \"nope\", \"arguments\": {}}\n```\nand ```json\n{\"x\": 1}\n``` done",
      "```python\nprint(1)\n```\n```json\n[1, 2]\n```",
  };
}

TEST(ToolCallStream, SameResultWholeByteByByteAndRandomChunks) {
  std::mt19937 rng(1234);
  for (const std::string& text : Texts()) {
    const Parsed whole = Whole(text);
    ExpectSame(whole, ByteByByte(text), "bytes: " + text);
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<size_t> cuts;
      for (size_t i = 1; i < text.size(); ++i) {
        if (rng() % 5 == 0) cuts.push_back(i);
      }
      ExpectSame(whole, Feed(text, cuts), "chunks: " + text);
    }
  }
}

TEST(ToolCallStream, EveryArgumentsTextIsJsonUnlessCutOff) {
  for (const std::string& text : Texts()) {
    const Parsed run = Whole(text);
    for (size_t i = 0; i < run.calls.size(); ++i) {
      const bool last = i + 1 == run.calls.size();
      const Json parsed = Json::parse(run.calls[i].arguments, nullptr, false);
      if (!last || text.find("</tool_call>", text.rfind("<tool_call>")) != std::string::npos) {
        EXPECT_TRUE(parsed.is_object()) << text << " -> " << run.calls[i].arguments;
      }
    }
  }
}

TEST(ToolCallStream, HermesStreamsCompactArgumentsInPieces) {
  const std::string text =
      "Let me see.\n<tool_call>\n{\"name\": \"get\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}\n"
      "</tool_call>";
  const Parsed run = ByteByByte(text);
  EXPECT_EQ(run.content, "Let me see.\n");
  ASSERT_EQ(run.calls.size(), 1u);
  EXPECT_EQ(run.calls[0].id, "call_0");
  EXPECT_EQ(run.calls[0].name, "get");
  EXPECT_EQ(run.calls[0].arguments, R"({"city":"Paris","days":[1,2]})");
  // The header went out when the arguments value began: at its '{'.
  EXPECT_EQ(static_cast<size_t>(run.header_feed), text.find("{\"city\""));
  EXPECT_GT(run.pieces[0].size(), 10u);
  EXPECT_EQ(run.pieces[0].front(), "{");
}

TEST(ToolCallStream, RawControlCharactersInStringsBecomeEscapes) {
  const Parsed run = Whole("<tool_call>{\"name\": \"w\", \"arguments\": {\"code\": \"if x:\n\tpass\x01\"}}</tool_call>");
  ASSERT_EQ(run.calls.size(), 1u);
  EXPECT_EQ(run.calls[0].arguments, "{\"code\":\"if x:\\n\\tpass\\u0001\"}");
  EXPECT_EQ(Json::parse(run.calls[0].arguments)["code"], "if x:\n\tpass\x01");
}

TEST(ToolCallStream, EscapesAndSurrogates) {
  const Parsed run = Whole(
      "<tool_call>{\"name\": \"w\", \"arguments\": {\"s\": \"\\u00e9\\ud83d\\ude00\\ud800x\\'\\q\\/\"}}</tool_call>");
  ASSERT_EQ(run.calls.size(), 1u);
  EXPECT_EQ(run.calls[0].arguments, "{\"s\":\"\\u00e9\\ud83d\\ude00\\ufffdx'\\\\q\\/\"}");
  EXPECT_EQ(Json::parse(run.calls[0].arguments)["s"], "\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx'\\q/");
}

TEST(ToolCallStream, ArgumentsAsJsonStringAreDecoded) {
  const Parsed run = ByteByByte(
      "<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": 1, \\\"s\\\": \\\"l1\\\\nl2\\\"}\"}</tool_call>"
      "<tool_call>{\"name\": \"b\", \"arguments\": \"\"}</tool_call>");
  ASSERT_EQ(run.calls.size(), 2u);
  EXPECT_EQ(run.calls[0].arguments, R"({"x":1,"s":"l1\nl2"})");
  EXPECT_EQ(run.calls[1].arguments, "{}");
  EXPECT_EQ(run.content, "");
}

TEST(ToolCallStream, ArgumentsBeforeNameGoOutWhenTheObjectCloses) {
  const std::string text = "<tool_call>{\"arguments\": {\"k\": \"v\"}, \"id\": 7, \"name\": \"late\"}</tool_call> after";
  const Parsed run = ByteByByte(text);
  ASSERT_EQ(run.calls.size(), 1u);
  EXPECT_EQ(run.calls[0].name, "late");
  EXPECT_EQ(run.calls[0].arguments, R"({"k":"v"})");
  EXPECT_EQ(static_cast<size_t>(run.header_feed), text.find("}</tool_call>"));
  EXPECT_EQ(run.content, "after");  // whitespace right after a call block is dropped
}

TEST(ToolCallStream, SeveralCallsAndTextAround) {
  const Parsed run = Whole(Texts()[1]);
  EXPECT_EQ(run.content, "I'll check.\nDone.");
  ASSERT_EQ(run.calls.size(), 2u);
  EXPECT_EQ(run.calls[0].arguments, R"({"city":"Paris","n":[1,-2.5e3,true,null]})");
  EXPECT_EQ(run.calls[1].name, "time");
  EXPECT_EQ(run.calls[1].arguments, "{}");
}

TEST(ToolCallStream, MalformedBeforeHeaderStaysText) {
  const std::string text = "a <tool_call>not json</tool_call> b <tool_call>{\"nam\": 1}</tool_call> c";
  const Parsed run = ByteByByte(text);
  EXPECT_TRUE(run.calls.empty());
  EXPECT_EQ(run.content, text);
  EXPECT_EQ(Whole("<tool_call></tool_call>x<tool_call>\n[1]</tool_call>").content,
            "<tool_call></tool_call>x<tool_call>\n[1]</tool_call>");
  // A bare <function=...> in prose is not a call until a parameter or </function> follows.
  const Parsed prose = ByteByByte(Texts()[14]);
  ASSERT_EQ(prose.calls.size(), 1u);
  EXPECT_EQ(prose.calls[0].name, "bar");
  EXPECT_EQ(prose.calls[0].arguments, R"({"q":"hi"})");
  EXPECT_EQ(prose.content, "use <function=foo> here, and then");
}

TEST(ToolCallStream, MalformedAfterHeaderClosesTheCallAndKeepsTheRestAsText) {
  const Parsed obj = ByteByByte("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"xy\", oops}}</tool_call>tail");
  ASSERT_EQ(obj.calls.size(), 1u);
  EXPECT_EQ(obj.calls[0].arguments, R"({"a":"xy"})");
  EXPECT_EQ(obj.content, "oops}}</tool_call>tail");
  const Parsed arr = Whole("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": [1, 2, }}</tool_call>");
  ASSERT_EQ(arr.calls.size(), 1u);
  EXPECT_EQ(arr.calls[0].arguments, R"({"a":[1,2]})");
  EXPECT_EQ(arr.content, "}}</tool_call>");
  const Parsed xml = Whole(Texts()[15]);
  ASSERT_EQ(xml.calls.size(), 1u);
  EXPECT_EQ(xml.calls[0].arguments, R"({"a":1})");
  EXPECT_EQ(xml.content, "stray text</tool_call>end");
  const Parsed str = Whole("<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": tru\"}</tool_call>");
  ASSERT_EQ(str.calls.size(), 1u);
  EXPECT_EQ(str.calls[0].arguments, "{}");
}

TEST(ToolCallStream, CutOffCallsStayAsStreamed) {
  const Parsed before = Whole("Sure.<tool_call>\n{\"name\": \"f\", \"argu");
  EXPECT_TRUE(before.calls.empty());
  EXPECT_EQ(before.content, "Sure.");
  const Parsed json = Whole("<tool_call>{\"name\": \"f\", \"arguments\": {\"path\": \"src/ma");
  ASSERT_EQ(json.calls.size(), 1u);
  EXPECT_EQ(json.calls[0].arguments, R"({"path":"src/ma)");
  const Parsed xml = ByteByByte("<tool_call><function=write><parameter=path>\nsrc/a.py\n</parameter>"
                             "<parameter=body>\nunfinished li");
  ASSERT_EQ(xml.calls.size(), 1u);
  EXPECT_EQ(xml.calls[0].arguments, R"({"path":"src/a.py","body":"unfinished li)");
  // Between parameters an XML call says all it has: closed.
  const Parsed between = Whole("<tool_call><function=f><parameter=a>1</parameter>");
  ASSERT_EQ(between.calls.size(), 1u);
  EXPECT_EQ(between.calls[0].arguments, R"({"a":1})");
}

TEST(ToolCallStream, XmlStringParametersStreamTheirValue) {
  const Parsed run = ByteByByte(Texts()[10]);
  EXPECT_EQ(run.content, "Editing.\nok");
  ASSERT_EQ(run.calls.size(), 1u);
  EXPECT_EQ(run.calls[0].name, "write");
  const Json args = Json::parse(run.calls[0].arguments);
  EXPECT_EQ(args, Json::parse(R"({"path":"src/a.py","n":42,"body":"def f():\n    return \"</param\"\n"})"));
  // "{", the path streamed by bytes, "42" whole, the body by bytes, "}".
  EXPECT_GT(run.pieces[0].size(), 30u);
  EXPECT_NE(std::find(run.pieces[0].begin(), run.pieces[0].end(), ",\"n\":42"), run.pieces[0].end());
}

TEST(ToolCallStream, LenientJsonSlips) {
  const Parsed braces = Whole(Texts()[16]);
  ASSERT_EQ(braces.calls.size(), 2u);
  EXPECT_EQ(braces.calls[0].arguments, R"({"a":1})");
  EXPECT_EQ(braces.calls[1].arguments, R"({"b":2})");
  EXPECT_EQ(braces.content, "");
  const Parsed two = Whole(Texts()[17]);
  ASSERT_EQ(two.calls.size(), 2u);
  EXPECT_EQ(two.calls[0].arguments, R"({"a":1})");
  EXPECT_EQ(two.calls[1].name, "g");
  EXPECT_EQ(two.calls[1].arguments, "{}");
}

TEST(ToolCallStream, ContentComesBeforeFragmentsInEachFeed) {
  ToolCallStream stream(kTools);
  ToolCallOutput a = stream.Feed("Hi <tool_call>{\"name\": \"f\", \"arguments\": {\"x\": 1}}</tool_call> after");
  EXPECT_EQ(a.content, "Hi ");
  ASSERT_TRUE(a.tool_calls.is_array());
  ToolCallOutput b = stream.Feed(" more", true);
  EXPECT_EQ(b.content, "after more");
  EXPECT_TRUE(b.tool_calls.is_null());
}

TEST(ToolCallStream, FencedJsonNamingADeclaredToolIsACall) {
  const Parsed run = ByteByByte(Texts()[19]);
  ASSERT_EQ(run.calls.size(), 1u);
  EXPECT_EQ(run.calls[0].name, "write");
  EXPECT_EQ(run.calls[0].arguments, R"({"path":"main.py"})");
  EXPECT_EQ(run.content, "Reading it.\nthen");
  const Parsed bare = ByteByByte(Texts()[20]);
  ASSERT_EQ(bare.calls.size(), 1u);
  EXPECT_EQ(bare.calls[0].arguments, R"({"n":3})");
  EXPECT_EQ(bare.content, "");
}

TEST(ToolCallStream, OtherCodeFencesStayTextVerbatim) {
  for (int k : {21, 22}) {
    const Parsed run = ByteByByte(Texts()[k]);
    EXPECT_TRUE(run.calls.empty()) << Texts()[k];
    EXPECT_EQ(run.content, Texts()[k]);
  }
  // Without tools, nothing is a call.
  const Parsed no_tools = Whole(Texts()[19], Json::array());
  EXPECT_TRUE(no_tools.calls.empty());
}

}  // namespace
}  // namespace cairn::engine
