// libFuzzer target: parse and render arbitrary template text against a small
// fixed chat context. Must never crash or hang: the engine's limits (parse
// depth, work steps, output bytes, macro depth) are set low here so every
// input finishes quickly; cairn::Error is the only acceptable failure.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chat/template.h"

namespace {

const nlohmann::ordered_json& Context() {
  static const nlohmann::ordered_json context = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "Weather in Paris? \u00e9\u4f60"},
      {"role": "assistant", "content": "<think>\nplan\n</think>\n\nCalling.",
       "reasoning_content": "plan",
       "tool_calls": [{"id": "call00001", "type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Paris", "n": 1.5}}}]},
      {"role": "tool", "tool_call_id": "call00001", "content": "sunny"},
      {"role": "user", "content": [{"type": "text", "text": "thanks"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Get weather",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                              "required": ["city"]}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
    "enable_thinking": false
  })");
  return context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  std::string_view source(reinterpret_cast<const char*>(data), size);
  cairn::chat::RenderOptions options;
  options.clock = [] { return std::tm{}; };
  options.max_steps = 100'000;
  options.max_output_bytes = 1 << 20;
  options.max_call_depth = 32;
  try {
    auto tmpl = cairn::chat::Template::Parse(source);
    (void)tmpl.Render(Context(), options);
  } catch (const cairn::Error&) {
    // Expected for malformed or failing templates.
  }
  return 0;
}
