// Internals shared by http_server.cc (lifecycle, middleware, small routes)
// and generation_routes.cc (chat/completions). Not part of the public API.
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "server/errors.h"
#include "server/http_metrics.h"
#include "server/http_server.h"
#include "server/response_store.h"

namespace cairn::server {

struct HttpServer::Impl {
  Impl(engine::GenerationService& service, ServerOptions options)
      : service(service), options(std::move(options)) {}

  engine::GenerationService& service;
  const ServerOptions options;
  engine::ServiceInfo info;         // read once at Start(): /health and /models never wait on the engine
  httplib::Server http;
  HttpMetrics metrics;
  // Responses API conversations (`store`, `previous_response_id`): the last
  // 256 responses, at most 64 MiB of JSON.
  ResponseStore responses{256, size_t{64} << 20};
  std::thread listener;
  int bound_port = 0;
  std::atomic<bool> stopping{false};
  // Lifecycle: started/stopped under lifecycle_mutex (Wait() sleeps on the
  // condition); stop_mutex serialises concurrent Stop() calls.
  std::mutex lifecycle_mutex;
  std::condition_variable lifecycle_changed;
  bool started = false;
  bool stopped = false;
  std::mutex stop_mutex;

  void RegisterMiddleware();
  void RegisterInfoRoutes();
  void RegisterGenerationRoutes();

  std::string ModelName(const std::string& requested) const;
};

// Responses shared by every route.
void SendJson(httplib::Response& res, int status, const engine::Json& body);
void SendError(httplib::Response& res, const ApiError& error, ErrorDialect dialect = ErrorDialect::kOpenAi);

// Regex for a route: optional /v1 prefix, optional trailing slashes.
std::string RoutePattern(const std::string& path);

}  // namespace cairn::server
