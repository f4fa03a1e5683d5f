// Volatile-looking prompt lines (engine/volatile_lines.h) and the marks the
// prompt builder derives from them.
#include "engine/volatile_lines.h"

#include <gtest/gtest.h>

#include <string>

namespace cairn::engine {
namespace {

std::vector<int> Scores(const std::string& text) {
  std::vector<int> out;
  for (const VolatileLine& line : FindVolatileLines(text, text.size())) out.push_back(line.score);
  return out;
}

TEST(VolatileLines, StrongWeakAndPlainLines) {
  EXPECT_EQ(Scores("Primary working directory: /tmp/repo"), (std::vector<int>{2}));
  EXPECT_EQ(Scores("memories live in /home/sam/.qwen/memories"), (std::vector<int>{2}));
  EXPECT_EQ(Scores("Today's date is 2026-12-04."), (std::vector<int>{2}));
  EXPECT_EQ(Scores("01dd4a5 init"), (std::vector<int>{2}));
  EXPECT_EQ(Scores("<env>"), (std::vector<int>{2}));
  EXPECT_EQ(Scores("see /usr/share/doc for more"), (std::vector<int>{1}));
  EXPECT_EQ(Scores("--- Context from: ../proj/.qwen/output-language.md ---"), (std::vector<int>{1}));
  EXPECT_EQ(Scores("run ./scripts/test.sh"), (std::vector<int>{1}));
  for (const char* plain : {"You are a helpful assistant.", "use a/b/c relative paths", "deadbeef is a word",
                            "version 1.2.3", "http://x", "1234567 is a number", "abcdefab letters only"}) {
    EXPECT_TRUE(Scores(plain).empty()) << plain;
  }
}

TEST(VolatileLines, OffsetsAreLineStartsBeforeTheEnd) {
  const std::string text = "intro\ncwd: /tmp/a\nplain\nDate: 2026-01-02\n";
  const auto lines = FindVolatileLines(text, text.size());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].offset, text.find("cwd"));
  EXPECT_EQ(lines[1].offset, text.find("Date"));
  EXPECT_EQ(FindVolatileLines(text, text.find("plain")).size(), 1u);  // lines starting before `end`
  EXPECT_TRUE(FindVolatileLines("", 10).empty());
}

}  // namespace
}  // namespace cairn::engine
