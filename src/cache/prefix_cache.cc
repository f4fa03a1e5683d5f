// PrefixCache: construction and Lookup (the read path).
#include "cache/prefix_cache.h"

#include <algorithm>
#include <mutex>

#include "cache/miss_reason.h"
#include "core/error.h"

namespace cairn::cache {
namespace {

// Up to `max` cached tokens following `offset` in `node`, continuing down the
// most recently used children (what the cache "expected" after a divergence).
std::vector<Token> CachedContinuation(const TrieNode* node, int64_t offset, size_t max) {
  std::vector<Token> out;
  while (node != nullptr && out.size() < max) {
    for (size_t i = static_cast<size_t>(offset); i < node->tokens.size() && out.size() < max; ++i) {
      out.push_back(node->tokens[i]);
    }
    const TrieNode* next = nullptr;
    for (const auto& child : node->children) {
      if (next == nullptr || child->last_use.load() > next->last_use.load()) next = child.get();
    }
    node = next;
    offset = 0;
  }
  return out;
}

}  // namespace

PrefixCache::PrefixCache(const PrefixCacheConfig& config)
    : config_(config),
      root_(std::make_unique<TrieNode>()),
      budget_bytes_(config.budget_bytes),
      checkpoint_budget_bytes_(config.checkpoint_budget_bytes()) {
  config_.Validate();
  root_->leaves = 0;
}

PrefixCache::~PrefixCache() { ReleaseAll(EvictReason::kClear); }

LookupResult PrefixCache::Lookup(const LookupRequest& request) {
  LookupResult r;
  const std::span<const Token> tokens = request.tokens;
  const int64_t n = static_cast<int64_t>(tokens.size());
  lookups_.fetch_add(1, std::memory_order_relaxed);
  prompt_tokens_.fetch_add(n, std::memory_order_relaxed);
  if (!config_.enabled) {
    r.reason = "miss: the prefix cache is disabled (--no-prefix-cache)";
    hits_[static_cast<int>(HitKind::kMiss)].fetch_add(1, std::memory_order_relaxed);
    return r;
  }

  std::shared_lock lock(mu_);
  const uint64_t now = Tick();
  const int64_t block = config_.block_tokens;

  // Walk full blocks by hash; at the first block without an exact child, scan
  // every child for the longest common prefix (the divergence level).
  std::vector<const TrieNode*> path;  // fully matched nodes, path[i] holds block i
  path.reserve(static_cast<size_t>(n / block + 1));
  const TrieNode* node = root_.get();
  int64_t pos = 0;
  const TrieNode* div_child = nullptr;
  int64_t div_common = 0;
  // Hybrid: the checkpoint reaching deepest into this prompt (position <=
  // lcp and < n). A reply tail reaches past its position as far as its
  // logged tokens match the prompt's (capped by lcp after the walk: the KV of
  // a tail's later blocks may have been evicted); on equal reach the plain
  // checkpoint wins (nothing to replay).
  const TrieNode* best_node = nullptr;
  const CheckpointEntry* best = nullptr;
  int64_t best_reach = 0;
  auto consider = [&](const TrieNode* holder, int64_t limit) {
    for (const CheckpointEntry& c : holder->checkpoints) {
      if (c.position > limit || c.position >= n) break;  // ascending positions
      int64_t reach = c.position;
      const std::vector<int32_t>& logged = c.snapshot->replay_tokens();
      if (!logged.empty()) {
        reach += CommonPrefix(logged, tokens.subspan(static_cast<size_t>(c.position)));
        reach = std::min(reach, n - 1);
      }
      if (best == nullptr || reach > best_reach ||
          (reach == best_reach && c.snapshot->replay_tokens().size() < best->snapshot->replay_tokens().size())) {
        best = &c;
        best_node = holder;
        best_reach = reach;
      }
    }
  };
  while (pos < n) {
    const int64_t want = std::min(block, n - pos);
    const std::span<const Token> segment = tokens.subspan(pos, want);
    const TrieNode* exact = nullptr;
    if (want == block) {
      const uint64_t hash = HashTokens(segment);
      for (const auto& child : node->children) {
        if (child->hash == hash && child->tokens.size() == static_cast<size_t>(block) &&
            std::equal(segment.begin(), segment.end(), child->tokens.begin())) {
          exact = child.get();
          break;
        }
      }
    }
    if (exact != nullptr) {
      path.push_back(exact);
      if (config_.hybrid) {
        consider(exact, exact->end());
        // A sibling sharing the first tokens of this block may hold a
        // checkpoint inside that shared part (it is the same state).
        for (const auto& child : node->children) {
          if (child.get() != exact && !child->checkpoints.empty()) {
            consider(child.get(), pos + CommonPrefix(child->tokens, segment));
          }
        }
      }
      pos += block;
      node = exact;
      continue;
    }
    for (const auto& child : node->children) {
      const int64_t common = CommonPrefix(child->tokens, segment);
      if (common > div_common ||
          (common == div_common && common > 0 && child->last_use.load() > div_child->last_use.load())) {
        div_common = common;
        div_child = child.get();
      }
      if (config_.hybrid && common > 0) consider(child.get(), pos + common);
    }
    break;
  }
  r.lcp = pos + div_common;
  for (const TrieNode* p : path) {
    for (const CheckpointEntry& c : p->checkpoints) r.cached_checkpoints.push_back(c.position);
  }
  if (div_child != nullptr) {
    for (const CheckpointEntry& c : div_child->checkpoints) {
      if (c.position <= r.lcp) r.cached_checkpoints.push_back(c.position);
    }
  }

  // Choose the reuse point and the node holding its last block.
  const TrieNode* tail = nullptr;  // node of the last reused block when beyond `path`
  const char* checkpoint_note = "";
  if (!config_.hybrid) {
    const int64_t reuse = std::min(r.lcp, n - 1);
    if (reuse >= config_.min_reuse) {
      r.kind = HitKind::kTrim;
      r.reuse_tokens = reuse;
      tail = div_child;
    }
  } else if (best != nullptr && std::min(best_reach, r.lcp) >= config_.min_reuse) {
    r.reuse_tokens = std::min(best_reach, r.lcp);
    r.replay_tokens = r.reuse_tokens - best->position;
    r.kind = r.replay_tokens > 0 ? HitKind::kTail : HitKindOf(best->kind);
    r.snapshot = best->snapshot;
    // The node holding the last reused block, when it lies beyond `path`:
    // the checkpoint's own, or for a tail replayed into the next block, the
    // divergence-level child (which holds the prompt's tokens up to lcp).
    tail = best_node->start / block == (r.reuse_tokens - 1) / block ? best_node : div_child;
    best->last_use.Max(now);
    best->hits.Add(1);
  } else {
    checkpoint_note = best == nullptr ? "no recurrent checkpoint lies at or below the divergence point"
                                      : "the only checkpoints at or below it are under min_reuse";
  }

  if (r.reuse_tokens > 0) {
    const size_t n_blocks = static_cast<size_t>((r.reuse_tokens + block - 1) / block);
    r.blocks.reserve(n_blocks);
    for (size_t i = 0; i < n_blocks && i < path.size(); ++i) {
      path[i]->last_use.Max(now);
      r.blocks.push_back(path[i]->block);
    }
    if (r.blocks.size() < n_blocks) {
      CAIRN_CHECK(tail != nullptr && r.blocks.size() + 1 == n_blocks);
      tail->last_use.Max(now);
      r.blocks.push_back(tail->block);
      tail->hits.Add(1);
    } else {
      path[n_blocks - 1]->hits.Add(1);
    }
  }

  // Diagnostics (the cached side of the divergence, for the reason text).
  LookupOutcome outcome;
  outcome.cache_empty = root_->children.empty();
  outcome.reusable_limit = std::min(r.lcp, n - 1);
  outcome.checkpoint_note = checkpoint_note;
  std::vector<Token> cached_next;
  if (div_child != nullptr) {
    cached_next = CachedContinuation(div_child, div_common, 8);
  } else if (!node->children.empty()) {
    cached_next = CachedContinuation(node, static_cast<int64_t>(node->tokens.size()), 8);
  }
  lock.unlock();
  outcome.cached_next = cached_next;
  DescribeLookup(config_, request, outcome, &r);

  hits_[static_cast<int>(r.kind)].fetch_add(1, std::memory_order_relaxed);
  reused_tokens_.fetch_add(r.reuse_tokens, std::memory_order_relaxed);
  return r;
}

}  // namespace cairn::cache
