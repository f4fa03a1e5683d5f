// Minimal leveled logging to stderr, and terminal-aware progress lines.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>

namespace cairn {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
void LogLine(LogLevel level, const std::string& message);

template <typename... Args>
void LogInfo(fmt::format_string<Args...> format, Args&&... args) {
  if (GetLogLevel() <= LogLevel::kInfo) LogLine(LogLevel::kInfo, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void LogWarn(fmt::format_string<Args...> format, Args&&... args) {
  if (GetLogLevel() <= LogLevel::kWarn) LogLine(LogLevel::kWarn, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void LogDebug(fmt::format_string<Args...> format, Args&&... args) {
  if (GetLogLevel() <= LogLevel::kDebug) LogLine(LogLevel::kDebug, fmt::format(format, std::forward<Args>(args)...));
}

// True when stderr is a terminal (progress bars are shown only then).
bool StderrIsTerminal();

// A single self-overwriting progress line on stderr ("label  42% (n/total)").
// Silent when stderr is not a terminal; throttled to ~10 updates per second.
class Progress {
 public:
  Progress(std::string label, int64_t total);
  ~Progress();
  void Update(int64_t done);
  void Finish();

 private:
  std::string label_;
  int64_t total_;
  bool enabled_;
  bool finished_ = false;
  double last_print_seconds_ = -1.0;
};

}  // namespace cairn
