// Streaming "tool gate": while answer text streams to the client, stop
// forwarding as soon as a tool-call opener appears, so raw call markup is never
// shown. Everything from the opener on is held for the caller
// (ToolCallStream, which hands it to a block parser and starts a fresh gate
// after the block).
//
//   ToolCallGate gate;
//   for (chunk : content deltas) send(gate.Feed(chunk));
//   send(gate.Finish());                       // plain text still held back
//   if (gate.triggered()) markup = gate.held();  // from the opener on
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cairn::engine {

class ToolCallGate {
 public:
  // Default openers: ToolCallOpeners() ("<tool_call>", "<function=").
  ToolCallGate();
  explicit ToolCallGate(std::vector<std::string> openers);

  // Returns the part of `text` that is certainly plain content. A suffix that
  // could start an opener is held until the next chunk decides it.
  std::string Feed(std::string_view text);
  // End of stream: when no opener was seen, returns the held partial text.
  std::string Finish();

  bool triggered() const { return triggered_; }
  // From the opener to the end of the stream (valid once triggered).
  const std::string& held() const { return held_; }

 private:
  std::vector<std::string> openers_;
  bool triggered_ = false;
  std::string held_;
};

}  // namespace cairn::engine
