// The disk tier on small fake state: round trips, restart, validation and the
// fault cases of docs/disk-cache.md (other model / layout / target / format,
// truncation at every byte = kill -9 during a write, flipped bits, ENOSPC,
// read-only directory, two servers on one directory), the budget, removal and
// clearing. Every served byte is compared with what was persisted.
#include "cache/disk/disk_tier.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

#include "cache/chain_key.h"

namespace cairn::cache::disk {
namespace {

namespace fs = std::filesystem;
constexpr int kB = 4;   // tokens per block

KvLayout Layout() {
  KvLayout l;
  l.n_attn_layers = 2;
  l.n_kv_heads = 1;
  l.head_dim = 4;
  l.block_tokens = kB;
  return l;   // 2 * 2 * 4 * 4 * 2 = 128 bytes per block
}

StateGeometry Geometry(bool checkpointed) {
  StateGeometry g;
  g.kv = Layout();
  g.checkpointed = checkpointed;
  g.snapshot_bytes = checkpointed ? 48 : 0;
  return g;
}

PackIdentity Identity(std::string model = "model-a") {
  PackIdentity id;
  id.model_id = std::move(model);
  id.layout = "fake layout";
  id.target = "FAKE";
  return id;
}

// KV bytes that depend on the whole prefix, as real KV does.
KvBlockTable BlocksFor(const std::vector<Token>& tokens) {
  KvBlockTable blocks;
  uint32_t h = 17;
  for (size_t i = 0; i < tokens.size(); i += kB) {
    auto b = std::make_shared<KvBlock>(Layout());
    for (size_t j = 0; j < b->bytes(); ++j) {
      const size_t t = std::min(tokens.size() - 1, i + j % kB);
      h = h * 31 + static_cast<uint32_t>(tokens[t]) + static_cast<uint32_t>(j);
      b->data()[j] = static_cast<uint8_t>(h >> 7);
    }
    b->Freeze();
    blocks.push_back(std::move(b));
  }
  return blocks;
}

RecurrentSnapshotRef SnapshotAt(const std::vector<Token>& tokens, int64_t p) {
  AlignedBuffer<uint8_t> data(48);
  for (size_t j = 0; j < 48; ++j) data.data()[j] = static_cast<uint8_t>(tokens[static_cast<size_t>(p - 1)] * 7 + j + p);
  return std::make_shared<RecurrentSnapshot>(p, std::move(data));
}

std::vector<Token> Seq(int n, int salt = 0) {
  std::vector<Token> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<size_t>(i)] = 100 + i + salt * 1000;
  return t;
}

// Fresh directory per test (cairn_disk_test_XXXXXX under /tmp).
using TempDir = test::TempDir;

DiskTierOptions Options(const std::string& dir) {
  DiskTierOptions o;
  o.dir = dir;
  o.budget_bytes = 1 << 20;
  o.pack_bytes = 64 << 10;
  return o;
}

std::vector<std::string> PackFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (PackSequence(e.path().filename().string())) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t PackBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const std::string& f : PackFiles(dir)) total += fs::file_size(f);
  return total;
}

