// Chat-template render cost for an agent turn: a 30-message, ~20k-token
// conversation (tool calls, tool results, reasoning) with 20 tool definitions,
// through the Qwen3 template. Target: < 5 ms per render.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "chat/template.h"

namespace {

using Json = nlohmann::ordered_json;

std::string Qwen3Template() {
  std::ifstream in(std::string(CAIRN_SHARED_DIR) + "/testdata/qwen3-tokenizer/tokenizer_config.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str())["chat_template"].get<std::string>();
}

// Deterministic filler text of about `bytes` bytes (~4 bytes per token).
std::string Filler(size_t bytes, int seed) {
  static const char* kWords[] = {"the", "function", "returns", "a", "value", "when", "cache",
                                 "prefix", "token", "model", "server", "request", "{json}",
                                 "path/to/file.cc", "line", "error:", "\"quoted\"", "\n"};
  std::string out;
  unsigned state = static_cast<unsigned>(seed) * 2654435761u + 1;
  while (out.size() < bytes) {
    state = state * 1664525u + 1013904223u;
    out += kWords[(state >> 16) % (sizeof(kWords) / sizeof(kWords[0]))];
    out += ' ';
  }
  return out;
}

Json Tools() {
  Json tools = Json::array();
  for (int i = 0; i < 20; ++i) {
    Json props = Json::object();
    props["path"] = {{"type", "string"}, {"description", "File path relative to the workspace root"}};
    props["pattern"] = {{"type", "string"}, {"description", "Regular expression to search for"}};
    props["limit"] = {{"type", "integer"}, {"description", "Maximum number of results"}, {"default", 50}};
    props["mode"] = {{"type", "string"}, {"enum", {"fast", "exact", "fuzzy"}}};
    props["options"] = {{"type", "object"},
                        {"properties", {{"case_sensitive", {{"type", "boolean"}}},
                                        {"context_lines", {{"type", "integer"}}}}}};
    tools.push_back({{"type", "function"},
                     {"function", {{"name", "tool_" + std::to_string(i)},
                                   {"description", Filler(200, i)},
                                   {"parameters", {{"type", "object"},
                                                   {"properties", props},
                                                   {"required", {"path"}}}}}}});
  }
  return tools;
}

Json Messages() {
  Json messages = Json::array();
  messages.push_back({{"role", "system"}, {"content", Filler(12000, 1)}});
  messages.push_back({{"role", "user"}, {"content", Filler(1500, 2)}});
  int call = 0;
  while (messages.size() < 28) {
    Json args = {{"path", "src/file_" + std::to_string(call) + ".cc"}, {"pattern", "TODO|FIXME"},
                 {"limit", 20}};
    messages.push_back({{"role", "assistant"},
                        {"content", Filler(300, 10 + call)},
                        {"reasoning_content", Filler(600, 100 + call)},
                        {"tool_calls", {{{"id", "call_" + std::to_string(call)},
                                         {"type", "function"},
                                         {"function", {{"name", "tool_" + std::to_string(call % 20)},
                                                       {"arguments", args}}}}}}});
    messages.push_back({{"role", "tool"}, {"content", Filler(4200, 200 + call)}});
    ++call;
  }
  messages.push_back({{"role", "assistant"}, {"content", Filler(1200, 4)}});
  messages.push_back({{"role", "user"}, {"content", Filler(800, 3)}});
  return messages;  // 30 messages
}

void BM_ParseQwen3(benchmark::State& state) {
  const std::string source = Qwen3Template();
  for (auto _ : state) benchmark::DoNotOptimize(cairn::chat::Template::Parse(source));
}
BENCHMARK(BM_ParseQwen3)->Unit(benchmark::kMicrosecond);

void BM_RenderQwen3Agent(benchmark::State& state) {
  const auto tmpl = cairn::chat::Template::Parse(Qwen3Template());
  const Json messages = Messages();
  const Json tools = Tools();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string prompt = cairn::chat::RenderChat(tmpl, messages, tools, true, "", "<|im_end|>",
                                                 {{"enable_thinking", true}});
    bytes = prompt.size();
    benchmark::DoNotOptimize(prompt);
  }
  state.counters["messages"] = static_cast<double>(messages.size());
  state.counters["prompt_bytes"] = static_cast<double>(bytes);
  state.counters["approx_tokens"] = static_cast<double>(bytes) / 4.0;
}
BENCHMARK(BM_RenderQwen3Agent)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
