// Request -> prompt tokens, with what the prefix cache needs to know about them.
//
// Built once per loaded model. Build() renders chat messages through the
// model's chat template (RenderChat: messages, tools, add_generation_prompt,
// bos/eos texts, then kwargs at top level), or takes a raw completion prompt,
// and tokenizes with special-token parsing on (rendered prompts contain
// <|im_start|> etc.). BOS follows llama.cpp: prepended only when the vocabulary
// says add_bos and the text does not already start with the BOS text.
//
// Alongside the tokens it reports, for the cache:
//   message_starts  token position and role of each chat message (prompt_message_starts.h);
//   stable_boundary prompt length minus the template's unstable tail (unstable_tail.h);
//   reasoning_open  the prompt ends inside an opened reasoning block (Qwen3.5's
//                   "<think>\n"), so the output starts as reasoning.
// When the request turned thinking off (enable_thinking: false) but the
// template still leaves a block open, the block is closed empty so the prompt
// ends "<think>\n\n</think>\n\n" (closed_empty_reasoning), as mlx-dspark does
// (spec §2.8).
//
// No template (empty text): a ChatML fallback, kChatMlFallbackTemplate
// (<|im_start|>role\ncontent<|im_end|>\n per message; tools are not rendered).
// Thread-safe: Build() is const.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ctime>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_types.h"
#include "chat/template.h"
#include "engine/prompt_prefix_renders.h"
#include "engine/reasoning_splitter.h"
#include "engine/service.h"
#include "engine/unstable_tail.h"
#include "tokenizer/tokenizer.h"

namespace cairn::engine {

extern const char* const kChatMlFallbackTemplate;

struct PromptBuilderOptions {
  // Server-side template kwargs (e.g. enable_thinking from --no-thinking); the
  // request's template_kwargs win on collisions.
  Json default_template_kwargs = Json::object();
  std::vector<ReasoningTags> reasoning_tags = DefaultReasoningTags();
  // strftime_now() clock for reproducible renders (tests); empty = wall clock.
  std::function<std::tm()> clock;
  // Measure the unstable tail at construction (three variants, a few renders).
  bool probe_unstable_tail = true;
  // Fill BuiltPrompt::marks (only checkpointed models use them; dense models
  // resume anywhere and skip the scan).
  bool volatile_marks = true;
};

struct BuiltPrompt {
  std::vector<int32_t> tokens;
  std::string text;                               // rendered prompt (or the raw prompt)
  std::vector<cache::MessageStart> message_starts;  // one per message, ascending; empty for raw
  int64_t unstable_tail = 1;                      // tokens the next turn will re-render
  int64_t stable_boundary = 0;                    // tokens.size() - unstable_tail
  bool reasoning_open = false;                    // generation starts inside reasoning
  bool closed_empty_reasoning = false;            // "<think>\n\n</think>\n\n" was appended
  bool bos_added = false;                         // BOS prepended outside the text
  // Token positions of volatile-looking line starts in the first turn (before
  // the first assistant message; engine/volatile_lines.h), at least 16 tokens
  // apart, in priority order: lines with a strong signal (score 2: a home or
  // temp path, a date, a hash, an environment keyword) in prompt order, then
  // the other path-bearing ones. Where the prefix cache's planner may snapshot
  // a hybrid model's state (checkpoint kind "mark").
  std::vector<int64_t> marks;
};

class PromptBuilder {
 public:
  // `chat_template`: the model's template source (empty: ChatML fallback).
  // `bos_token` / `eos_token`: the texts templates see as bos_token/eos_token.
  // Throws cairn::Error when the template does not parse.
  PromptBuilder(const tokenizer::Tokenizer& tokenizer, std::string_view chat_template,
                std::string bos_token, std::string eos_token,
                PromptBuilderOptions options = PromptBuilderOptions());

  // Throws RequestError for client errors (bad messages, template raised).
  BuiltPrompt Build(const GenerationInput& input) const;
  // The rendered chat text exactly as Build() tokenizes it (raw prompts as is).
  std::string Render(const GenerationInput& input) const;

  const UnstableTail& unstable_tail() const { return unstable_tail_; }
  const chat::Template& chat_template() const { return template_; }

 private:
  // RenderMessages, retried with late system messages folded into user turns
  // when the template refuses them (FoldLateSystemMessages); `messages` then
  // holds the folded list, so message starts are computed on what was rendered.
  std::string RenderFitting(Json& messages, const Json& tools, bool add_generation_prompt,
                            const Json& kwargs) const;
  // BuiltPrompt::marks from the text before byte `first_turn_end`.
  void ComputeMarks(const std::vector<size_t>& offsets, size_t first_turn_end, BuiltPrompt& prompt) const;
  std::string RenderMessages(const Json& messages, const Json& tools, bool add_generation_prompt,
                             const Json& kwargs) const;
  Json MergedKwargs(const Json& request_kwargs) const;
  std::vector<int32_t> Tokenize(std::string_view text, bool* bos_added) const;
  // Index of the reasoning tag pair left open at the prompt end, or -1.
  int OpenReasoningPair(const std::vector<int32_t>& tokens) const;
  void ComputeMessageStarts(const Json& messages, const Json& tools, const Json& kwargs,
                            BuiltPrompt& prompt) const;

  const tokenizer::Tokenizer& tokenizer_;
  chat::Template template_;
  std::string bos_token_;
  std::string eos_token_;
  std::string bos_text_;  // the vocabulary's BOS token text ("" when none)
  PromptBuilderOptions options_;
  chat::RenderOptions render_options_;
  std::vector<std::string> turn_ends_;  // texts of end-of-turn control tokens
  UnstableTail unstable_tail_;
  mutable PrefixRenderMemo prefix_memo_;  // thread-safe
};

}  // namespace cairn::engine