// Blocks restored for `prompt` equal the persisted `expected` blocks on every valid row.
void ExpectSameBlocks(const KvBlockTable& got, const KvBlockTable& expected, size_t n) {
  ASSERT_LE(n, expected.size());
  ASSERT_EQ(got.size(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(got[i]);
    EXPECT_EQ(0, std::memcmp(got[i]->data(), expected[i]->data(), expected[i]->bytes())) << "block " << i;
    EXPECT_TRUE(got[i]->frozen());
  }
}

void Persist(DiskTier& tier, const std::vector<Token>& tokens, std::vector<Checkpoint> checkpoints = {}) {
  tier.Persist(tokens, BlocksFor(tokens), std::move(checkpoints));
  tier.Flush();
}

TEST(ChainKey, HexRoundTripsAndKeysNameWholePrefixes) {
  const std::vector<Token> a = Seq(10);
  PrefixKeys keys(a, kB);
  ChainKey parsed;
  ASSERT_TRUE(ChainKey::FromHex(keys.At(10).Hex(), &parsed));
  EXPECT_EQ(parsed, keys.At(10));
  EXPECT_FALSE(ChainKey::FromHex("xyz", &parsed));
  EXPECT_FALSE(ChainKey::FromHex(std::string(32, 'G'), &parsed));
  // K(8) is the chain over two blocks; K(6) extends K(4) by two tokens.
  EXPECT_EQ(keys.At(8), ExtendKey(ExtendKey(ChainKey::Root(), {a.data(), 4}), {a.data() + 4, 4}));
  EXPECT_EQ(keys.At(6), ExtendKey(keys.At(4), {a.data() + 4, 2}));
  std::vector<Token> b = a;
  b[1] = 7;
  PrefixKeys other(b, kB);
  EXPECT_NE(other.At(8), keys.At(8));   // an early token changes every later key
  EXPECT_EQ(other.At(0), keys.At(0));
}

TEST(DiskTier, DensePathRoundTripsAndSurvivesRestart) {
  TempDir dir;
  const std::vector<Token> path = Seq(10);   // blocks [0,4) [4,8) [8,10)
  const KvBlockTable blocks = BlocksFor(path);
  {
    auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
    ASSERT_TRUE(tier->enabled()) << tier->Stats().status;
    Persist(*tier, path);
    EXPECT_EQ(tier->Stats().written_records, 3u);
  }
  auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  ASSERT_TRUE(tier->enabled());
  std::vector<Token> prompt = path;
  prompt.push_back(5);
  prompt.push_back(6);
  const DiskMatch m = tier->Find(prompt, 1, 0);
  EXPECT_EQ(m.reuse_tokens, 10);
  EXPECT_EQ(m.common_prefix, 10);
  const DiskLoad load = tier->Load(m, {}, 0);
  ASSERT_TRUE(load.ok) << load.error;
  ExpectSameBlocks(load.blocks, blocks, 3);
  EXPECT_EQ(load.bytes_read, 3 * Layout().BlockBytes());
  // The same prompt: the last token is always recomputed.
  EXPECT_EQ(tier->Find(path, 1, 0).reuse_tokens, 9);
  // Divergence inside block 1 at position 6.
  std::vector<Token> diverged = path;
  diverged[6] = 1;
  EXPECT_EQ(tier->Find(diverged, 1, 0).reuse_tokens, 6);
  // Nothing beats a deeper RAM hit; min_reuse is honoured.
  EXPECT_EQ(tier->Find(prompt, 1, 10).reuse_tokens, 0);
  EXPECT_EQ(tier->Find(diverged, 7, 0).reuse_tokens, 0);
  // A different first token shares nothing.
  std::vector<Token> other = path;
  other[0] = 3;
  EXPECT_EQ(tier->Find(other, 1, 0).reuse_tokens, 0);
}

TEST(DiskTier, LoadTakesFullBlocksBelowTheRamHitFromRam) {
  TempDir dir;
  const std::vector<Token> path = Seq(12);
  auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  Persist(*tier, path);
  KvBlockTable ram = BlocksFor(path);
  ram.resize(2);
  std::vector<Token> prompt = path;
  prompt.push_back(1);
  const DiskMatch m = tier->Find(prompt, 1, 8);
  ASSERT_EQ(m.reuse_tokens, 12);
  const DiskLoad load = tier->Load(m, ram, 8);
  ASSERT_TRUE(load.ok);
  EXPECT_EQ(load.blocks[0], ram[0]);   // the same objects, not copies
  EXPECT_EQ(load.blocks[1], ram[1]);
  EXPECT_EQ(load.bytes_read, Layout().BlockBytes());
  ExpectSameBlocks(load.blocks, BlocksFor(path), 3);
}

TEST(DiskTier, HybridReusesTheDeepestCheckpointOnThePath) {
  TempDir dir;
  const std::vector<Token> path = Seq(14);
  {
    auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(true));
    Persist(*tier, path,
            {{5, SnapshotAt(path, 5), CheckpointKind::kMessage},
             {10, SnapshotAt(path, 10), CheckpointKind::kBoundary},
             {14, SnapshotAt(path, 14), CheckpointKind::kEnd}});
  }
  auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(true));
  std::vector<Token> prompt = path;
  prompt[12] = 9;   // diverges after the boundary checkpoint
  DiskMatch m = tier->Find(prompt, 1, 0);
  ASSERT_EQ(m.reuse_tokens, 10);
  EXPECT_EQ(m.kind, CheckpointKind::kBoundary);
  EXPECT_EQ(m.common_prefix, 12);
  EXPECT_EQ(m.checkpoint_positions, (std::vector<int64_t>{5, 10}));
  DiskLoad load = tier->Load(m, {}, 0);
  ASSERT_TRUE(load.ok);
  ASSERT_TRUE(load.snapshot);
  EXPECT_EQ(load.snapshot->position(), 10);
  EXPECT_EQ(0, std::memcmp(load.snapshot->data(), SnapshotAt(path, 10)->data(), 48));
  ExpectSameBlocks(load.blocks, BlocksFor(path), 3);
  // A divergence before the first checkpoint: nothing usable, with the reason.
  prompt = path;
  prompt[3] = 9;
  m = tier->Find(prompt, 1, 0);
  EXPECT_EQ(m.reuse_tokens, 0);
  EXPECT_NE(m.reason.find("3 common tokens"), std::string::npos) << m.reason;
  // The whole path plus a new turn: the end checkpoint.
  prompt = path;
  prompt.push_back(1);
  m = tier->Find(prompt, 1, 0);
  EXPECT_EQ(m.reuse_tokens, 14);
  EXPECT_EQ(m.kind, CheckpointKind::kEnd);
}

