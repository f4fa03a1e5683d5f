// libFuzzer target: the disk tier's pack reader on arbitrary bytes. The input
// is written as a pack file and scanned (file header, record headers, token
// runs); every record the scan accepts must lie inside the file and carry a
// header checksum that matches, and reading its payload back must either
// succeed or fail cleanly (checksum / short read), never crash.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cache/disk/pack_file.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

const std::string& ScratchPath() {
  static const std::string path = "/tmp/cairn_disk_pack_fuzz_" + std::to_string(::getpid()) + ".cairnpack";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cairn::cache::disk;
  // The first byte selects: odd puts a valid file header in front of the
  // rest, so the fuzzer reaches the record parser without having to discover
  // a checksum; even takes the rest as the whole file.
  if (size == 0) return 0;
  const bool with_header = data[0] & 1;
  ++data;
  --size;
  std::vector<uint8_t> bytes;
  if (with_header) {
    PackIdentity id;
    id.model_id = "fuzz";
    id.layout = "fuzz";
    id.target = "fuzz";
    bytes = EncodeFileHeader(id);
  }
  bytes.insert(bytes.end(), data, data + size);
  {
    std::ofstream out(ScratchPath(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  const PackScan scan = ScanPack(ScratchPath(), 64);
  Require(scan.valid_bytes <= scan.file_bytes);
  std::string error;
  auto handle = PackHandle::Open(ScratchPath(), 1, {}, &error);
  for (const ScannedRecord& r : scan.records) {
    Require(r.payload_offset + r.header.payload_bytes <= scan.file_bytes);
    Require(HeaderChecksum(r.header, r.tokens) == r.header.header_checksum);
    if (handle && r.header.payload_bytes <= (1u << 20)) {
      std::vector<uint8_t> payload(r.header.payload_bytes);
      handle->ReadPayload(r.payload_offset, payload, r.header.payload_checksum, {}, &error);
    }
  }
  return 0;
}
