// XML function tool calls (Qwen3-Coder, Qwen3.5 chat templates):
//   <function=f>\n<parameter=k>\nvalue\n</parameter>\n</function>
// read byte by byte (ToolCallBlockParser), either inside
// <tool_call>...</tool_call> (fed from the first '<' after the opener; several
// functions may share a block, and </function> may be left out before
// </tool_call>) or bare, without the wrapper (fed from "<function=", ending
// at </function>).
//
// Writes the arguments object as it goes: "{" with the header, then each
// parameter as `"k":value` once it completes, "}" at </function>. Parameter
// values are raw text; exactly one newline on each side is markup. They are
// coerced by the tool's JSON-schema type when the request's tools give one,
// otherwise short single-line scalars (true/false/null/numbers) are coerced
// and everything else stays a string. A parameter typed "string" streams its
// value as it arrives (so a long file body shows progress).
//
// The header goes out at <function=NAME> inside <tool_call>; a bare
// <function=NAME> could be prose, so its header waits for the next tag to be
// <parameter=...> or </function>.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "engine/tool_call_block.h"

namespace cairn::engine {

class XmlBlockParser final : public ToolCallBlockParser {
 public:
  // `tools` (the request's OpenAI tool definitions or null) must outlive the parser.
  XmlBlockParser(const nlohmann::ordered_json& tools, bool wrapped);

  BlockStep Feed(char c, ToolCallSink& sink) override;
  std::string Closer() const override;
  void Finish(ToolCallSink& sink) override;

 private:
  enum class State { kBetween, kTag, kValue };

  BlockStep EndTag(ToolCallSink& sink);  // tag_ is complete ("<...>")
  BlockStep ValueByte(char c, ToolCallSink& sink);
  void OpenCall(ToolCallSink& sink);
  void CloseCall(ToolCallSink& sink);

  const nlohmann::ordered_json& tools_;
  const bool wrapped_;
  State state_ = State::kBetween;
  std::string tag_;             // the tag being read, from '<'
  std::string name_;            // of the current function
  bool header_pending_ = false; // bare form: name known, header not sent
  bool call_open_ = false;
  bool any_call_ = false;
  bool first_param_ = true;
  // The parameter being read.
  std::string type_;            // its schema type ("" = unknown)
  std::string prefix_;          // `,"key":` (written with the value unless it streams)
  bool stream_string_ = false;  // typed "string": the value is written as it arrives
  bool value_started_ = false;
  std::string value_;           // value bytes not written yet
};

}  // namespace cairn::engine
