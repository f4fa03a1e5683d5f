// ReasoningSplitter: every split of several outputs into two and three chunks
// (and byte-by-byte) must give the same content and reasoning as one chunk.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/reasoning_splitter.h"

namespace cairn::engine {
namespace {

struct Case {
  std::string output;
  bool prompt_opened;
  std::string reasoning;
  std::string content;
};

SplitDelta RunChunks(const std::vector<std::string>& chunks, bool prompt_opened) {
  ReasoningSplitter splitter(prompt_opened);
  SplitDelta total;
  for (const std::string& chunk : chunks) {
    const SplitDelta d = splitter.Feed(chunk);
    total.content += d.content;
    total.reasoning += d.reasoning;
  }
  const SplitDelta d = splitter.Finish();
  total.content += d.content;
  total.reasoning += d.reasoning;
  return total;
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"<think>\nLet me think.\n</think>\n\nThe answer is 4.", false, "Let me think.", "The answer is 4."},
      {"  \n<think>a</think>b", false, "a", "b"},
      {"Plain answer, no reasoning.", false, "", "Plain answer, no reasoning."},
      {"Answer mentions <think> later </think> here", false, "",
       "Answer mentions <think> later </think> here"},
      {"reasoning with < and </thin and </th\n\n</think>\n\ncontent </think> tail", true,
       "reasoning with < and </thin and </th", "content </think> tail"},
      {"truncated reasoning </thi", true, "truncated reasoning </thi", ""},
      {"<think>\nunclosed and cut", false, "unclosed and cut", ""},
      {"<think>\nrepeated opener\n</think>\n\nok", true, "repeated opener", "ok"},
      {"\n\n</think>\n\nonly content", true, "", "only content"},
      {"<thin", false, "", "<thin"},
      {"line1\n\nline2\n\n\n</think>x", true, "line1\n\nline2", "x"},
      {"", true, "", ""},
      {"<think></think>", false, "", ""},
      {"multi\nbyte \xE2\x9C\x93 ok</think>\xF0\x9F\x98\x80", true, "multi\nbyte \xE2\x9C\x93 ok",
       "\xF0\x9F\x98\x80"},
  };
  return cases;
}

TEST(ReasoningSplitter, WholeOutput) {
  for (const Case& c : Cases()) {
    const SplitDelta d = RunChunks({c.output}, c.prompt_opened);
    EXPECT_EQ(d.reasoning, c.reasoning) << c.output;
    EXPECT_EQ(d.content, c.content) << c.output;
  }
}

TEST(ReasoningSplitter, EverySplitPoint) {
  for (const Case& c : Cases()) {
    const std::string& s = c.output;
    for (size_t i = 0; i <= s.size(); ++i) {
      const SplitDelta d = RunChunks({s.substr(0, i), s.substr(i)}, c.prompt_opened);
      ASSERT_EQ(d.reasoning, c.reasoning) << s << " split at " << i;
      ASSERT_EQ(d.content, c.content) << s << " split at " << i;
      for (size_t j = i; j <= s.size(); j += 3) {
        const SplitDelta d3 =
            RunChunks({s.substr(0, i), s.substr(i, j - i), s.substr(j)}, c.prompt_opened);
        ASSERT_EQ(d3.reasoning, c.reasoning) << s << " split at " << i << "," << j;
        ASSERT_EQ(d3.content, c.content) << s << " split at " << i << "," << j;
      }
    }
  }
}

TEST(ReasoningSplitter, ByteByByteAndNothingLeaksEarly) {
  for (const Case& c : Cases()) {
    std::vector<std::string> bytes;
    for (char ch : c.output) bytes.emplace_back(1, ch);
    const SplitDelta d = RunChunks(bytes, c.prompt_opened);
    EXPECT_EQ(d.reasoning, c.reasoning) << c.output;
    EXPECT_EQ(d.content, c.content) << c.output;
  }
  // A partial closer is never shown as reasoning before it is decided.
  ReasoningSplitter splitter(/*start_in_reasoning=*/true);
  EXPECT_EQ(splitter.Feed("abc</th").reasoning, "abc");
  EXPECT_TRUE(splitter.in_reasoning());
  const SplitDelta d = splitter.Feed("ink>done");
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, "done");
  EXPECT_FALSE(splitter.in_reasoning());
}

TEST(ReasoningSplitter, StreamsReasoningIncrementally) {
  ReasoningSplitter splitter;
  EXPECT_TRUE(splitter.Feed("<think>\n").empty());
  EXPECT_EQ(splitter.Feed("step one").reasoning, "step one");
  EXPECT_EQ(splitter.Feed("\n").reasoning, "");  // held: may precede the closer
  EXPECT_EQ(splitter.Feed("step two").reasoning, "\nstep two");
  EXPECT_EQ(splitter.Feed("</think>\n\nHi").content, "Hi");
}

TEST(ReasoningSplitter, CustomTagPairs) {
  ReasoningSplitter splitter(false, {{"<think>", "</think>"}, {"<|channel>thought\n", "<channel|>"}});
  SplitDelta d = splitter.Feed("<|channel>thought\nhmm<chan");
  EXPECT_EQ(d.reasoning, "hmm");
  d = splitter.Feed("nel|>answer");
  EXPECT_EQ(d.content, "answer");
}

}  // namespace
}  // namespace cairn::engine
