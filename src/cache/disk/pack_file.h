// Pack files on disk: scanning one (restart), appending records to one, and
// reading a record's payload back with its checksum verified.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/disk/pack_format.h"

namespace cairn::cache::disk {

// Test hook called before each file operation ("open", "write", "read",
// "unlink", "mkdir", "lock") on `path`; a non-zero return is the errno that
// operation then fails with (ENOSPC, EROFS, EIO, ...). Null: no faults.
using FaultHook = std::function<int(std::string_view op, const std::string& path)>;
// The hook's answer for one operation (0 = proceed; no hook = no faults).
int InjectedFault(const FaultHook& faults, std::string_view op, const std::string& path);

// One record found by a scan.
struct ScannedRecord {
  RecordHeader header;
  std::vector<Token> tokens;
  uint64_t payload_offset = 0;
};

struct PackScan {
  std::optional<PackIdentity> identity;  // nullopt: the file header is unusable (see error)
  std::string error;
  std::vector<ScannedRecord> records;    // every intact record, in file order
  uint64_t file_bytes = 0;
  uint64_t valid_bytes = 0;              // end of the last intact record
  std::string damage;                    // why the scan stopped early ("" = read to the end)
};

// Reads a pack's header and record headers (not the payloads). Never throws;
// a record whose header or tokens fail their checksum, or that runs past the
// end of the file, ends the scan (records after a torn one are not trusted).
PackScan ScanPack(const std::string& path, int max_block_tokens, const FaultHook& faults = {});

// An open pack for reading payloads (the fd outlives an unlink of the file).
class PackHandle {
 public:
  PackHandle(std::string path, uint64_t sequence, int fd) : path_(std::move(path)), sequence_(sequence), fd_(fd) {}
  ~PackHandle();
  PackHandle(const PackHandle&) = delete;
  PackHandle& operator=(const PackHandle&) = delete;

  static std::shared_ptr<PackHandle> Open(const std::string& path, uint64_t sequence, const FaultHook& faults,
                                          std::string* error);
  const std::string& path() const { return path_; }
  uint64_t sequence() const { return sequence_; }

  // Reads `out.size()` payload bytes at `offset` and checks them against
  // `checksum`. false with *error on a short read, an I/O error or a mismatch.
  bool ReadPayload(uint64_t offset, std::span<uint8_t> out, uint64_t checksum, const FaultHook& faults,
                   std::string* error) const;
  // Asks the kernel to start reading [offset, offset + bytes) (a hint; restores
  // issue it for every record first, so the device works ahead of the copies).
  void Prefetch(uint64_t offset, uint64_t bytes) const;

 private:
  std::string path_;
  uint64_t sequence_;
  int fd_;
};

// Appends records to a new pack file (never to an existing one: a file a
// crashed process was writing keeps its torn tail, which scans ignore).
class PackAppender {
 public:
  ~PackAppender();
  PackAppender(const PackAppender&) = delete;
  PackAppender& operator=(const PackAppender&) = delete;

  // Creates `path` (O_EXCL) and writes the file header. nullptr with *error on failure.
  static std::unique_ptr<PackAppender> Create(const std::string& path, const PackIdentity& identity,
                                              const FaultHook& faults, std::string* error, int* error_number);

  // Appends one record (checksums filled in here). Returns the payload's
  // offset, or -1 with *error / *error_number, the file cut back to its size
  // before the call so that no torn record stays behind.
  int64_t Append(RecordHeader header, std::span<const Token> tokens, std::span<const uint8_t> payload,
                 std::string* error, int* error_number);

  uint64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  PackAppender(std::string path, int fd, const FaultHook& faults) : path_(std::move(path)), fd_(fd), faults_(faults) {}
  std::string path_;
  int fd_;
  uint64_t bytes_ = 0;
  FaultHook faults_;
};

// "pack-000042.cairnpack" -> 42; nullopt for any other name.
std::optional<uint64_t> PackSequence(std::string_view file_name);
std::string PackFileName(uint64_t sequence);

}  // namespace cairn::cache::disk
