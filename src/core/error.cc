#include "core/error.h"

#include <cstdio>
#include <cstdlib>

namespace cairn {

void CheckFailed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "cairn: internal check failed: %s at %s:%d\n", condition, file, line);
  std::abort();
}

}  // namespace cairn
