// The server's own Prometheus counters (HTTP requests by route and status),
// appended to the engine's metrics on GET /metrics.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace cairn::server {

// Maps a request path to a bounded route label: the /v1 prefix, trailing
// slashes and the query are dropped; paths that are not routes become
// "other" (so scanners cannot blow up the label set).
std::string RouteLabel(std::string_view path);

class HttpMetrics {
 public:
  void Count(const std::string& method, std::string_view path, int status);
  // Prometheus text exposition (cairn_http_requests_total{route,method,status}).
  std::string Text() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
};

}  // namespace cairn::server
