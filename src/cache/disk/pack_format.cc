#include "cache/disk/pack_format.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <cstring>
#include <nlohmann/json.hpp>

namespace cairn::cache::disk {
namespace {

constexpr uint32_t kMaxIdentityBytes = 1 << 16;
// The header checksum covers the header up to (excluding) its own field.
constexpr size_t kChecksummedHeaderBytes = offsetof(RecordHeader, header_checksum);

void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

uint32_t GetU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

std::string PackIdentity::ToJson() const {
  nlohmann::ordered_json j{{"format", format}, {"model_id", model_id}, {"layout", layout}, {"target", target}};
  return j.dump();
}

std::optional<PackIdentity> PackIdentity::FromJson(std::string_view json) {
  const auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  PackIdentity id;
  auto str = [&](const char* key, std::string* out) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    *out = it->get<std::string>();
    return true;
  };
  auto fmt_it = j.find("format");
  if (fmt_it == j.end() || !fmt_it->is_number_unsigned()) return std::nullopt;
  id.format = fmt_it->get<uint32_t>();
  if (!str("model_id", &id.model_id) || !str("layout", &id.layout) || !str("target", &id.target)) return std::nullopt;
  return id;
}

std::string PackIdentity::Mismatch(const PackIdentity& other) const {
  if (other.format != format) return fmt::format("written in format version {} (this server reads {})", other.format, format);
  if (other.model_id != model_id) {
    return fmt::format("written by another model or quantization (tensor hash {}, this model {})", other.model_id,
                       model_id);
  }
  if (other.layout != layout) return fmt::format("written with another state layout ({})", other.layout);
  if (other.target != target) return fmt::format("written by kernel target {} (this server runs {})", other.target, target);
  return "";
}

uint64_t HeaderChecksum(const RecordHeader& header, std::span<const Token> tokens) {
  std::vector<uint8_t> buffer(kChecksummedHeaderBytes + tokens.size_bytes());
  std::memcpy(buffer.data(), &header, kChecksummedHeaderBytes);
  if (!tokens.empty()) std::memcpy(buffer.data() + kChecksummedHeaderBytes, tokens.data(), tokens.size_bytes());
  return XXH3_64bits(buffer.data(), buffer.size());
}

uint64_t PayloadChecksum(std::span<const uint8_t> payload) { return XXH3_64bits(payload.data(), payload.size()); }

std::vector<uint8_t> EncodeFileHeader(const PackIdentity& identity) {
  const std::string json = identity.ToJson();
  std::vector<uint8_t> out(kPackMagic, kPackMagic + sizeof(kPackMagic));
  PutU32(out, kPackFormatVersion);
  PutU32(out, static_cast<uint32_t>(json.size()));
  out.insert(out.end(), json.begin(), json.end());
  const uint64_t sum = XXH3_64bits(out.data(), out.size());
  uint8_t b[8];
  std::memcpy(b, &sum, 8);
  out.insert(out.end(), b, b + 8);
  return out;
}

std::optional<PackIdentity> DecodeFileHeader(std::span<const uint8_t> bytes, size_t* header_bytes,
                                             std::string* error) {
  constexpr size_t kFixed = sizeof(kPackMagic) + 8;
  if (bytes.size() < kFixed) {
    *error = "shorter than a pack header";
    return std::nullopt;
  }
  if (std::memcmp(bytes.data(), kPackMagic, sizeof(kPackMagic)) != 0) {
    *error = "not a Cairn pack file (bad magic)";
    return std::nullopt;
  }
  const uint32_t version = GetU32(bytes.data() + 8);
  const uint32_t json_bytes = GetU32(bytes.data() + 12);
  if (json_bytes > kMaxIdentityBytes || bytes.size() < kFixed + json_bytes + 8) {
    *error = "truncated pack header";
    return std::nullopt;
  }
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + kFixed + json_bytes, 8);
  if (stored != XXH3_64bits(bytes.data(), kFixed + json_bytes)) {
    *error = "pack header checksum mismatch";
    return std::nullopt;
  }
  auto identity = PackIdentity::FromJson(
      std::string_view(reinterpret_cast<const char*>(bytes.data()) + kFixed, json_bytes));
  if (!identity) {
    *error = "pack header identity is not valid JSON";
    return std::nullopt;
  }
  if (identity->format != version) {
    *error = "pack header versions disagree";
    return std::nullopt;
  }
  *header_bytes = kFixed + json_bytes + 8;
  return identity;
}

std::string CheckRecordHeader(const RecordHeader& h, uint64_t offset, uint64_t file_bytes, int max_block_tokens) {
  if (h.magic != kRecordMagic) return fmt::format("no record magic at offset {}", offset);
  if (h.kind < 1 || h.kind > 3) return fmt::format("unknown record kind {} at offset {}", h.kind, offset);
  if (h.position < 0) return fmt::format("negative position at offset {}", offset);
  if (h.kind == static_cast<uint8_t>(RecordKind::kBlock) &&
      (h.n_tokens == 0 || h.n_tokens > static_cast<uint32_t>(max_block_tokens))) {
    return fmt::format("block record with {} tokens at offset {}", h.n_tokens, offset);
  }
  if (h.n_tokens > static_cast<uint32_t>(max_block_tokens)) return fmt::format("record with {} tokens", h.n_tokens);
  const uint64_t need = kRecordHeaderBytes + uint64_t{h.n_tokens} * sizeof(Token);
  if (h.payload_bytes > file_bytes || offset > file_bytes || file_bytes - offset < need ||
      file_bytes - offset - need < h.payload_bytes) {
    return fmt::format("record at offset {} runs past the end of the file (torn write)", offset);
  }
  return "";
}

}  // namespace cairn::cache::disk
