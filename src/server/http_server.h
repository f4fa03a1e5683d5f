// The OpenAI-compatible HTTP server in front of a GenerationService.
//
// Routes (each also without /v1; trailing slash and query ignored):
//   POST /v1/chat/completions, POST /v1/completions (streaming SSE or not),
//   GET /v1/models, GET /health (no key needed), POST /tokenize,
//   POST /detokenize, GET /metrics, GET /cache, HEAD /, OPTIONS * (CORS).
// See docs/server.md for fields, extensions, errors and streaming.
#pragma once

#include <memory>

#include "engine/service.h"
#include "server/server_options.h"

namespace cairn::server {

class HttpServer {
 public:
  // `service` must outlive the server.
  HttpServer(engine::GenerationService& service, ServerOptions options);
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving on a background thread. Throws cairn::Error when
  // the address cannot be bound. Ignores SIGPIPE process-wide: a client that
  // disconnects mid-write must not kill the server.
  void Start();
  // The bound port (useful with options.port = 0).
  int port() const;
  // Blocks until Stop() (from another thread) has shut the server down.
  void Wait();
  // Stops accepting, cancels running generations at their next token, waits
  // for in-flight requests to finish. Idempotent.
  void Stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn::server
