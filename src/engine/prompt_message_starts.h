// Where each chat message starts in a rendered prompt (byte offsets).
//
// Message i starts where the rendering of messages[0:i] (no generation prompt)
// stops being a prefix of the full rendering: for ChatML, Llama 3 and Mistral
// templates that is exactly the start of message i's header. Templates that
// look ahead render the prefix's last message differently when it is last
// (Qwen3's "<think>" block on a final assistant turn, Qwen's "<|im_end|>" after
// a final tool response); then the prefix's tail after the divergence is aligned
// to the full text by its longest common suffix, which lands on the same end of
// message i-1. Templates that reject the prefix (Qwen3.5 without a user query)
// fall back to "just after the next end-of-turn token" (<|im_end|>\n).
// Starts are non-decreasing; start 0 is 0.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::engine {

// render_prefix(k): messages[0:k] rendered without a generation prompt; may
// throw (template error) for some k. `turn_ends`: texts of end-of-turn tokens.
std::vector<size_t> MessageByteStarts(size_t n_messages, std::string_view full,
                                      const std::function<std::string(size_t)>& render_prefix,
                                      std::span<const std::string> turn_ends);

}  // namespace cairn::engine
