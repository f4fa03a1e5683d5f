// Hermes JSON tool-call blocks (Qwen2.5/Qwen3 chat templates):
//   <tool_call>\n{"name": "f", "arguments": {"k": "v"}}\n</tool_call>
// read byte by byte from the '{' to the closing tag (ToolCallBlockParser).
//
// - BeginCall once "name" is a complete string and the "arguments" value has
//   begun; the arguments then stream through a JsonRewriter (compact, raw
//   control characters in strings escaped). "parameters" is read as
//   "arguments"; other keys are checked and skipped.
// - "arguments" given as a JSON-encoded string ("{\"k\": 1}") is decoded and
//   the JSON inside it streamed the same way; "" means {}.
// - "arguments" before "name": the arguments are held and the call goes out
//   whole when the object closes. No "arguments": {}.
// - Several objects may follow each other in one block (one call each).
// Lenient on two common slips: the object's own closing brace forgotten
// before </tool_call>, and stray closing braces after the object.
//
// Fenced form: small Qwen2.5(-Coder) models often write the same object as a
// Markdown code block instead of the tags, above all under long agent prompts:
//   ```json\n{"name": "Read", "arguments": {"file_path": "main.py"}}\n```
// Read with a FencedCall: the block closes with ``` instead of </tool_call>,
// the first key must be "name", and the name must be one of the request's
// tools. Anything else is an ordinary code block (kMalformed before any
// header, so ToolCallStream keeps it as text, verbatim).
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "engine/json_rewriter.h"
#include "engine/tool_call_block.h"

namespace cairn::engine {

struct FencedCall {
  std::set<std::string, std::less<>> tool_names;  // the request's function names
};

class HermesBlockParser final : public ToolCallBlockParser {
 public:
  HermesBlockParser() = default;
  explicit HermesBlockParser(FencedCall fenced)
      : fenced_(true), tool_names_(std::move(fenced.tool_names)), close_tag_("```") {}

  BlockStep Feed(char c, ToolCallSink& sink) override;
  std::string Closer() const override;
  void Finish(ToolCallSink&) override {}  // an open call stays as streamed

 private:
  enum class State {
    kObjectStart,      // before the '{' of a call object
    kKeyOrEnd,         // after '{' or ','
    kKey,              // inside a key string
    kColon,
    kValue,            // before a value: dispatched on the key
    kName,             // inside the "name" string
    kArguments,        // inside the "arguments" object
    kStringArguments,  // inside an "arguments" string holding JSON
    kSkipValue,        // inside the value of another key
    kAfterValue,
    kAfterObject,      // after the call object's '}'
    kCloseTag,         // inside </tool_call>
  };

  BlockStep StartArguments(char c, ToolCallSink& sink);
  BlockStep StringArgumentsByte(char c, ToolCallSink& sink);
  BlockStep EndObject(ToolCallSink& sink);
  // An arguments piece: to the sink once the header is out, held before.
  void Write(const std::string& piece, ToolCallSink& sink);

  State state_ = State::kObjectStart;
  JsonStringDecoder decoder_;
  std::string key_;
  // The call object being read.
  std::string name_;
  bool has_name_ = false;
  bool args_seen_ = false;
  bool args_done_ = false;    // the arguments value is complete
  bool header_sent_ = false;  // BeginCall went out
  std::string held_args_;     // arguments read before the name
  JsonRewriter args_;
  JsonRewriter skip_;         // the value of another key: checked, dropped
  size_t close_match_ = 0;    // bytes of close_tag_ matched
  // Fenced form (FencedCall).
  bool fenced_ = false;
  std::set<std::string, std::less<>> tool_names_;
  std::string_view close_tag_ = "</tool_call>";
};

}  // namespace cairn::engine
