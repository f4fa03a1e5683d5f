// libFuzzer target: encode/decode round trip on the Qwen3 vocabulary.
// Any input bytes must tokenize without crashing and decode back to exactly
// the text the model sees (Tokenizer::NormalizedText: NFC on well-formed
// runs), with and without special-token parsing; the streaming detokenizer
// must agree with Decode. The vocabulary is imported once from
// shared/testdata/qwen3-tokenizer (CAIRN_SHARED_DIR, else next to the repo).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "tokenizer/hf_import.h"
#include "tokenizer/streaming_detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace {

std::string SharedDir() {
  if (const char* env = std::getenv("CAIRN_SHARED_DIR")) return env;
  // This file is <repo>/fuzz/tokenizer_fuzz.cc; shared/ sits next to <repo>.
  return (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "shared")
      .string();
}

const cairn::tokenizer::Tokenizer& Qwen3() {
  static const auto tokenizer = [] {
    const std::string dir = SharedDir() + "/testdata/qwen3-tokenizer/";
    return std::make_unique<cairn::tokenizer::Tokenizer>(cairn::tokenizer::LoadHfTokenizerFiles(
        dir + "tokenizer.json", dir + "tokenizer_config.json"));
  }();
  return *tokenizer;
}

}  // namespace

// Import the 11 MB tokenizer.json before fuzzing starts: under ASan it takes
// longer than the per-input timeout, so it must not happen inside the first input.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  Qwen3();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& tok = Qwen3();
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto ids = tok.Encode(text, /*parse_special=*/false);
  if (tok.DecodeBytes(ids) != tok.NormalizedText(text)) std::abort();  // NFC on valid runs
  const auto special_ids = tok.Encode(text, /*parse_special=*/true);
  if (tok.DecodeBytes(special_ids, /*render_special=*/true) != tok.NormalizedText(text, true)) {
    std::abort();
  }
  cairn::tokenizer::StreamingDetokenizer stream(tok);
  std::string streamed;
  for (auto id : ids) streamed += stream.Push(id);
  streamed += stream.Flush();
  if (streamed != tok.Decode(ids)) std::abort();
  return 0;
}
