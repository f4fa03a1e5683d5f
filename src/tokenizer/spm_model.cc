#include "tokenizer/spm_model.h"

#include <algorithm>
#include <limits>

#include "tokenizer/utf8.h"

namespace cairn::tokenizer {
namespace {

// Bytes of the initial symbol starting with lead byte b, by its high nibble
// as llama.cpp's SPM tokenizer splits (valid or not): 0x0-0xB -> 1, 0xC-0xD
// -> 2, 0xE -> 3, 0xF -> 4. Differs from Utf8SequenceLength for the invalid
// leads 0xF8-0xFF, which take 4 bytes here: "\xff\xfe▁bytes" becomes
// [ff fe e2 96] [81] b y t e s, then byte fallback (ids identical to llama-tokenize).
size_t SpmSymbolLength(uint8_t b) {
  static constexpr uint8_t kByNibble[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kByNibble[b >> 4];
}

}  // namespace


int ParseByteTokenName(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  int value = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = text[i];
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return -1;
    }
    value = value * 16 + digit;
  }
  return value;
}

SpmModel::SpmModel(const Vocabulary& vocab) : unk_(vocab.unk) {
  by_text_.reserve(vocab.size() * 2);
  for (size_t i = 0; i < vocab.size(); ++i) {
    by_text_.emplace(vocab.tokens[i], static_cast<TokenId>(i));
  }
  scores_ = vocab.scores;
  scores_.resize(vocab.size(), 0.0f);
  byte_token_.fill(kNoToken);
  for (size_t i = 0; i < vocab.size(); ++i) {
    const int b = ParseByteTokenName(vocab.tokens[i]);
    const TokenType type = vocab.type(static_cast<TokenId>(i));
    if (b >= 0 && (type == TokenType::kByte || vocab.types.empty()) &&
        byte_token_[b] == kNoToken) {
      byte_token_[b] = static_cast<TokenId>(i);
    }
  }
}

TokenId SpmModel::Find(std::string_view text) const {
  const auto it = by_text_.find(text);
  return it == by_text_.end() ? kNoToken : it->second;
}

void SpmModel::Encode(std::string_view text, std::vector<TokenId>& out) const {
  struct Symbol {
    uint32_t begin;  // byte range in `text`
    uint32_t size;   // 0 once absorbed into its left neighbour
    int32_t prev;
    int32_t next;
  };
  struct Candidate {
    float score;
    int32_t left;
    int32_t right;
    uint32_t size;  // combined byte size when queued, to detect stale entries
  };
  // Max-heap on score, then min on left position.
  const auto worse = [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score < b.score : a.left > b.left;
  };

  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = std::min(SpmSymbolLength(static_cast<uint8_t>(text[pos])), text.size() - pos);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back(Symbol{static_cast<uint32_t>(pos), static_cast<uint32_t>(len), index - 1,
                             index + 1});
    pos += len;
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  std::vector<Candidate> heap;
  const auto push_pair = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t size = symbols[left].size + symbols[right].size;
    const TokenId id = Find(text.substr(symbols[left].begin, size));
    if (id == kNoToken) return;
    const float score = scores_[static_cast<size_t>(id)];
    if (score == -std::numeric_limits<float>::infinity()) return;  // never a merge result
    heap.push_back(Candidate{score, left, right, size});
    std::push_heap(heap.begin(), heap.end(), worse);
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) push_pair(i, i + 1);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), worse);
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.left];
    Symbol& right = symbols[top.right];
    if (left.size == 0 || right.size == 0 || left.next != top.right ||
        left.size + right.size != top.size) {
      continue;  // stale: one side changed since this pair was queued
    }
    left.size += right.size;
    right.size = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    push_pair(left.prev, top.left);
    push_pair(top.left, left.next);
  }

  for (int32_t i = 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece = text.substr(symbols[i].begin, symbols[i].size);
    const TokenId id = Find(piece);
    if (id != kNoToken) {
      out.push_back(id);
      continue;
    }
    for (char c : piece) {  // byte fallback
      const TokenId byte_id = byte_token_[static_cast<uint8_t>(c)];
      if (byte_id != kNoToken) {
        out.push_back(byte_id);
      } else if (unk_ != kNoToken) {
        out.push_back(unk_);
      }
    }
  }
}

}  // namespace cairn::tokenizer
