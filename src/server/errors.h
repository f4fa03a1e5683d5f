// Error bodies in each API's shape, one mapping from (status, message):
//   OpenAI:    {"error": {"message", "type", "code"}}
//   Anthropic: {"type": "error", "error": {"type", "message"}}
#pragma once

#include <string>
#include <string_view>

namespace cairn::server {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";  // OpenAI type name; Anthropic's is derived from status
  std::string message;
};

enum class ErrorDialect { kOpenAi, kAnthropic };

// The dialect of the API a path belongs to (/v1/messages... is Anthropic's).
ErrorDialect ErrorDialectForPath(std::string_view path);

// OpenAI error type names, by HTTP status (400 invalid_request_error,
// 401 authentication_error, 404 not_found, 413 invalid_request_error,
// 500 server_error, 503 service_unavailable).
std::string ErrorTypeForStatus(int status);

// Anthropic error type names, by HTTP status (400 invalid_request_error,
// 401 authentication_error, 403 permission_error, 404 not_found_error,
// 413 request_too_large, 429 rate_limit_error, 500 api_error, 503/529 overloaded_error).
std::string AnthropicErrorType(int status);

ApiError BadRequest(std::string message);

// The JSON body text for an error. In OpenAI's shape `code` repeats the
// status as a string (OpenAI sends short codes or null; clients key on type
// and status).
std::string ErrorBody(const ApiError& error, ErrorDialect dialect = ErrorDialect::kOpenAi);

}  // namespace cairn::server
