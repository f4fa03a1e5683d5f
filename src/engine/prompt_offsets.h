// Mapping between byte offsets in a rendered prompt and token positions.
//
// The tokenizer splits text at special tokens and encodes the pieces between
// them independently (tokenizer.h), so token boundaries always fall on special
// token boundaries, and inside a piece the tokens' bytes spell the piece. A
// single walk over the prompt's token bytes therefore gives every token's byte
// offset; a message that starts at byte b starts at the token containing b.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace cairn::engine {

// Byte offset where each token starts in `text`, plus text.size() at the end
// ([tokens.size() + 1], non-decreasing). `skip_leading` tokens (a BOS added
// outside the text) get offset 0. Returns false when the tokens' bytes do not
// spell `text` (callers then fall back to re-tokenizing prefixes).
bool TokenByteOffsets(const tokenizer::Tokenizer& tok, std::span<const int32_t> tokens,
                      std::string_view text, size_t skip_leading, std::vector<size_t>& offsets);

// Position of the token containing byte `byte` (the first token starting at or
// after it when `byte` is a token boundary); offsets.size() - 1 at the end.
int64_t TokenAtByte(std::span<const size_t> offsets, size_t byte);

}  // namespace cairn::engine
