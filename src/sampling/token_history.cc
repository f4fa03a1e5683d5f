#include "sampling/token_history.h"

#include "core/error.h"

namespace cairn::sampling {

void TokenHistory::Append(int32_t token) {
  tokens_.push_back(token);
  ++counts_[token];
}

void TokenHistory::TruncateGenerated(size_t num_generated) {
  CAIRN_CHECK(num_generated <= generated_size());
  while (generated_size() > num_generated) {
    const int32_t token = tokens_.back();
    tokens_.pop_back();
    auto it = counts_.find(token);
    if (--it->second == 0) counts_.erase(it);
  }
}

}  // namespace cairn::sampling
