#include "server/http_server.h"
#include "server/request_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>

#include "core/error.h"
#include "core/log.h"
#include "server/auth.h"
#include "server/request_parser.h"
#include "server/response_builder.h"
#include "server/server_impl.h"

namespace cairn::server {
namespace {

constexpr const char* kCorsAllowHeaders =
    "Authorization, Content-Type, x-api-key, anthropic-version, anthropic-beta, OpenAI-Beta, "
    "OpenAI-Organization, OpenAI-Project, X-Stainless-Lang, X-Stainless-Package-Version, "
    "X-Stainless-OS, X-Stainless-Arch, X-Stainless-Runtime, X-Stainless-Runtime-Version, "
    "X-Stainless-Retry-Count, X-Stainless-Timeout";

bool IsHealthPath(const std::string& path) { return RouteLabel(path) == "/health"; }

std::string DefaultMessage(const httplib::Request& req, int status, size_t max_body) {
  switch (status) {
    case 404: return "unknown route: " + req.method + " " + req.path;
    case 413: return fmt::format("request body too large (limit {} bytes)", max_body);
    case 414: return "request URI too long";
    default: return fmt::format("HTTP {}", status);
  }
}

}  // namespace

void SendJson(httplib::Response& res, int status, const engine::Json& body) {
  res.status = status;
  res.set_content(DumpJson(body), "application/json");
}

void SendError(httplib::Response& res, const ApiError& error, ErrorDialect dialect) {
  res.status = error.status;
  res.set_content(ErrorBody(error, dialect), "application/json");
}

std::string RoutePattern(const std::string& path) { return "(?:/v1)?" + path + "/*"; }

std::string HttpServer::Impl::ModelName(const std::string& requested) const {
  // One model at a time: the request's `model` is echoed back when given.
  return requested.empty() ? info.model_name : requested;
}

void HttpServer::Impl::RegisterMiddleware() {
  http.set_default_headers({{"Access-Control-Allow-Origin", "*"}});

  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "OPTIONS") {  // CORS preflight: never needs the key
      res.status = 204;
      res.set_header("Access-Control-Allow-Methods", "GET, POST, HEAD, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", kCorsAllowHeaders);
      res.set_header("Access-Control-Max-Age", "86400");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!options.api_key.empty() && !IsHealthPath(req.path) &&
        !IsAuthorized(options.api_key, req.get_header_value("Authorization"),
                      req.get_header_value("x-api-key"))) {
      SendError(res,
                ApiError{401, "authentication_error",
                         "invalid or missing API key (send 'Authorization: Bearer <key>' or 'x-api-key: <key>')"},
                ErrorDialectForPath(req.path));
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  // Every >= 400 without a body (unknown route, 413 from the body limit,
  // malformed HTTP) gets an OpenAI-shaped one.
  http.set_error_handler(httplib::Server::Handler([this](const httplib::Request& req,
                                                         httplib::Response& res) {
    if (!res.body.empty()) return;
    SendError(res,
              ApiError{res.status, ErrorTypeForStatus(res.status),
                       DefaultMessage(req, res.status, options.max_body_bytes)},
              ErrorDialectForPath(req.path));
  }));

  http.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string message = "unknown exception";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          message = e.what();
        } catch (...) {
        }
        LogWarn("{} {}: internal error: {}", req.method, req.path, message);
        SendError(res, ApiError{500, "server_error", message}, ErrorDialectForPath(req.path));
      });

  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    metrics.Count(req.method, req.path, res.status);
    // Generation routes log their own line, with token counts and speed.
    if (!LogsOwnRequestLine(req.path)) LogRequest(req.method, req.path, res.status, nullptr);
  });
}

