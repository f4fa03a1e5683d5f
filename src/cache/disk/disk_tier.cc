#include "cache/disk/disk_tier.h"

#include "cache/disk/pack_directory.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cache/trie_node.h"
#include "core/log.h"
#include "core/timer.h"

namespace cairn::cache::disk {

// Where one record's payload lives.
struct PayloadRef {
  std::shared_ptr<PackHandle> pack;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint64_t checksum = 0;
};

struct DiskMatch::Block {
  PayloadRef payload;
  int64_t start = 0;
  std::vector<Token> tokens;
  ChainKey key;       // K(start)
  ChainKey end_key;   // K(start + tokens.size())
};

struct DiskMatch::Snapshot {
  PayloadRef payload;
  int64_t position = 0;
  ChainKey key;       // K(position)
  CheckpointKind kind = CheckpointKind::kBoundary;
};

using BlockPtr = std::shared_ptr<const DiskMatch::Block>;
using SnapshotPtr = std::shared_ptr<const DiskMatch::Snapshot>;

struct DiskTier::Index {
  struct Pack {
    std::string path;
    std::shared_ptr<PackHandle> handle;   // null for packs this server cannot use
    uint64_t bytes = 0;
    uint64_t last_use = 0;
  };
  std::unordered_map<ChainKey, std::vector<BlockPtr>, ChainKeyHash> blocks;        // by K(start)
  std::unordered_map<ChainKey, std::vector<BlockPtr>, ChainKeyHash> blocks_by_end;  // by K(end)
  std::map<int64_t, std::unordered_map<ChainKey, SnapshotPtr, ChainKeyHash>> checkpoints;
  std::map<uint64_t, Pack> packs;   // by sequence
  uint64_t clock = 0;
  uint64_t total_bytes = 0;
  int64_t n_blocks = 0;
  int64_t n_checkpoints = 0;

