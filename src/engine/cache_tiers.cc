#include "engine/cache_tiers.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdlib>

#include "core/log.h"

namespace cairn::engine {

std::string DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/cairn/kv";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && home[0] != '\0' ? home : "/tmp") + "/.cache/cairn/kv";
}

uint64_t DefaultDiskBudget(const std::string& dir) {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  // The directory may not exist yet: ask the nearest existing ancestor.
  std::string probe = dir;
  struct statvfs fs {};
  while (!probe.empty() && ::statvfs(probe.c_str(), &fs) != 0) {
    const size_t slash = probe.find_last_of('/');
    probe = slash == std::string::npos || slash == 0 ? (slash == 0 ? "/" : "") : probe.substr(0, slash);
    if (probe == "/") {
      if (::statvfs("/", &fs) != 0) return kGiB;
      break;
    }
  }
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  return std::max(kGiB, std::min(20 * kGiB, free_bytes / 2));
}

CacheTiers::CacheTiers(CacheTiersOptions options) : options_(std::move(options)) {
  ram_ = std::make_unique<cache::PrefixCache>(options_.ram);
  if (options_.disk && options_.ram.enabled) {
    disk_ = cache::disk::DiskTier::Open(options_.disk_options, options_.identity, options_.geometry);
    if (!disk_->enabled()) LogWarn("disk cache off: {}", disk_->Stats().status);
  }
  if (options_.memory_guard && options_.ram.enabled) {
    std::unique_ptr<cache::PressureSource> source = std::move(options_.pressure_source);
    if (!source) source = std::make_unique<cache::SystemPressureSource>();
    guard_ = std::make_unique<cache::MemoryGuard>(
        std::move(source), options_.thresholds, options_.guard_interval,
        [this](cache::PressureGrade from, cache::PressureGrade to, const cache::MemoryReading& r) {
          LogWarn("memory pressure {} -> {} (available {:.1f}%, psi some {:.1f}): cache {}", cache::ToString(from),
                  cache::ToString(to), r.AvailableFraction() * 100, r.psi_some_avg10,
                  to == cache::PressureGrade::kNormal ? "budget restored" : "shedding");
          ApplyPressure(to);
        });
    guard_->Start();
  }
}

CacheTiers::~CacheTiers() {
  if (guard_) guard_->Stop();
  guard_.reset();
}

TieredHit CacheTiers::Lookup(const cache::LookupRequest& request) {
  TieredHit hit;
  hit.result = ram_->Lookup(request);
  if (!disk_ || !disk_->enabled()) return hit;
  const int64_t ram_reuse = hit.result.reuse_tokens;
  cache::disk::DiskMatch match = disk_->Find(request.tokens, options_.ram.min_reuse, ram_reuse);
  if (match.reuse_tokens <= ram_reuse) {
    hit.disk_note = match.reason;
    return hit;
  }
  cache::disk::DiskLoad load = disk_->Load(match, hit.result.blocks, ram_reuse);
  if (!load.ok) {
    hit.disk_note = "disk entry not used: " + load.error;
    return hit;
  }
  // Adopt into RAM, so later turns hit there; the result is built from what
  // was read either way (the RAM tier may refuse or evict it at once).
  const std::span<const cache::Token> path = request.tokens.first(static_cast<size_t>(match.reuse_tokens));
  std::vector<cache::Checkpoint> checkpoints;
  if (load.snapshot) checkpoints.push_back({match.reuse_tokens, load.snapshot, match.kind});
  try {
    ram_->Insert(path, load.blocks, checkpoints);
  } catch (const std::exception& e) {
    LogWarn("disk cache: RAM tier did not adopt a disk hit: {}", e.what());
  }
  cache::LookupResult r;
  r.kind = options_.ram.hybrid ? cache::HitKindOf(match.kind) : cache::HitKind::kTrim;
  r.reuse_tokens = match.reuse_tokens;
  r.blocks = std::move(load.blocks);
  r.snapshot = std::move(load.snapshot);
  r.lcp = std::max(hit.result.lcp, match.common_prefix);
  r.cached_checkpoints = hit.result.cached_checkpoints;
  for (int64_t p : match.checkpoint_positions) r.cached_checkpoints.push_back(p);
  std::sort(r.cached_checkpoints.begin(), r.cached_checkpoints.end());
  r.cached_checkpoints.erase(std::unique(r.cached_checkpoints.begin(), r.cached_checkpoints.end()),
                             r.cached_checkpoints.end());
  if (r.reuse_tokens < r.lcp && !hit.result.reason.empty() && hit.result.lcp >= r.lcp) r.reason = hit.result.reason;
  r.divergence = hit.result.divergence;
  hit.disk_tokens = match.reuse_tokens - ram_reuse;
  hit.disk_bytes = load.bytes_read;
  hit.disk_seconds = load.seconds;
  hit.result = std::move(r);
  return hit;
}

