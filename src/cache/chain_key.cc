#include "cache/chain_key.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <cstring>
#include <vector>

#include "core/error.h"

namespace cairn::cache {

ChainKey ChainKey::Root() { return ChainKey{0x636169726e2d6b76ull, 0x726f6f742d6b6579ull}; }

std::string ChainKey::Hex() const { return fmt::format("{:016x}{:016x}", hi, lo); }

bool ChainKey::FromHex(std::string_view hex, ChainKey* out) {
  if (hex.size() != 32) return false;
  uint64_t parts[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    const char c = hex[i];
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    if (v < 0) return false;
    parts[i / 16] = parts[i / 16] << 4 | static_cast<uint64_t>(v);
  }
  out->hi = parts[0];
  out->lo = parts[1];
  return true;
}

ChainKey ExtendKey(const ChainKey& prev, std::span<const Token> tokens) {
  // One contiguous run (a block is at most a few hundred bytes).
  std::vector<uint64_t> buffer(2 + (tokens.size_bytes() + 7) / 8, 0);
  buffer[0] = prev.lo;
  buffer[1] = prev.hi;
  if (!tokens.empty()) std::memcpy(buffer.data() + 2, tokens.data(), tokens.size_bytes());
  const XXH128_hash_t h = XXH3_128bits(buffer.data(), 16 + tokens.size_bytes());
  return ChainKey{h.low64, h.high64};
}

PrefixKeys::PrefixKeys(std::span<const Token> tokens, int block_tokens)
    : tokens_(tokens), block_tokens_(block_tokens), boundaries_{ChainKey::Root()} {
  CAIRN_CHECK(block_tokens > 0);
}

ChainKey PrefixKeys::Boundary(int64_t block_index) {
  CAIRN_CHECK(block_index >= 0 && block_index * block_tokens_ <= static_cast<int64_t>(tokens_.size()));
  const size_t B = static_cast<size_t>(block_tokens_);
  while (boundaries_.size() <= static_cast<size_t>(block_index)) {
    const size_t i = boundaries_.size() - 1;
    boundaries_.push_back(ExtendKey(boundaries_.back(), tokens_.subspan(i * B, B)));
  }
  return boundaries_[static_cast<size_t>(block_index)];
}

ChainKey PrefixKeys::At(int64_t position) {
  CAIRN_CHECK(position >= 0 && position <= static_cast<int64_t>(tokens_.size()));
  const int64_t base = position / block_tokens_;
  const ChainKey k = Boundary(base);
  const int64_t start = base * block_tokens_;
  if (start == position) return k;
  return ExtendKey(k, tokens_.subspan(static_cast<size_t>(start), static_cast<size_t>(position - start)));
}

}  // namespace cairn::cache
