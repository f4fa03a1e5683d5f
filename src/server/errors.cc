#include "server/errors.h"

#include <nlohmann/json.hpp>

namespace cairn::server {

ErrorDialect ErrorDialectForPath(std::string_view path) {
  if (path.starts_with("/v1/messages") || path.starts_with("/messages")) return ErrorDialect::kAnthropic;
  return ErrorDialect::kOpenAi;
}

std::string ErrorTypeForStatus(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found";
    case 500: return "server_error";
    case 503: return "service_unavailable";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

std::string AnthropicErrorType(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503:
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

ApiError BadRequest(std::string message) {
  return ApiError{400, "invalid_request_error", std::move(message)};
}

std::string ErrorBody(const ApiError& error, ErrorDialect dialect) {
  nlohmann::ordered_json body;
  if (dialect == ErrorDialect::kAnthropic) {
    body = {{"type", "error"}, {"error", {{"type", AnthropicErrorType(error.status)}, {"message", error.message}}}};
  } else {
    body = {{"error",
             {{"message", error.message}, {"type", error.type}, {"code", std::to_string(error.status)}}}};
  }
  // Messages can quote client bytes (field values), which may not be UTF-8.
  return body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace cairn::server