void CacheTiers::Insert(std::span<const cache::Token> tokens, const KvBlockTable& blocks,
                        const std::vector<cache::Checkpoint>& checkpoints) {
  ram_->Insert(tokens, blocks, checkpoints);
  if (disk_ && disk_->enabled() && grade_.load() != cache::PressureGrade::kDrop) {
    const size_t n_blocks = std::min(blocks.size(), (tokens.size() + static_cast<size_t>(options_.ram.block_tokens) - 1) /
                                                         static_cast<size_t>(options_.ram.block_tokens));
    disk_->Persist(std::vector<cache::Token>(tokens.begin(), tokens.end()),
                   KvBlockTable(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(n_blocks)), checkpoints);
  }
}

void CacheTiers::Clear() {
  ram_->Clear();
  if (disk_) {
    disk_->DropPending();
    disk_->Clear();
  }
}

bool CacheTiers::RemoveEntry(std::string_view id) {
  const bool in_ram = ram_->RemoveEntry(id);
  bool on_disk = false;
  cache::ChainKey key;
  if (disk_ && cache::ChainKey::FromHex(id, &key)) {
    disk_->Flush();   // a queued write of this entry would bring it back
    on_disk = disk_->RemoveEntry(key);
  }
  return in_ram || on_disk;
}

void CacheTiers::ApplyPressure(cache::PressureGrade grade) {
  std::lock_guard lock(pressure_mu_);
  grade_.store(grade);
  ++grade_entries_[static_cast<int>(grade)];
  switch (grade) {
    case cache::PressureGrade::kNormal:
      ram_->SetBudget(options_.ram.budget_bytes);
      break;
    case cache::PressureGrade::kShed:
      ram_->Shed(cache::ShedLevel::kWarn);
      break;
    case cache::PressureGrade::kSpill: {
      ram_->Shed(cache::ShedLevel::kWarn);
      // What leaves RAM now is on disk already (write-behind) or queued for it.
      ram_->SetBudget(std::min(options_.ram.budget_bytes, ram_->Stats().bytes_held / 2));
      break;
    }
    case cache::PressureGrade::kDrop:
      ram_->Shed(cache::ShedLevel::kCritical);
      ram_->SetBudget(0);
      if (disk_) disk_->DropPending();
      break;
  }
}

