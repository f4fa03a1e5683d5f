// Where the embedded default model lives.
#pragma once

#include <string>

namespace cairn::engine {

// $CAIRN_DEFAULT_MODEL if set; else models/cairn-default.gguf next to the
// repository the executable was built in (build/cairn -> ../models/), then
// ../share/cairn/ for installed layouts. Returns the first existing path, or
// the repository path (so the error message names where it was expected).
std::string DefaultModelPath();

// The draft model shipped with the default model (cairn-draft.gguf beside
// it; same vocabulary), or "" when absent. Used when the default model is
// served without an explicit --draft-model.
std::string DefaultDraftModelPath(const std::string& default_model_path);

}  // namespace cairn::engine
