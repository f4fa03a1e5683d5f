// The prefix cache's disk tier: KV blocks and recurrent checkpoints in pack
// files under --cache-dir, indexed in memory, reused across restarts.
//
// Write-behind: every path the RAM cache adopts is handed to Persist(), and a
// background thread appends the blocks and checkpoints the disk does not hold
// yet (keyed by ChainKey, so a shared system prompt is written once). So an
// entry the RAM tier evicts, or a server killed with -9, leaves its state on
// disk. Find() plans a restore deeper than the RAM hit; Load() reads it back,
// verifying every object's checksum. See docs/disk-cache.md.
//
// Validation: a pack is used only when its identity (model tensor hash, state
// layout, kernel target, format version) equals this server's; a record only
// when its header checksum holds at scan time and its payload checksum at read
// time. Anything else is a miss with a reason, never served state.
//
// Thread safety: all public methods may be called concurrently; the index has
// one mutex, payload reads run outside it (open fds outlive unlinks).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/cache_types.h"
#include "cache/chain_key.h"
#include "cache/disk/pack_file.h"
#include "core/kv_block.h"

namespace cairn::cache::disk {

struct DiskTierOptions {
  std::string dir;                          // created when missing
  uint64_t budget_bytes = uint64_t{20} << 30;   // all pack files in `dir` together, never exceeded
  uint64_t pack_bytes = uint64_t{256} << 20;    // a pack is closed and a new one started past this
  uint64_t max_pending_bytes = uint64_t{1} << 30;  // queued state awaiting its write; more is dropped
  FaultHook faults;                         // tests only
};

// The state geometry a pack must match (also part of its identity).
struct StateGeometry {
  KvLayout kv;
  size_t snapshot_bytes = 0;   // recurrent / window snapshot blob; 0 for dense models
  bool checkpointed = false;   // reuse only at checkpoints (hybrid, sliding window)
};

struct DiskMatch {
  int64_t reuse_tokens = 0;       // 0: nothing on disk beats the RAM hit
  int64_t common_prefix = 0;      // prompt tokens covered by KV on disk
  CheckpointKind kind = CheckpointKind::kBoundary;
  std::vector<int64_t> checkpoint_positions;  // on the matched path, <= common_prefix
  std::string reason;             // why nothing usable was found (diagnostics)

  struct Block;
  struct Snapshot;
  std::vector<std::shared_ptr<const Block>> blocks;  // ceil(reuse / B)
  std::shared_ptr<const Snapshot> snapshot;          // checkpointed models
};

struct DiskLoad {
  bool ok = false;
  std::string error;              // why the disk state was not used
  KvBlockTable blocks;            // frozen, ceil(reuse / B)
  RecurrentSnapshotRef snapshot;
  uint64_t bytes_read = 0;
  double seconds = 0;
};

struct RejectedPack {
  std::string file;
  std::string reason;
  uint64_t bytes = 0;
};

struct DiskStats {
  bool enabled = false;
  bool writable = false;
  std::string status;             // "" when healthy; else why it is off or read-only
  std::string dir;
  uint64_t budget_bytes = 0;
  uint64_t bytes = 0;             // all pack files in the directory
  int64_t packs = 0;
  int64_t block_records = 0;
  int64_t checkpoint_records = 0;
  uint64_t finds = 0, hits = 0, hit_tokens = 0;
  uint64_t loaded_bytes = 0, load_failures = 0;
  double load_seconds = 0;
  uint64_t written_records = 0, written_bytes = 0, skipped_records = 0;
  uint64_t write_errors = 0, dropped_jobs = 0, evicted_packs = 0;
  uint64_t pending_bytes = 0;
  std::string last_error;
  std::vector<RejectedPack> rejected;   // packs (or their tails) not used, with the reason
};

struct DiskEntryInfo {
  std::string id;                 // ChainKey::Hex() of the whole path (same id as the RAM entry)
  int64_t tokens = 0;
  uint64_t bytes = 0;             // blocks + checkpoints on the path
  std::vector<int64_t> checkpoints;
};

class DiskTier {
 public:
  // Never throws: a directory that cannot be used, or one locked by another
  // server, gives a disabled tier whose Stats().status says why.
  static std::unique_ptr<DiskTier> Open(const DiskTierOptions& options, const PackIdentity& identity,
                                        const StateGeometry& geometry);
  ~DiskTier();   // finishes the queued writes (bounded by max_pending_bytes), then stops
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  bool enabled() const { return enabled_; }

  // A restore plan reusing more than `ram_reuse` tokens of `prompt` (always
  // < prompt.size(), >= min_reuse), or reuse_tokens 0.
  DiskMatch Find(std::span<const Token> prompt, int64_t min_reuse, int64_t ram_reuse);
  // Reads what the plan needs. Full blocks below `ram_reuse` come from
  // `ram_blocks` instead of the disk. A failed read drops the bad record from
  // the index and returns ok=false with the reason.
  DiskLoad Load(const DiskMatch& match, const KvBlockTable& ram_blocks, int64_t ram_reuse);

  // Queues a verified path for writing (tokens [0, n), blocks covering them,
  // checkpoints at positions <= n). Returns at once.
  void Persist(std::vector<Token> tokens, KvBlockTable blocks, std::vector<Checkpoint> checkpoints);
  // Blocks until every queued write is done (tests, shutdown, benchmarks).
  void Flush();
  // Discards the queued writes (memory pressure: their state is then freed).
  void DropPending();

  // Deletes every pack file in the directory (other models' too) and the index.
  void Clear();
  // Removes the entry whose whole-path id is `id` and the part of its path no
  // other entry shares. false when no such entry is on disk.
  bool RemoveEntry(const ChainKey& id);

  std::vector<DiskEntryInfo> List();
  DiskStats Stats();

 private:
  struct Index;
  struct Job;
  DiskTier(const DiskTierOptions& options, const PackIdentity& identity, const StateGeometry& geometry);
  void OpenDirectory();
  void ScanDirectory();
  void WriterLoop();
  void WriteJob(const Job& job);
  bool WriteRecord(RecordKind kind, CheckpointKind ckind, int64_t position, const ChainKey& key,
                   std::span<const Token> tokens, std::span<const uint8_t> payload);
  bool MakeRoomLocked(uint64_t record_bytes);
  void EvictPackLocked(uint64_t sequence);
  void RecordWriteError(const std::string& error, int error_number);

  DiskTierOptions options_;
  PackIdentity identity_;
  StateGeometry geometry_;
  bool enabled_ = false;
  std::string status_;
  int lock_fd_ = -1;

  mutable std::mutex mu_;           // index, packs, stats
  std::unique_ptr<Index> index_;
  DiskStats stats_;

  std::mutex write_mu_;             // the appender (writer thread; Clear)
  std::unique_ptr<PackAppender> appender_;
  uint64_t appender_sequence_ = 0;
  uint64_t next_sequence_ = 1;
  int consecutive_write_errors_ = 0;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::condition_variable idle_cv_;
  std::deque<std::unique_ptr<Job>> queue_;
  uint64_t pending_bytes_ = 0;
  bool writing_ = false;
  bool stopping_ = false;
  std::thread writer_;
};

}  // namespace cairn::cache::disk
