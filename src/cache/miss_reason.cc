#include "cache/miss_reason.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace cairn::cache {
namespace {

constexpr int64_t kSnippetTokens = 8;
constexpr size_t kSnippetChars = 48;

// One-line, bounded rendering of a few tokens (newlines escaped).
std::string Snippet(const DetokenizeFn& detokenize, std::span<const Token> tokens) {
  std::string text;
  if (detokenize) {
    text = detokenize(tokens);
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) text += fmt::format("{}{}", i ? " " : "#", tokens[i]);
  }
  std::string out;
  for (char c : text) {
    if (out.size() >= kSnippetChars) {
      out += "...";
      break;
    }
    if (c == '\n') {
      out += "\\n";
    } else if (c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void DescribeLookup(const PrefixCacheConfig& config, const LookupRequest& request,
                    const LookupOutcome& outcome, LookupResult* r) {
  const auto& tokens = request.tokens;
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t lcp = r->lcp;

  // Where and why the prompt left the cached path.
  std::string where;
  if (outcome.cache_empty) {
    where = "the cache is empty";
  } else if (lcp < n && !outcome.cached_next.empty()) {
    Divergence& d = r->divergence;
    d.position = lcp;
    for (size_t i = 0; i < request.messages.size(); ++i) {
      if (request.messages[i].position > lcp) break;
      d.message_index = static_cast<int>(i);
      d.role = request.messages[i].role;
    }
    const int64_t take = std::min(kSnippetTokens, n - lcp);
    d.prompt_text = Snippet(request.detokenize, tokens.subspan(lcp, take));
    d.cached_text = Snippet(request.detokenize,
                            outcome.cached_next.first(std::min<size_t>(kSnippetTokens, outcome.cached_next.size())));
    if (d.message_index >= 0) {
      where = fmt::format("prompt diverged from the cached prefix at token {} (message {}, {}): prompt \"{}\" vs "
                          "cached \"{}\"",
                          lcp, d.message_index, ToString(d.role), d.prompt_text, d.cached_text);
    } else {
      where = fmt::format("prompt diverged from the cached prefix at token {}: prompt \"{}\" vs cached \"{}\"", lcp,
                          d.prompt_text, d.cached_text);
    }
  } else if (lcp < n) {
    where = fmt::format("the cached path ends at token {}; the rest of the prompt is new", lcp);
  } else {
    where = "the whole prompt is cached";
  }

  if (r->kind == HitKind::kMiss) {
    if (lcp < config.min_reuse) {
      r->reason = fmt::format("miss: {} shared tokens is below min_reuse ({}); {}", lcp, config.min_reuse, where);
    } else {
      r->reason = fmt::format("miss: {} tokens shared but {}; {}", lcp, outcome.checkpoint_note, where);
    }
  } else if (r->reuse_tokens < outcome.reusable_limit) {
    r->reason = fmt::format("partial: reused {} of {} shared tokens{}; {}", r->reuse_tokens, lcp,
                            config.hybrid ? fmt::format(" (deepest usable checkpoint: {} at {})",
                                                        ToString(r->kind), r->reuse_tokens)
                                          : std::string(),
                            where);
  } else if (r->reuse_tokens < n - 1) {
    r->reason = fmt::format("partial: reused {} tokens; {}", r->reuse_tokens, where);
  }
}

}  // namespace cairn::cache
