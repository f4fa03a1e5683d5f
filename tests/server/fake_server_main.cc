// cairn_fake_server: the HTTP server in front of the deterministic
// FakeService, for the Python end-to-end tests when no real model is built.
//   cairn_fake_server [--host H] [--port N] [--api-key K] [--keepalive S] [--max-body-mb N]
// Prints "listening on http://HOST:PORT" once ready; SIGINT/SIGTERM stop it.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fake_service.h"
#include "server/http_server.h"

int main(int argc, char** argv) {
  cairn::server::ServerOptions options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--host") options.host = value;
    else if (flag == "--port") options.port = std::atoi(value.c_str());
    else if (flag == "--api-key") options.api_key = value;
    else if (flag == "--keepalive") options.keepalive_seconds = std::atoi(value.c_str());
    else if (flag == "--max-body-mb") options.max_body_bytes = std::strtoull(value.c_str(), nullptr, 10) << 20;
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  // Block the stop signals in every thread; the main thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  cairn::server::testing::FakeService service;
  cairn::server::HttpServer server(service, options);
  try {
    server.Start();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cairn_fake_server: %s\n", e.what());
    return 1;
  }
  std::printf("listening on http://%s:%d\n", options.host.c_str(), server.port());
  std::fflush(stdout);
  int signal = 0;
  sigwait(&signals, &signal);
  std::fprintf(stderr, "cairn_fake_server: signal %d, stopping\n", signal);
  server.Stop();
  return 0;
}
