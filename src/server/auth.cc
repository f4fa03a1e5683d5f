#include "server/auth.h"

#include <cctype>

namespace cairn::server {

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool IsAuthorized(std::string_view expected, std::string_view authorization_header,
                  std::string_view x_api_key_header) {
  if (expected.empty()) return true;
  bool ok = false;
  // The scheme name is case-insensitive (RFC 7235).
  constexpr std::string_view kBearer = "bearer ";
  if (authorization_header.size() > kBearer.size()) {
    bool scheme = true;
    for (size_t i = 0; i < kBearer.size(); ++i) {
      scheme &= std::tolower(static_cast<unsigned char>(authorization_header[i])) == kBearer[i];
    }
    std::string_view token = authorization_header.substr(kBearer.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    ok |= scheme && ConstantTimeEquals(token, expected);
  }
  if (!x_api_key_header.empty()) ok |= ConstantTimeEquals(x_api_key_header, expected);
  return ok;
}

}  // namespace cairn::server