  void Add(BlockPtr b) {
    blocks_by_end[b->end_key].push_back(b);
    blocks[b->key].push_back(std::move(b));
    ++n_blocks;
  }
  void Add(SnapshotPtr s) {
    auto& at = checkpoints[s->position];
    if (at.emplace(s->key, s).second) ++n_checkpoints;
  }
  static void Erase(std::unordered_map<ChainKey, std::vector<BlockPtr>, ChainKeyHash>& map, const ChainKey& key,
                    const DiskMatch::Block* b) {
    auto it = map.find(key);
    if (it == map.end()) return;
    std::erase_if(it->second, [&](const BlockPtr& p) { return p.get() == b; });
    if (it->second.empty()) map.erase(it);
  }
  void Remove(const DiskMatch::Block* b) {
    Erase(blocks_by_end, b->end_key, b);
    Erase(blocks, b->key, b);
    --n_blocks;
  }
  void Remove(const DiskMatch::Snapshot* s) {
    auto it = checkpoints.find(s->position);
    if (it == checkpoints.end() || it->second.erase(s->key) == 0) return;
    --n_checkpoints;
    if (it->second.empty()) checkpoints.erase(it);
  }
  // The block record holding exactly `tokens` at key `key` (nullptr if none).
  BlockPtr FindBlock(const ChainKey& key, std::span<const Token> tokens) const {
    auto it = blocks.find(key);
    if (it == blocks.end()) return nullptr;
    for (const BlockPtr& b : it->second) {
      if (std::equal(b->tokens.begin(), b->tokens.end(), tokens.begin(), tokens.end())) return b;
    }
    return nullptr;
  }
  void DropRecordsOf(const PackHandle* pack) {
    std::vector<const DiskMatch::Block*> gone;
    for (const auto& [key, list] : blocks) {
      for (const BlockPtr& b : list) {
        if (b->payload.pack.get() == pack) gone.push_back(b.get());
      }
    }
    for (const DiskMatch::Block* b : gone) Remove(b);
    std::vector<const DiskMatch::Snapshot*> gone_s;
    for (const auto& [pos, map] : checkpoints) {
      for (const auto& [key, s] : map) {
        if (s->payload.pack.get() == pack) gone_s.push_back(s.get());
      }
    }
    for (const DiskMatch::Snapshot* s : gone_s) Remove(s);
  }
  // Checkpoints on the path through block `b`: positions in (start, end] whose key extends b's.
  std::vector<SnapshotPtr> CheckpointsIn(const DiskMatch::Block& b) const {
    std::vector<SnapshotPtr> out;
    const int64_t end = b.start + static_cast<int64_t>(b.tokens.size());
    for (auto it = checkpoints.upper_bound(b.start); it != checkpoints.end() && it->first <= end; ++it) {
      const std::span<const Token> part(b.tokens.data(), static_cast<size_t>(it->first - b.start));
      if (auto s = it->second.find(ExtendKey(b.key, part)); s != it->second.end()) out.push_back(s->second);
    }
    return out;
  }
  // The full block whose end is b's start (nullptr at position 0 or when missing).
  BlockPtr Parent(const DiskMatch::Block& b) const {
    if (b.start == 0) return nullptr;
    auto it = blocks_by_end.find(b.key);
    return it == blocks_by_end.end() || it->second.empty() ? nullptr : it->second.front();
  }
  void Touch(const std::shared_ptr<PackHandle>& pack) {
    auto it = packs.find(pack->sequence());
    if (it != packs.end()) it->second.last_use = ++clock;
  }
};

struct DiskTier::Job {
  std::vector<Token> tokens;
  KvBlockTable blocks;
  std::vector<Checkpoint> checkpoints;
  uint64_t bytes = 0;
};

namespace {

std::string JoinPath(const std::string& dir, const std::string& name) { return dir + "/" + name; }

// mkdir -p.
int MakeDirectories(const std::string& dir, const FaultHook& faults) {
  if (const int e = InjectedFault(faults, "mkdir", dir)) return e;
  std::string partial;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    partial = dir.substr(0, i);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return errno;
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

uint64_t FileBytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

DiskTier::DiskTier(const DiskTierOptions& options, const PackIdentity& identity, const StateGeometry& geometry)
    : options_(options), identity_(identity), geometry_(geometry), index_(std::make_unique<Index>()) {}

std::unique_ptr<DiskTier> DiskTier::Open(const DiskTierOptions& options, const PackIdentity& identity,
                                         const StateGeometry& geometry) {
  std::unique_ptr<DiskTier> tier(new DiskTier(options, identity, geometry));
  tier->stats_.dir = options.dir;
  tier->stats_.budget_bytes = options.budget_bytes;
  tier->OpenDirectory();
  if (tier->enabled_) {
    tier->ScanDirectory();
    tier->writer_ = std::thread([t = tier.get()] { t->WriterLoop(); });
  }
  return tier;
}

void DiskTier::OpenDirectory() {
  if (options_.dir.empty()) {
    status_ = "no cache directory";
    return;
  }
  if (const int e = MakeDirectories(options_.dir, options_.faults)) {
    status_ = fmt::format("cannot use cache directory {}: {}", options_.dir, std::strerror(e));
    return;
  }
  // One server per directory: an exclusive advisory lock, released by the
  // kernel when the process dies (kill -9 included).
  const std::string lock_path = JoinPath(options_.dir, "lock");
  int e = InjectedFault(options_.faults, "lock", lock_path);
  if (e == 0) {
    lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) e = errno;
  }
  if (e != 0) {
    status_ = fmt::format("cannot create {}: {}", lock_path, std::strerror(e));
    return;
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {};
    const ssize_t n = ::pread(lock_fd_, holder, sizeof(holder) - 1, 0);
    status_ = fmt::format("another Cairn server (pid {}) is using cache directory {}; disk tier off",
                          n > 0 ? std::string(holder, static_cast<size_t>(n)) : "?", options_.dir);
    ::close(lock_fd_);
    lock_fd_ = -1;
    return;
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only informational.
  }
  enabled_ = true;
  stats_.writable = true;
}

void DiskTier::ScanDirectory() {
  const std::vector<std::pair<uint64_t, std::string>> files = ListPackFiles(options_.dir);
  std::lock_guard lock(mu_);
  for (const auto& [seq, name] : files) {
    const std::string path = JoinPath(options_.dir, name);
    next_sequence_ = std::max(next_sequence_, seq + 1);
    Index::Pack pack;
    pack.path = path;
    pack.bytes = FileBytes(path);
    pack.last_use = ++index_->clock;   // older sequences are older
    index_->total_bytes += pack.bytes;
    const PackScan scan = ScanPack(path, geometry_.kv.block_tokens, options_.faults);
    std::string reason = scan.identity ? identity_.Mismatch(*scan.identity) : scan.error;
    std::string error;
    if (reason.empty()) pack.handle = PackHandle::Open(path, seq, options_.faults, &error);
    if (reason.empty() && !pack.handle) reason = error;
    if (!reason.empty()) {
      stats_.rejected.push_back({name, reason, pack.bytes});
      index_->packs.emplace(seq, std::move(pack));
      continue;
    }
    if (!scan.damage.empty()) {
      stats_.rejected.push_back({name, fmt::format("records after byte {} ignored: {}", scan.valid_bytes, scan.damage),
                                 pack.bytes - scan.valid_bytes});
    }
    for (const ScannedRecord& r : scan.records) {
      const RecordHeader& h = r.header;
      PayloadRef payload{pack.handle, r.payload_offset, h.payload_bytes, h.payload_checksum};
      if (h.kind == static_cast<uint8_t>(RecordKind::kBlock)) {
        if (h.payload_bytes != geometry_.kv.BlockBytes() || h.position % geometry_.kv.block_tokens != 0) continue;
        auto b = std::make_shared<DiskMatch::Block>();
        b->payload = payload;
        b->start = h.position;
        b->tokens = r.tokens;
        b->key = h.key();
        b->end_key = ExtendKey(b->key, b->tokens);
        if (!index_->FindBlock(b->key, b->tokens)) index_->Add(BlockPtr(std::move(b)));
      } else if (h.kind == static_cast<uint8_t>(RecordKind::kCheckpoint)) {
        if (h.payload_bytes != geometry_.snapshot_bytes || h.checkpoint_kind >= kNumCheckpointKinds) continue;
        auto s = std::make_shared<DiskMatch::Snapshot>();
        s->payload = payload;
        s->position = h.position;
        s->key = h.key();
        s->kind = static_cast<CheckpointKind>(h.checkpoint_kind);
        index_->Add(SnapshotPtr(std::move(s)));
      } else if (h.checkpoint_kind == static_cast<uint8_t>(RecordKind::kBlock)) {
        if (BlockPtr b = index_->FindBlock(h.key(), r.tokens)) index_->Remove(b.get());
      } else {
        auto it = index_->checkpoints.find(h.position);
        if (it != index_->checkpoints.end()) {
          if (auto s = it->second.find(h.key()); s != it->second.end()) index_->Remove(s->second.get());
        }
      }
    }
    index_->packs.emplace(seq, std::move(pack));
  }
  if (!stats_.rejected.empty()) {
    for (const RejectedPack& r : stats_.rejected) LogWarn("disk cache: {}: {}", r.file, r.reason);
  }
  LogInfo("disk cache: {} ({} packs, {:.1f} MiB, {} blocks, {} checkpoints)", options_.dir, index_->packs.size(),
          static_cast<double>(index_->total_bytes) / (1 << 20), index_->n_blocks, index_->n_checkpoints);
}

DiskTier::~DiskTier() {
  if (writer_.joinable()) {
    {
      std::lock_guard lock(queue_mu_);
      stopping_ = true;
    }
    queue_cv_.notify_all();
    writer_.join();
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

// --- lookup -------------------------------------------------------------------

DiskMatch DiskTier::Find(std::span<const Token> prompt, int64_t min_reuse, int64_t ram_reuse) {
  DiskMatch m;
  if (!enabled_) return m;
  const int64_t n = static_cast<int64_t>(prompt.size());
  const int B = geometry_.kv.block_tokens;
  PrefixKeys keys(prompt, B);
  std::lock_guard lock(mu_);
  ++stats_.finds;
  std::vector<BlockPtr> chain;
  for (int64_t i = 0; i * B < n; ++i) {
    auto it = index_->blocks.find(keys.Boundary(i));
    if (it == index_->blocks.end()) break;
    const std::span<const Token> want = prompt.subspan(static_cast<size_t>(i * B),
                                                       static_cast<size_t>(std::min<int64_t>(B, n - i * B)));
    BlockPtr best;
    int64_t best_match = 0;
    for (const BlockPtr& b : it->second) {
      const int64_t match = CommonPrefix(b->tokens, want);
      if (match > best_match) {
        best_match = match;
        best = b;
      }
    }
    if (!best) break;
    chain.push_back(best);
    m.common_prefix = i * B + best_match;
    if (best_match < B) break;
  }
  const int64_t limit = std::min(m.common_prefix, n - 1);
  if (!geometry_.checkpointed) {
    m.reuse_tokens = limit;
  } else {
    for (auto it = index_->checkpoints.upper_bound(limit); it != index_->checkpoints.begin();) {
      --it;
      auto s = it->second.find(keys.At(it->first));
      if (s == it->second.end()) continue;
      m.checkpoint_positions.push_back(it->first);
      if (!m.snapshot) {
        m.snapshot = s->second;
        m.kind = s->second->kind;
        m.reuse_tokens = it->first;
      }
    }
    std::reverse(m.checkpoint_positions.begin(), m.checkpoint_positions.end());
  }
  if (m.reuse_tokens < min_reuse || m.reuse_tokens <= ram_reuse) {
    m.reason = m.common_prefix == 0 ? "" : fmt::format("disk holds {} common tokens, reusable {}", m.common_prefix,
                                                       m.reuse_tokens);
    m.reuse_tokens = 0;
    m.snapshot.reset();
    return m;
  }
  chain.resize(static_cast<size_t>((m.reuse_tokens + B - 1) / B));
  m.blocks.assign(chain.begin(), chain.end());
  for (const BlockPtr& b : m.blocks) index_->Touch(b->payload.pack);
  if (m.snapshot) index_->Touch(m.snapshot->payload.pack);
  return m;
}

DiskLoad DiskTier::Load(const DiskMatch& match, const KvBlockTable& ram_blocks, int64_t ram_reuse) {
  DiskLoad load;
  const Stopwatch clock;
  const int64_t B = geometry_.kv.block_tokens;
  auto fail = [&](std::string error, const DiskMatch::Block* block, const DiskMatch::Snapshot* snapshot) {
    std::lock_guard lock(mu_);
    if (block) index_->Remove(block);
    if (snapshot) index_->Remove(snapshot);
    ++stats_.load_failures;
    stats_.last_error = error;
    LogWarn("disk cache: {}; the record is dropped", error);
    load.error = std::move(error);
    load.blocks.clear();
    load.snapshot.reset();
    return load;
  };
  // Full blocks below the RAM hit are RAM's; the rest come from disk.
  load.blocks.resize(match.blocks.size());
  std::vector<size_t> to_read;
  for (size_t i = 0; i < match.blocks.size(); ++i) {
    const int64_t end = static_cast<int64_t>(i + 1) * B;
    if (end <= ram_reuse && i < ram_blocks.size() && ram_blocks[i]) {
      load.blocks[i] = ram_blocks[i];
    } else {
      to_read.push_back(i);
      const PayloadRef& p = match.blocks[i]->payload;
      p.pack->Prefetch(p.offset, p.bytes);
    }
  }
  if (match.snapshot) match.snapshot->payload.pack->Prefetch(match.snapshot->payload.offset, match.snapshot->payload.bytes);
  // Two readers over contiguous halves: copying out of the page cache (and
  // faulting in the new blocks) is CPU-bound, the device reads ahead for both.
  struct Failure {
    size_t index = SIZE_MAX;
    std::string error;
  };
  auto read_range = [&](size_t from, size_t to, Failure* failure) {
    for (size_t k = from; k < to; ++k) {
      const size_t i = to_read[k];
      const DiskMatch::Block& b = *match.blocks[i];
      auto block = std::make_shared<KvBlock>(geometry_.kv);
      if (!b.payload.pack->ReadPayload(b.payload.offset, std::span<uint8_t>(block->data(), block->bytes()),
                                       b.payload.checksum, options_.faults, &failure->error)) {
        failure->index = i;
        return;
      }
      block->Freeze();
      load.blocks[i] = std::move(block);
    }
  };
  Failure failures[2];
  const size_t half = to_read.size() >= 8 ? to_read.size() / 2 : to_read.size();
  std::thread helper;
  if (half < to_read.size()) helper = std::thread(read_range, half, to_read.size(), &failures[1]);
  read_range(0, half, &failures[0]);
  if (helper.joinable()) helper.join();
  for (const Failure& f : failures) {
    if (f.index != SIZE_MAX) return fail(f.error, match.blocks[f.index].get(), nullptr);
  }
  load.bytes_read += to_read.size() * geometry_.kv.BlockBytes();
  if (match.snapshot) {
    const DiskMatch::Snapshot& s = *match.snapshot;
    AlignedBuffer<uint8_t> data(static_cast<size_t>(s.payload.bytes));
    std::string error;
    if (!s.payload.pack->ReadPayload(s.payload.offset, std::span<uint8_t>(data.data(), data.size()),
                                     s.payload.checksum, options_.faults, &error)) {
      return fail(error, nullptr, &s);
    }
    load.bytes_read += data.size();
    load.snapshot = std::make_shared<RecurrentSnapshot>(s.position, std::move(data));
  }
  load.ok = true;
  load.seconds = clock.Seconds();
  std::lock_guard lock(mu_);
  ++stats_.hits;
  stats_.hit_tokens += static_cast<uint64_t>(match.reuse_tokens);
  stats_.loaded_bytes += load.bytes_read;
  stats_.load_seconds += load.seconds;
  return load;
}

// --- writing --------------------------------------------------------------------

void DiskTier::Persist(std::vector<Token> tokens, KvBlockTable blocks, std::vector<Checkpoint> checkpoints) {
  if (!enabled_ || tokens.empty()) return;
  auto job = std::make_unique<Job>();
  for (const KvBlockRef& b : blocks) job->bytes += b ? b->bytes() : 0;
  for (const Checkpoint& c : checkpoints) job->bytes += c.snapshot ? c.snapshot->bytes() : 0;
  job->tokens = std::move(tokens);
  job->blocks = std::move(blocks);
  job->checkpoints = std::move(checkpoints);
  {
    std::lock_guard lock(queue_mu_);
    // The queue holds references, so its bytes stay alive after a RAM
    // eviction: bounded, and a newer path of the same session supersedes
    // older queued ones anyway.
    if (pending_bytes_ + job->bytes > options_.max_pending_bytes && !queue_.empty()) {
      std::lock_guard stats_lock(mu_);
      ++stats_.dropped_jobs;
      return;
    }
    pending_bytes_ += job->bytes;
    queue_.push_back(std::move(job));
  }
  queue_cv_.notify_one();
}

void DiskTier::Flush() {
  std::unique_lock lock(queue_mu_);
  idle_cv_.wait(lock, [&] { return (queue_.empty() && !writing_) || !writer_.joinable(); });
}

void DiskTier::DropPending() {
  std::deque<std::unique_ptr<Job>> dropped;
  {
    std::lock_guard lock(queue_mu_);
    for (const auto& job : queue_) pending_bytes_ -= job->bytes;
    dropped.swap(queue_);
    if (!writing_) idle_cv_.notify_all();
  }
  if (!dropped.empty()) {
    std::lock_guard lock(mu_);
    stats_.dropped_jobs += dropped.size();
  }
}

void DiskTier::WriterLoop() {
  std::unique_lock lock(queue_mu_);
  while (true) {
    queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;   // stopping, nothing left
    std::unique_ptr<Job> job = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    WriteJob(*job);
    lock.lock();
    pending_bytes_ -= job->bytes;
    writing_ = false;
    job.reset();
    if (queue_.empty()) idle_cv_.notify_all();
  }
  writing_ = false;
  idle_cv_.notify_all();
}

void DiskTier::WriteJob(const Job& job) {
  const int B = geometry_.kv.block_tokens;
  const std::span<const Token> tokens(job.tokens);
  const int64_t n = static_cast<int64_t>(tokens.size());
  PrefixKeys keys(tokens, B);
  const int64_t n_blocks = std::min<int64_t>((n + B - 1) / B, static_cast<int64_t>(job.blocks.size()));
  for (int64_t i = 0; i < n_blocks; ++i) {
    const KvBlockRef& block = job.blocks[static_cast<size_t>(i)];
    if (!block || block->bytes() != geometry_.kv.BlockBytes()) return;
    const int64_t start = i * B;
    const std::span<const Token> content = tokens.subspan(static_cast<size_t>(start),
                                                          static_cast<size_t>(std::min<int64_t>(B, n - start)));
    const ChainKey key = keys.Boundary(i);
    {
      std::lock_guard lock(mu_);
      auto it = index_->blocks.find(key);
      bool held = false;
      if (it != index_->blocks.end()) {
        for (const BlockPtr& b : it->second) {
          if (b->tokens.size() >= content.size() && std::equal(content.begin(), content.end(), b->tokens.begin())) {
            index_->Touch(b->payload.pack);
            held = true;
            break;
          }
        }
      }
      if (held) {
        ++stats_.skipped_records;
        continue;
      }
    }
    if (!WriteRecord(RecordKind::kBlock, CheckpointKind::kBoundary, start, key, content,
                     std::span<const uint8_t>(block->data(), block->bytes()))) {
      return;   // a failed write ends the job: later blocks would be unreachable without this one
    }
  }
  for (const Checkpoint& c : job.checkpoints) {
    if (!c.snapshot || c.position < 1 || c.position > n || c.snapshot->bytes() != geometry_.snapshot_bytes) continue;
    const ChainKey key = keys.At(c.position);
    {
      std::lock_guard lock(mu_);
      auto it = index_->checkpoints.find(c.position);
      if (it != index_->checkpoints.end() && it->second.contains(key)) {
        index_->Touch(it->second.at(key)->payload.pack);
        ++stats_.skipped_records;
        continue;
      }
    }
    if (!WriteRecord(RecordKind::kCheckpoint, c.kind, c.position, key, {},
                     std::span<const uint8_t>(c.snapshot->data(), c.snapshot->bytes()))) {
      return;
    }
  }
}

void DiskTier::RecordWriteError(const std::string& error, int error_number) {
  std::lock_guard lock(mu_);
  ++stats_.write_errors;
  stats_.last_error = error;
  // A full disk may clear (and our own packs can be evicted to make room); a
  // read-only or missing directory does not: stop trying after a few.
  if (++consecutive_write_errors_ >= 3 && error_number != ENOSPC) {
    stats_.writable = false;
    status_ = fmt::format("read-only: {}", error);
  }
  LogWarn("disk cache: {}", error);
}

bool DiskTier::MakeRoomLocked(uint64_t record_bytes) {
  if (record_bytes > options_.budget_bytes) return false;
  while (index_->total_bytes + record_bytes > options_.budget_bytes) {
    // Least recently used pack first; the open one last (closing it first).
    uint64_t victim = 0;
    uint64_t oldest = UINT64_MAX;
    for (const auto& [seq, pack] : index_->packs) {
      const bool open = appender_ && seq == appender_sequence_;
      const uint64_t age = open ? UINT64_MAX - 1 : pack.last_use;
      if (age < oldest) {
        oldest = age;
        victim = seq;
      }
    }
    if (oldest == UINT64_MAX) return false;
    if (appender_ && victim == appender_sequence_) appender_.reset();
    EvictPackLocked(victim);
  }
  return true;
}

void DiskTier::EvictPackLocked(uint64_t sequence) {
  auto it = index_->packs.find(sequence);
  if (it == index_->packs.end()) return;
  if (it->second.handle) index_->DropRecordsOf(it->second.handle.get());
  if (InjectedFault(options_.faults, "unlink", it->second.path) == 0) ::unlink(it->second.path.c_str());
  index_->total_bytes -= std::min(index_->total_bytes, it->second.bytes);
  index_->packs.erase(it);
  ++stats_.evicted_packs;
}

bool DiskTier::WriteRecord(RecordKind kind, CheckpointKind ckind, int64_t position, const ChainKey& key,
                           std::span<const Token> tokens, std::span<const uint8_t> payload) {
  std::lock_guard write_lock(write_mu_);
  {
    std::lock_guard lock(mu_);
    if (!stats_.writable) return false;
  }
  const uint64_t record_bytes = kRecordHeaderBytes + tokens.size_bytes() + payload.size();
  std::string error;
  int error_number = 0;
  {
    std::lock_guard lock(mu_);
    if (appender_ && appender_->bytes() + record_bytes > options_.pack_bytes) {
      appender_.reset();
    }
    const uint64_t header_room = appender_ ? 0 : EncodeFileHeader(identity_).size();
    if (!MakeRoomLocked(record_bytes + header_room)) {
      ++stats_.dropped_jobs;
      return false;
    }
  }
  if (!appender_) {
    const uint64_t seq = next_sequence_++;
    const std::string path = JoinPath(options_.dir, PackFileName(seq));
    appender_ = PackAppender::Create(path, identity_, options_.faults, &error, &error_number);
    if (!appender_) {
      RecordWriteError(error, error_number);
      return false;
    }
    std::string open_error;
    auto handle = PackHandle::Open(path, seq, options_.faults, &open_error);
    if (!handle) {
      appender_.reset();
      ::unlink(path.c_str());
      RecordWriteError(open_error, EIO);
      return false;
    }
    appender_sequence_ = seq;
    std::lock_guard lock(mu_);
    Index::Pack pack;
    pack.path = path;
    pack.handle = std::move(handle);
    pack.bytes = appender_->bytes();
    pack.last_use = ++index_->clock;
    index_->total_bytes += pack.bytes;
    index_->packs.emplace(seq, std::move(pack));
  }
  RecordHeader header;
  header.kind = static_cast<uint8_t>(kind);
  header.checkpoint_kind = static_cast<uint8_t>(ckind);
  header.position = position;
  header.set_key(key);
  const uint64_t before = appender_->bytes();
  const int64_t offset = appender_->Append(header, tokens, payload, &error, &error_number);
  if (offset < 0) {
    appender_.reset();   // the next record starts a fresh pack
    RecordWriteError(error, error_number);
    return false;
  }
  std::lock_guard lock(mu_);
  consecutive_write_errors_ = 0;
  auto pack = index_->packs.find(appender_sequence_);
  if (pack == index_->packs.end()) return false;   // cleared meanwhile
  pack->second.bytes = appender_->bytes();
  pack->second.last_use = ++index_->clock;
  index_->total_bytes += appender_->bytes() - before;
  ++stats_.written_records;
  stats_.written_bytes += record_bytes;
  PayloadRef ref{pack->second.handle, static_cast<uint64_t>(offset), payload.size(), PayloadChecksum(payload)};
  if (kind == RecordKind::kBlock) {
    auto b = std::make_shared<DiskMatch::Block>();
    b->payload = ref;
    b->start = position;
    b->tokens.assign(tokens.begin(), tokens.end());
    b->key = key;
    b->end_key = ExtendKey(key, tokens);
    index_->Add(BlockPtr(std::move(b)));
  } else if (kind == RecordKind::kCheckpoint) {
    auto s = std::make_shared<DiskMatch::Snapshot>();
    s->payload = ref;
    s->position = position;
    s->key = key;
    s->kind = ckind;
    index_->Add(SnapshotPtr(std::move(s)));
  }
  return true;
}

// --- management -----------------------------------------------------------------

void DiskTier::Clear() {
  if (!enabled_) return;
  std::lock_guard write_lock(write_mu_);
  std::lock_guard lock(mu_);
  appender_.reset();
  std::vector<uint64_t> all;
  for (const auto& [seq, pack] : index_->packs) all.push_back(seq);
  for (uint64_t seq : all) EvictPackLocked(seq);
  stats_.rejected.clear();
  // Pack files that appeared after the scan (none while we hold the lock) or
  // that we never indexed still go.
  for (const auto& [seq, name] : ListPackFiles(options_.dir)) ::unlink(JoinPath(options_.dir, name).c_str());
}

bool DiskTier::RemoveEntry(const ChainKey& id) {
  if (!enabled_) return false;
  std::vector<BlockPtr> path;
  std::vector<SnapshotPtr> snapshots;
  {
    std::lock_guard lock(mu_);
    auto tip = index_->blocks_by_end.find(id);
    if (tip == index_->blocks_by_end.end() || tip->second.empty()) return false;
    BlockPtr b = tip->second.front();
    // An entry is a tip: no block continues it.
    if (index_->blocks.contains(b->end_key)) return false;
    while (b) {
      path.push_back(b);
      for (SnapshotPtr& snapshot : index_->CheckpointsIn(*b)) snapshots.push_back(std::move(snapshot));
      // Walk up while the parent has no other child.
      auto siblings = index_->blocks.find(b->key);
      if (siblings != index_->blocks.end() && siblings->second.size() > 1) break;
      b = index_->Parent(*b);
    }
  }
  // Tombstones first, so a restart does not bring the entry back.
  for (const BlockPtr& b : path) {
    WriteRecord(RecordKind::kTombstone, static_cast<CheckpointKind>(RecordKind::kBlock), b->start, b->key, b->tokens, {});
  }
  for (const SnapshotPtr& s : snapshots) {
    WriteRecord(RecordKind::kTombstone, static_cast<CheckpointKind>(RecordKind::kCheckpoint), s->position, s->key, {},
                {});
  }
  std::lock_guard lock(mu_);
  for (const BlockPtr& b : path) index_->Remove(b.get());
  for (const SnapshotPtr& s : snapshots) index_->Remove(s.get());
  return true;
}

std::vector<DiskEntryInfo> DiskTier::List() {
  std::vector<DiskEntryInfo> out;
  if (!enabled_) return out;
  std::lock_guard lock(mu_);
  for (const auto& [end, list] : index_->blocks_by_end) {
    if (index_->blocks.contains(end)) continue;   // continued: not a tip
    const BlockPtr& tip = list.front();
    DiskEntryInfo e;
    e.id = end.Hex();
    e.tokens = tip->start + static_cast<int64_t>(tip->tokens.size());
    for (BlockPtr b = tip; b; b = index_->Parent(*b)) {
      e.bytes += b->payload.bytes;
      for (const SnapshotPtr& snapshot : index_->CheckpointsIn(*b)) {
        e.checkpoints.push_back(snapshot->position);
        e.bytes += snapshot->payload.bytes;
      }
    }
    std::sort(e.checkpoints.begin(), e.checkpoints.end());
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const DiskEntryInfo& a, const DiskEntryInfo& b) { return a.tokens > b.tokens; });
  return out;
}

DiskStats DiskTier::Stats() {
  uint64_t pending = 0;
  {
    std::lock_guard queue_lock(queue_mu_);   // never nested inside mu_ (Persist takes them in the other order)
    pending = pending_bytes_;
  }
  std::lock_guard lock(mu_);
  DiskStats s = stats_;
  s.enabled = enabled_;
  s.status = status_;
  s.bytes = index_->total_bytes;
  s.packs = static_cast<int64_t>(index_->packs.size());
  s.block_records = index_->n_blocks;
  s.checkpoint_records = index_->n_checkpoints;
  s.pending_bytes = pending;
  return s;
}

}  // namespace cairn::cache::disk
