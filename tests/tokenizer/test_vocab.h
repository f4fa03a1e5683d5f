// Shared fixtures for tokenizer tests: the Qwen3 tokenizer (imported from the
// real HF tokenizer.json once per test binary) and the llama.cpp vocab test
// file reader.
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_paths.h"
#include "tokenizer/hf_import.h"
#include "tokenizer/tokenizer.h"

namespace cairn::tokenizer::test {

inline std::string Qwen3Dir() { return cairn::test::SharedDir() + "/testdata/qwen3-tokenizer"; }
inline std::string VocabTestDir() { return cairn::test::SharedDir() + "/testdata/tokenizer"; }

// Imported once; parsing the 11 MB tokenizer.json dominates test time otherwise.
inline const Tokenizer& Qwen3() {
  static const std::unique_ptr<Tokenizer> tokenizer = std::make_unique<Tokenizer>(
      LoadHfTokenizerFiles(Qwen3Dir() + "/tokenizer.json", Qwen3Dir() + "/tokenizer_config.json"));
  return *tokenizer;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// One case of a llama.cpp vocab test: text and expected ids.
struct VocabCase {
  std::string text;
  std::vector<TokenId> ids;
};

// X.gguf.inp holds strings each followed by "\n__ggml_vocab_test__\n" (the
// newline before the separator is not part of the string); X.gguf.out holds
// one line of space-separated ids per string.
inline std::vector<VocabCase> ReadVocabCases(const std::string& inp_path,
                                             const std::string& out_path) {
  const std::string inp = ReadFile(inp_path);
  const std::string out = ReadFile(out_path);
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<VocabCase> cases;
  for (size_t pos = 0; pos < inp.size();) {
    const size_t end = inp.find(separator, pos);
    if (end == std::string::npos) break;
    cases.push_back(VocabCase{inp.substr(pos, end - pos), {}});
    pos = end + separator.size();
  }
  std::istringstream lines(out);
  std::string line;
  for (VocabCase& c : cases) {
    if (!std::getline(lines, line)) break;
    std::istringstream ids(line);
    TokenId id;
    while (ids >> id) c.ids.push_back(id);
  }
  return cases;
}

}  // namespace cairn::tokenizer::test
