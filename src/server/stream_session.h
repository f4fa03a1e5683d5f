// The hand-off between a generation (engine thread) and the HTTP connection
// writing its SSE stream (an httplib worker thread).
//
// The engine side only queues frames, so it never blocks on a slow socket;
// the connection side is the only writer, so frames, keep-alives and the
// final [DONE] are serialised without a socket lock. A failed write marks the
// session gone; the engine callbacks then return false and the engine stops
// at its next token.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace cairn::server {

class StreamSession {
 public:
  using Clock = std::chrono::steady_clock;

  // `keepalive_frame` is written whenever nothing was written for `keepalive`.
  StreamSession(std::chrono::milliseconds keepalive, std::string keepalive_frame);

  // --- engine side ---
  // Queues a frame (ignored when empty). Returns false once the client is gone.
  bool Push(std::string frame);
  // Prefill progress: wakes the writer so a due keep-alive goes out promptly.
  bool Progress();
  // Queues the last frames and ends the stream.
  void Finish(std::string last_frames);
  // Marks that the engine produced its first sign of life (a callback or the
  // result); see WaitFirstEvent.
  void NoteEvent();

  // --- connection side ---
  // Waits up to `timeout` for the engine's first event. Lets the handler
  // answer an early engine error (bad prompt) with a real HTTP status
  // instead of committing to a 200 stream.
  bool WaitFirstEvent(std::chrono::milliseconds timeout);
  // Waits up to `timeout` for Finish (or the client going away); true when finished.
  bool WaitFinished(std::chrono::milliseconds timeout);
  bool finished() const;

  enum class PumpResult { kMore, kDone, kGone };
  // Writes whatever is queued (waiting at most `max_wait` for something) or
  // a keep-alive when one is due. kDone after the last frame went out.
  PumpResult Pump(const std::function<bool(std::string_view)>& write,
                  std::chrono::milliseconds max_wait);

  // Client gone (failed write, closed connection, server stopping).
  void MarkGone();
  bool gone() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> frames_;
  bool finished_ = false;
  bool gone_ = false;
  bool event_ = false;
  bool progress_ = false;
  const std::chrono::milliseconds keepalive_;
  const std::string keepalive_frame_;
  Clock::time_point last_write_ = Clock::now();
};

}  // namespace cairn::server
