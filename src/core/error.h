// Error reporting for Cairn.
//
// Errors that cross a layer boundary (bad file, bad request, bad template) are
// thrown as cairn::Error with a message a user can act on. Hot loops never throw;
// they validate their inputs once, up front. Callers at the edges (CLI, HTTP
// handlers) catch cairn::Error and print/return the message.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace cairn {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws cairn::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void Fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// Programming-error check that stays on in release builds: aborts with file:line.
[[noreturn]] void CheckFailed(const char* condition, const char* file, int line);

}  // namespace cairn

// The one project macro for invariants (needs the stringized condition and line).
#define CAIRN_CHECK(condition) \
  ((condition) ? (void)0 : ::cairn::CheckFailed(#condition, __FILE__, __LINE__))
