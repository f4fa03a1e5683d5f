#include "server/errors.h"

#include <nlohmann/json.hpp>

namespace cairn::server {

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

ApiError BadRequest(std::string message) {
  return ApiError{400, "invalid_request_error", std::move(message)};
}

std::string ErrorBody(const ApiError& error) {
  nlohmann::ordered_json body = {
      {"error",
       {{"message", error.message}, {"type", error.type}, {"code", std::to_string(error.status)}}}};
  // Messages can quote client bytes (field values), which may not be UTF-8.
  return body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace cairn::server
