// The chat template's unstable tail (mlx-dspark spec §3.4).
//
// Thinking-style templates render the generation prompt (e.g. Qwen3.5's
// "<|im_start|>assistant\n<think>\n") differently from how the completed
// assistant turn is rendered in the next request, so the last few prompt
// tokens never reappear in the next turn's prompt. The prefix cache snapshots
// at `stable_boundary = prompt length - unstable`, a position the next turn
// (and an identical retry, since unstable >= 1) shares.
//
// Measured once per model by rendering tiny conversations through the real
// template and tokenizer, for three kwarg variants (server defaults; + thinking
// on; + thinking off):
//   p  = [user "a"] with the generation prompt, ng = the same without;
//   g  = len(p) - LCP(p, ng)                       generation-suffix length;
//   u  = max over reply shapes of len(p) - LCP(p, [user a, assistant reply, user c]);
//   if 0 < g <= 64 and u <= 64: record (last g tokens of p -> u), max u per tail.
// Reply shapes: plain "b"; "<think>\nr\n</think>\n\nb" in the content; content "b"
// with reasoning_content "r" (how clients echo our split output back).
// Per request: the first probe (longest tail first) whose tail ends the prompt
// gives unstable = max(1, u); no match (or no template) gives 1.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace cairn::engine {

struct TailProbe {
  std::vector<int32_t> tail;  // last g tokens of the probe's generation prompt
  int64_t unstable = 0;       // u: tokens the next turn re-renders differently
};

class UnstableTail {
 public:
  static constexpr int64_t kMaxTail = 64;      // bound on g
  static constexpr int64_t kMaxUnstable = 64;  // bound on u

  // Renders and tokenizes a conversation exactly as a request would (throws
  // on template errors, which skip that probe).
  using RenderTokens = std::function<std::vector<int32_t>(
      const nlohmann::ordered_json& messages, bool add_generation_prompt,
      const nlohmann::ordered_json& kwargs)>;

  UnstableTail() = default;  // no probes: unstable = 1
  // `default_kwargs`: the server's template kwargs (an object).
  static UnstableTail Measure(const RenderTokens& render,
                              const nlohmann::ordered_json& default_kwargs);
  // From explicit probes (tests); sorted longest tail first.
  explicit UnstableTail(std::vector<TailProbe> probes);

  // Tokens at the end of `prompt` that the next turn will not share (>= 1).
  int64_t UnstableLength(std::span<const int32_t> prompt) const;
  // prompt.size() - UnstableLength, clamped at 0.
  int64_t StableBoundary(std::span<const int32_t> prompt) const;

  const std::vector<TailProbe>& probes() const { return probes_; }

 private:
  std::vector<TailProbe> probes_;
};

}  // namespace cairn::engine
