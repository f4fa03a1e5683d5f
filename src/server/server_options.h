// Settings of the OpenAI-compatible HTTP server (`cairn serve` fills them from flags).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cairn::server {

// Answer length of a request that sets no max_tokens / max_output_tokens
// (the default of --default-max-tokens).
inline constexpr int kDefaultAnswerTokens = 8192;

struct ServerOptions {
  // Loopback by default: the server has no TLS, and an API key is optional.
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0 = pick a free port (see HttpServer::port())
  std::string api_key;               // empty = no authentication
  size_t max_body_bytes = size_t{32} << 20;  // larger bodies get 413
  // HTTP worker threads. Generation is serialised in the engine, but every
  // waiting generation request holds one worker, and /health, /metrics and
  // /v1/models must still answer while they wait, so keep this well above the
  // expected number of concurrent clients.
  int threads = 16;
  // Streams send an empty chunk after this many idle seconds (long prefill,
  // queueing) so client idle timers do not fire.
  int keepalive_seconds = 15;
  // Socket read/write timeout in seconds for request bodies and writes.
  int request_timeout_seconds = 600;
  // Remove known per-request volatile text early in prompts (Claude Code's
  // billing-header line) so a session's requests share their prefix
  // (server/prompt_normalize.h). `--no-prompt-normalize` turns it off.
  bool prompt_normalize = true;
  // Answer limit of requests that set none (`--default-max-tokens`).
  int default_max_tokens = kDefaultAnswerTokens;
};

}  // namespace cairn::server
