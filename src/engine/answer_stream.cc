#include "engine/answer_stream.h"

#include "engine/tool_calls.h"

namespace cairn::engine {

AnswerStream::AnswerStream(bool reasoning_open, const Json& tools) : splitter_(reasoning_open), tools_(tools) {
  if (tools_.is_array() && !tools_.empty()) gate_ = std::make_unique<ToolCallGate>();
}

GenerationDelta AnswerStream::Push(std::string_view text, bool final) {
  GenerationDelta delta;
  SplitDelta split = splitter_.Feed(text);
  if (final) {
    SplitDelta rest = splitter_.Finish();
    split.content += rest.content;
    split.reasoning += rest.reasoning;
  }
  delta.content = gate_ ? gate_->Feed(split.content) : std::move(split.content);
  if (gate_ && final) {
    delta.content += gate_->Finish();
    if (gate_->triggered()) {
      const ParsedToolCalls parsed = ParseToolCalls(gate_->held(), tools_);
      delta.content += parsed.content;
      if (!parsed.calls.empty()) {
        tool_calls_ = ToOpenAiToolCalls(parsed.calls);
        delta.tool_calls = tool_calls_;
        for (size_t i = 0; i < delta.tool_calls.size(); ++i) delta.tool_calls[i]["index"] = i;
      }
    }
  }
  delta.reasoning = std::move(split.reasoning);
  content_ += delta.content;
  reasoning_ += delta.reasoning;
  return delta;
}

}  // namespace cairn::engine
