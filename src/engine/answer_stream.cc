#include "engine/answer_stream.h"

namespace cairn::engine {

AnswerStream::AnswerStream(bool reasoning_open, const Json& tools) : splitter_(reasoning_open) {
  if (tools.is_array() && !tools.empty()) calls_ = std::make_unique<ToolCallStream>(tools);
}

GenerationDelta AnswerStream::Push(std::string_view text, bool final) {
  GenerationDelta delta;
  SplitDelta split = splitter_.Feed(text);
  if (final) {
    SplitDelta rest = splitter_.Finish();
    split.content += rest.content;
    split.reasoning += rest.reasoning;
  }
  if (calls_) {
    ToolCallOutput out = calls_->Feed(split.content, final);
    delta.content = std::move(out.content);
    delta.tool_calls = std::move(out.tool_calls);
    if (final) tool_calls_ = ToOpenAiToolCalls(calls_->calls());
  } else {
    delta.content = std::move(split.content);
  }
  delta.reasoning = std::move(split.reasoning);
  content_ += delta.content;
  reasoning_ += delta.reasoning;
  return delta;
}

}  // namespace cairn::engine
