// The engine's view of its cache: the RAM prefix cache, the disk tier below
// it and the memory guard that sheds RAM under pressure, behind one
// Lookup/Insert seam (batching will call the same two per sequence).
//
// Lookup: RAM first; when the disk holds a deeper reusable prefix, its blocks
// and checkpoint are read (checksums verified), adopted by the RAM cache and
// returned as the hit. Insert: RAM, then queued for the disk (write-behind).
// Pressure grades (memory_pressure.h): shed -> PrefixCache::Shed(kWarn);
// spill -> also halve the RAM budget (what leaves RAM is already on disk);
// drop -> empty RAM and the disk write queue. Back to normal restores the
// configured budget.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "cache/disk/disk_tier.h"
#include "cache/memory_pressure.h"
#include "cache/prefix_cache.h"
#include "engine/service.h"

namespace cairn::engine {

struct CacheTiersOptions {
  cache::PrefixCacheConfig ram;
  bool disk = false;
  cache::disk::DiskTierOptions disk_options;
  cache::disk::PackIdentity identity;
  cache::disk::StateGeometry geometry;
  bool memory_guard = false;
  cache::PressureThresholds thresholds;
  std::chrono::milliseconds guard_interval{1000};
  std::unique_ptr<cache::PressureSource> pressure_source;   // null: the system's files
};

struct TieredHit {
  cache::LookupResult result;
  int64_t disk_tokens = 0;      // tokens of result.reuse_tokens that came from disk (beyond the RAM hit)
  uint64_t disk_bytes = 0;
  double disk_seconds = 0;
  std::string disk_note;        // why the disk did not help (or failed), for x_cairn.cache
};

class CacheTiers {
 public:
  explicit CacheTiers(CacheTiersOptions options);
  ~CacheTiers();

  TieredHit Lookup(const cache::LookupRequest& request);
  // Verified tokens + their blocks and checkpoints, as PrefixCache::Insert.
  void Insert(std::span<const cache::Token> tokens, const KvBlockTable& blocks,
              const std::vector<cache::Checkpoint>& checkpoints);

  void Clear();                              // both tiers
  bool RemoveEntry(std::string_view id);     // both tiers; false when neither had it
  void ApplyPressure(cache::PressureGrade grade);
  cache::PressureGrade pressure() const { return grade_.load(); }

  Json Listing();
  std::string MetricsText();

  cache::PrefixCache& ram() { return *ram_; }
  cache::disk::DiskTier* disk() { return disk_.get(); }
  cache::MemoryGuard* guard() { return guard_.get(); }

 private:
  CacheTiersOptions options_;
  std::unique_ptr<cache::PrefixCache> ram_;
  std::unique_ptr<cache::disk::DiskTier> disk_;
  std::unique_ptr<cache::MemoryGuard> guard_;
  std::atomic<cache::PressureGrade> grade_{cache::PressureGrade::kNormal};
  std::mutex pressure_mu_;
  uint64_t grade_entries_[4] = {};
};

// $XDG_CACHE_HOME/cairn/kv, else $HOME/.cache/cairn/kv.
std::string DefaultCacheDir();
// min(20 GiB, half the free space of the file system holding `dir`), at least 1 GiB.
uint64_t DefaultDiskBudget(const std::string& dir);

}  // namespace cairn::engine
