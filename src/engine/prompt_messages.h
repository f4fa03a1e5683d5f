// Request messages -> the message list handed to the chat template.
//
// Mirrors what OpenAI-compatible servers do before apply_chat_template
// (mlx-dspark spec §2.4): content given as a list of typed parts becomes the
// concatenation of its text parts (image/audio parts dropped; no separator, as
// Qwen3.5's own render_content does); content null or missing becomes "";
// assistant tool_calls[].function.arguments given as a JSON string are parsed
// into objects (templates iterate them with |items or |tojson them); everything
// else (reasoning_content, tool_call_id, name) passes through untouched.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "cache/cache_types.h"

namespace cairn::engine {

// Throws RequestError when `messages` is not a non-empty array of objects with
// a string role.
nlohmann::ordered_json NormalizeMessages(const nlohmann::ordered_json& messages);

// Templates that accept a system message only first (Gemma, Llama 2 style)
// raise on a later one. Agent clients send them mid-conversation (Claude Code's
// environment turn, Codex's developer messages). The fallback: every system or
// developer message after the first message is folded into the next user
// message (its text first, a blank line, then the user's), or into the
// previous user message when no user message follows; with no user message at
// all it becomes a user message. Returns `messages` unchanged when there is
// nothing to fold; `folded` counts the messages folded.
nlohmann::ordered_json FoldLateSystemMessages(const nlohmann::ordered_json& messages, int* folded);

// "system"/"developer" -> kSystem, "user", "assistant", "tool"/"ipython"/"function"; else kOther.
cache::Role RoleOf(std::string_view role);

}  // namespace cairn::engine
