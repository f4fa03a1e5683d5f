// Differential test against Hugging Face `tokenizers`: every line of
// golden/qwen3_hf_golden.jsonl (written by tools/tokenizer_golden.py) must
// tokenize to exactly HF's ids, with and without special-token parsing, and
// decode back to its normalized (NFC) text. The corpus includes non-NFC text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "test_vocab.h"

namespace cairn::tokenizer {
namespace {

TEST(HfGolden, Qwen3MatchesHuggingFaceExactly) {
  const std::string path = cairn::test::SourceDir() + "/tests/tokenizer/golden/qwen3_hf_golden.jsonl";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  const Tokenizer& t = test::Qwen3();
  std::string line;
  int cases = 0, passed = 0, special_cases = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    const std::string text = j["text"].get<std::string>();
    const bool special = j["special"].get<bool>();
    const auto expected = j["ids"].get<std::vector<TokenId>>();
    const auto ids = t.Encode(text, special);
    ++cases;
    special_cases += special;
    if (ids == expected) {
      ++passed;
    } else if (cases - passed <= 5) {  // show the first few differences only
      ADD_FAILURE() << "case " << cases << " (special=" << special << ") text: '" << text << "'\n"
                    << "got " << ::testing::PrintToString(ids) << "\nwant "
                    << ::testing::PrintToString(expected);
    }
    // Decoding gives the text after NFC (HF's normalizer), not the raw input.
    ASSERT_EQ(t.DecodeBytes(ids, /*render_special=*/true), t.NormalizedText(text, special))
        << "case " << cases;
  }
  EXPECT_EQ(passed, cases);
  EXPECT_GE(cases, 3000);
  EXPECT_GE(special_cases, 100);
  std::printf("HF golden: %d/%d cases identical (%d with special parsing)\n", passed, cases,
              special_cases);
}

}  // namespace
}  // namespace cairn::tokenizer
