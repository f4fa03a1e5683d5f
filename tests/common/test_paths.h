// Paths to repository and shared test data, overridable by environment
// (CAIRN_SHARED_DIR) so tests run from any checkout location.
#pragma once

#include <cstdlib>
#include <string>

namespace cairn::test {

inline std::string SourceDir() { return CAIRN_SOURCE_DIR; }

inline std::string SharedDir() {
  if (const char* env = std::getenv("CAIRN_SHARED_DIR")) return env;
  return CAIRN_SHARED_DIR;
}

}  // namespace cairn::test