Json CacheTiers::Listing() {
  Json entries = Json::array();
  for (const cache::EntryInfo& e : ram_->List()) {
    Json checkpoints = Json::array();
    for (const cache::CheckpointInfo& c : e.checkpoints) {
      Json cp{{"position", c.position},
              {"kind", std::string(cache::ToString(c.kind))},
              {"bytes", c.bytes},
              {"hits", c.hits},
              {"last_use", c.last_use}};
      if (c.replay_tokens > 0) cp["replay_tokens"] = c.replay_tokens;
      checkpoints.push_back(std::move(cp));
    }
    entries.push_back(Json{{"id", e.id},
                           {"tokens", e.tokens},
                           {"shared_tokens", e.shared_tokens},
                           {"bytes", e.bytes},
                           {"exclusive_bytes", e.exclusive_bytes},
                           {"last_use", e.last_use},
                           {"hits", e.hits},
                           {"checkpoints", checkpoints}});
  }
  const cache::CacheStats s = ram_->Stats();
  Json out{{"enabled", options_.ram.enabled},
           {"mode", options_.ram.hybrid ? "checkpoint" : "trim"},
           {"bytes", s.bytes_held},
           {"budget_bytes", s.budget_bytes},
           {"checkpoint_bytes", s.checkpoint_bytes},
           {"checkpoint_budget_bytes", s.checkpoint_budget_bytes},
           {"entries", entries}};
  Json memory{{"grade", std::string(cache::ToString(grade_.load()))}, {"guard", guard_ != nullptr}};
  if (guard_) {
    const cache::MemoryReading r = guard_->last_reading();
    memory["available_fraction"] = r.AvailableFraction();
    memory["mem_available_bytes"] = r.mem_available_bytes;
    memory["cgroup_max_bytes"] = r.cgroup_max_bytes;
    memory["cgroup_current_bytes"] = r.cgroup_current_bytes;
    memory["psi_some_avg10"] = r.psi_some_avg10;
    memory["psi_full_avg10"] = r.psi_full_avg10;
  }
  out["memory"] = memory;
  Json disk{{"enabled", false}};
  if (disk_) {
    const cache::disk::DiskStats d = disk_->Stats();
    Json disk_entries = Json::array();
    for (const cache::disk::DiskEntryInfo& e : disk_->List()) {
      disk_entries.push_back(Json{{"id", e.id}, {"tokens", e.tokens}, {"bytes", e.bytes}, {"checkpoints", e.checkpoints}});
    }
    Json rejected = Json::array();
    for (const auto& r : d.rejected) rejected.push_back(Json{{"file", r.file}, {"reason", r.reason}, {"bytes", r.bytes}});
    disk = Json{{"enabled", d.enabled},
                {"writable", d.writable},
                {"status", d.status},
                {"dir", d.dir},
                {"bytes", d.bytes},
                {"budget_bytes", d.budget_bytes},
                {"packs", d.packs},
                {"block_records", d.block_records},
                {"checkpoint_records", d.checkpoint_records},
                {"pending_bytes", d.pending_bytes},
                {"hits", d.hits},
                {"hit_tokens", d.hit_tokens},
                {"load_failures", d.load_failures},
                {"write_errors", d.write_errors},
                {"last_error", d.last_error},
                {"rejected", rejected},
                {"entries", disk_entries}};
  }
  out["disk"] = disk;
  return out;
}

std::string CacheTiers::MetricsText() {
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help, auto value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help, type, value);
  };
  metric("cairn_memory_pressure_grade", "gauge", "Memory-pressure grade: 0 normal, 1 shed, 2 spill, 3 drop.",
         static_cast<int>(grade_.load()));
  out += "# HELP cairn_memory_pressure_entries_total Times each pressure grade was entered.\n"
         "# TYPE cairn_memory_pressure_entries_total counter\n";
  {
    std::lock_guard lock(pressure_mu_);
    for (int g = 0; g < 4; ++g) {
      out += fmt::format("cairn_memory_pressure_entries_total{{grade=\"{}\"}} {}\n",
                         cache::ToString(static_cast<cache::PressureGrade>(g)), grade_entries_[g]);
    }
  }
  if (disk_) {
    const cache::disk::DiskStats d = disk_->Stats();
    metric("cairn_disk_cache_enabled", "gauge", "1 when the disk tier is in use.", d.enabled ? 1 : 0);
    metric("cairn_disk_cache_bytes", "gauge", "Bytes of pack files in the cache directory.", d.bytes);
    metric("cairn_disk_cache_budget_bytes", "gauge", "Disk-tier budget.", d.budget_bytes);
    metric("cairn_disk_cache_pending_bytes", "gauge", "State queued for writing.", d.pending_bytes);
    metric("cairn_disk_cache_hits_total", "counter", "Lookups served (partly) from disk.", d.hits);
    metric("cairn_disk_cache_hit_tokens_total", "counter", "Prompt tokens restored from disk.", d.hit_tokens);
    metric("cairn_disk_cache_read_bytes_total", "counter", "Bytes read back from disk.", d.loaded_bytes);
    metric("cairn_disk_cache_load_failures_total", "counter", "Disk records that failed a checksum or read.",
           d.load_failures);
    metric("cairn_disk_cache_written_bytes_total", "counter", "Bytes written to pack files.", d.written_bytes);
    metric("cairn_disk_cache_write_errors_total", "counter", "Failed writes (full disk, read-only, I/O).",
           d.write_errors);
    metric("cairn_disk_cache_dropped_jobs_total", "counter", "Write jobs dropped (queue full or over budget).",
           d.dropped_jobs);
    metric("cairn_disk_cache_evicted_packs_total", "counter", "Pack files deleted to stay within the budget.",
           d.evicted_packs);
  }
  return out;
}

}  // namespace cairn::engine
