// AnswerStream: reasoning split + incremental tool-call parsing, fed in
// arbitrary pieces as tokens arrive.
#include "engine/answer_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cairn::engine {
namespace {

const Json kTools = Json::parse(R"([{"type":"function","function":{"name":"read_file",
  "parameters":{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}}}}}])");

struct Streamed {
  std::string content, reasoning;
  Json tool_calls = Json::array();  // rebuilt from the deltas' fragments
  size_t fragment_deltas = 0;        // deltas with fragments...
  size_t fragment_deltas_before_final = 0;  // ...and those before the final one
};

// Feeds `text` in pieces of `piece` bytes; the last piece is final.
Streamed Feed(AnswerStream& stream, const std::string& text, size_t piece) {
  Streamed out;
  for (size_t i = 0; i < text.size(); i += piece) {
    const bool final = i + piece >= text.size();
    const GenerationDelta d = stream.Push(std::string_view(text).substr(i, piece), final);
    out.content += d.content;
    out.reasoning += d.reasoning;
    if (d.tool_calls.is_null()) continue;
    ++out.fragment_deltas;
    if (!final) ++out.fragment_deltas_before_final;
    for (const Json& f : d.tool_calls) {
      const size_t index = f["index"];
      if (f.contains("id")) {
        EXPECT_EQ(index, out.tool_calls.size());
        out.tool_calls.push_back({{"index", index}, {"id", f["id"]}, {"type", f["type"]},
                                  {"function", {{"name", f["function"]["name"]}, {"arguments", ""}}}});
      }
      std::string args = out.tool_calls[index]["function"]["arguments"];
      out.tool_calls[index]["function"]["arguments"] = args + f["function"]["arguments"].get<std::string>();
    }
  }
  return out;
}

// The final message.tool_calls equal the streamed calls.
void ExpectStreamedEqualsFinal(const Streamed& s, const AnswerStream& stream) {
  ASSERT_EQ(s.tool_calls.size(), stream.tool_calls().size());
  for (size_t i = 0; i < s.tool_calls.size(); ++i) {
    Json streamed = s.tool_calls[i];
    streamed.erase("index");
    EXPECT_EQ(streamed, stream.tool_calls()[i]);
  }
}

TEST(AnswerStream, HermesCallIsParsedAndNeverStreamedAsText) {
  const std::string answer =
      "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\", \"limit\": 5}}\n"
      "</tool_call>";
  for (size_t piece : {1, 3, 7, 1000}) {
    AnswerStream stream(false, kTools);
    const Streamed s = Feed(stream, answer, piece);
    // Text before the opener streams as it comes (a stream cannot take text
    // back), so the newline before the call is content too.
    EXPECT_EQ(s.content, "Let me look.\n") << piece;
    EXPECT_EQ(s.content.find("<tool_call>"), std::string::npos);
    ASSERT_TRUE(s.tool_calls.is_array()) << piece;
    ASSERT_EQ(s.tool_calls.size(), 1u);
    EXPECT_EQ(s.tool_calls[0]["index"], 0);
    EXPECT_EQ(s.tool_calls[0]["type"], "function");
    EXPECT_EQ(s.tool_calls[0]["function"]["name"], "read_file");
    EXPECT_EQ(Json::parse(s.tool_calls[0]["function"]["arguments"].get<std::string>()),
              Json::parse(R"({"path":"a.py","limit":5})"));
    ExpectStreamedEqualsFinal(s, stream);
    EXPECT_EQ(stream.content(), s.content);
    if (piece < 100) {
      // The call streamed: its header and pieces came before the final delta.
      EXPECT_GT(s.fragment_deltas_before_final, 2u) << piece;
    }
  }
}

TEST(AnswerStream, ArgumentPiecesArriveTokenByToken) {
  const std::string head = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"";
  AnswerStream stream(false, kTools);
  GenerationDelta d = stream.Push(head, false);
  ASSERT_EQ(d.tool_calls.size(), 2u);  // the header, then the first piece
  EXPECT_EQ(d.tool_calls[0]["function"]["name"], "read_file");
  EXPECT_EQ(d.tool_calls[0]["function"]["arguments"], "");
  EXPECT_EQ(d.tool_calls[0]["id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(d.tool_calls[1], Json::parse(R"({"index":0,"function":{"arguments":"{\"path\":\""}})"));
  d = stream.Push("src/", false);
  EXPECT_EQ(d.tool_calls, Json::parse(R"([{"index":0,"function":{"arguments":"src/"}}])"));
  EXPECT_TRUE(stream.tool_calls().empty());  // set by the final Push
  d = stream.Push("a.py\"}}\n</tool_call>", true);
  EXPECT_EQ(d.tool_calls, Json::parse(R"([{"index":0,"function":{"arguments":"a.py\"}"}}])"));
  ASSERT_EQ(stream.tool_calls().size(), 1u);
  EXPECT_EQ(stream.tool_calls()[0]["function"]["arguments"], R"({"path":"src/a.py"})");
  EXPECT_EQ(stream.content(), "");
}

TEST(AnswerStream, ReasoningThenXmlCall) {
  const std::string answer =
      "<think>need the file</think>\n\n<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/x.c\n"
      "</parameter>\n<parameter=limit>\n10\n</parameter>\n</function>\n</tool_call>";
  AnswerStream stream(false, kTools);
  const Streamed s = Feed(stream, answer, 4);
  EXPECT_EQ(s.reasoning, "need the file");
  EXPECT_EQ(s.content.find("<"), std::string::npos) << s.content;
  ASSERT_EQ(s.tool_calls.size(), 1u);
  EXPECT_EQ(Json::parse(s.tool_calls[0]["function"]["arguments"].get<std::string>()),
            Json::parse(R"({"path":"src/x.c","limit":10})"));
  ExpectStreamedEqualsFinal(s, stream);
  EXPECT_GT(s.fragment_deltas_before_final, 2u);
}

TEST(AnswerStream, WithoutToolsMarkupIsPlainContent) {
  const std::string answer = "x <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
  AnswerStream stream(false, nullptr);
  const Streamed s = Feed(stream, answer, 5);
  EXPECT_EQ(s.content, answer);
  EXPECT_EQ(s.fragment_deltas, 0u);
  EXPECT_TRUE(stream.tool_calls().empty());
}

TEST(AnswerStream, UnparsableBlockStaysContentAndCancelledAnswerHasNoCalls) {
  {
    AnswerStream stream(false, kTools);
    const Streamed s = Feed(stream, "a <tool_call>not json at all</tool_call>", 6);
    EXPECT_NE(s.content.find("not json at all"), std::string::npos);
    EXPECT_TRUE(s.tool_calls.empty());
  }
  {
    AnswerStream stream(false, kTools);
    GenerationDelta d = stream.Push("ok <tool_call>\n{\"name\": \"read_file\", \"arg", false);
    EXPECT_EQ(d.content, "ok ");
    EXPECT_TRUE(d.tool_calls.is_null());  // the arguments value has not begun
    EXPECT_TRUE(stream.tool_calls().empty());  // never finalised (client went away)
  }
}

TEST(AnswerStream, PromptOpenedReasoning) {
  AnswerStream stream(true, nullptr);
  const Streamed s = Feed(stream, "thinking...</think>answer", 2);
  EXPECT_EQ(s.reasoning, "thinking...");
  EXPECT_EQ(s.content, "answer");
}

}  // namespace
}  // namespace cairn::engine
