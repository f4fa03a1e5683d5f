#include "cache/disk/model_identity.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/log.h"

namespace cairn::cache::disk {

std::string ModelContentId(const gguf::GgufFile& file) {
  // The streaming state is opaque without XXH_STATIC_LINKING_ONLY: heap-allocated.
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> owner(XXH3_createState(), &XXH3_freeState);
  XXH3_state_t* state = owner.get();
  XXH3_128bits_reset(state);
  for (const gguf::TensorInfo& t : file.tensors()) {
    XXH3_128bits_update(state, t.name.data(), t.name.size());
    XXH3_128bits_update(state, "", 1);  // name terminator
    const int32_t type = static_cast<int32_t>(t.type);
    XXH3_128bits_update(state, &type, sizeof(type));
    const uint64_t dims = t.shape.size();
    XXH3_128bits_update(state, &dims, sizeof(dims));
    XXH3_128bits_update(state, t.shape.data(), t.shape.size() * sizeof(int64_t));
    const uint64_t bytes = t.bytes;
    XXH3_128bits_update(state, &bytes, sizeof(bytes));
    if (t.data != nullptr) XXH3_128bits_update(state, t.data, t.bytes);
  }
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

namespace {

// What identifies the file on disk for the memo (not the content id itself).
nlohmann::json FileStamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return nullptr;
  return nlohmann::json{{"size", static_cast<int64_t>(st.st_size)},
                        {"inode", static_cast<uint64_t>(st.st_ino)},
                        {"device", static_cast<uint64_t>(st.st_dev)},
                        {"mtime_ns", static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec}};
}

}  // namespace

std::string CachedModelContentId(const gguf::GgufFile& file, const std::string& memo_path) {
  const nlohmann::json stamp = FileStamp(file.path());
  nlohmann::json memo = nlohmann::json::object();
  if (std::ifstream in(memo_path); in) {
    std::stringstream text;
    text << in.rdbuf();
    memo = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (!memo.is_object()) memo = nlohmann::json::object();
  }
  if (!stamp.is_null()) {
    auto it = memo.find(file.path());
    if (it != memo.end() && it->is_object() && it->value("stamp", nlohmann::json()) == stamp &&
        it->value("id", "").size() == 32) {
      return (*it)["id"].get<std::string>();
    }
  }
  const std::string id = ModelContentId(file);
  if (!stamp.is_null()) {
    memo[file.path()] = nlohmann::json{{"stamp", stamp}, {"id", id}};
    // Write-then-rename, so a crash never leaves half a memo.
    const std::string tmp = memo_path + ".tmp";
    std::ofstream out(tmp, std::ios::trunc);
    out << memo.dump(1);
    out.close();
    if (!out || std::rename(tmp.c_str(), memo_path.c_str()) != 0) {
      std::remove(tmp.c_str());
      LogDebug("disk cache: cannot write {}", memo_path);
    }
  }
  return id;
}

}  // namespace cairn::cache::disk