TEST(DiskTier, SharedPrefixesAreWrittenOnce) {
  TempDir dir;
  auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  std::vector<Token> a = Seq(16);
  Persist(*tier, a);
  std::vector<Token> b = a;
  b.resize(12);
  b.push_back(7);   // shares blocks 0..2, differs in block 3
  Persist(*tier, b);
  const DiskStats s = tier->Stats();
  EXPECT_EQ(s.written_records, 5u);   // 4 for a, 1 for b's last block
  EXPECT_EQ(s.skipped_records, 3u);
  EXPECT_EQ(s.block_records, 5);
  // Persisting the same path again writes nothing.
  Persist(*tier, a);
  EXPECT_EQ(tier->Stats().written_records, 5u);
}

TEST(DiskTier, PacksOfAnotherModelLayoutTargetOrFormatAreMissesWithReasons) {
  TempDir dir;
  const std::vector<Token> path = Seq(12);
  {
    auto tier = DiskTier::Open(Options(dir.path()), Identity("model-a"), Geometry(false));
    Persist(*tier, path);
  }
  std::vector<Token> prompt = path;
  prompt.push_back(1);
  struct Case {
    PackIdentity id;
    std::string reason;
  };
  std::vector<Case> cases;
  cases.push_back({Identity("model-a-q8_0"), "another model or quantization"});
  PackIdentity layout = Identity();
  layout.layout = "other layout";
  cases.push_back({layout, "another state layout"});
  PackIdentity target = Identity();
  target.target = "AVX2";
  cases.push_back({target, "kernel target FAKE"});
  PackIdentity format = Identity();
  format.format = kPackFormatVersion + 1;
  cases.push_back({format, "format version"});
  for (const Case& c : cases) {
    auto tier = DiskTier::Open(Options(dir.path()), c.id, Geometry(false));
    ASSERT_TRUE(tier->enabled());
    EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 0) << c.reason;
    const DiskStats s = tier->Stats();
    ASSERT_EQ(s.rejected.size(), 1u);
    EXPECT_NE(s.rejected[0].reason.find(c.reason), std::string::npos) << s.rejected[0].reason;
    EXPECT_EQ(s.block_records, 0);
  }
  // The original identity still reads them.
  auto tier = DiskTier::Open(Options(dir.path()), Identity("model-a"), Geometry(false));
  EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 12);
}

