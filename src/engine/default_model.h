// Which model `cairn serve` / `cairn run` use when no --model is given.
#pragma once

#include <string>

namespace cairn::engine {

// The default model and why it was chosen.
struct DefaultModel {
  std::string path;
  // True when this is the real default model (Qwen2.5-Coder-0.5B-Instruct
  // Q4_K_M, fetched by scripts/serve.sh into models/real/); false for the
  // embedded trained model, the fallback when the real one is absent.
  bool real = false;
  // One line for the banner: what was chosen and, on fallback, why.
  std::string note;
};

// $CAIRN_DEFAULT_MODEL if set; else models/real/<real default> next to the
// repository the executable was built in (build/cairn -> ../models/), then
// the embedded models/cairn-default.gguf, then ../share/cairn/ for installed
// layouts. When nothing exists, the embedded path (so the error message names
// where it was expected).
DefaultModel ChooseDefaultModel();

// ChooseDefaultModel().path.
std::string DefaultModelPath();

// The draft model shipped with the embedded default model (cairn-draft.gguf
// beside it; same vocabulary), or "" when absent or when the default is not
// the embedded model. Used when the default model is served without an
// explicit --draft-model.
std::string DefaultDraftModelPath(const std::string& default_model_path);

// File name of the real default model inside models/real/.
inline constexpr const char* kRealDefaultModelFile = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

}  // namespace cairn::engine
