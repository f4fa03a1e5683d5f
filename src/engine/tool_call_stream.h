// Incremental tool-call extraction from answer text (chat requests with
// `tools`). Fed the answer's content chunk by chunk, it passes plain text
// through and turns tool-call markup into OpenAI stream fragments as soon as
// each part is known:
//   {index, id, type: "function", function: {name, arguments: ""}}   a call's header
//   {index, function: {arguments: "<piece>"}}                        more of its arguments
// The pieces of a call concatenate to its arguments: a compact JSON object
// text. calls() holds the calls so far, each with all its pieces; parsing a
// whole text at once (ParseToolCalls) is this same stream fed in one chunk,
// so streamed and final calls cannot disagree.
//
// Syntaxes, found by their markers whatever the model: Hermes JSON
// (tool_call_hermes.h) and XML functions (tool_call_xml.h), inside
// <tool_call>...</tool_call>, or a bare <function=...>...</function>; and the
// Hermes object in a Markdown fence (```json / ```), which small Qwen2.5
// models write under long agent prompts, taken as a call only when it starts
// with "name" naming one of the request's tools (otherwise the fence is text).
//
// Text outside the calls is content. It streams at once, except a suffix that
// may begin an opener (held until the next chunk decides it, ToolCallGate);
// whitespace right after a block with calls is dropped; text that follows a
// call within one Feed is held to the next Feed, so a result's content always
// comes before its fragments in the answer (not so for the final Feed, whose
// content may also follow its fragments).
//
// Malformed markup never fails the answer:
//   - found malformed before its block produced a call (not JSON, no name, bad
//     XML): the whole block stays content, verbatim, and a warning is logged;
//   - found malformed after a call's header went out: the call ends there with
//     its arguments closed into a valid object ("{}" when none were written;
//     otherwise the open string and containers are closed, which is always
//     possible because arguments are only written up to such points), a
//     warning is logged, and the rest of the block is content;
//   - the answer ends inside a call (max_tokens, or the model stopping
//     mid-call): a call whose header went out stays as streamed, so its
//     arguments may be incomplete JSON, as OpenAI's are with finish_reason
//     "length" (an XML call between parameters is closed, since the text says
//     all of it); markup before any header is dropped.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tool_call_block.h"
#include "engine/tool_calls.h"
#include "engine/tool_calls_gate.h"

namespace cairn::engine {

struct ToolCallOutput {
  std::string content;                  // plain text
  nlohmann::ordered_json tool_calls;    // fragments (array), null when none
};

class ToolCallStream final : private ToolCallSink {
 public:
  // `tools`: the request's OpenAI tool definitions (or null), for the schema
  // coercion of XML parameters. `new_id` makes call ids (tests fix them).
  explicit ToolCallStream(nlohmann::ordered_json tools = nullptr,
                          std::function<std::string()> new_id = NewToolCallId);
  ToolCallStream(const ToolCallStream&) = delete;
  ToolCallStream& operator=(const ToolCallStream&) = delete;

  // The next chunk of content; `final` at the end of the answer.
  ToolCallOutput Feed(std::string_view text, bool final = false);

  const std::vector<ToolCall>& calls() const { return calls_; }

 private:
  enum class Mode {
    kOutside,      // plain text, watched for openers
    kBlockStart,   // after <tool_call>, before the syntax is known
    kBlock,        // inside a block, read by parser_
    kSkipToClose,  // a malformed <tool_call> block: content up to </tool_call>
  };

  void StartBlock(std::string_view& rest);
  bool BlockByte(char c);  // false: `c` not consumed (the mode changed)
  void Malformed();
  void EndBlock();
  void Finish();
  void OutsideText(std::string_view text);
  void AppendContent(std::string_view text);

  void BeginCall(std::string name) override;
  void Arguments(std::string_view piece) override;
  void EndCall() override;

  const nlohmann::ordered_json tools_;
  const std::function<std::string()> new_id_;
  std::vector<ToolCall> calls_;
  ToolCallOutput out_;    // of the Feed in progress
  std::string deferred_;  // content after this Feed's fragments, for the next Feed

  Mode mode_ = Mode::kOutside;
  ToolCallGate gate_;
  std::unique_ptr<ToolCallBlockParser> parser_;
  enum class BlockKind {
    kWrapped,  // <tool_call> ... </tool_call>
    kFenced,   // ```json {"name": ...} ``` (tool_call_hermes.h, FencedCall)
    kBareXml,  // <function=...> ... </function>
  };
  BlockKind kind_ = BlockKind::kWrapped;
  std::string_view close_tag_;  // of a wrapped or fenced block
  const std::set<std::string, std::less<>> tool_names_;
  bool block_calls_ = false;   // the block produced a call
  bool call_open_ = false;     // between BeginCall and EndCall
  bool skip_space_ = false;    // drop whitespace: a block with calls just ended
  bool tracking_raw_ = false;  // raw_ collects the block's bytes
  std::string raw_;            // block bytes since its start or its last call's end
  size_t close_match_ = 0;     // bytes of </tool_call> matched (kSkipToClose)
};

}  // namespace cairn::engine
