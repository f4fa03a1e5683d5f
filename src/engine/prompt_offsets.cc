#include "engine/prompt_offsets.h"

#include <algorithm>

namespace cairn::engine {

bool TokenByteOffsets(const tokenizer::Tokenizer& tok, std::span<const int32_t> tokens,
                      std::string_view text, size_t skip_leading, std::vector<size_t>& offsets) {
  offsets.assign(tokens.size() + 1, 0);
  // SentencePiece adds a "▁" (decoded as a space) to the first piece after a
  // special token; that byte is not in the text.
  const bool spm = tok.vocab().model == tokenizer::ModelKind::kSpm;
  size_t pos = 0;
  for (size_t i = skip_leading; i < tokens.size(); ++i) {
    offsets[i] = pos;
    const std::string bytes = tok.TokenToBytes(tokens[i], /*render_special=*/true);
    if (text.compare(pos, bytes.size(), bytes) == 0) {
      pos += bytes.size();
    } else if (spm && !bytes.empty() && bytes[0] == ' ' &&
               text.compare(pos, bytes.size() - 1, std::string_view(bytes).substr(1)) == 0) {
      pos += bytes.size() - 1;
    } else {
      return false;
    }
  }
  offsets[tokens.size()] = pos;
  return pos == text.size();
}

int64_t TokenAtByte(std::span<const size_t> offsets, size_t byte) {
  // Last token starting at or before `byte`... unless a token starts exactly
  // there (then that one). upper_bound - 1 gives both; empty tokens (offset
  // ties) resolve to the first of them.
  const size_t n = offsets.size() - 1;
  if (byte >= offsets[n]) return static_cast<int64_t>(n);
  const auto it = std::upper_bound(offsets.begin(), offsets.end() - 1, byte);
  if (it == offsets.begin()) return 0;
  int64_t index = (it - offsets.begin()) - 1;
  while (index > 0 && offsets[static_cast<size_t>(index - 1)] == offsets[static_cast<size_t>(index)]) {
    --index;
  }
  return index;
}

}  // namespace cairn::engine
