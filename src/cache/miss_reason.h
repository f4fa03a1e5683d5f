// Human-readable explanation of a partial hit or a miss (internal).
#pragma once

#include <span>

#include "cache/cache_config.h"
#include "cache/cache_types.h"

namespace cairn::cache {

struct LookupOutcome {
  bool cache_empty = false;
  int64_t reusable_limit = 0;          // min(lcp, n - 1): the most any hit could reuse
  std::span<const Token> cached_next;  // cached tokens right after lcp on the best branch
  const char* checkpoint_note = "";    // hybrid: why no deeper checkpoint was usable
};

// Fills result->reason and result->divergence from the lookup's outcome.
// Leaves the reason empty on a full hit (reuse == prompt length - 1).
void DescribeLookup(const PrefixCacheConfig& config, const LookupRequest& request,
                    const LookupOutcome& outcome, LookupResult* result);

}  // namespace cairn::cache
