#include "engine/tool_call_hermes.h"

#include <string_view>

namespace cairn::engine {
namespace {

constexpr size_t kMaxKey = 256;   // bytes of a key of the call object
constexpr size_t kMaxName = 256;  // bytes of a function name

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

bool IsBlank(const std::string& s) {
  for (char c : s) {
    if (!IsSpace(c)) return false;
  }
  return true;
}

}  // namespace

BlockStep HermesBlockParser::Feed(char c, ToolCallSink& sink) {
  switch (state_) {
    case State::kObjectStart:
      if (IsSpace(c)) return BlockStep::kMore;
      if (c != '{') return BlockStep::kMalformed;
      name_.clear();
      has_name_ = args_seen_ = args_done_ = header_sent_ = false;
      held_args_.clear();
      state_ = State::kKeyOrEnd;
      return BlockStep::kMore;
    case State::kKeyOrEnd:
      if (IsSpace(c)) return BlockStep::kMore;
      if (c == '}') return EndObject(sink);  // also after a trailing comma
      if (c != '"') return BlockStep::kMalformed;
      key_.clear();
      decoder_ = JsonStringDecoder();
      state_ = State::kKey;
      return BlockStep::kMore;
    case State::kKey:
      if (decoder_.Feed(c, key_)) {
        // A fenced object is a call only if it starts with its name.
        if (fenced_ && !has_name_ && key_ != "name") return BlockStep::kMalformed;
        state_ = State::kColon;
      }
      return key_.size() > kMaxKey ? BlockStep::kMalformed : BlockStep::kMore;
    case State::kColon:
      if (IsSpace(c)) return BlockStep::kMore;
      if (c != ':') return BlockStep::kMalformed;
      state_ = State::kValue;
      return BlockStep::kMore;
    case State::kValue:
      if (IsSpace(c)) return BlockStep::kMore;
      if (key_ == "name" && !has_name_) {
        if (c != '"') return BlockStep::kMalformed;
        decoder_ = JsonStringDecoder();
        state_ = State::kName;
        return BlockStep::kMore;
      }
      if ((key_ == "arguments" || key_ == "parameters") && !args_seen_) return StartArguments(c, sink);
      skip_ = JsonRewriter();
      state_ = State::kSkipValue;
      return Feed(c, sink);
    case State::kSkipValue: {
      std::string dropped;
      switch (skip_.Feed(c, dropped)) {
        case JsonRewriter::Step::kMore: return BlockStep::kMore;
        case JsonRewriter::Step::kDone: state_ = State::kAfterValue; return BlockStep::kMore;
        case JsonRewriter::Step::kDoneBefore: state_ = State::kAfterValue; return Feed(c, sink);
        case JsonRewriter::Step::kError: return BlockStep::kMalformed;
      }
      return BlockStep::kMalformed;
    }
    case State::kName:
      if (!decoder_.Feed(c, name_)) return name_.size() > kMaxName ? BlockStep::kMalformed : BlockStep::kMore;
      if (IsBlank(name_)) return BlockStep::kMalformed;
      if (fenced_ && !tool_names_.contains(name_)) return BlockStep::kMalformed;
      has_name_ = true;
      state_ = State::kAfterValue;
      return BlockStep::kMore;
    case State::kArguments: {
      std::string piece;
      const JsonRewriter::Step step = args_.Feed(c, piece);
      Write(piece, sink);
      if (step == JsonRewriter::Step::kError) return BlockStep::kMalformed;
      if (step == JsonRewriter::Step::kDone) {
        args_done_ = true;
        if (header_sent_) sink.EndCall();
        state_ = State::kAfterValue;
      }
      return BlockStep::kMore;
    }
    case State::kStringArguments:
      return StringArgumentsByte(c, sink);
    case State::kAfterValue:
      if (IsSpace(c)) return BlockStep::kMore;
      if (c == ',') {
        state_ = State::kKeyOrEnd;
        return BlockStep::kMore;
      }
      if (c == '}') return EndObject(sink);
      if (c == close_tag_[0]) {  // the object's closing brace was left out before the close tag
        if (EndObject(sink) == BlockStep::kMalformed) return BlockStep::kMalformed;
        state_ = State::kCloseTag;
        close_match_ = 1;
        return BlockStep::kMore;
      }
      return BlockStep::kMalformed;
    case State::kAfterObject:
      if (IsSpace(c) || c == '}') return BlockStep::kMore;  // stray closing braces are dropped
      if (c == '{') {
        state_ = State::kObjectStart;
        return Feed(c, sink);
      }
      if (c != close_tag_[0]) return BlockStep::kMalformed;
      state_ = State::kCloseTag;
      close_match_ = 1;
      return BlockStep::kMore;
    case State::kCloseTag:
      if (c != close_tag_[close_match_]) return BlockStep::kMalformed;
      return ++close_match_ == close_tag_.size() ? BlockStep::kEnd : BlockStep::kMore;
  }
  return BlockStep::kMalformed;
}

BlockStep HermesBlockParser::StartArguments(char c, ToolCallSink& sink) {
  if (c != '{' && c != '"') return BlockStep::kMalformed;
  args_seen_ = true;
  args_ = JsonRewriter();
  if (has_name_) {
    sink.BeginCall(name_);
    header_sent_ = true;
  }
  if (c == '"') {
    decoder_ = JsonStringDecoder();
    state_ = State::kStringArguments;
    return BlockStep::kMore;
  }
  state_ = State::kArguments;
  return Feed(c, sink);
}

// One byte of an arguments string: its decoded bytes are the JSON text of
// the arguments object, fed on to the rewriter.
BlockStep HermesBlockParser::StringArgumentsByte(char c, ToolCallSink& sink) {
  std::string decoded;
  const bool closed = decoder_.Feed(c, decoded);
  for (char d : decoded) {
    if (args_done_ || (!args_.started() && d != '{')) {
      if (IsSpace(d)) continue;
      return BlockStep::kMalformed;  // text after the object, or not an object
    }
    std::string piece;
    const JsonRewriter::Step step = args_.Feed(d, piece);
    Write(piece, sink);
    if (step == JsonRewriter::Step::kError) return BlockStep::kMalformed;
    if (step == JsonRewriter::Step::kDone) args_done_ = true;
  }
  if (!closed) return BlockStep::kMore;
  if (!args_.started()) {
    Write("{}", sink);  // "arguments": ""
  } else if (!args_done_) {
    return BlockStep::kMalformed;  // the string ended inside the object
  }
  args_done_ = true;
  if (header_sent_) sink.EndCall();
  state_ = State::kAfterValue;
  return BlockStep::kMore;
}

BlockStep HermesBlockParser::EndObject(ToolCallSink& sink) {
  if (!has_name_) return BlockStep::kMalformed;
  if (!header_sent_) {
    sink.BeginCall(name_);
    sink.Arguments(args_seen_ ? held_args_ : "{}");
    sink.EndCall();
  }
  state_ = State::kAfterObject;
  return BlockStep::kMore;
}

void HermesBlockParser::Write(const std::string& piece, ToolCallSink& sink) {
  if (piece.empty()) return;
  if (header_sent_) {
    sink.Arguments(piece);
  } else {
    held_args_ += piece;
  }
}

std::string HermesBlockParser::Closer() const {
  if (state_ == State::kArguments || state_ == State::kStringArguments) return args_.Closer();
  return {};
}

}  // namespace cairn::engine
