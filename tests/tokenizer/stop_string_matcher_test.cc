#include "tokenizer/stop_string_matcher.h"

#include <gtest/gtest.h>

namespace cairn::tokenizer {
namespace {

// Feeds chunks and returns everything emitted (including the final flush).
std::string Feed(StopStringMatcher& m, const std::vector<std::string>& chunks) {
  std::string out;
  for (const auto& c : chunks) {
    const auto r = m.Push(c);
    out += r.text;
    if (r.stopped) return out;
  }
  return out + m.Flush();
}

TEST(StopStringMatcher, NoStopPassesEverythingThrough) {
  StopStringMatcher m({"</s>"});
  EXPECT_EQ(Feed(m, {"hello ", "world"}), "hello world");
  EXPECT_FALSE(m.stopped());
}

TEST(StopStringMatcher, StopSplitAcrossChunks) {
  StopStringMatcher m({"<|im_end|>"});
  auto r = m.Push("Answer: 42<|im");
  EXPECT_EQ(r.text, "Answer: 42");  // "<|im" held back
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(m.held_bytes(), 4u);
  r = m.Push("_en");
  EXPECT_EQ(r.text, "");
  r = m.Push("d|> trailing");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "");
  EXPECT_EQ(r.stop_index, 0);
  EXPECT_TRUE(m.Push("more").text.empty());
  EXPECT_EQ(m.Flush(), "");
}

TEST(StopStringMatcher, FalseAlarmIsReleased) {
  StopStringMatcher m({"STOP"});
  auto r = m.Push("a ST");
  EXPECT_EQ(r.text, "a ");
  r = m.Push("ART");
  EXPECT_EQ(r.text, "START");
  EXPECT_FALSE(r.stopped);
}

TEST(StopStringMatcher, EarliestOfSeveralStops) {
  StopStringMatcher m({"world", "lo w", ""});
  const auto r = m.Push("hello world");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "hel");
  EXPECT_EQ(r.stop_index, 1);
}

TEST(StopStringMatcher, HeldTextFlushedAtEnd) {
  StopStringMatcher m({"\n\nUser:"});
  EXPECT_EQ(Feed(m, {"done.\n", "\nUs"}), "done.\n\nUs");
}

TEST(StopStringMatcher, ByteAtATime) {
  const std::string text = "abc <stop> def";
  StopStringMatcher m({"<stop>"});
  std::string out;
  bool stopped = false;
  for (char c : text) {
    const auto r = m.Push(std::string(1, c));
    out += r.text;
    if (r.stopped) {
      stopped = true;
      break;
    }
  }
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "abc ");
}

}  // namespace
}  // namespace cairn::tokenizer
