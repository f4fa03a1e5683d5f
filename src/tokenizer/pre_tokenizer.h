// Regex pre-tokenization: splits text into words before BPE.
//
// A pre-tokenizer is a list of regexes applied in sequence (as llama.cpp and
// HF's Sequence of Split(behavior=Isolated) do): each regex splits every
// current piece into its matches and the gaps between matches, and both become
// pieces. Each regex sees one piece at a time, so `$` and lookaheads stop at
// the piece boundary. Regexes run on PCRE2 (JIT, UTF + UCP); `\s` / `\S` are
// rewritten to Unicode White_Space (what Oniguruma, used by HF tokenizers,
// means by \s: it includes U+0085, which PCRE2's \s does not).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::tokenizer {

// The regex list for a `tokenizer.ggml.pre` id (regex facts from llama.cpp's
// llama-vocab.cpp). Throws cairn::Error naming the id when unknown.
std::vector<std::string> PreTokenizerPatterns(std::string_view pre);

// True when `pre` names a known pre-tokenizer.
bool IsKnownPreTokenizer(std::string_view pre);

// Rewrites \s and \S to explicit White_Space classes (exposed for tests).
std::string ExpandWhitespaceClasses(std::string_view pattern);

class PreTokenizer {
 public:
  // Compiles the patterns; throws cairn::Error with PCRE2's message and offset.
  explicit PreTokenizer(const std::vector<std::string>& patterns);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the pieces of `text` (views into it, in order, covering every byte
  // exactly once) to `out`. Invalid UTF-8 bytes never match a pattern item, so
  // they end up in gap pieces; nothing is dropped. Thread-safe.
  void Split(std::string_view text, std::vector<std::string_view>& out) const;

 private:
  struct Compiled;
  std::vector<std::unique_ptr<Compiled>> regexes_;
};

}  // namespace cairn::tokenizer
