// The answer side of a generation: turns the text of newly committed tokens
// (already detokenized and stop-string filtered) into client deltas.
//   text -> ReasoningSplitter (<think>...</think> -> reasoning / content)
//        -> ToolCallGate on the content when the request had tools (call
//           markup is never streamed as text)
//        -> at the end of the answer, the held markup is parsed into OpenAI
//           tool_calls; text outside the calls stays content.
// A cancelled answer never gets its final Push: held markup is dropped.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/reasoning_splitter.h"
#include "engine/service.h"
#include "engine/tool_calls_gate.h"

namespace cairn::engine {

class AnswerStream {
 public:
  // reasoning_open: the prompt already opened a <think> block. tools: the
  // request's OpenAI tool definitions (null/empty = no tool-call parsing).
  AnswerStream(bool reasoning_open, const Json& tools);

  // Delta for `text`; `final` at the end of the answer (stop, end of
  // generation, max_tokens). The delta's logprobs are left to the caller.
  GenerationDelta Push(std::string_view text, bool final);

  const std::string& content() const { return content_; }
  const std::string& reasoning() const { return reasoning_; }
  const Json& tool_calls() const { return tool_calls_; }  // OpenAI message.tool_calls (array)

 private:
  ReasoningSplitter splitter_;
  Json tools_;
  std::unique_ptr<ToolCallGate> gate_;
  std::string content_;
  std::string reasoning_;
  Json tool_calls_ = Json::array();
};

}  // namespace cairn::engine
