#include "spec/lookup_drafter.h"

#include <algorithm>

#include "core/error.h"

namespace cairn::spec {

size_t LookupDrafter::KeyHash::operator()(const Key& k) const {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int32_t t : k) {
    h ^= static_cast<uint32_t>(t) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
  }
  return static_cast<size_t>(h ^ (h >> 33));
}

LookupDrafter::LookupDrafter(LookupOptions options) : options_(options) {
  if (options_.n_min < 1 || options_.n_max > kMaxN || options_.n_min > options_.n_max) {
    Fail("lookup n-gram range [{}, {}] must lie in [1, {}]", options_.n_min, options_.n_max, kMaxN);
  }
}

LookupDrafter::Key LookupDrafter::MakeKey(size_t end, int n) const {
  Key key;
  key.fill(-1);
  for (int i = 0; i < n; ++i) key[i] = tokens_[end - n + i];
  return key;
}

void LookupDrafter::Append(int32_t token) {
  tokens_.push_back(token);
  const size_t end = tokens_.size();
  std::vector<Undo>& log = undo_.emplace_back();
  for (int n = options_.n_min; n <= options_.n_max && static_cast<size_t>(n) <= end; ++n) {
    const Key key = MakeKey(end, n);
    auto [it, inserted] = index_[n].try_emplace(key);
    log.push_back(Undo{n, key, it->second, !inserted});
    it->second.prev = it->second.last;
    it->second.last = static_cast<int64_t>(end);
  }
}

void LookupDrafter::Truncate(size_t n) {
  while (tokens_.size() > n) {
    const std::vector<Undo>& log = undo_.back();
    for (auto it = log.rbegin(); it != log.rend(); ++it) {
      if (it->existed) {
        index_[it->n][it->key] = it->before;
      } else {
        index_[it->n].erase(it->key);
      }
    }
    undo_.pop_back();
    tokens_.pop_back();
  }
}

std::vector<int32_t> LookupDrafter::QueryImpl(int max_k, int* match_len) const {
  *match_len = 0;
  const size_t T = tokens_.size();
  if (max_k <= 0) return {};
  for (int n = std::min<int>(options_.n_max, static_cast<int>(T)); n >= options_.n_min; --n) {
    const auto it = index_[n].find(MakeKey(T, n));
    if (it == index_[n].end()) continue;
    // The suffix itself ends at T; use the latest earlier occurrence.
    const int64_t e = it->second.last == static_cast<int64_t>(T) ? it->second.prev : it->second.last;
    if (e < 0) continue;
    // Extend the match backwards.
    int m = n;
    while (m < kMaxBackwardMatch && e - m - 1 >= 0 &&
           tokens_[static_cast<size_t>(e - m - 1)] == tokens_[T - static_cast<size_t>(m) - 1]) {
      ++m;
    }
    *match_len = m;
    size_t len = static_cast<size_t>(max_k);
    const bool long_ok = options_.long_cap > 0 && m >= options_.long_min_match &&
                         (!long_parked_ || base_rounds_while_parked_ >= 8);
    if (long_ok) len = std::max(len, static_cast<size_t>(std::min(options_.long_cap, 2 * m)));
    len = std::min(len, T - static_cast<size_t>(e));
    return std::vector<int32_t>(tokens_.begin() + e, tokens_.begin() + e + static_cast<int64_t>(len));
  }
  return {};
}

std::vector<int32_t> LookupDrafter::Query(int max_k) const {
  int m = 0;
  std::vector<int32_t> out = QueryImpl(max_k, &m);
  last_match_ = m;
  return out;
}

void LookupDrafter::Begin(std::span<const int32_t> fed, std::span<const float>, int32_t pending) {
  tokens_.clear();
  undo_.clear();
  for (auto& map : index_) map.clear();
  tokens_.reserve(fed.size() + 1024);
  for (int32_t t : fed) Append(t);
  Append(pending);
  last_proposed_ = 0;
  last_was_long_ = false;
  chopped_long_in_row_ = 0;
  long_parked_ = false;
  base_rounds_while_parked_ = 0;
}

void LookupDrafter::Propose(int max_k, std::vector<sampling::DraftToken>* drafts) {
  drafts->clear();
  ids_scratch_ = Query(max_k);
  last_proposed_ = static_cast<int>(ids_scratch_.size());
  last_was_long_ = last_proposed_ > max_k;
  if (long_parked_ && !last_was_long_ && last_proposed_ > 0) ++base_rounds_while_parked_;
  for (int32_t t : ids_scratch_) drafts->push_back(sampling::DraftToken{t, nullptr});
}

void LookupDrafter::NoteOutcome(int accepted) {
  if (!last_was_long_) return;
  if (2 * accepted < last_proposed_) {
    if (++chopped_long_in_row_ >= 2) {
      long_parked_ = true;
      base_rounds_while_parked_ = 0;
    }
  } else {
    chopped_long_in_row_ = 0;
    long_parked_ = false;
  }
}

void LookupDrafter::Accept(std::span<const int32_t> newly_fed, std::span<const float>, int32_t next_pending) {
  if (newly_fed.empty() || tokens_.empty() || newly_fed[0] != tokens_.back()) {
    Fail("LookupDrafter::Accept: newly fed tokens must start with the pending token");
  }
  NoteOutcome(static_cast<int>(newly_fed.size()) - 1);
  last_proposed_ = 0;
  last_was_long_ = false;
  for (size_t i = 1; i < newly_fed.size(); ++i) Append(newly_fed[i]);
  Append(next_pending);
}

}  // namespace cairn::spec
