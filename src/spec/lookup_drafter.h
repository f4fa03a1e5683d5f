// Prompt lookup (n-gram) drafting: no model, near-zero draft cost
// (mlx-dspark-spec.md §4.4, hybrid-architectures.md §3.3).
//
// The drafter keeps the committed token sequence T (prompt + output,
// including the pending token) and, for every n in [n_min, n_max], a map from
// each n-gram to its two most recent end positions. A query takes the current
// suffix of length n (longest first), skips the suffix's own occurrence and
// uses the latest earlier one at end position e: the draft is T[e, e + len),
// clipped to the end of T (never padded).
//
// Match-scaled long drafts: the match is extended backwards token by token
// (up to kMaxBackwardMatch); when the matched context m >= long_min_match the
// draft may be up to min(long_cap, 2m) tokens instead of max_k. A gate parks
// long drafts after two consecutive long drafts accepted at less than half
// their length and allows one long probe after 8 base-length rounds.
//
// Cost: Append is O(n_max) hash-map updates; a query is O(n_max) look-ups
// plus the backward extension. Rollback: every Append logs what it changed,
// so Truncate(n) restores the index exactly to the state after n tokens. The
// index never sees unverified drafts (Accept appends committed tokens only),
// so rounds never need Truncate; the engine uses it when a stop discards a
// block's tail.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "spec/drafter.h"

namespace cairn::spec {

struct LookupOptions {
  int n_min = 1;          // shortest suffix tried
  int n_max = 4;          // longest suffix tried (<= kMaxN)
  int long_cap = 32;      // longest match-scaled draft; 0 = off
  int long_min_match = 8; // matched context needed for a long draft
};

class LookupDrafter : public Drafter {
 public:
  static constexpr int kMaxN = 4;
  static constexpr int kMaxBackwardMatch = 64;

  explicit LookupDrafter(LookupOptions options = {});

  std::string name() const override { return "lookup"; }
  void Begin(std::span<const int32_t> fed, std::span<const float> fed_hidden, int32_t pending) override;
  void Propose(int max_k, std::vector<sampling::DraftToken>* drafts) override;
  void Accept(std::span<const int32_t> newly_fed, std::span<const float> newly_fed_hidden,
              int32_t next_pending) override;

  // Direct use (tests, engine): the committed sequence and its index.
  void Append(int32_t token);
  void Truncate(size_t n);
  const std::vector<int32_t>& tokens() const { return tokens_; }
  // The drafts for the current sequence (what Propose would return), as ids.
  std::vector<int32_t> Query(int max_k) const;
  // Length of the last match's backward-extended context (diagnostics).
  int last_match_length() const { return last_match_; }

 private:
  using Key = std::array<int32_t, kMaxN>;
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Ends {
    int64_t last = -1;  // most recent end position (exclusive index after the n-gram)
    int64_t prev = -1;  // the one before
  };
  struct Undo {
    int n;
    Key key;
    Ends before;
    bool existed;
  };

  Key MakeKey(size_t end, int n) const;
  std::vector<int32_t> QueryImpl(int max_k, int* match_len) const;
  void NoteOutcome(int accepted);

  LookupOptions options_;
  std::vector<int32_t> tokens_;
  std::array<std::unordered_map<Key, Ends, KeyHash>, kMaxN + 1> index_;  // by n
  std::vector<std::vector<Undo>> undo_;  // per appended token
  mutable int last_match_ = 0;

  // Long-draft gate.
  int last_proposed_ = 0;
  bool last_was_long_ = false;
  int chopped_long_in_row_ = 0;
  bool long_parked_ = false;
  int base_rounds_while_parked_ = 0;
  std::vector<int32_t> ids_scratch_;
};

}  // namespace cairn::spec
