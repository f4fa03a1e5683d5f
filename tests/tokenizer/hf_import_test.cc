// HF tokenizer.json import: structure handling and clear errors.
#include "tokenizer/hf_import.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace cairn::tokenizer {
namespace {

using nlohmann::json;

// A tiny byte-level tokenizer.json with the Qwen2 split regex.
json TinyTokenizer() {
  json vocab = json::object();
  // The byte-level alphabet for bytes 'a'..'c' and ' ' ("Ġ"), then "ab".
  vocab["a"] = 0;
  vocab["b"] = 1;
  vocab["c"] = 2;
  vocab["\xC4\xA0"] = 3;
  vocab["ab"] = 4;
  return json{
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({json::array({"a", "b"})})}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         json::array({{{"type", "Split"},
                       {"pattern", {{"Regex", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
                                              "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
                                              "\\s+(?!\\S)|\\s+"}}}},
                      {{"type", "ByteLevel"}, {"use_regex", false}}})}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"added_tokens", json::array({{{"id", 6}, {"content", "<|end|>"}, {"special", true}},
                                    {{"id", 7}, {"content", "<x>"}, {"special", false}}})}};
}

TEST(HfImport, TinyTokenizerWithHolesAndAddedTokens) {
  const json config = {{"eos_token", {{"content", "<|end|>"}}}, {"bos_token", nullptr},
                       {"add_bos_token", nullptr},
                       {"chat_template", json::array({{{"name", "default"}, {"template", "T"}}})}};
  const Vocabulary v = FromHfTokenizerJson(TinyTokenizer(), config);
  EXPECT_EQ(v.pre, "qwen2");
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v.tokens[5], "[PAD5]");  // hole
  EXPECT_EQ(v.type(5), TokenType::kUnused);
  EXPECT_EQ(v.type(6), TokenType::kControl);
  EXPECT_EQ(v.type(7), TokenType::kUserDefined);
  EXPECT_EQ(v.merges, (std::vector<std::string>{"a b"}));
  EXPECT_EQ(v.eos, 6);
  EXPECT_EQ(v.eot, 6);  // "<|end|>" fallback
  EXPECT_EQ(v.bos, kNoToken);
  EXPECT_EQ(v.chat_template, "T");
  const Tokenizer t(v);
  EXPECT_EQ(t.Encode("ab c<x><|end|>", true), (std::vector<TokenId>{4, 3, 2, 7, 6}));
}

TEST(HfImport, ClearErrors) {
  json bad = TinyTokenizer();
  bad["model"]["type"] = "Unigram";
  EXPECT_THROW(FromHfTokenizerJson(bad), Error);
  json unknown_regex = TinyTokenizer();
  unknown_regex["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\w+";
  try {
    FromHfTokenizerJson(unknown_regex);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unrecognised pre-tokenizer regex"), std::string::npos);
  }
  const json config = {{"eos_token", "<missing>"}};
  EXPECT_THROW(FromHfTokenizerJson(TinyTokenizer(), config), Error);
  EXPECT_THROW(FromHfTokenizerJson(json::array()), Error);
  json wrong_types = TinyTokenizer();
  wrong_types["model"]["vocab"]["a"] = "zero";
  EXPECT_THROW(FromHfTokenizerJson(wrong_types), Error);
  EXPECT_THROW(LoadHfTokenizerFiles("/nonexistent/tokenizer.json"), Error);
}

}  // namespace
}  // namespace cairn::tokenizer
