// The generation routes (POST /v1/chat/completions, /v1/completions,
// /v1/messages): every API's request runs through the same path, its
// differences held by its ApiDialect (api_dialect.h): parse, normalise the
// volatile prefix, generate on a worker thread, answer as one JSON body or as
// the API's SSE stream, log one line.
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "core/log.h"
#include "server/anthropic_parser.h"
#include "server/api_dialect.h"
#include "server/prompt_normalize.h"
#include "server/request_log.h"
#include "server/request_parser.h"
#include "server/response_builder.h"
#include "server/server_impl.h"
#include "server/stream_session.h"

namespace cairn::server {
namespace {

using engine::GenerationDelta;
using engine::GenerationResult;

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

// The conversation this response ended, for a later previous_response_id:
// the request's messages plus the answer as an assistant message.
void StoreConversation(HttpServer::Impl& server, const ParsedRequest& request, const GenerationResult& result) {
  if (!request.store || !request.input.messages || result.finish_reason == "cancelled") return;
  engine::Json conversation = *request.input.messages;
  engine::Json answer = {{"role", "assistant"}, {"content", result.content}};
  if (!result.reasoning.empty()) answer["reasoning_content"] = result.reasoning;
  if (!result.tool_calls.empty()) {
    engine::Json calls = result.tool_calls;
    for (auto& call : calls) {
      auto& arguments = call["function"]["arguments"];
      if (arguments.is_string()) {
        engine::Json parsed = engine::Json::parse(arguments.get<std::string>(), nullptr, false);
        if (!parsed.is_discarded()) arguments = std::move(parsed);
      }
    }
    answer["tool_calls"] = std::move(calls);
  }
  conversation.push_back(std::move(answer));
  server.responses.Put(request.response_id, std::move(conversation));
}

// Continues a stored conversation: the new request's leading system
// messages (its instructions; a stored response's instructions do not carry
// over), then the stored turns, then the new items. False when the id is unknown.
bool ResumeConversation(HttpServer::Impl& server, ParsedRequest& request) {
  std::optional<engine::Json> stored = server.responses.Get(request.previous_response_id);
  if (!stored) return false;
  engine::Json& now = *request.input.messages;
  engine::Json merged = engine::Json::array();
  size_t i = 0;
  for (; i < now.size() && now[i]["role"] == "system"; ++i) merged.push_back(now[i]);
  size_t j = 0;
  for (; j < stored->size() && (*stored)[j]["role"] == "system"; ++j) {}
  for (; j < stored->size(); ++j) merged.push_back((*stored)[j]);
  for (; i < now.size(); ++i) merged.push_back(now[i]);
  now = std::move(merged);
  return true;
}

// Runs on the job's thread: Generate() with callbacks that queue frames.
void RunStream(HttpServer::Impl& server, StreamJob& job, const ApiDialect& dialect, const ParsedRequest& request,
               ResponseEncoder& encoder) {
  StreamSession& session = *job.session;
  auto on_delta = [&](const GenerationDelta& delta) {
    if (server.stopping) session.MarkGone();
    return session.Push(encoder.Delta(delta));
  };
  auto on_progress = [&](int64_t, int64_t) {
    if (server.stopping) session.MarkGone();
    return session.Progress();
  };
  try {
    GenerationResult result = server.service.Generate(request.input, request.options, on_delta, on_progress);
    if (!request.normalized.empty()) result.cache["normalized"] = request.normalized;
    StoreConversation(server, request, result);
    if (session.gone()) {
      LogInfo("client disconnected mid-stream; generation stopped early after {} tokens",
              result.completion_tokens);
    }
    LogRequest("POST", dialect.route, 200, &result);
    session.Finish(encoder.StreamEnd(result));
  } catch (const engine::RequestError& e) {
    job.error = BadRequest(e.what());
    LogRequest("POST", dialect.route, 400, nullptr, e.what());
    session.Finish(encoder.StreamError(*job.error));
  } catch (const std::exception& e) {
    LogWarn("generation failed: {}", e.what());
    job.error = ApiError{500, "server_error", e.what()};
    LogRequest("POST", dialect.route, 500, nullptr, e.what());
    session.Finish(encoder.StreamError(*job.error));
  }
}

void HandleStream(HttpServer::Impl& server, const ApiDialect& dialect, ParsedRequest request,
                  std::unique_ptr<ResponseEncoder> encoder, httplib::Response& res) {
  auto keepalive = std::chrono::seconds(std::max(1, server.options.keepalive_seconds));
  auto job = std::make_shared<StreamJob>();
  job->session = std::make_shared<StreamSession>(keepalive, encoder->KeepAlive());
  // Taken before the generation thread starts: from then on only that thread
  // touches the encoder.
  std::string first = encoder->StreamStart();
  // The thread reads `request` and the encoder through the job-owned copies
  // below; the job's destructor joins it before they go away.
  auto owned = std::make_shared<std::pair<ParsedRequest, std::unique_ptr<ResponseEncoder>>>(std::move(request),
                                                                                             std::move(encoder));
  StreamJob* raw = job.get();
  HttpServer::Impl* srv = &server;
  const ApiDialect* d = &dialect;
  job->thread = std::thread([srv, raw, d, owned] { RunStream(*srv, *raw, *d, owned->first, *owned->second); });

  // Hold the status line back until the engine shows a sign of life (at
  // most one keep-alive period): a prompt the engine refuses outright then
  // gets a real 400 instead of an error frame inside a 200 stream.
  job->session->WaitFirstEvent(std::chrono::duration_cast<std::chrono::milliseconds>(keepalive));
  if (job->session->finished() && job->error) {
    SendError(res, *job->error, dialect.errors);
    return;  // `job` dies here: joins the (finished) thread
  }

  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
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

void RunBlocking(HttpServer::Impl& server, BlockingJob& job, const ApiDialect& dialect, const ParsedRequest& request,
                 ResponseEncoder& encoder) {
  StreamSession& session = *job.session;
  auto alive = [&] {
    if (server.stopping) session.MarkGone();
    return session.Progress();  // false once a probe write failed
  };
  try {
    GenerationResult result = server.service.Generate(
        request.input, request.options, [&](const GenerationDelta&) { return alive(); },
        [&](int64_t, int64_t) { return alive(); });
    if (!request.normalized.empty()) result.cache["normalized"] = request.normalized;
    StoreConversation(server, request, result);
    if (session.gone()) {
      LogInfo("client disconnected; generation stopped early after {} tokens", result.completion_tokens);
    }
    job.body = encoder.Body(result);
    LogRequest("POST", dialect.route, 200, &result);
    session.Finish(DumpJson(job.body));
  } catch (const engine::RequestError& e) {
    job.error = BadRequest(e.what());
    LogRequest("POST", dialect.route, 400, nullptr, e.what());
    session.Finish(ErrorBody(*job.error, dialect.errors));
  } catch (const std::exception& e) {
    LogWarn("generation failed: {}", e.what());
    job.error = ApiError{500, "server_error", e.what()};
    LogRequest("POST", dialect.route, 500, nullptr, e.what());
    session.Finish(ErrorBody(*job.error, dialect.errors));
  }
}

void HandleBlocking(HttpServer::Impl& server, const ApiDialect& dialect, ParsedRequest request,
                    std::unique_ptr<ResponseEncoder> encoder, httplib::Response& res) {
  auto job = std::make_shared<BlockingJob>();
  job->session = std::make_shared<StreamSession>(kBlockingProbe, " ");
  auto owned = std::make_shared<std::pair<ParsedRequest, std::unique_ptr<ResponseEncoder>>>(std::move(request),
                                                                                             std::move(encoder));
  BlockingJob* raw = job.get();
  HttpServer::Impl* srv = &server;
  const ApiDialect* d = &dialect;
  job->thread = std::thread([srv, raw, d, owned] { RunBlocking(*srv, *raw, *d, owned->first, *owned->second); });
  if (job->session->WaitFinished(kBlockingGrace)) {
    if (job->error) return SendError(res, *job->error, dialect.errors);
    return SendJson(res, 200, job->body);
  }
  // A late error can no longer change the status: its error body follows the
  // spaces (clients see an error object).
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

void HandleGeneration(HttpServer::Impl& server, const ApiDialect& dialect, const httplib::Request& req,
                      httplib::Response& res) {
  if (server.stopping) {
    LogRequest("POST", dialect.route, 503, nullptr, "server is shutting down");
    return SendError(res, ApiError{503, "service_unavailable", "server is shutting down"}, dialect.errors);
  }
  ParseResult parsed = dialect.parse(req.body);
  if (!parsed.ok()) {
    LogRequest("POST", dialect.route, 400, nullptr, parsed.error);
    return SendError(res, BadRequest(parsed.error), dialect.errors);
  }
  ParsedRequest request = std::move(*parsed.request);
  if (!request.previous_response_id.empty() && !ResumeConversation(server, request)) {
    const std::string error = "previous_response_id: no stored response '" + request.previous_response_id +
                              "' (the server keeps the last 256 stored responses; send the whole input instead)";
    LogRequest("POST", dialect.route, 400, nullptr, error);
    return SendError(res, BadRequest(error), dialect.errors);
  }
  if (server.options.prompt_normalize) request.normalized = NormalizeVolatilePrefix(request.input);
  if (!request.max_tokens_given) request.options.max_tokens = server.options.default_max_tokens;
  ResponseMeta meta = NewResponseMeta(dialect.id_prefix, server.ModelName(request.model));
  request.response_id = meta.id;
  std::unique_ptr<ResponseEncoder> encoder = dialect.make_encoder(request, meta);
  if (request.stream) return HandleStream(server, dialect, std::move(request), std::move(encoder), res);
  HandleBlocking(server, dialect, std::move(request), std::move(encoder), res);
}

}  // namespace

void HttpServer::Impl::RegisterGenerationRoutes() {
  for (const ApiDialect* dialect :
       {&kOpenAiChatDialect, &kOpenAiCompletionDialect, &kOpenAiResponsesDialect, &kAnthropicMessagesDialect}) {
    // Routes are the dialect's path without /v1 (RoutePattern makes it optional).
    const std::string path = std::string(dialect->route).substr(3);
    http.Post(RoutePattern(path), [this, dialect](const httplib::Request& req, httplib::Response& res) {
      HandleGeneration(*this, *dialect, req, res);
    });
  }
  // Anthropic's token counter: the prompt exactly as /v1/messages would render it.
  http.Post(RoutePattern("/messages/count_tokens"), [this](const httplib::Request& req, httplib::Response& res) {
    ParseResult parsed = ParseAnthropicCountTokensRequest(req.body);
    if (!parsed.ok()) return SendError(res, BadRequest(parsed.error), ErrorDialect::kAnthropic);
    if (options.prompt_normalize) NormalizeVolatilePrefix(parsed.request->input);
    try {
      const std::string prompt = service.RenderPrompt(parsed.request->input);
      const auto ids = service.Tokenize(prompt, /*parse_special=*/true);
      SendJson(res, 200, {{"input_tokens", static_cast<int64_t>(ids.size())}});
    } catch (const engine::RequestError& e) {
      SendError(res, BadRequest(e.what()), ErrorDialect::kAnthropic);
    }
  });
}

}  // namespace cairn::server
