#include "server/prompt_normalize.h"

#include <string>
#include <string_view>

namespace cairn::server {
namespace {

constexpr std::string_view kBillingHeader = "x-anthropic-billing-header:";

// Removes every line that starts with kBillingHeader (and its line break).
// Returns the removed lines, joined by '\n'; "" when none.
std::string RemoveBillingLines(std::string& text) {
  std::string kept, removed;
  size_t pos = 0;
  bool changed = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const size_t next = end == std::string::npos ? text.size() : end + 1;
    std::string_view line(text.data() + pos, (end == std::string::npos ? text.size() : end) - pos);
    if (line.starts_with(kBillingHeader)) {
      if (!removed.empty()) removed += '\n';
      removed += line;
      changed = true;
    } else {
      kept.append(text, pos, next - pos);
    }
    pos = next;
  }
  if (changed) text = std::move(kept);
  return removed;
}

}  // namespace

engine::Json NormalizeVolatilePrefix(engine::GenerationInput& input) {
  engine::Json changes = engine::Json::array();
  auto note = [&](const std::string& where, const std::string& removed) {
    if (!removed.empty()) {
      changes.push_back({{"rule", "anthropic-billing-header"}, {"where", where}, {"removed", removed}});
    }
  };
  if (input.messages) {
    for (size_t i = 0; i < input.messages->size(); ++i) {
      engine::Json& message = (*input.messages)[i];
      if (message.value("role", "") != "system" || !message["content"].is_string()) continue;
      std::string content = message["content"].get<std::string>();
      const std::string removed = RemoveBillingLines(content);
      if (removed.empty()) continue;
      message["content"] = content;
      note("messages[" + std::to_string(i) + "]", removed);
    }
  }
  if (input.prompt) note("prompt", RemoveBillingLines(*input.prompt));
  return changes;
}

}  // namespace cairn::server
