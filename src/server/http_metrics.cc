#include "server/http_metrics.h"

#include <fmt/format.h>

#include <array>
#include <tuple>

namespace cairn::server {

std::string RouteLabel(std::string_view path) {
  if (auto q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path == "/v1") path = "/";
  if (path.substr(0, 4) == "/v1/") path.remove_prefix(3);
  static constexpr std::array<std::string_view, 9> kRoutes = {
      "/", "/chat/completions", "/completions", "/models", "/health",
      "/tokenize", "/detokenize", "/metrics", "/cache"};
  for (auto route : kRoutes) {
    if (path == route) return std::string(route);
  }
  return "other";
}

void HttpMetrics::Count(const std::string& method, std::string_view path, int status) {
  // Methods are client-chosen strings too: keep the label set bounded.
  std::string m = (method == "GET" || method == "POST" || method == "DELETE" || method == "HEAD" || method == "OPTIONS")
                      ? method : "other";
  std::lock_guard lock(mutex_);
  ++requests_[{RouteLabel(path), m, status}];
}

std::string HttpMetrics::Text() const {
  std::string out =
      "# HELP cairn_http_requests_total HTTP requests answered, by route, method and status.\n"
      "# TYPE cairn_http_requests_total counter\n";
  std::lock_guard lock(mutex_);
  for (const auto& [key, count] : requests_) {
    const auto& [route, method, status] = key;
    out += fmt::format("cairn_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{}\"}} {}\n",
                       route, method, status, count);
  }
  return out;
}

}  // namespace cairn::server