TEST(DiskTier, TruncationAtAnyByteServesOnlyIntactRecords) {
  // kill -9 during a write leaves a pack cut at an arbitrary byte.
  TempDir source;
  const std::vector<Token> path = Seq(14);
  const KvBlockTable blocks = BlocksFor(path);
  {
    auto tier = DiskTier::Open(Options(source.path()), Identity(), Geometry(true));
    Persist(*tier, path, {{6, SnapshotAt(path, 6), CheckpointKind::kRung}, {14, SnapshotAt(path, 14), CheckpointKind::kEnd}});
  }
  const std::vector<std::string> packs = PackFiles(source.path());
  ASSERT_EQ(packs.size(), 1u);
  std::ifstream in(packs[0], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<Token> prompt = path;
  prompt.push_back(1);
  int64_t last_reuse = -1;
  int cuts = 0;
  for (size_t cut = 0;; cut = std::min(bytes.size(), cut + (cut < 128 ? 1 : 7))) {
    TempDir dir;
    std::ofstream(dir.path() + "/" + fs::path(packs[0]).filename().string(), std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(cut));
    auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(true));
    ASSERT_TRUE(tier->enabled());
    const DiskMatch m = tier->Find(prompt, 1, 0);
    EXPECT_GE(m.reuse_tokens, last_reuse == -1 ? 0 : last_reuse) << "a longer file never serves less";
    last_reuse = m.reuse_tokens;
    if (m.reuse_tokens > 0) {
      const DiskLoad load = tier->Load(m, {}, 0);
      ASSERT_TRUE(load.ok) << "cut " << cut << ": " << load.error;
      ExpectSameBlocks(load.blocks, blocks, load.blocks.size());
      EXPECT_EQ(0, std::memcmp(load.snapshot->data(), SnapshotAt(path, m.reuse_tokens)->data(), 48));
    }
    if (cut < bytes.size() && cut > 100) EXPECT_FALSE(tier->Stats().rejected.empty()) << cut;
    // A server that resumes on a torn pack writes new packs and serves them.
    Persist(*tier, path, {{14, SnapshotAt(path, 14), CheckpointKind::kEnd}});
    EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 14) << cut;
    ++cuts;
    if (cut == bytes.size()) break;
  }
  EXPECT_EQ(last_reuse, 14);
  EXPECT_GT(cuts, 100);
}

