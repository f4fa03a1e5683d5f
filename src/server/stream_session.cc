#include "server/stream_session.h"

#include <vector>

namespace cairn::server {

StreamSession::StreamSession(std::chrono::milliseconds keepalive, std::string keepalive_frame)
    : keepalive_(keepalive), keepalive_frame_(std::move(keepalive_frame)) {}

bool StreamSession::Push(std::string frame) {
  std::lock_guard lock(mutex_);
  event_ = true;
  if (gone_) return false;
  if (!frame.empty()) frames_.push_back(std::move(frame));
  changed_.notify_all();
  return true;
}

bool StreamSession::Progress() {
  std::lock_guard lock(mutex_);
  event_ = true;
  progress_ = true;
  changed_.notify_all();
  return !gone_;
}

void StreamSession::Finish(std::string last_frames) {
  std::lock_guard lock(mutex_);
  event_ = true;
  if (!last_frames.empty()) frames_.push_back(std::move(last_frames));
  finished_ = true;
  changed_.notify_all();
}

void StreamSession::NoteEvent() {
  std::lock_guard lock(mutex_);
  event_ = true;
  changed_.notify_all();
}

bool StreamSession::WaitFirstEvent(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return event_ || gone_; });
}

bool StreamSession::WaitFinished(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return finished_ || gone_; });
  return finished_;
}

bool StreamSession::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

StreamSession::PumpResult StreamSession::Pump(const std::function<bool(std::string_view)>& write,
                                              std::chrono::milliseconds max_wait) {
  std::vector<std::string> batch;
  bool finished = false;
  {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, max_wait,
                      [&] { return !frames_.empty() || finished_ || gone_ || progress_; });
    if (gone_) return PumpResult::kGone;
    progress_ = false;
    batch.assign(std::make_move_iterator(frames_.begin()), std::make_move_iterator(frames_.end()));
    frames_.clear();
    finished = finished_;
  }
  // Writes happen outside the lock so the engine never waits on the socket.
  auto now = Clock::now();
  if (batch.empty() && !finished && now - last_write_ >= keepalive_) batch.push_back(keepalive_frame_);
  for (const auto& frame : batch) {
    if (!write(frame)) {
      MarkGone();
      return PumpResult::kGone;
    }
    last_write_ = Clock::now();
  }
  return finished ? PumpResult::kDone : PumpResult::kMore;
}

void StreamSession::MarkGone() {
  std::lock_guard lock(mutex_);
  gone_ = true;
  changed_.notify_all();
}

bool StreamSession::gone() const {
  std::lock_guard lock(mutex_);
  return gone_;
}

}  // namespace cairn::server
