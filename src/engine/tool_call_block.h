// The seam between ToolCallStream (tool_call_stream.h), which finds tool-call
// blocks in the answer text, and the parsers of the two block syntaxes
// (tool_call_hermes.h, tool_call_xml.h), which read a block byte by byte and
// report calls as soon as each part is known.
#pragma once

#include <string>
#include <string_view>

namespace cairn::engine {

// Receives the calls of a block, in order:
//   BeginCall(name) Arguments(piece)... EndCall()   per call.
// The pieces of a call concatenate to its arguments (a JSON object text).
class ToolCallSink {
 public:
  virtual ~ToolCallSink() = default;
  virtual void BeginCall(std::string name) = 0;
  virtual void Arguments(std::string_view piece) = 0;
  virtual void EndCall() = 0;
};

enum class BlockStep {
  kMore,       // byte consumed; the block goes on
  kEnd,        // byte consumed; it ended the block (its closing tag)
  kMalformed,  // not a tool call at this byte (not consumed); do not feed again
};

class ToolCallBlockParser {
 public:
  virtual ~ToolCallBlockParser() = default;
  virtual BlockStep Feed(char c, ToolCallSink& sink) = 0;
  // Text that closes the open call's arguments written so far into a JSON
  // object ("" when nothing is open); used when the block turns malformed.
  virtual std::string Closer() const = 0;
  // End of the answer inside the block: ends the open call when the text
  // already says all of it (an XML call between parameters).
  virtual void Finish(ToolCallSink& sink) = 0;
};

}  // namespace cairn::engine