TEST(DiskTier, FlippedBitsAreMissesNeverWrongState) {
  TempDir dir;
  const std::vector<Token> path = Seq(12);
  {
    auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
    Persist(*tier, path);
  }
  const std::string pack = PackFiles(dir.path())[0];
  const uint64_t size = fs::file_size(pack);
  std::vector<Token> prompt = path;
  prompt.push_back(1);
  // Flip one bit in the last block's payload (the file's last bytes).
  {
    std::fstream f(pack, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size - 5));
    char c;
    f.read(&c, 1);
    c ^= 0x10;
    f.seekp(static_cast<std::streamoff>(size - 5));
    f.write(&c, 1);
  }
  auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  DiskMatch m = tier->Find(prompt, 1, 0);
  ASSERT_EQ(m.reuse_tokens, 12);   // the header is intact: found...
  const DiskLoad load = tier->Load(m, {}, 0);
  EXPECT_FALSE(load.ok);           // ...but never served
  EXPECT_NE(load.error.find("checksum mismatch"), std::string::npos) << load.error;
  EXPECT_TRUE(load.blocks.empty());
  EXPECT_EQ(tier->Stats().load_failures, 1u);
  // The bad record left the index: the two good blocks are still served.
  m = tier->Find(prompt, 1, 0);
  EXPECT_EQ(m.reuse_tokens, 8);
  ASSERT_TRUE(tier->Load(m, {}, 0).ok);
  // A flipped bit in a record header ends the scan there (records after it are not trusted).
  tier.reset();
  const size_t header_bytes = EncodeFileHeader(Identity()).size();
  {
    std::fstream f(pack, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(header_bytes + 20));
    char c;
    f.read(&c, 1);
    c ^= 0x01;
    f.seekp(static_cast<std::streamoff>(header_bytes + 20));
    f.write(&c, 1);
  }
  tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 0);
  ASSERT_EQ(tier->Stats().rejected.size(), 1u);
  EXPECT_NE(tier->Stats().rejected[0].reason.find("checksum"), std::string::npos);
  // A flipped bit in the file header: the whole pack is refused.
  tier.reset();
  {
    std::fstream f(pack, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.write("X", 1);
  }
  tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  ASSERT_EQ(tier->Stats().rejected.size(), 1u);
  EXPECT_NE(tier->Stats().rejected[0].reason.find("header"), std::string::npos) << tier->Stats().rejected[0].reason;
}

TEST(DiskTier, FullDiskIsAMissAndRecovers) {
  TempDir dir;
  std::atomic<bool> full{true};
  DiskTierOptions o = Options(dir.path());
  o.faults = [&](std::string_view op, const std::string&) { return full && op == "write" ? ENOSPC : 0; };
  auto tier = DiskTier::Open(o, Identity(), Geometry(false));
  const std::vector<Token> path = Seq(12);
  std::vector<Token> prompt = path;
  prompt.push_back(1);
  Persist(*tier, path);
  DiskStats s = tier->Stats();
  EXPECT_GE(s.write_errors, 1u);
  EXPECT_NE(s.last_error.find("No space left"), std::string::npos) << s.last_error;
  EXPECT_TRUE(s.writable);   // a full disk may clear
  EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 0);
  EXPECT_EQ(PackBytes(dir.path()), 0u);   // nothing torn left behind
  full = false;
  Persist(*tier, path);
  EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 12);
}

TEST(DiskTier, ReadOnlyOrUnusableDirectories) {
  TempDir dir;
  // Writes refused (EROFS): reads keep working, writing stops after a few tries.
  {
    auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
    Persist(*tier, Seq(8));
  }
  DiskTierOptions o = Options(dir.path());
  o.faults = [](std::string_view op, const std::string&) { return op == "open" || op == "write" ? EROFS : 0; };
  // "open" of existing packs fails too: they are listed as rejected, not served.
  auto tier = DiskTier::Open(o, Identity(), Geometry(false));
  ASSERT_TRUE(tier->enabled());
  for (int i = 0; i < 4; ++i) Persist(*tier, Seq(8, i + 1));
  const DiskStats s = tier->Stats();
  EXPECT_FALSE(s.writable);
  EXPECT_NE(s.status.find("read-only"), std::string::npos) << s.status;
  EXPECT_EQ(s.write_errors, 3u);
  // A directory that cannot be created: the tier is off with the reason.
  const std::string file = dir.path() + "/plain-file";
  std::ofstream(file) << "x";
  auto off = DiskTier::Open(Options(file + "/kv"), Identity(), Geometry(false));
  EXPECT_FALSE(off->enabled());
  EXPECT_NE(off->Stats().status.find("Not a directory"), std::string::npos) << off->Stats().status;
  std::vector<Token> prompt = Seq(8);
  EXPECT_EQ(off->Find(prompt, 1, 0).reuse_tokens, 0);
  off->Persist(prompt, BlocksFor(prompt), {});   // a no-op, never a crash
  off->Flush();
  DiskTierOptions no_mkdir = Options(dir.path() + "/new");
  no_mkdir.faults = [](std::string_view op, const std::string&) { return op == "mkdir" ? EACCES : 0; };
  EXPECT_FALSE(DiskTier::Open(no_mkdir, Identity(), Geometry(false))->enabled());
  // Not root: a real read-only directory (root ignores permission bits).
  if (::geteuid() != 0) {
    const std::string ro = dir.path() + "/ro";
    fs::create_directory(ro);
    ::chmod(ro.c_str(), 0555);
    EXPECT_FALSE(DiskTier::Open(Options(ro), Identity(), Geometry(false))->enabled());
  }
}

