// Deltas of the engine's real AnswerStream for an answer that calls tools, as
// a generation hands them to an encoder: the text in `piece`-byte pushes, then
// `last` as the final push (so the last delta may carry both the end of a
// call and the text after it).
#pragma once

#include <string>
#include <vector>

#include "engine/answer_stream.h"
#include "engine/service.h"

namespace cairn::server::testing {

struct StreamedAnswer {
  std::vector<engine::GenerationDelta> deltas;
  engine::GenerationResult result;
};

inline StreamedAnswer StreamToolCalls(const std::string& text, size_t piece, const std::string& last) {
  const engine::Json tools = engine::Json::parse(
      R"([{"type":"function","function":{"name":"read","parameters":{"type":"object","properties":{}}}}])");
  engine::AnswerStream stream(false, tools);
  StreamedAnswer out;
  for (size_t i = 0; i < text.size(); i += piece) out.deltas.push_back(stream.Push(text.substr(i, piece), false));
  out.deltas.push_back(stream.Push(last, true));
  out.result.content = stream.content();
  out.result.tool_calls = stream.tool_calls();
  out.result.finish_reason = out.result.tool_calls.empty() ? "stop" : "tool_calls";
  return out;
}

// Two calls, text before them and after the last one (in the final push).
inline StreamedAnswer TwoCallAnswer() {
  return StreamToolCalls(
      "Reading.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"src/main.py\", \"limit\": 20}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"README.md\", \"lines\": [1, 2",
      4, "]}}\n</tool_call>\nDone.");
}

}  // namespace cairn::server::testing
