#include "cache/disk/pack_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>

#include "cache/disk/pack_file.h"

namespace cairn::cache::disk {
namespace {

// Record token counts are bounded by a block; inspection accepts any block
// size a model could use.
constexpr int kMaxInspectBlockTokens = 1 << 16;

}  // namespace

std::vector<std::pair<uint64_t, std::string>> ListPackFiles(const std::string& dir) {
  std::vector<std::pair<uint64_t, std::string>> files;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      if (auto seq = PackSequence(entry->d_name)) files.emplace_back(*seq, entry->d_name);
    }
    ::closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<PackSummary> SummarizeDirectory(const std::string& dir) {
  std::vector<PackSummary> out;
  for (const auto& [seq, name] : ListPackFiles(dir)) {
    PackSummary s;
    s.file = name;
    const PackScan scan = ScanPack(dir + "/" + name, kMaxInspectBlockTokens);
    s.bytes = scan.file_bytes;
    s.readable = scan.identity.has_value();
    if (scan.identity) s.identity = *scan.identity;
    s.problem = s.readable ? scan.damage : scan.error;
    for (const ScannedRecord& r : scan.records) {
      switch (static_cast<RecordKind>(r.header.kind)) {
        case RecordKind::kBlock:
          ++s.blocks;
          s.max_position = std::max<int64_t>(s.max_position, r.header.position + r.header.n_tokens);
          break;
        case RecordKind::kCheckpoint:
          ++s.checkpoints;
          s.max_position = std::max(s.max_position, r.header.position);
          break;
        case RecordKind::kTombstone: ++s.tombstones; break;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool DirectoryInUse(const std::string& dir, std::string* holder) {
  const std::string path = dir + "/lock";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool in_use = false;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    in_use = true;
    char pid[32] = {};
    const ssize_t n = ::pread(fd, pid, sizeof(pid) - 1, 0);
    *holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "?";
  } else {
    ::flock(fd, LOCK_UN);
  }
  ::close(fd);
  return in_use;
}

int64_t ClearDirectory(const std::string& dir, std::string* error) {
  std::string holder;
  if (DirectoryInUse(dir, &holder)) {
    *error = fmt::format("a Cairn server (pid {}) is using {}; clear it with DELETE /cache on that server", holder, dir);
    return -1;
  }
  int64_t removed = 0;
  for (const auto& [seq, name] : ListPackFiles(dir)) {
    if (::unlink((dir + "/" + name).c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace cairn::cache::disk
