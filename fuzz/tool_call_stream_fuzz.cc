// libFuzzer target: the incremental tool-call parser (engine/tool_call_stream.h)
// on arbitrary answer text. The first two bytes seed how the rest is cut into
// chunks; the text fed whole and fed in those chunks must give the same
// content and the same calls (names and arguments), and every call but the
// last (which may be cut off) must have a JSON-object arguments text when the
// text is ASCII (the engine's text is UTF-8; arbitrary bytes pass through
// strings unchanged and would not parse). Must never crash or hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>
#include <algorithm>
#include <string_view>

#include "core/log.h"
#include "engine/tool_call_stream.h"

namespace {

using Json = nlohmann::ordered_json;

const Json& Tools() {
  static const Json tools = Json::parse(R"([{"type":"function","function":{"name":"f","parameters":{
    "type":"object","properties":{"s":{"type":"string"},"n":{"type":"integer"},"o":{"type":"object"}}}}}])");
  return tools;
}

struct Result {
  std::string content;
  std::vector<cairn::engine::ToolCall> calls;
};

// Chunk lengths come from a small LCG seeded by `seed` (0 = all at once).
Result Run(std::string_view text, uint32_t seed) {
  int next_id = 0;
  cairn::engine::ToolCallStream stream(Tools(), [&] { return std::to_string(next_id++); });
  Result r;
  if (seed == 0) {
    r.content = stream.Feed(text, true).content;
  } else {
    uint32_t state = seed;
    while (!text.empty()) {
      state = state * 1664525u + 1013904223u;
      const size_t n = std::min<size_t>(text.size(), 1 + (state >> 24) % 8);
      r.content += stream.Feed(text.substr(0, n)).content;
      text.remove_prefix(n);
    }
    r.content += stream.Feed("", true).content;
  }
  r.calls = stream.calls();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > 64 * 1024) return 0;
  static const bool quiet = [] {
    cairn::SetLogLevel(cairn::LogLevel::kError);  // malformed markup logs a warning per input
    return true;
  }();
  (void)quiet;
  const uint32_t seed = 1u + data[0] + 256u * data[1];
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  const Result whole = Run(text, 0);
  const Result chunked = Run(text, seed);
  if (whole.content != chunked.content || whole.calls.size() != chunked.calls.size()) std::abort();
  for (size_t i = 0; i < whole.calls.size(); ++i) {
    if (whole.calls[i].name != chunked.calls[i].name || whole.calls[i].arguments != chunked.calls[i].arguments) {
      std::abort();
    }
    // All but the last call ended inside the text, so their arguments are whole.
    if (ascii && i + 1 < whole.calls.size() && !Json::parse(whole.calls[i].arguments, nullptr, false).is_object()) {
      std::abort();
    }
  }
  return 0;
}
