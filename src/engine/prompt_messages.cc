#include "engine/prompt_messages.h"

#include "engine/service.h"

namespace cairn::engine {
namespace {

using Json = nlohmann::ordered_json;

std::string JoinTextParts(const Json& parts) {
  std::string text;
  for (const Json& part : parts) {
    if (part.is_string()) {
      text += part.get<std::string>();
    } else if (part.is_object()) {
      const auto it = part.find("text");
      const std::string type = part.value("type", std::string("text"));
      if (it != part.end() && it->is_string() && (type == "text" || type == "input_text")) {
        text += it->get<std::string>();
      }
    }
  }
  return text;
}

}  // namespace

Json NormalizeMessages(const Json& messages) {
  if (!messages.is_array() || messages.empty()) {
    throw RequestError("'messages' must be a non-empty array");
  }
  Json out = Json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& in = messages[i];
    if (!in.is_object() || !in.contains("role") || !in["role"].is_string()) {
      throw RequestError("messages[" + std::to_string(i) + "] must be an object with a string 'role'");
    }
    Json message = in;
    const auto content = message.find("content");
    if (content == message.end() || content->is_null()) {
      message["content"] = "";
    } else if (content->is_array()) {
      message["content"] = JoinTextParts(*content);
    } else if (!content->is_string()) {
      throw RequestError("messages[" + std::to_string(i) + "].content must be a string, a list of parts or null");
    }
    if (auto calls = message.find("tool_calls"); calls != message.end() && calls->is_array()) {
      for (Json& call : *calls) {
        if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
        Json& fn = call["function"];
        if (auto args = fn.find("arguments"); args != fn.end() && args->is_string()) {
          Json parsed = Json::parse(args->get<std::string>(), nullptr, /*allow_exceptions=*/false);
          if (!parsed.is_discarded()) *args = std::move(parsed);
        }
      }
    }
    out.push_back(std::move(message));
  }
  return out;
}

Json FoldLateSystemMessages(const Json& messages, int* folded) {
  *folded = 0;
  Json out = Json::array();
  std::string pending;  // late system text waiting for the next user message
  auto is_late_system = [](const Json& message, size_t index) {
    return index > 0 && RoleOf(message.value("role", std::string())) == cache::Role::kSystem;
  };
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& message = messages[i];
    if (is_late_system(message, i)) {
      const auto content = message.find("content");
      if (!pending.empty()) pending += "\n\n";
      if (content != message.end() && content->is_string()) pending += content->get<std::string>();
      ++*folded;
      continue;
    }
    Json copy = message;
    if (!pending.empty() && copy.value("role", std::string()) == "user" && copy.contains("content") &&
        copy["content"].is_string()) {
      copy["content"] = pending + "\n\n" + copy["content"].get<std::string>();
      pending.clear();
    }
    out.push_back(std::move(copy));
  }
  if (!pending.empty()) {
    for (size_t i = out.size(); i-- > 0;) {
      if (out[i].value("role", std::string()) == "user" && out[i].contains("content") && out[i]["content"].is_string()) {
        out[i]["content"] = out[i]["content"].get<std::string>() + "\n\n" + pending;
        pending.clear();
        break;
      }
    }
    if (!pending.empty()) out.push_back({{"role", "user"}, {"content", pending}});
  }
  return *folded == 0 ? messages : out;
}

cache::Role RoleOf(std::string_view role) {
  if (role == "system" || role == "developer") return cache::Role::kSystem;
  if (role == "user") return cache::Role::kUser;
  if (role == "assistant") return cache::Role::kAssistant;
  if (role == "tool" || role == "ipython" || role == "function") return cache::Role::kTool;
  return cache::Role::kOther;
}

}  // namespace cairn::engine
