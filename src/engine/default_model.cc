#include "engine/default_model.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace cairn::engine {
namespace {

namespace fs = std::filesystem;

// Folders that may hold models/: the repository the executable was built in,
// an installed layout, and the working directory.
std::vector<fs::path> ModelDirs() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path dir = exe.parent_path();
    dirs.push_back(dir / ".." / "models");
    dirs.push_back(dir / ".." / ".." / "models");
    dirs.push_back(dir / ".." / "share" / "cairn");
  }
  dirs.push_back(fs::path("models"));
  return dirs;
}

std::string FirstExisting(const std::vector<fs::path>& candidates) {
  std::error_code ec;
  for (const fs::path& p : candidates) {
    if (fs::is_regular_file(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  return "";
}

}  // namespace

DefaultModel ChooseDefaultModel() {
  if (const char* env = std::getenv("CAIRN_DEFAULT_MODEL")) {
    return {env, false, "model from $CAIRN_DEFAULT_MODEL"};
  }
  const std::vector<fs::path> dirs = ModelDirs();
  std::vector<fs::path> real, embedded;
  for (const fs::path& dir : dirs) {
    real.push_back(dir / "real" / kRealDefaultModelFile);
    embedded.push_back(dir / "cairn-default.gguf");
  }
  if (std::string path = FirstExisting(real); !path.empty()) {
    return {path, true, "default model: Qwen2.5-Coder-0.5B-Instruct Q4_K_M"};
  }
  const std::string note = std::string("FALLBACK: the real default model (models/real/") + kRealDefaultModelFile +
                           ") is absent, so this is the small embedded trained model; scripts/serve.sh fetches "
                           "the real one when the package registry can be reached";
  if (std::string path = FirstExisting(embedded); !path.empty()) return {path, false, note};
  return {embedded.front().lexically_normal().string(), false, note};
}

std::string DefaultModelPath() { return ChooseDefaultModel().path; }

std::string DefaultDraftModelPath(const std::string& default_model_path) {
  std::error_code ec;
  const fs::path model(default_model_path);
  if (model.filename() != "cairn-default.gguf") return "";
  const fs::path draft = model.parent_path() / "cairn-draft.gguf";
  return fs::exists(draft, ec) ? draft.string() : std::string();
}

}  // namespace cairn::engine
