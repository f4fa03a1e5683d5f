#include "engine/tool_call_xml.h"

#include <algorithm>
#include <string_view>

#include "engine/json_rewriter.h"
#include "engine/tool_calls.h"

namespace cairn::engine {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kFunctionOpen = "<function=";
constexpr std::string_view kFunctionClose = "</function>";
constexpr std::string_view kParamOpen = "<parameter=";
constexpr std::string_view kParamClose = "</parameter>";
constexpr std::string_view kCallClose = "</tool_call>";
constexpr size_t kMaxTag = 256;  // bytes of one tag, names included

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// `tag` (from '<', incomplete) can still become one of the tags above.
bool CouldBeTag(std::string_view tag) {
  for (std::string_view known : {kFunctionOpen, kParamOpen, kFunctionClose, kCallClose}) {
    if (tag.size() <= known.size() ? StartsWith(known, tag)
                                   : known.back() == '=' && StartsWith(tag, known)) {
      return true;
    }
  }
  return false;
}

// The JSON-schema type of parameter `key` of tool `name` ("" when unknown).
std::string SchemaType(const Json& tools, const std::string& name, const std::string& key) {
  if (!tools.is_array()) return {};
  for (const Json& tool : tools) {
    const Json* function = ToolFunction(tool);
    if (function == nullptr || function->value("name", std::string()) != name) continue;
    const Json& fn = *function;
    const Json* params = fn.contains("parameters") ? &fn["parameters"] : nullptr;
    if (params == nullptr || !params->is_object() || !params->contains("properties")) return {};
    const Json& props = (*params)["properties"];
    if (!props.is_object() || !props.contains(key) || !props[key].is_object()) return {};
    const Json& type = props[key].value("type", Json());
    if (type.is_string()) return type.get<std::string>();
    if (type.is_array()) {
      for (const Json& t : type) {
        if (t.is_string() && t.get<std::string>() != "null") return t.get<std::string>();
      }
    }
    return {};
  }
  return {};
}

// A raw XML parameter value as JSON, by schema type or (untyped) by shape.
Json CoerceValue(const std::string& text, const std::string& type) {
  if (type == "string") return text;
  if (type.empty()) {
    if (text.size() > 32 || text.find('\n') != std::string::npos) return text;
    const Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded() && (parsed.is_boolean() || parsed.is_null() || parsed.is_number())) return parsed;
    return text;
  }
  const Json parsed = Json::parse(Trim(text), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return text;
  if (Trim(text) == "null") return nullptr;
  if ((type == "integer" || type == "number") && parsed.is_number()) return parsed;
  if (type == "boolean" && parsed.is_boolean()) return parsed;
  if (type == "object" && parsed.is_object()) return parsed;
  if (type == "array" && parsed.is_array()) return parsed;
  return text;
}

// Strings are escaped byte by byte like the streamed ones (EscapeJsonString),
// so a value reads the same whether or not it streamed.
std::string Serialize(const Json& value) {
  if (value.is_string()) return "\"" + EscapeJsonString(value.get_ref<const std::string&>()) + "\"";
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

XmlBlockParser::XmlBlockParser(const Json& tools, bool wrapped) : tools_(tools), wrapped_(wrapped) {}

BlockStep XmlBlockParser::Feed(char c, ToolCallSink& sink) {
  switch (state_) {
    case State::kBetween:
      if (IsSpace(c)) return BlockStep::kMore;
      if (c != '<') return BlockStep::kMalformed;
      tag_ = "<";
      state_ = State::kTag;
      return BlockStep::kMore;
    case State::kTag:
      if (c == '<' || tag_.size() >= kMaxTag) return BlockStep::kMalformed;
      tag_ += c;
      if (c == '>') return EndTag(sink);
      return CouldBeTag(tag_) ? BlockStep::kMore : BlockStep::kMalformed;
    case State::kValue:
      return ValueByte(c, sink);
  }
  return BlockStep::kMalformed;
}

BlockStep XmlBlockParser::EndTag(ToolCallSink& sink) {
  const std::string_view tag = tag_;
  state_ = State::kBetween;
  if (StartsWith(tag, kFunctionOpen)) {
    const std::string name(Trim(tag.substr(kFunctionOpen.size(), tag.size() - kFunctionOpen.size() - 1)));
    if (name.empty() || header_pending_ || (!wrapped_ && any_call_)) return BlockStep::kMalformed;
    if (call_open_) CloseCall(sink);  // </function> left out between two functions
    name_ = name;
    if (wrapped_) {
      OpenCall(sink);
    } else {
      header_pending_ = true;
    }
    return BlockStep::kMore;
  }
  if (StartsWith(tag, kParamOpen)) {
    const std::string key(Trim(tag.substr(kParamOpen.size(), tag.size() - kParamOpen.size() - 1)));
    if (key.empty() || (!call_open_ && !header_pending_)) return BlockStep::kMalformed;
    if (header_pending_) OpenCall(sink);
    type_ = SchemaType(tools_, name_, key);
    prefix_ = std::string(first_param_ ? "" : ",") + "\"" + EscapeJsonString(key) + "\":";
    first_param_ = false;
    stream_string_ = type_ == "string";
    if (stream_string_) sink.Arguments(prefix_ + "\"");
    value_started_ = false;
    value_.clear();
    state_ = State::kValue;
    return BlockStep::kMore;
  }
  if (tag == kFunctionClose || tag == kCallClose) {
    if (header_pending_) OpenCall(sink);
    if (call_open_) {
      CloseCall(sink);
    } else if (tag == kFunctionClose || !any_call_) {
      return BlockStep::kMalformed;  // a close with nothing open
    }
    return tag == kCallClose || !wrapped_ ? BlockStep::kEnd : BlockStep::kMore;
  }
  return BlockStep::kMalformed;
}

BlockStep XmlBlockParser::ValueByte(char c, ToolCallSink& sink) {
  if (!value_started_) {
    value_started_ = true;
    if (c == '\n') return BlockStep::kMore;  // markup
  }
  value_ += c;
  if (value_.size() >= kParamClose.size() &&
      value_.compare(value_.size() - kParamClose.size(), kParamClose.size(), kParamClose) == 0) {
    value_.resize(value_.size() - kParamClose.size());
    if (!value_.empty() && value_.back() == '\n') value_.pop_back();  // markup
    if (stream_string_) {
      sink.Arguments(EscapeJsonString(value_) + "\"");
    } else {
      sink.Arguments(prefix_ + Serialize(CoerceValue(value_, type_)));
    }
    value_.clear();
    state_ = State::kBetween;
    return BlockStep::kMore;
  }
  if (stream_string_) {
    // Hold back what may still be the closing tag and the newline before it.
    size_t keep = 0;
    for (size_t k = std::min(value_.size(), kParamClose.size() - 1); k > 0; --k) {
      if (value_.compare(value_.size() - k, k, kParamClose, 0, k) == 0) {
        keep = k;
        break;
      }
    }
    size_t cut = value_.size() - keep;
    if (cut > 0 && value_[cut - 1] == '\n') --cut;
    if (cut > 0) {
      sink.Arguments(EscapeJsonString(std::string_view(value_).substr(0, cut)));
      value_.erase(0, cut);
    }
  }
  return BlockStep::kMore;
}

void XmlBlockParser::OpenCall(ToolCallSink& sink) {
  sink.BeginCall(name_);
  sink.Arguments("{");
  header_pending_ = false;
  call_open_ = true;
  any_call_ = true;
  first_param_ = true;
}

void XmlBlockParser::CloseCall(ToolCallSink& sink) {
  sink.Arguments("}");
  sink.EndCall();
  call_open_ = false;
}

std::string XmlBlockParser::Closer() const {
  if (!call_open_) return {};
  return state_ == State::kValue && stream_string_ ? "\"}" : "}";
}

void XmlBlockParser::Finish(ToolCallSink& sink) {
  // Between parameters the call says all it has: the model ended it without
  // </function>. Inside a tag or a value it was cut off and stays as streamed.
  if (call_open_ && state_ == State::kBetween) CloseCall(sink);
}

}  // namespace cairn::engine
