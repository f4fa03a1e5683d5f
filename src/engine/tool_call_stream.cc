#include "engine/tool_call_stream.h"

#include <algorithm>
#include <set>

#include "core/log.h"
#include "engine/tool_call_hermes.h"
#include "engine/tool_call_xml.h"

namespace cairn::engine {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kCallOpen = "<tool_call>";
constexpr std::string_view kCallClose = "</tool_call>";
constexpr std::string_view kFence = "```";  // opens and closes a fenced call (FencedCall)

std::set<std::string, std::less<>> ToolNames(const Json& tools) {
  std::set<std::string, std::less<>> names;
  if (!tools.is_array()) return names;
  for (const Json& tool : tools) {
    const Json* function = ToolFunction(tool);
    if (function != nullptr && function->contains("name") && (*function)["name"].is_string()) {
      names.insert((*function)["name"].get<std::string>());
    }
  }
  return names;
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

}  // namespace

ToolCallStream::ToolCallStream(Json tools, std::function<std::string()> new_id)
    : tools_(std::move(tools)), new_id_(std::move(new_id)), tool_names_(ToolNames(tools_)) {}

ToolCallOutput ToolCallStream::Feed(std::string_view text, bool final) {
  out_ = ToolCallOutput();
  out_.content = std::move(deferred_);
  deferred_.clear();
  std::string work;  // an opener and the rest of the chunk after it
  std::string_view rest = text;
  while (!rest.empty()) {
    if (mode_ != Mode::kOutside) {
      if (BlockByte(rest.front())) rest.remove_prefix(1);
      continue;
    }
    OutsideText(gate_.Feed(rest));
    if (!gate_.triggered()) break;
    work = gate_.held();
    gate_ = ToolCallGate();
    rest = work;
    StartBlock(rest);
  }
  if (final) {
    Finish();
    out_.content += deferred_;
    deferred_.clear();
  }
  return std::move(out_);
}

// `rest` starts with an opener: <tool_call> (consumed here), ``` (a fenced
// JSON call, consumed with its language tag) or <function= (the first bytes of
// a bare XML call).
void ToolCallStream::StartBlock(std::string_view& rest) {
  block_calls_ = false;
  tracking_raw_ = true;
  raw_.clear();
  if (rest.substr(0, kCallOpen.size()) == kCallOpen) {
    kind_ = BlockKind::kWrapped;
    close_tag_ = kCallClose;
    raw_ = kCallOpen;
    rest.remove_prefix(kCallOpen.size());
    mode_ = Mode::kBlockStart;
  } else if (rest.substr(0, kFence.size()) == kFence) {
    kind_ = BlockKind::kFenced;
    close_tag_ = kFence;
    const size_t opener = rest.substr(0, 7) == "```json" ? 7 : kFence.size();
    raw_ = rest.substr(0, opener);
    rest.remove_prefix(opener);
    mode_ = Mode::kBlockStart;
  } else {
    kind_ = BlockKind::kBareXml;
    parser_ = std::make_unique<XmlBlockParser>(tools_, /*wrapped=*/false);
    mode_ = Mode::kBlock;
  }
}

bool ToolCallStream::BlockByte(char c) {
  switch (mode_) {
    case Mode::kOutside:
      return false;
    case Mode::kBlockStart:
      if (IsSpace(c)) {
        raw_ += c;
        return true;
      }
      if (c == '{' && kind_ == BlockKind::kFenced) {
        parser_ = std::make_unique<HermesBlockParser>(FencedCall{tool_names_});
      } else if (c == '{') {
        parser_ = std::make_unique<HermesBlockParser>();
      } else if (c == '<' && kind_ == BlockKind::kWrapped) {
        parser_ = std::make_unique<XmlBlockParser>(tools_, /*wrapped=*/true);
      } else {
        Malformed();
        return false;
      }
      mode_ = Mode::kBlock;
      return BlockByte(c);
    case Mode::kBlock: {
      // BeginCall/EndCall inside Feed clear raw_, so `c` is dropped from it
      // when it belongs to a call; a malformed byte changes nothing else.
      if (tracking_raw_) raw_ += c;
      const BlockStep step = parser_->Feed(c, *this);
      if (step == BlockStep::kMalformed) {
        if (tracking_raw_ && !raw_.empty()) raw_.pop_back();
        Malformed();
        return false;
      }
      if (step == BlockStep::kEnd) EndBlock();
      return true;
    }
    case Mode::kSkipToClose:
      AppendContent(std::string_view(&c, 1));
      if (c == close_tag_[close_match_]) {
        ++close_match_;
      } else {
        close_match_ = c == close_tag_[0] ? 1 : 0;
      }
      if (close_match_ == close_tag_.size()) {
        mode_ = Mode::kOutside;
        close_match_ = 0;
      }
      return true;
  }
  return false;
}

void ToolCallStream::Malformed() {
  if (call_open_) {
    const ToolCall& call = calls_.back();
    LogWarn("tool call {} ({}): malformed after its arguments began streaming; closed it there, "
            "the rest of its block stays text", call.id, call.name);
    Arguments(call.arguments.empty() ? std::string("{}") : parser_->Closer());
    EndCall();
  } else if (block_calls_) {
    LogWarn("tool-call block: malformed after its last call; the rest stays text");
  } else {
    LogWarn("tool-call markup that does not parse; kept as text");
  }
  // The text may already hold part of the block's close tag.
  close_match_ = 0;
  for (size_t k = std::min(raw_.size(), close_tag_.size() - 1); k > 0; --k) {
    if (raw_.compare(raw_.size() - k, k, close_tag_, 0, k) == 0) {
      close_match_ = k;
      break;
    }
  }
  AppendContent(raw_);
  raw_.clear();
  tracking_raw_ = false;
  parser_.reset();
  skip_space_ = false;
  mode_ = kind_ == BlockKind::kBareXml ? Mode::kOutside : Mode::kSkipToClose;
}

void ToolCallStream::EndBlock() {
  parser_.reset();
  raw_.clear();
  tracking_raw_ = false;
  skip_space_ = block_calls_;
  mode_ = Mode::kOutside;
}

void ToolCallStream::Finish() {
  switch (mode_) {
    case Mode::kOutside:
      OutsideText(gate_.Finish());
      break;
    case Mode::kBlockStart:
    case Mode::kSkipToClose:
      break;  // markup with no call, cut off: dropped / already content
    case Mode::kBlock:
      parser_->Finish(*this);
      if (call_open_) {
        LogInfo("tool call {} ({}): the answer ended inside it; its arguments stay as streamed",
                calls_.back().id, calls_.back().name);
        EndCall();
      }
      break;  // raw_ (markup before a header or after the last call) is dropped
  }
  parser_.reset();
  raw_.clear();
  tracking_raw_ = false;
  gate_ = ToolCallGate();
  mode_ = Mode::kOutside;
}

void ToolCallStream::OutsideText(std::string_view text) {
  if (skip_space_) {
    while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
    if (!text.empty()) skip_space_ = false;
  }
  AppendContent(text);
}

void ToolCallStream::AppendContent(std::string_view text) {
  if (text.empty()) return;
  (out_.tool_calls.is_null() ? out_.content : deferred_).append(text);
}

void ToolCallStream::BeginCall(std::string name) {
  calls_.push_back({new_id_(), std::move(name), ""});
  const ToolCall& call = calls_.back();
  out_.tool_calls.push_back({{"index", calls_.size() - 1},
                             {"id", call.id},
                             {"type", "function"},
                             {"function", {{"name", call.name}, {"arguments", ""}}}});
  call_open_ = true;
  block_calls_ = true;
  tracking_raw_ = false;
  raw_.clear();
}

void ToolCallStream::Arguments(std::string_view piece) {
  if (piece.empty()) return;
  calls_.back().arguments.append(piece);
  const size_t index = calls_.size() - 1;
  // One fragment per call and Feed after the header (coalesced).
  if (!out_.tool_calls.empty()) {
    Json& last = out_.tool_calls.back();
    if (last["index"] == index && !last.contains("id")) {
      last["function"]["arguments"].get_ref<std::string&>().append(piece);
      return;
    }
  }
  out_.tool_calls.push_back({{"index", index}, {"function", {{"arguments", std::string(piece)}}}});
}

void ToolCallStream::EndCall() {
  call_open_ = false;
  tracking_raw_ = true;
  raw_.clear();
}

}  // namespace cairn::engine
