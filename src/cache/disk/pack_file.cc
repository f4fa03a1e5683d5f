#include "cache/disk/pack_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace cairn::cache::disk {
namespace {

// Reads exactly out.size() bytes at offset; false on a short read or an error.
bool PreadAll(int fd, std::span<uint8_t> out, uint64_t offset) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::optional<uint64_t> PackSequence(std::string_view name) {
  constexpr std::string_view kPrefix = "pack-";
  if (!name.starts_with(kPrefix) || !name.ends_with(kPackSuffix)) return std::nullopt;
  const std::string_view digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kPackSuffix.size());
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return v;
}

std::string PackFileName(uint64_t sequence) { return fmt::format("pack-{:06d}{}", sequence, kPackSuffix); }

PackScan ScanPack(const std::string& path, int max_block_tokens, const FaultHook& faults) {
  PackScan scan;
  if (const int e = InjectedFault(faults, "open", path)) {
    scan.error = fmt::format("cannot open: {}", std::strerror(e));
    return scan;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    scan.error = fmt::format("cannot open: {}", std::strerror(errno));
    return scan;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    scan.error = fmt::format("cannot stat: {}", std::strerror(errno));
    ::close(fd);
    return scan;
  }
  scan.file_bytes = static_cast<uint64_t>(st.st_size);
  std::vector<uint8_t> head(static_cast<size_t>(std::min<uint64_t>(scan.file_bytes, 64 * 1024 + 64)));
  size_t header_bytes = 0;
  if (!PreadAll(fd, head, 0)) {
    scan.error = "cannot read the pack header";
  } else {
    scan.identity = DecodeFileHeader(head, &header_bytes, &scan.error);
  }
  if (!scan.identity) {
    ::close(fd);
    return scan;
  }
  uint64_t offset = header_bytes;
  scan.valid_bytes = offset;
  while (offset < scan.file_bytes) {
    ScannedRecord r;
    if (scan.file_bytes - offset < kRecordHeaderBytes) {
      scan.damage = fmt::format("torn record header at offset {}", offset);
      break;
    }
    if (!PreadAll(fd, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&r.header), kRecordHeaderBytes), offset)) {
      scan.damage = fmt::format("read error at offset {}", offset);
      break;
    }
    scan.damage = CheckRecordHeader(r.header, offset, scan.file_bytes, max_block_tokens);
    if (!scan.damage.empty()) break;
    r.tokens.resize(r.header.n_tokens);
    const uint64_t tokens_at = offset + kRecordHeaderBytes;
    if (!PreadAll(fd, std::span<uint8_t>(reinterpret_cast<uint8_t*>(r.tokens.data()), r.tokens.size() * sizeof(Token)),
                  tokens_at)) {
      scan.damage = fmt::format("read error at offset {}", tokens_at);
      break;
    }
    if (HeaderChecksum(r.header, r.tokens) != r.header.header_checksum) {
      scan.damage = fmt::format("record header checksum mismatch at offset {}", offset);
      break;
    }
    r.payload_offset = tokens_at + r.tokens.size() * sizeof(Token);
    offset = r.payload_offset + r.header.payload_bytes;
    scan.valid_bytes = offset;
    scan.records.push_back(std::move(r));
  }
  ::close(fd);
  return scan;
}

PackHandle::~PackHandle() {
  if (fd_ >= 0) ::close(fd_);
}

std::shared_ptr<PackHandle> PackHandle::Open(const std::string& path, uint64_t sequence, const FaultHook& faults,
                                             std::string* error) {
  if (const int e = InjectedFault(faults, "open", path)) {
    *error = fmt::format("cannot open {}: {}", path, std::strerror(e));
    return nullptr;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = fmt::format("cannot open {}: {}", path, std::strerror(errno));
    return nullptr;
  }
  return std::make_shared<PackHandle>(path, sequence, fd);
}

