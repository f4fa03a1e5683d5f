// POST /v1/chat/completions and POST /v1/completions: parse, run the engine,
// answer as one JSON body or as an SSE stream.
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "core/log.h"
#include "server/request_log.h"
#include "server/request_parser.h"
#include "server/response_builder.h"
#include "server/server_impl.h"
#include "server/stream_session.h"

namespace cairn::server {
namespace {

using engine::GenerationDelta;
using engine::GenerationResult;

// What differs between the two generation routes.
struct Dialect {
  ParseResult (*parse)(std::string_view body);
  const char* id_prefix;
  bool chat;
  const char* route;  // for the request log line
};

constexpr Dialect kChat{ParseChatRequest, "chatcmpl-", true, "/v1/chat/completions"};
constexpr Dialect kCompletion{ParseCompletionRequest, "cmpl-", false, "/v1/completions"};

bool WantsLogprobs(const Dialect& dialect, const ParsedRequest& request) {
  return dialect.chat ? request.options.logprobs : request.legacy_logprobs >= 0;
}

// One streaming request: the generation thread and its session. Destroyed
// with the httplib response (after the last write, or when the client or the
// server went away); the destructor cancels the generation and joins it, so
// no thread outlives its request.
struct StreamJob {
  std::shared_ptr<StreamSession> session;
  std::thread thread;
  // Set by the generation thread before session->Finish(); read by the
  // handler after it saw finished() (the session mutex orders the two).
  std::optional<ApiError> error;

  ~StreamJob() {
    if (session) session->MarkGone();
    if (thread.joinable()) thread.join();
  }
};

// Runs on the job's thread: Generate() with callbacks that queue frames.
void RunStream(HttpServer::Impl& server, StreamJob& job, const Dialect& dialect,
               const ParsedRequest& request, const ResponseMeta& meta) {
  StreamSession& session = *job.session;
  bool with_logprobs = WantsLogprobs(dialect, request);
  int64_t text_offset = 0;  // legacy completions logprobs text_offset
  auto on_delta = [&](const GenerationDelta& delta) {
    if (server.stopping) session.MarkGone();
    std::string frame = dialect.chat ? ChatDeltaChunk(meta, delta, with_logprobs)
                                     : CompletionDeltaChunk(meta, delta, with_logprobs, text_offset);
    text_offset += static_cast<int64_t>(delta.reasoning.size() + delta.content.size());
    return session.Push(std::move(frame));
  };
  auto on_progress = [&](int64_t, int64_t) {
    if (server.stopping) session.MarkGone();
    return session.Progress();
  };
  try {
    GenerationResult result = server.service.Generate(request.input, request.options, on_delta, on_progress);
    if (session.gone()) {
      LogInfo("client disconnected mid-stream; generation stopped early after {} tokens",
              result.completion_tokens);
    }
    std::string last = dialect.chat ? ChatFinalChunk(meta, result, request.include_usage)
                                    : CompletionFinalChunk(meta, result, request.include_usage);
    last.append(kSseDone);
    LogRequest("POST", dialect.route, 200, &result);
    session.Finish(std::move(last));
  } catch (const engine::RequestError& e) {
    job.error = BadRequest(e.what());
    LogRequest("POST", dialect.route, 400, nullptr, e.what());
    session.Finish(StreamErrorFrame(400, e.what()).append(kSseDone));
  } catch (const std::exception& e) {
    LogWarn("generation failed: {}", e.what());
    job.error = ApiError{500, "server_error", e.what()};
    LogRequest("POST", dialect.route, 500, nullptr, e.what());
    session.Finish(StreamErrorFrame(500, e.what()).append(kSseDone));
  }
}

void HandleStream(HttpServer::Impl& server, const Dialect& dialect, ParsedRequest request,
                  const ResponseMeta& meta, httplib::Response& res) {
  auto keepalive = std::chrono::seconds(std::max(1, server.options.keepalive_seconds));
  auto job = std::make_shared<StreamJob>();
  job->session = std::make_shared<StreamSession>(
      keepalive, dialect.chat ? ChatKeepAliveChunk(meta) : CompletionKeepAliveChunk(meta));
  // The thread reads `request` and `meta` through the job-owned copies below;
  // the job's destructor joins it before they go away.
  auto owned = std::make_shared<std::pair<ParsedRequest, ResponseMeta>>(std::move(request), meta);
  StreamJob* raw = job.get();
  HttpServer::Impl* srv = &server;
  const Dialect* d = &dialect;
  job->thread = std::thread([srv, raw, d, owned] { RunStream(*srv, *raw, *d, owned->first, owned->second); });

  // Hold the status line back until the engine shows a sign of life (at
  // most one keep-alive period): a prompt the engine refuses outright then
  // gets a real 400 instead of an error frame inside a 200 stream.
  job->session->WaitFirstEvent(std::chrono::duration_cast<std::chrono::milliseconds>(keepalive));
  if (job->session->finished() && job->error) {
    SendError(res, *job->error);
    return;  // `job` dies here: joins the (finished) thread
  }

  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  std::string first = dialect.chat ? ChatRoleChunk(meta) : std::string();
  res.set_chunked_content_provider(
      "text/event-stream",
      [job, first](size_t, httplib::DataSink& sink) mutable {
        auto write = [&sink](std::string_view frame) { return sink.write(frame.data(), frame.size()); };
        if (!first.empty()) {
          if (!write(first)) {
            job->session->MarkGone();
            return false;
          }
          first.clear();
        }
        // Short waits: httplib checks for server shutdown between calls.
        switch (job->session->Pump(write, std::chrono::milliseconds(250))) {
          case StreamSession::PumpResult::kMore: return true;
          case StreamSession::PumpResult::kDone: sink.done(); return true;
          case StreamSession::PumpResult::kGone: return false;
        }
        return false;
      });
}

// Non-streaming. The generation runs on its own thread. An answer that is
// ready within kBlockingGrace is sent as an ordinary JSON response (so errors
// keep their real status). A longer one commits to a chunked 200 and writes
// one space (insignificant whitespace before a JSON value) every
// kBlockingProbe until the body is ready. A failed write is how a client's
// disconnect is noticed: the engine then stops at its next token, exactly as
// for a stream, and the prefix cache keeps what was computed.
constexpr std::chrono::milliseconds kBlockingGrace{1000};
constexpr std::chrono::milliseconds kBlockingProbe{1000};

struct BlockingJob {
  std::shared_ptr<StreamSession> session;
  std::thread thread;
  std::optional<ApiError> error;  // set before session->Finish()
  engine::Json body;              // set before session->Finish() when no error

