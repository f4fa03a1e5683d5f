#include "engine/default_model.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace cairn::engine {

std::string DefaultModelPath() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("CAIRN_DEFAULT_MODEL")) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    const fs::path dir = exe.parent_path();
    candidates.push_back(dir / ".." / "models" / "cairn-default.gguf");
    candidates.push_back(dir / ".." / ".." / "models" / "cairn-default.gguf");
    candidates.push_back(dir / ".." / "share" / "cairn" / "cairn-default.gguf");
  }
  candidates.push_back(fs::path("models") / "cairn-default.gguf");
  for (const fs::path& p : candidates) {
    if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  return candidates.front().lexically_normal().string();
}

std::string DefaultDraftModelPath(const std::string& default_model_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path draft = fs::path(default_model_path).parent_path() / "cairn-draft.gguf";
  return fs::exists(draft, ec) ? draft.string() : std::string();
}

}  // namespace cairn::engine
