// Lines of a prompt that look volatile across sessions: where two sessions of
// the same agent client are likely to diverge (the working directory, the
// user's home, a date, a git hash, an environment block). Hybrid models can
// resume only at a recurrent snapshot, so the prefix cache snapshots the state
// at the start of such lines during the first turn's prefill (checkpoint kind
// "mark"); a later session that diverges inside the line resumes there instead
// of at the previous rung. Dense models do not need this (they resume anywhere).
//
// Scores: 2 = a strong signal (a home or temp path, a date, a hex hash, a
// keyword such as "working directory", "git status", "<env>"); 1 = any other
// absolute path, or a relative one starting with ./ or ../. Generic text
// scores 0 and is not returned.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace cairn::engine {

struct VolatileLine {
  size_t offset = 0;  // byte offset of the line's first character in the text
  int score = 0;      // 1 or 2 (see above)
};

// The volatile-looking lines starting in [0, end) of `text`, ascending.
std::vector<VolatileLine> FindVolatileLines(std::string_view text, size_t end);

}  // namespace cairn::engine
