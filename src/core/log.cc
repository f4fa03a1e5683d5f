#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>

#include "core/timer.h"

namespace cairn {
namespace {
std::atomic<LogLevel> g_level{LogLevel::kInfo};
std::mutex g_stderr_mutex;
}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(level); }
LogLevel GetLogLevel() { return g_level.load(); }

void LogLine(LogLevel level, const std::string& message) {
  static constexpr const char* kTags[] = {"debug", "info", "warn", "error"};
  std::lock_guard<std::mutex> lock(g_stderr_mutex);
  std::fprintf(stderr, "[%s] %s\n", kTags[static_cast<int>(level)], message.c_str());
}

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, int64_t total)
    : label_(std::move(label)), total_(total), enabled_(StderrIsTerminal()) {}

Progress::~Progress() { Finish(); }

void Progress::Update(int64_t done) {
  if (!enabled_ || finished_) return;
  const double now = NowSeconds();
  if (done < total_ && last_print_seconds_ >= 0 && now - last_print_seconds_ < 0.1) return;
  last_print_seconds_ = now;
  const double pct = total_ > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0;
  std::lock_guard<std::mutex> lock(g_stderr_mutex);
  std::fprintf(stderr, "\r%s %3.0f%% (%lld/%lld)", label_.c_str(), pct, static_cast<long long>(done),
               static_cast<long long>(total_));
  std::fflush(stderr);
}

void Progress::Finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (last_print_seconds_ < 0) return;
  std::lock_guard<std::mutex> lock(g_stderr_mutex);
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace cairn
