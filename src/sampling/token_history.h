// The token context that penalties look at: prompt tokens, then generated
// tokens, with per-token counts of the generated ones (for OpenAI presence and
// frequency penalties). Generated tokens can be rolled back, so speculative
// verification can append drafts 0..i-1 before computing row i's distribution
// and drop them again on rejection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace cairn::sampling {

class TokenHistory {
 public:
  TokenHistory() = default;
  explicit TokenHistory(std::span<const int32_t> prompt) : tokens_(prompt.begin(), prompt.end()),
                                                           prompt_size_(prompt.size()) {}

  // Appends one generated token.
  void Append(int32_t token);
  // Keeps the first `num_generated` generated tokens, drops the rest.
  void TruncateGenerated(size_t num_generated);

  // Prompt followed by generated tokens.
  std::span<const int32_t> tokens() const { return tokens_; }
  std::span<const int32_t> generated() const {
    return std::span<const int32_t>(tokens_).subspan(prompt_size_);
  }
  size_t prompt_size() const { return prompt_size_; }
  size_t generated_size() const { return tokens_.size() - prompt_size_; }

  // token -> occurrences among generated tokens (entries are > 0).
  const std::unordered_map<int32_t, int32_t>& generated_counts() const { return counts_; }

 private:
  std::vector<int32_t> tokens_;
  size_t prompt_size_ = 0;
  std::unordered_map<int32_t, int32_t> counts_;
};

}  // namespace cairn::sampling
