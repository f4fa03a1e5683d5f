// On-disk format of the prefix cache's disk tier (docs/disk-cache.md).
//
// A pack file is append-only:
//   file header  "CAIRNPK1" | u32 format version | u32 identity bytes |
//                identity JSON | u64 XXH3-64 of everything before it
//   records      RecordHeader (64 bytes) | int32 tokens[n_tokens] | payload
// Records are written whole with one writev; a crash (kill -9) can leave only a
// torn last record, which the scan detects (header checksum, lengths past the
// end of the file) and ignores together with anything after it. The payload
// has its own checksum, verified on every read, so a flipped bit anywhere is
// a miss with a reason, never a wrong KV row. Integers are little-endian
// (x86-64 and AArch64 both are; the identity names the target).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cache/cache_types.h"
#include "cache/chain_key.h"

namespace cairn::cache::disk {

inline constexpr char kPackMagic[8] = {'C', 'A', 'I', 'R', 'N', 'P', 'K', '1'};
inline constexpr uint32_t kPackFormatVersion = 1;
inline constexpr uint32_t kRecordMagic = 0x43524543;  // "CERC" read little-endian: record start
inline constexpr std::string_view kPackSuffix = ".cairnpack";

// What must match for a pack's bytes to be valid state for this server.
struct PackIdentity {
  std::string model_id;   // content hash of the GGUF's tensors (model_identity.h)
  std::string layout;     // KV and recurrent layouts (block tokens, dims, dtype, snapshot bytes)
  std::string target;     // kernel target class the state was computed with
  uint32_t format = kPackFormatVersion;

  std::string ToJson() const;
  static std::optional<PackIdentity> FromJson(std::string_view json);
  // "" when `other` is usable by a server with this identity, else the reason
  // in words ("written by another model (id ...)").
  std::string Mismatch(const PackIdentity& other) const;
};

enum class RecordKind : uint8_t {
  kBlock = 1,       // KV block i: key K(i * B), tokens [i * B, i * B + n), payload = block bytes
  kCheckpoint = 2,  // recurrent snapshot at `position`: key K(position), payload = snapshot bytes
  kTombstone = 3,   // removes an earlier block/checkpoint record with the same kind2/key/position/tokens
};

struct RecordHeader {
  uint32_t magic = kRecordMagic;
  uint8_t kind = 0;               // RecordKind
  uint8_t checkpoint_kind = 0;    // CheckpointKind (checkpoints) / removed kind (tombstones)
  uint16_t reserved = 0;
  uint32_t n_tokens = 0;          // tokens stored after the header (blocks: 1..B)
  uint32_t reserved2 = 0;
  int64_t position = 0;           // block: first position (i * B); checkpoint: p
  uint64_t key_lo = 0;
  uint64_t key_hi = 0;
  uint64_t payload_bytes = 0;
  uint64_t payload_checksum = 0;  // XXH3-64 of the payload
  uint64_t header_checksum = 0;   // XXH3-64 of the bytes above + the tokens

  ChainKey key() const { return ChainKey{key_lo, key_hi}; }
  void set_key(const ChainKey& k) {
    key_lo = k.lo;
    key_hi = k.hi;
  }
};
static_assert(std::is_trivially_copyable_v<RecordHeader> && sizeof(RecordHeader) == 64);

inline constexpr size_t kRecordHeaderBytes = sizeof(RecordHeader);

uint64_t HeaderChecksum(const RecordHeader& header, std::span<const Token> tokens);
uint64_t PayloadChecksum(std::span<const uint8_t> payload);

// The file header's bytes for an identity.
std::vector<uint8_t> EncodeFileHeader(const PackIdentity& identity);

// Parses a file header from the first bytes of a file. On success returns the
// identity and sets *header_bytes; otherwise nullopt and *error says why.
std::optional<PackIdentity> DecodeFileHeader(std::span<const uint8_t> bytes, size_t* header_bytes,
                                             std::string* error);

// Checks a record header read from a file of `file_bytes` at `offset` (its
// tokens not yet read): magic, kind, sizes within the file and sane counts.
// "" when plausible, else the reason.
std::string CheckRecordHeader(const RecordHeader& header, uint64_t offset, uint64_t file_bytes,
                              int max_block_tokens);

}  // namespace cairn::cache::disk
