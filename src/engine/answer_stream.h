// The answer side of a generation: turns the text of newly committed tokens
// (already detokenized and stop-string filtered) into client deltas.
//   text -> ReasoningSplitter (<think>...</think> -> reasoning / content)
//        -> ToolCallStream on the content when the request had tools: call
//           markup is never streamed as text; each call goes out as OpenAI
//           tool_calls fragments (header, then argument pieces) as soon as
//           the parser knows them; text outside the calls stays content.
// A cancelled answer never gets its final Push: its tool_calls() stay empty
// (fragments already sent are the client's to drop).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/reasoning_splitter.h"
#include "engine/service.h"
#include "engine/tool_call_stream.h"

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
  // OpenAI message.tool_calls (array): the streamed calls, set by the final Push.
  const Json& tool_calls() const { return tool_calls_; }

 private:
  ReasoningSplitter splitter_;
  std::unique_ptr<ToolCallStream> calls_;
  std::string content_;
  std::string reasoning_;
  Json tool_calls_ = Json::array();
};

}  // namespace cairn::engine
