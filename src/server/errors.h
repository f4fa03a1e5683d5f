// OpenAI-shaped error bodies: {"error": {"message", "type", "code"}}.
#pragma once

#include <string>

namespace cairn::server {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";
  std::string message;
};

// Error type names used in bodies, by HTTP status (400 invalid_request_error,
// 401 authentication_error, 404 not_found, 413 invalid_request_error,
// 500 server_error, 503 service_unavailable).
std::string ErrorTypeForStatus(int status);

ApiError BadRequest(std::string message);

// The JSON body text for an error. `code` repeats the status as a string
// (OpenAI sends short codes or null; clients key on type and status).
std::string ErrorBody(const ApiError& error);

}  // namespace cairn::server
