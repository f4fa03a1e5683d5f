// Live-server helpers for the HTTP tests: a FakeService behind an HttpServer
// on a free loopback port, plus small SSE/JSON client helpers.
#pragma once

#include <httplib.h>

#include <cctype>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fake_service.h"
#include "server/http_server.h"

namespace cairn::server::testing {

using engine::Json;

inline bool Sanitized() {
  const char* value = std::getenv("CAIRN_SANITIZED");
  return value && std::string(value) == "1";
}

struct LiveServer {
  explicit LiveServer(ServerOptions options = {}) {
    options.host = "127.0.0.1";
    options.port = 0;
    server = std::make_unique<HttpServer>(service, options);
    server->Start();
  }
  ~LiveServer() { server->Stop(); }

  httplib::Client Client() const {
    httplib::Client client("127.0.0.1", server->port());
    client.set_read_timeout(30, 0);
    client.set_connection_timeout(5, 0);
    return client;
  }

  FakeService service;
  std::unique_ptr<HttpServer> server;
};

struct StreamReply {
  int status = 0;
  std::string raw;
  std::vector<std::string> data;  // payloads of "data: " frames, in order
  bool done = false;              // saw data: [DONE]
};

// POSTs and reads an SSE body. `stop_after` > 0 closes the connection after
// that many frames (a client walking away mid-stream).
inline StreamReply PostStream(int port, const std::string& path, const std::string& body,
                              size_t stop_after = 0, const httplib::Headers& headers = {}) {
  StreamReply reply;
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers = headers;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  std::string pending;
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    reply.raw.append(data, n);
    pending.append(data, n);
    for (size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
      std::string frame = pending.substr(0, end);
      pending.erase(0, end + 2);
      if (frame.rfind("data: ", 0) != 0) continue;
      std::string payload = frame.substr(6);
      if (payload == "[DONE]") reply.done = true;
      else reply.data.push_back(payload);
    }
    return stop_after == 0 || reply.data.size() < stop_after;
  };
  auto result = client.send(req);
  if (result) reply.status = result->status;
  return reply;
}

// What the fake answers for plain text.
inline std::string Upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

inline Json ChatBody(const std::string& user, Json extra = Json::object()) {
  Json body = {{"model", "test"}, {"messages", {{{"role", "user"}, {"content", user}}}}};
  for (auto& [key, value] : extra.items()) body[key] = value;
  return body;
}

}  // namespace cairn::server::testing