TEST(DiskTier, TwoServersOnOneDirectory) {
  TempDir dir;
  auto first = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  ASSERT_TRUE(first->enabled());
  auto second = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  EXPECT_FALSE(second->enabled());
  EXPECT_NE(second->Stats().status.find("another Cairn server (pid " + std::to_string(::getpid())), std::string::npos)
      << second->Stats().status;
  const std::vector<Token> path = Seq(9);
  Persist(*first, path);
  second.reset();
  first.reset();   // the lock goes with the process's fd
  auto third = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  ASSERT_TRUE(third->enabled());
  std::vector<Token> prompt = path;
  prompt.push_back(0);
  EXPECT_EQ(third->Find(prompt, 1, 0).reuse_tokens, 9);
}

TEST(DiskTier, BudgetIsNeverExceeded) {
  TempDir dir;
  DiskTierOptions o = Options(dir.path());
  const uint64_t record = kRecordHeaderBytes + kB * sizeof(Token) + Layout().BlockBytes();
  o.budget_bytes = 20 * record;
  o.pack_bytes = 6 * record;
  auto tier = DiskTier::Open(o, Identity(), Geometry(false));
  for (int i = 0; i < 30; ++i) {
    Persist(*tier, Seq(12, i));
    EXPECT_LE(tier->Stats().bytes, o.budget_bytes);
    EXPECT_LE(PackBytes(dir.path()), o.budget_bytes) << i;
  }
  const DiskStats s = tier->Stats();
  EXPECT_GT(s.evicted_packs, 0u);
  EXPECT_EQ(s.bytes, PackBytes(dir.path()));
  // The newest path survives the evictions.
  std::vector<Token> prompt = Seq(12, 29);
  prompt.push_back(1);
  EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 12);
  // A record larger than the whole budget is dropped, not written.
  o.budget_bytes = record / 2;
  TempDir small;
  o.dir = small.path();
  auto tiny = DiskTier::Open(o, Identity(), Geometry(false));
  Persist(*tiny, Seq(8));
  EXPECT_EQ(PackBytes(small.path()), 0u);
  EXPECT_GE(tiny->Stats().dropped_jobs, 1u);
}

TEST(DiskTier, RemoveEntryKeepsSharedPrefixAndStaysRemovedAfterRestart) {
  TempDir dir;
  std::vector<Token> a = Seq(12);
  std::vector<Token> b = a;
  b.resize(8);
  for (int i = 0; i < 6; ++i) b.push_back(50 + i);   // shares blocks 0..1
  const std::string a_id = PrefixKeys(a, kB).At(12).Hex();
  const std::string b_id = PrefixKeys(b, kB).At(14).Hex();
  {
    auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
    Persist(*tier, a);
    Persist(*tier, b);
    std::vector<DiskEntryInfo> entries = tier->List();
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].id, b_id);
    EXPECT_EQ(entries[0].tokens, 14);
    EXPECT_EQ(entries[1].id, a_id);
    ChainKey key;
    ASSERT_TRUE(ChainKey::FromHex(a_id, &key));
    EXPECT_TRUE(tier->RemoveEntry(key));
    EXPECT_FALSE(tier->RemoveEntry(key));
    entries = tier->List();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].id, b_id);
  }
  auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  std::vector<Token> prompt = a;
  prompt.push_back(1);
  EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 8);   // only the shared part
  ASSERT_EQ(tier->List().size(), 1u);
  prompt = b;
  prompt.push_back(1);
  EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 14);
}