bool PackHandle::ReadPayload(uint64_t offset, std::span<uint8_t> out, uint64_t checksum, const FaultHook& faults,
                             std::string* error) const {
  if (const int e = InjectedFault(faults, "read", path_)) {
    *error = fmt::format("read error in {}: {}", path_, std::strerror(e));
    return false;
  }
  if (!PreadAll(fd_, out, offset)) {
    *error = fmt::format("short read in {} at offset {} (file truncated?)", path_, offset);
    return false;
  }
  if (PayloadChecksum(out) != checksum) {
    *error = fmt::format("checksum mismatch in {} at offset {} (the file was damaged)", path_, offset);
    return false;
  }
  return true;
}

void PackHandle::Prefetch(uint64_t offset, uint64_t bytes) const {
  ::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(bytes), POSIX_FADV_WILLNEED);
}

int InjectedFault(const FaultHook& faults, std::string_view op, const std::string& path) {
  return faults ? faults(op, path) : 0;
}

PackAppender::~PackAppender() {
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<PackAppender> PackAppender::Create(const std::string& path, const PackIdentity& identity,
                                                   const FaultHook& faults, std::string* error, int* error_number) {
  int fd = -1;
  *error_number = InjectedFault(faults, "open", path);
  if (*error_number == 0) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) *error_number = errno;
  }
  if (fd < 0) {
    *error = fmt::format("cannot create {}: {}", path, std::strerror(*error_number));
    return nullptr;
  }
  std::unique_ptr<PackAppender> a(new PackAppender(path, fd, faults));
  const std::vector<uint8_t> header = EncodeFileHeader(identity);
  // The file header goes through the same write path as records (faults apply).
  if (const int e = InjectedFault(faults, "write", path); e != 0 ||
      ::write(fd, header.data(), header.size()) != static_cast<ssize_t>(header.size())) {
    *error_number = e != 0 ? e : (errno != 0 ? errno : EIO);
    *error = fmt::format("cannot write {}: {}", path, std::strerror(*error_number));
    ::unlink(path.c_str());
    return nullptr;
  }
  a->bytes_ = header.size();
  return a;
}

int64_t PackAppender::Append(RecordHeader header, std::span<const Token> tokens, std::span<const uint8_t> payload,
                             std::string* error, int* error_number) {
  header.magic = kRecordMagic;
  header.n_tokens = static_cast<uint32_t>(tokens.size());
  header.payload_bytes = payload.size();
  header.payload_checksum = PayloadChecksum(payload);
  header.header_checksum = HeaderChecksum(header, tokens);
  const uint64_t before = bytes_;
  const size_t total = kRecordHeaderBytes + tokens.size_bytes() + payload.size();
  *error_number = InjectedFault(faults_, "write", path_);
  size_t done = 0;
  if (*error_number == 0) {
    iovec parts[3] = {{&header, kRecordHeaderBytes},
                      {const_cast<Token*>(tokens.data()), tokens.size_bytes()},
                      {const_cast<uint8_t*>(payload.data()), payload.size()}};
    while (done < total) {
      // Skip the parts already written, then write the rest in one call.
      iovec rest[3];
      int n_rest = 0;
      size_t skip = done;
      for (const iovec& p : parts) {
        if (skip >= p.iov_len) {
          skip -= p.iov_len;
          continue;
        }
        rest[n_rest++] = {static_cast<uint8_t*>(p.iov_base) + skip, p.iov_len - skip};
        skip = 0;
      }
      const ssize_t n = ::writev(fd_, rest, n_rest);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *error_number = n < 0 ? errno : EIO;
        break;
      }
      done += static_cast<size_t>(n);
    }
  }
  if (done < total) {
    if (done > 0 && ::ftruncate(fd_, static_cast<off_t>(before)) != 0) {
      // The torn record stays; scans stop at it, so it is harmless.
    }
    ::lseek(fd_, static_cast<off_t>(before), SEEK_SET);
    *error = fmt::format("cannot write {}: {}", path_, std::strerror(*error_number));
    return -1;
  }
  bytes_ += total;
  return static_cast<int64_t>(before + kRecordHeaderBytes + tokens.size_bytes());
}

}  // namespace cairn::cache::disk
