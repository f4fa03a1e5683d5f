#include "server/request_log.h"

#include <fmt/format.h>

#include "core/log.h"

namespace cairn::server {

std::string RequestLogLine(std::string_view method, std::string_view route, int status,
                           const engine::GenerationResult* result, std::string_view error) {
  std::string line = fmt::format("{} {} {}", method, route, status);
  if (result != nullptr) {
    const double speed = result->decode_seconds > 0 ? result->completion_tokens / result->decode_seconds : 0.0;
    line += fmt::format(" | prompt {} tok, cached {} | ttft {:.2f} s | {} tok, {:.1f} tok/s | {}",
                        result->prompt_tokens, result->cached_tokens, result->ttft_seconds,
                        result->completion_tokens, speed, result->finish_reason);
  }
  if (!error.empty()) {
    // Keep the line one line: errors may quote multi-line input.
    std::string flat(error.substr(0, 200));
    for (char& c : flat) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    line += " | " + flat;
  }
  return line;
}

void LogRequest(std::string_view method, std::string_view route, int status, const engine::GenerationResult* result,
                std::string_view error) {
  // Health and metrics probes come every few seconds: only at debug level.
  const bool probe = status == 200 && (route.ends_with("/health") || route.ends_with("/metrics"));
  if (probe) {
    LogDebug("{}", RequestLogLine(method, route, status, result, error));
  } else {
    LogInfo("{}", RequestLogLine(method, route, status, result, error));
  }
}

bool LogsOwnRequestLine(std::string_view path) {
  return path.ends_with("/chat/completions") || path.ends_with("/completions") || path.ends_with("/messages") ||
         path.ends_with("/messages/") || path.ends_with("/responses") || path.ends_with("/responses/");
}

}  // namespace cairn::server