TEST(DiskTier, ClearDeletesEveryPack) {
  TempDir dir;
  {
    auto other = DiskTier::Open(Options(dir.path()), Identity("model-b"), Geometry(false));
    Persist(*other, Seq(8, 3));
  }
  auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  Persist(*tier, Seq(12));
  EXPECT_EQ(PackFiles(dir.path()).size(), 2u);
  tier->Clear();
  EXPECT_TRUE(PackFiles(dir.path()).empty());
  EXPECT_EQ(tier->Stats().bytes, 0u);
  std::vector<Token> prompt = Seq(12);
  prompt.push_back(1);
  EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 0);
  Persist(*tier, Seq(12));   // usable again
  EXPECT_EQ(tier->Find(prompt, 1, 0).reuse_tokens, 12);
}

TEST(DiskTier, ConcurrentPersistFindAndLoad) {
  TempDir dir;
  auto tier = DiskTier::Open(Options(dir.path()), Identity(), Geometry(false));
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 40; ++i) tier->Persist(Seq(16, i % 5), BlocksFor(Seq(16, i % 5)), {});
    tier->Flush();
    done = true;
  });
  int served = 0;
  while (!done) {
    for (int salt = 0; salt < 5; ++salt) {
      std::vector<Token> prompt = Seq(16, salt);
      prompt.push_back(1);
      const DiskMatch m = tier->Find(prompt, 1, 0);
      if (m.reuse_tokens == 0) continue;
      const DiskLoad load = tier->Load(m, {}, 0);
      ASSERT_TRUE(load.ok) << load.error;
      ExpectSameBlocks(load.blocks, BlocksFor(Seq(16, salt)), load.blocks.size());
      ++served;
    }
  }
  writer.join();
  EXPECT_EQ(tier->Stats().block_records, 20);
  (void)served;
}

TEST(PackFormat, HeadersRejectGarbage) {
  size_t header_bytes = 0;
  std::string error;
  const std::vector<uint8_t> good = EncodeFileHeader(Identity());
  auto id = DecodeFileHeader(good, &header_bytes, &error);
  ASSERT_TRUE(id);
  EXPECT_EQ(header_bytes, good.size());
  EXPECT_EQ(id->Mismatch(Identity()), "");
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_FALSE(DecodeFileHeader(std::span(good.data(), cut), &header_bytes, &error)) << cut;
  }
  std::vector<uint8_t> bad = good;
  bad[0] = 'X';
  EXPECT_FALSE(DecodeFileHeader(bad, &header_bytes, &error));
  EXPECT_NE(error.find("magic"), std::string::npos);
  RecordHeader h;
  h.kind = 9;
  EXPECT_NE(CheckRecordHeader(h, 0, 1000, kB), "");
  h.kind = 1;
  h.n_tokens = kB + 1;
  EXPECT_NE(CheckRecordHeader(h, 0, 1000, kB), "");
  h.n_tokens = 2;
  h.payload_bytes = UINT64_MAX - 10;   // no overflow in the bounds check
  EXPECT_NE(CheckRecordHeader(h, 0, 1000, kB).find("past the end"), std::string::npos);
  h.payload_bytes = 100;
  EXPECT_EQ(CheckRecordHeader(h, 0, 1000, kB), "");
  EXPECT_EQ(PackSequence("pack-000012.cairnpack"), 12u);
  EXPECT_FALSE(PackSequence("pack-.cairnpack"));
  EXPECT_FALSE(PackSequence("pack-12a.cairnpack"));
  EXPECT_FALSE(PackSequence("lock"));
}

}  // namespace
}  // namespace cairn::cache::disk