void HttpServer::Impl::RegisterInfoRoutes() {
  // HEAD / is Claude Code's connectivity probe; HEAD is routed to GET handlers.
  http.Get("/+|/v1/*", [this](const httplib::Request&, httplib::Response& res) {
    SendJson(res, 200, {{"status", "ok"}, {"model", info.model_name}});
  });

  http.Get(RoutePattern("/health"), [this](const httplib::Request&, httplib::Response& res) {
    engine::Json body = {{"status", "ok"},
                         {"model", info.model_name},
                         {"architecture", info.architecture},
                         {"context_window", info.context_window}};
    if (info.settings.is_object()) {
      for (const auto& [key, value] : info.settings.items()) body[key] = value;
    }
    SendJson(res, 200, body);
  });

  http.Get(RoutePattern("/models"), [this](const httplib::Request&, httplib::Response& res) {
    engine::Json model = {{"id", info.model_name},
                          {"object", "model"},
                          {"created", 0},
                          {"owned_by", "cairn"},
                          {"meta",
                           {{"architecture", info.architecture},
                            {"context_window", info.context_window},
                            {"n_vocab", info.n_vocab},
                            {"size_bytes", info.model_bytes}}}};
    SendJson(res, 200, {{"object", "list"}, {"data", engine::Json::array({model})}});
  });

  http.Post(RoutePattern("/tokenize"), [this](const httplib::Request& req, httplib::Response& res) {
    engine::Json body;
    std::string error;
    if (!ParseJsonObject(req.body, body, error)) return SendError(res, BadRequest(error));
    const char* key = body.contains("content") ? "content" : "text";
    if (!body.contains(key) || !body[key].is_string()) {
      return SendError(res, BadRequest("content: is required and must be a string"));
    }
    bool parse_special = true;
    bool with_pieces = false;
    for (auto [name, target] : {std::pair{"parse_special", &parse_special},
                                std::pair{"with_pieces", &with_pieces}}) {
      if (auto it = body.find(name); it != body.end() && !it->is_null()) {
        if (!it->is_boolean()) return SendError(res, BadRequest(std::string(name) + ": must be a boolean"));
        *target = it->get<bool>();
      }
    }
    // add_special is accepted but not yet honoured: the service's Tokenize
    // has no flag for it (see docs/server.md).
    std::vector<int32_t> ids = service.Tokenize(body[key].get<std::string>(), parse_special);
    engine::Json tokens = engine::Json::array();
    for (int32_t id : ids) {
      if (with_pieces) tokens.push_back({{"id", id}, {"piece", service.Detokenize({id})}});
      else tokens.push_back(id);
    }
    SendJson(res, 200, {{"tokens", tokens}});
  });

  http.Post(RoutePattern("/detokenize"), [this](const httplib::Request& req, httplib::Response& res) {
    engine::Json body;
    std::string error;
    if (!ParseJsonObject(req.body, body, error)) return SendError(res, BadRequest(error));
    auto it = body.find("tokens");
    if (it == body.end() || !it->is_array()) {
      return SendError(res, BadRequest("tokens: is required and must be an array of token ids"));
    }
    std::vector<int32_t> ids;
    for (size_t i = 0; i < it->size(); ++i) {
      const auto& id = (*it)[i];
      bool in_range = id.is_number_integer() && id.get<int64_t>() >= 0 &&
                      (info.n_vocab <= 0 ? id.get<int64_t>() <= INT32_MAX
                                         : id.get<int64_t>() < info.n_vocab);
      if (!in_range) {
        return SendError(res, BadRequest(fmt::format("tokens[{}]: not a token id of this model", i)));
      }
      ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
    SendJson(res, 200, {{"content", service.Detokenize(ids)}});
  });

  http.Get(RoutePattern("/metrics"), [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(service.MetricsText() + metrics.Text(), "text/plain; version=0.0.4");
  });

  http.Get(RoutePattern("/cache"), [this](const httplib::Request&, httplib::Response& res) {
    SendJson(res, 200, service.CacheListing());
  });

  // Empties the RAM tier and deletes the disk tier's pack files. A request in
  // flight keeps the blocks it restored and inserts its own path when done.
  http.Delete(RoutePattern("/cache"), [this](const httplib::Request&, httplib::Response& res) {
    service.ClearCache();
    SendJson(res, 200, {{"cleared", true}});
  });

  http.Delete("(?:/v1)?/cache/entries/([^/]*)/*", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches.size() > 1 ? std::string(req.matches[1]) : std::string();
    if (id.size() != 32 || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return SendError(res, BadRequest("entry id must be 32 lowercase hex digits (the id in GET /cache)"));
    }
    if (!service.RemoveCacheEntry(id)) {
      ApiError e;
      e.status = 404;
      e.type = ErrorTypeForStatus(404);
      e.message = "no cache entry " + id;
      return SendError(res, e);
    }
    SendJson(res, 200, {{"deleted", id}});
  });
}

HttpServer::HttpServer(engine::GenerationService& service, ServerOptions options)
    : impl_(std::make_unique<Impl>(service, std::move(options))) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Start() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.lifecycle_mutex);
    if (s.started) Fail("HttpServer::Start called twice");
    s.started = true;
  }
  // A write to a socket the client closed raises SIGPIPE, whose default
  // action kills the process; httplib does not pass MSG_NOSIGNAL.
  std::signal(SIGPIPE, SIG_IGN);
  s.info = s.service.Info();

  int threads = std::max(4, s.options.threads);
  s.http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  s.http.set_payload_max_length(s.options.max_body_bytes);
  s.http.set_read_timeout(s.options.request_timeout_seconds, 0);
  s.http.set_write_timeout(s.options.request_timeout_seconds, 0);
  s.http.set_keep_alive_timeout(5);
  s.RegisterMiddleware();
  s.RegisterInfoRoutes();
  s.RegisterGenerationRoutes();

  if (s.options.port == 0) {
    s.bound_port = s.http.bind_to_any_port(s.options.host);
    if (s.bound_port <= 0) Fail("cannot bind {} on a free port", s.options.host);
  } else {
    if (!s.http.bind_to_port(s.options.host, s.options.port)) {
      Fail("cannot bind {}:{} (in use, or not a local address?)", s.options.host, s.options.port);
    }
    s.bound_port = s.options.port;
  }
  s.listener = std::thread([&s] { s.http.listen_after_bind(); });
}

int HttpServer::port() const { return impl_->bound_port; }

void HttpServer::Wait() {
  Impl& s = *impl_;
  std::unique_lock lock(s.lifecycle_mutex);
  s.lifecycle_changed.wait(lock, [&] { return !s.started || s.stopped; });
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  std::lock_guard stop_lock(s.stop_mutex);  // a second caller waits for the first
  if (s.stopped || !s.started) return;
  // `stopping` makes generation callbacks return false, so handlers blocked
  // in Generate return at the engine's next token; http.stop() then closes
  // the listener and joins the worker pool.
  s.stopping = true;
  s.http.stop();
  if (s.listener.joinable()) s.listener.join();
  {
    std::lock_guard lock(s.lifecycle_mutex);
    s.stopped = true;
  }
  s.lifecycle_changed.notify_all();
}

}  // namespace cairn::server
