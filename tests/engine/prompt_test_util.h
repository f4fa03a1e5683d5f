// Fixtures for the prompt-layer tests: the real Qwen3 tokenizer (imported once
// per test binary), real chat templates, a fixed clock, and conversation makers.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "common/test_paths.h"
#include "tokenizer/hf_import.h"
#include "tokenizer/tokenizer.h"

namespace cairn::engine::test {

using Json = nlohmann::ordered_json;

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::string Qwen3Dir() { return cairn::test::SharedDir() + "/testdata/qwen3-tokenizer"; }

inline const tokenizer::Tokenizer& Qwen3Tokenizer() {
  static const std::unique_ptr<tokenizer::Tokenizer> tok = std::make_unique<tokenizer::Tokenizer>(
      tokenizer::LoadHfTokenizerFiles(Qwen3Dir() + "/tokenizer.json",
                                      Qwen3Dir() + "/tokenizer_config.json"));
  return *tok;
}

// Template sources by short name: qwen3 (tokenizer_config.json), qwen35,
// llama31, mistral.
inline std::string TemplateSource(const std::string& name) {
  if (name == "qwen3") return Qwen3Tokenizer().vocab().chat_template;
  const std::string dir = cairn::test::SharedDir() + "/testdata/chat-templates/";
  if (name == "qwen35") return ReadText(dir + "Qwen3.5-4B.jinja");
  if (name == "llama31") return ReadText(dir + "meta-llama-Llama-3.1-8B-Instruct.jinja");
  if (name == "mistral") return ReadText(dir + "Mistral-Small-3.2-24B-Instruct-2506.jinja");
  return {};
}

inline std::tm FixedClock() {
  std::tm t{};
  t.tm_year = 2025 - 1900;
  t.tm_mon = 4;
  t.tm_mday = 17;
  t.tm_hour = 12;
  return t;
}

inline bool Sanitized() {
  const char* env = std::getenv("CAIRN_SANITIZED");
  return env != nullptr && std::string(env) == "1";
}

// OpenAI tool definition number i (varied schemas, ~300 bytes each).
inline Json Tool(int i) {
  return Json{{"type", "function"},
              {"function",
               {{"name", "tool_" + std::to_string(i)},
                {"description", "Tool number " + std::to_string(i) +
                                    ": reads or edits files in the workspace and reports what it did."},
                {"parameters",
                 {{"type", "object"},
                  {"properties",
                   {{"path", {{"type", "string"}, {"description", "file path"}}},
                    {"count", {{"type", "integer"}, {"description", "how many"}}},
                    {"flag", {{"type", "boolean"}}}}},
                  {"required", Json::array({"path"})}}}}}};
}

}  // namespace cairn::engine::test

namespace cairn::engine::test {

// Deterministic filler text of about `bytes` bytes (varied words, code-ish lines).
inline std::string Filler(size_t bytes, uint32_t seed) {
  static const char* const kWords[] = {"the", "file", "function", "returns", "value", "error",
                                       "cache", "token", "prompt", "model", "(x)", "{y}",
                                       "=", "42", "path/to/src.cc", "\n", "  ", "if", "else",
                                       "Überprüfung", "数据", "✓"};
  std::string out;
  uint32_t state = seed * 2654435761u + 1;
  while (out.size() < bytes) {
    state = state * 1664525u + 1013904223u;
    out += kWords[(state >> 16) % (sizeof(kWords) / sizeof(kWords[0]))];
    out += ' ';
  }
  return out;
}

// A 9-character alphanumeric tool call id (Mistral requires exactly that).
inline std::string CallId(int n) {
  std::string id = "call" + std::to_string(10000 + n);
  return id.substr(0, 9);
}

inline Json AssistantToolCall(int n, size_t bytes, bool reasoning) {
  Json m = {{"role", "assistant"},
            {"content", ""},
            {"tool_calls",
             Json::array({{{"id", CallId(n)},
                           {"type", "function"},
                           {"function",
                            {{"name", "tool_" + std::to_string(n % 20)},
                             {"arguments", {{"path", "src/file" + std::to_string(n) + ".cc"},
                                            {"count", n}}}}}}})}};
  if (reasoning) m["reasoning_content"] = "I should look at file " + std::to_string(n) + ". " + Filler(bytes / 4, n + 7);
  return m;
}

inline Json ToolResult(int n, size_t bytes) {
  return {{"role", "tool"}, {"tool_call_id", CallId(n)}, {"content", Filler(bytes, n + 1000)}};
}

inline Json AssistantAnswer(int n, size_t bytes, bool reasoning) {
  Json m = {{"role", "assistant"}, {"content", "Done: " + Filler(bytes, n + 2000)}};
  if (reasoning) m["reasoning_content"] = "Wrap up " + std::to_string(n) + ". " + Filler(bytes / 4, n + 3000);
  return m;
}

inline Json User(int n, size_t bytes) {
  return {{"role", "user"}, {"content", "Request " + std::to_string(n) + ": " + Filler(bytes, n + 4000)}};
}

// system, user, then (assistant tool call, tool result) pairs, closing with an
// answer and a new user message every `loop` pairs; `n_messages` in all.
inline Json AgentConversation(int n_messages, size_t bytes, bool reasoning, int loop = 4) {
  Json messages = Json::array();
  messages.push_back({{"role", "system"}, {"content", "You are a coding agent. " + Filler(bytes, 1)}});
  messages.push_back(User(0, bytes / 4));
  int step = 0;
  while (static_cast<int>(messages.size()) < n_messages) {
    if (step % (loop + 1) == loop) {
      messages.push_back(AssistantAnswer(step, bytes / 4, reasoning));
      messages.push_back(User(step, bytes / 4));
    } else {
      messages.push_back(AssistantToolCall(step, bytes / 8, reasoning));
      messages.push_back(ToolResult(step, bytes));
    }
    ++step;
  }
  while (static_cast<int>(messages.size()) > n_messages) messages.erase(messages.size() - 1);
  return messages;
}

}  // namespace cairn::engine::test
