// AnswerStream: reasoning split + tool-call gate + tool-call parsing, fed in
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
  Json tool_calls;  // from the deltas
};

// Feeds `text` in pieces of `piece` bytes; the last piece is final.
Streamed Feed(AnswerStream& stream, const std::string& text, size_t piece) {
  Streamed out;
  for (size_t i = 0; i < text.size(); i += piece) {
    const bool final = i + piece >= text.size();
    const GenerationDelta d = stream.Push(std::string_view(text).substr(i, piece), final);
    out.content += d.content;
    out.reasoning += d.reasoning;
    if (!d.tool_calls.is_null()) {
      EXPECT_TRUE(out.tool_calls.is_null()) << "tool calls sent twice";
      out.tool_calls = d.tool_calls;
    }
  }
  return out;
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
    EXPECT_EQ(stream.tool_calls().size(), 1u);
    EXPECT_EQ(stream.content(), s.content);
  }
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
}

TEST(AnswerStream, WithoutToolsMarkupIsPlainContent) {
  const std::string answer = "x <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
  AnswerStream stream(false, nullptr);
  const Streamed s = Feed(stream, answer, 5);
  EXPECT_EQ(s.content, answer);
  EXPECT_TRUE(s.tool_calls.is_null());
  EXPECT_TRUE(stream.tool_calls().empty());
}

TEST(AnswerStream, UnparsableBlockStaysContentAndCancelledAnswerHasNoCalls) {
  {
    AnswerStream stream(false, kTools);
    const Streamed s = Feed(stream, "a <tool_call>not json at all</tool_call>", 6);
    EXPECT_NE(s.content.find("not json at all"), std::string::npos);
    EXPECT_TRUE(s.tool_calls.is_null());
  }
  {
    AnswerStream stream(false, kTools);
    GenerationDelta d = stream.Push("ok <tool_call>\n{\"name\": \"read_file\", \"arg", false);
    EXPECT_EQ(d.content, "ok ");
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
