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

std::string ImportError(const json& tokenizer) {
  try {
    FromHfTokenizerJson(tokenizer);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HfImport, Normalizers) {
  json nfc = TinyTokenizer();
  nfc["normalizer"] = {{"type", "Sequence"}, {"normalizers", json::array({{{"type", "NFC"}}})}};
  EXPECT_EQ(FromHfTokenizerJson(nfc).normalizer, Normalizer::kNfc);
  json none = TinyTokenizer();
  none["normalizer"] = nullptr;
  EXPECT_EQ(FromHfTokenizerJson(none).normalizer, Normalizer::kNone);
  // Anything Cairn does not implement is refused, naming it.
  json nfkc = TinyTokenizer();
  nfkc["normalizer"] = {{"type", "NFKC"}};
  EXPECT_NE(ImportError(nfkc).find("normalizer 'NFKC' is not supported"), std::string::npos);
  json lower = TinyTokenizer();
  lower["normalizer"] = {{"type", "Sequence"},
                         {"normalizers", json::array({{{"type", "NFC"}}, {{"type", "Lowercase"}}})}};
  EXPECT_NE(ImportError(lower).find("'Lowercase'"), std::string::npos);
  json replace = TinyTokenizer();
  replace["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", "b"}};
  EXPECT_NE(ImportError(replace).find("Replace"), std::string::npos);
  // SentencePiece-style normalizer steps make no sense for byte-level BPE.
  json prepend = TinyTokenizer();
  prepend["normalizer"] = {{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}};
  EXPECT_NE(ImportError(prepend).find("ByteLevel"), std::string::npos);
}

TEST(HfImport, SentencePieceStyleLayouts) {
  // A byte_fallback BPE without ByteLevel: the Llama-2 layout (Prepend/Replace
  // normalizer) and Metaspace (split: false) are supported (see hf_tiny_golden_test).
  json spm = {{"model",
               {{"type", "BPE"},
                {"byte_fallback", true},
                {"vocab", {{"<unk>", 0}, {"\xE2\x96\x81", 1}, {"a", 2}, {"\xE2\x96\x81" "a", 3}}},
                {"merges", json::array({"\xE2\x96\x81 a"})}}},
              {"normalizer",
               {{"type", "Sequence"},
                {"normalizers",
                 json::array({{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                              {{"type", "Replace"},
                               {"pattern", {{"String", " "}}},
                               {"content", "\xE2\x96\x81"}}})}}}};
  const Vocabulary v = FromHfTokenizerJson(spm);
  EXPECT_EQ(v.model, ModelKind::kSpm);
  EXPECT_EQ(v.scores[3], 0.0f);  // "▁a": merge rank 0
  const Tokenizer t(v);
  EXPECT_EQ(t.Encode("a a"), (std::vector<TokenId>{3, 3}));
  // Metaspace instead of the normalizer: only with split: false.
  json metaspace = spm;
  metaspace["normalizer"] = nullptr;
  metaspace["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}};
  EXPECT_NE(ImportError(metaspace).find("split: true"), std::string::npos);
  metaspace["pre_tokenizer"]["split"] = false;
  metaspace["pre_tokenizer"]["prepend_scheme"] = "first";
  const Vocabulary m = FromHfTokenizerJson(metaspace);
  EXPECT_EQ(m.space_prefix, SpacePrefix::kMetaspaceFirst);
  EXPECT_TRUE(m.add_space_prefix);
  metaspace["pre_tokenizer"]["prepend_scheme"] = "never";
  EXPECT_FALSE(FromHfTokenizerJson(metaspace).add_space_prefix);
  json both = metaspace;
  both["normalizer"] = spm["normalizer"];
  EXPECT_NE(ImportError(both).find("both"), std::string::npos);
  json split_regex = spm;
  split_regex["pre_tokenizer"] = {{"type", "Whitespace"}};
  EXPECT_NE(ImportError(split_regex).find("pre-tokenizer 'Whitespace'"), std::string::npos);
  json no_fallback = spm;
  no_fallback["model"]["byte_fallback"] = false;
  EXPECT_NE(ImportError(no_fallback).find("byte_fallback"), std::string::npos);
}

}  // namespace
}  // namespace cairn::tokenizer
