// Streaming split of generated text into answer content and reasoning.
//
// Thinking models wrap their reasoning in a tag pair at the start of the
// output (Qwen family: "<think>\n...\n</think>\n\n answer"), or the prompt
// already opened the block (Qwen3.5's generation prompt ends with "<think>\n"),
// in which case the output starts inside the reasoning. The splitter is fed
// complete UTF-8 chunks (from the streaming detokenizer) in any split and
// returns what can be shown now on each channel; a possible partial tag at a
// chunk end is held back until the next chunk decides it.
//
// Rules (see docs/prompt-building.md):
//   - An opener is recognised only before any answer text (leading whitespace
//     allowed and dropped); after the closer every byte is content, tags included.
//   - Newlines right after the opener and right before the closer are dropped,
//     and whitespace right after the closer (Qwen's "\n\n") is dropped: the
//     reasoning_content / content returned match what the templates re-render.
//   - Finish(): output truncated before the closer stays reasoning (never
//     leaks as content); held-back text is released on its channel.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cairn::engine {

struct ReasoningTags {
  std::string open;   // e.g. "<think>"
  std::string close;  // e.g. "</think>"
};

// {"<think>", "</think>"}.
std::vector<ReasoningTags> DefaultReasoningTags();

struct SplitDelta {
  std::string content;
  std::string reasoning;
  bool empty() const { return content.empty() && reasoning.empty(); }
};

class ReasoningSplitter {
 public:
  // `start_in_reasoning`: the prompt ended inside an opened block
  // (BuiltPrompt::reasoning_open). Any configured closer then ends it.
  explicit ReasoningSplitter(bool start_in_reasoning = false,
                             std::vector<ReasoningTags> tags = DefaultReasoningTags());

  // Feeds the next chunk of generated text; returns the newly showable text.
  SplitDelta Feed(std::string_view text);
  // End of stream: releases everything still held back.
  SplitDelta Finish();

  // True while the output is inside a reasoning block.
  bool in_reasoning() const { return state_ == State::kReasoning; }

 private:
  enum class State { kStart, kReasoning, kAfterClose, kContent };

  void Run(SplitDelta& out);
  void RunStart(SplitDelta& out);
  void RunReasoning(SplitDelta& out);
  void RunAfterClose();
  void EnterReasoning(int pair);

  std::vector<ReasoningTags> tags_;
  State state_;
  int pair_ = -1;           // index of the matched tag pair; -1 = any closer
  bool reasoning_started_ = false;  // some reasoning byte was emitted
  std::string pending_;     // undecided text (possible partial tag / newlines)
  std::string held_newlines_;  // reasoning newlines that may precede the closer
};

}  // namespace cairn::engine
