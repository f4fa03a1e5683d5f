// One log line per HTTP request, as llama-server prints one: method, route,
// status, and for generations the prompt / cached tokens, TTFT and decode speed.
//   POST /v1/chat/completions 200 | prompt 9951 tok, cached 9921 | ttft 0.41 s | 64 tok, 31.2 tok/s | stop
#pragma once

#include <string>
#include <string_view>

#include "engine/service.h"

namespace cairn::server {

// The line for a finished generation (status 200, or the status its late
// error got), or for a failed request when result is null (error: why).
std::string RequestLogLine(std::string_view method, std::string_view route, int status,
                           const engine::GenerationResult* result, std::string_view error = {});

// Logs the line at info level.
void LogRequest(std::string_view method, std::string_view route, int status,
                const engine::GenerationResult* result, std::string_view error = {});

// True for the routes that log their own line (with token counts) instead of
// the generic one the HTTP logger writes.
bool LogsOwnRequestLine(std::string_view path);

}  // namespace cairn::server
