// A cache directory seen from outside a server (`cairn cache ls|clear`):
// what each pack holds, whether a server is using the directory, and clearing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cache/disk/pack_format.h"

namespace cairn::cache::disk {

struct PackSummary {
  std::string file;
  uint64_t bytes = 0;
  bool readable = false;          // false: the file header is unusable (see problem)
  PackIdentity identity;
  int64_t blocks = 0, checkpoints = 0, tombstones = 0;
  int64_t max_position = 0;       // deepest token position a record reaches
  std::string problem;            // header error, or why the scan stopped early
};

// (sequence, file name) of every pack file in `dir`, by sequence (oldest first).
std::vector<std::pair<uint64_t, std::string>> ListPackFiles(const std::string& dir);

// Every pack file of `dir`, oldest first. Never throws.
std::vector<PackSummary> SummarizeDirectory(const std::string& dir);

// True when a server holds the directory's lock; *holder gets its pid text.
bool DirectoryInUse(const std::string& dir, std::string* holder);

// Deletes every pack file in `dir`; returns how many. Fails (returns -1 with
// *error) when a server is using the directory: use DELETE /cache there.
int64_t ClearDirectory(const std::string& dir, std::string* error);

}  // namespace cairn::cache::disk