  ~BlockingJob() {
    if (session) session->MarkGone();
    if (thread.joinable()) thread.join();
  }
};

void RunBlocking(HttpServer::Impl& server, BlockingJob& job, const Dialect& dialect, const ParsedRequest& request,
                 const ResponseMeta& meta) {
  StreamSession& session = *job.session;
  auto alive = [&] {
    if (server.stopping) session.MarkGone();
    return session.Progress();  // false once a probe write failed
  };
  try {
    GenerationResult result = server.service.Generate(
        request.input, request.options, [&](const GenerationDelta&) { return alive(); },
        [&](int64_t, int64_t) { return alive(); });
    if (session.gone()) {
      LogInfo("client disconnected; generation stopped early after {} tokens", result.completion_tokens);
    }
    const bool with_logprobs = WantsLogprobs(dialect, request);
    job.body = dialect.chat ? ChatCompletionJson(meta, result, with_logprobs)
                            : CompletionJson(meta, result, with_logprobs);
    LogRequest("POST", dialect.route, 200, &result);
    session.Finish(DumpJson(job.body));
  } catch (const engine::RequestError& e) {
    job.error = BadRequest(e.what());
    LogRequest("POST", dialect.route, 400, nullptr, e.what());
    session.Finish(ErrorBody(*job.error));
  } catch (const std::exception& e) {
    LogWarn("generation failed: {}", e.what());
    job.error = ApiError{500, "server_error", e.what()};
    LogRequest("POST", dialect.route, 500, nullptr, e.what());
    session.Finish(ErrorBody(*job.error));
  }
}

void HandleBlocking(HttpServer::Impl& server, const Dialect& dialect, ParsedRequest request,
                    const ResponseMeta& meta, httplib::Response& res) {
  auto job = std::make_shared<BlockingJob>();
  job->session = std::make_shared<StreamSession>(kBlockingProbe, " ");
  auto owned = std::make_shared<std::pair<ParsedRequest, ResponseMeta>>(std::move(request), meta);
  BlockingJob* raw = job.get();
  HttpServer::Impl* srv = &server;
  const Dialect* d = &dialect;
  job->thread = std::thread([srv, raw, d, owned] { RunBlocking(*srv, *raw, *d, owned->first, owned->second); });
  if (job->session->WaitFinished(kBlockingGrace)) {
    if (job->error) return SendError(res, *job->error);
    return SendJson(res, 200, job->body);
  }
  // A late error can no longer change the status: its error body follows the
  // spaces (clients see an {"error": ...} object).
  res.set_chunked_content_provider("application/json", [job](size_t, httplib::DataSink& sink) {
    auto write = [&sink](std::string_view frame) { return sink.write(frame.data(), frame.size()); };
    switch (job->session->Pump(write, std::chrono::milliseconds(250))) {
      case StreamSession::PumpResult::kMore: return true;
      case StreamSession::PumpResult::kDone: sink.done(); return true;
      case StreamSession::PumpResult::kGone: return false;
    }
    return false;
  });
}

void HandleGeneration(HttpServer::Impl& server, const Dialect& dialect, const httplib::Request& req,
                      httplib::Response& res) {
  if (server.stopping) {
    LogRequest("POST", dialect.route, 503, nullptr, "server is shutting down");
    return SendError(res, ApiError{503, "service_unavailable", "server is shutting down"});
  }
  ParseResult parsed = dialect.parse(req.body);
  if (!parsed.ok()) {
    LogRequest("POST", dialect.route, 400, nullptr, parsed.error);
    return SendError(res, BadRequest(parsed.error));
  }
  ParsedRequest request = std::move(*parsed.request);
  ResponseMeta meta = NewResponseMeta(dialect.id_prefix, server.ModelName(request.model));
  if (request.stream) return HandleStream(server, dialect, std::move(request), meta, res);

  HandleBlocking(server, dialect, std::move(request), meta, res);
}

}  // namespace

void HttpServer::Impl::RegisterGenerationRoutes() {
  http.Post(RoutePattern("/chat/completions"), [this](const httplib::Request& req, httplib::Response& res) {
    HandleGeneration(*this, kChat, req, res);
  });
  http.Post(RoutePattern("/completions"), [this](const httplib::Request& req, httplib::Response& res) {
    HandleGeneration(*this, kCompletion, req, res);
  });
}

}  // namespace cairn::server
