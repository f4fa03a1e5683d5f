#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <bit>

#include "core/error.h"
#include "tokenizer/byte_level.h"

namespace cairn::tokenizer {
namespace {

uint64_t PairKey(TokenId left, TokenId right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
         static_cast<uint32_t>(right);
}

size_t HashKey(uint64_t key) { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 17); }

// One symbol of a word being merged; symbols form a doubly linked list.
struct Symbol {
  TokenId id;    // kNoToken once absorbed into its left neighbour
  int32_t prev;
  int32_t next;  // -1 at the ends
};

// A mergeable adjacent pair, queued by merge rank.
struct Candidate {
  int32_t rank;
  int32_t left;  // symbol index of the pair's left half
  TokenId left_id;
  TokenId right_id;
};

}  // namespace

BpeModel::BpeModel(const Vocabulary& vocab, const std::vector<std::string>& token_bytes)
    : ignore_merges_(vocab.ignore_merges) {
  std::unordered_map<std::string_view, TokenId> by_text;
  by_text.reserve(vocab.size() * 2);
  for (size_t i = 0; i < vocab.size(); ++i) {
    by_text.emplace(vocab.tokens[i], static_cast<TokenId>(i));  // first wins on duplicates
  }
  for (int b = 0; b < 256; ++b) {
    const std::string text = ByteLevelEncode(std::string(1, static_cast<char>(b)));
    const auto it = by_text.find(text);
    byte_token_[b] = it == by_text.end() ? kNoToken : it->second;
  }

  // Load factor <= 0.5 keeps linear probes short.
  table_.resize(std::bit_ceil(std::max<size_t>(16, vocab.merges.size() * 2)));
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const std::string& merge = vocab.merges[rank];
    // "left right"; searching from 1 lets a left part start with a space.
    const size_t space = merge.find(' ', 1);
    if (space == std::string::npos) {
      Fail("tokenizer merge {} ('{}') is not of the form 'left right'", rank, merge);
    }
    const std::string_view left(merge.data(), space);
    const std::string_view right(merge.data() + space + 1, merge.size() - space - 1);
    const auto l = by_text.find(left);
    const auto r = by_text.find(right);
    if (l == by_text.end() || r == by_text.end()) continue;
    std::string joined(left);
    joined += right;
    const auto result = by_text.find(joined);
    if (result == by_text.end()) continue;
    InsertMerge(l->second, r->second, static_cast<int32_t>(rank), result->second);
  }

  if (ignore_merges_) {
    for (size_t i = 0; i < vocab.size(); ++i) {
      const TokenType type = vocab.type(static_cast<TokenId>(i));
      if (type == TokenType::kNormal || type == TokenType::kUndefined) {
        whole_word_.emplace(token_bytes[i], static_cast<TokenId>(i));
      }
    }
  }
}

void BpeModel::InsertMerge(TokenId left, TokenId right, int32_t rank, TokenId result) {
  const uint64_t key = PairKey(left, right);
  const size_t mask = table_.size() - 1;
  for (size_t i = HashKey(key) & mask;; i = (i + 1) & mask) {
    if (table_[i].key == key) return;  // duplicate merge: the first (lowest) rank wins
    if (table_[i].key == kEmptyKey) {
      table_[i] = Merge{key, rank, result};
      ++merge_count_;
      return;
    }
  }
}

const BpeModel::Merge* BpeModel::FindMerge(TokenId left, TokenId right) const {
  const uint64_t key = PairKey(left, right);
  const size_t mask = table_.size() - 1;
  for (size_t i = HashKey(key) & mask;; i = (i + 1) & mask) {
    if (table_[i].key == key) return &table_[i];
    if (table_[i].key == kEmptyKey) return nullptr;
  }
}

void BpeModel::EncodeWord(std::string_view word, std::vector<TokenId>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    const auto it = whole_word_.find(std::string(word));
    if (it != whole_word_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  if (word.size() == 1) {  // single bytes never merge; skip the cache
    const TokenId id = byte_token_[static_cast<uint8_t>(word[0])];
    if (id != kNoToken) out.push_back(id);
    return;
  }
  if (cache_.Lookup(word, out)) return;
  const size_t start = out.size();
  MergeWord(word, out);
  cache_.Insert(word, out.data() + start, out.size() - start);
}

void BpeModel::MergeWord(std::string_view word, std::vector<TokenId>& out) const {
  // Min-heap on (rank, left): std heaps are max-heaps, so invert the order.
  const auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  };

  // Per-thread scratch: cache misses would otherwise allocate twice per word.
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap;
  symbols.clear();
  heap.clear();
  for (char c : word) {
    const TokenId id = byte_token_[static_cast<uint8_t>(c)];
    if (id == kNoToken) continue;  // vocabulary without this byte: drop it, as HF does
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back(Symbol{id, index - 1, index + 1});
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  const auto push_pair = [&](int32_t left) {
    if (left < 0) return;
    const int32_t right = symbols[left].next;
    if (right < 0) return;
    const Merge* merge = FindMerge(symbols[left].id, symbols[right].id);
    if (merge == nullptr) return;
    heap.push_back(Candidate{merge->rank, left, symbols[left].id, symbols[right].id});
    std::push_heap(heap.begin(), heap.end(), later);
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) push_pair(i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.left];
    // Stale candidates (a side was merged away or changed) are skipped.
    if (left.id != top.left_id || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    if (right.id != top.right_id) continue;
    const Merge* merge = FindMerge(left.id, right.id);
    left.id = merge->result;
    right.id = kNoToken;  // marks the absorbed symbol dead
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    push_pair(left.prev);
    push_pair(top.left);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

}  // namespace cairn::tokenizer
