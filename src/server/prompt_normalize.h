// Volatile-prefix normalisation: removes known per-request volatile text that
// clients put early in the prompt, so that the requests of one session (and
// of sessions sharing a system prompt) share their prefix in the cache.
//
// Known text (from captured client traffic):
// * Claude Code starts its system prompt with a line
//   `x-anthropic-billing-header: cc_version=2.1.332.5ac; cc_entrypoint=cli; cch=...;`
//   whose value changes from request to request; it tells the model nothing.
//   Every such line in a system message (or a raw prompt) is removed with
//   its line break.
//
// The engine then sees the normalised prompt whether the request is served
// cold or from the cache, so outputs stay identical between the two.
#pragma once

#include "engine/service.h"

namespace cairn::server {

// Normalises input in place. Returns what was removed, one entry per change:
// [{"rule": "anthropic-billing-header", "where": "messages[0]", "removed": "x-anthropic-billing-header: ..."}]
// (empty when nothing matched).
engine::Json NormalizeVolatilePrefix(engine::GenerationInput& input);

}  // namespace cairn::server
