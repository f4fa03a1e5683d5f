#include "engine/prompt_builder.h"

#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "engine/prompt_message_starts.h"
#include "engine/prompt_messages.h"
#include "engine/prompt_offsets.h"
#include "engine/volatile_lines.h"

namespace cairn::engine {
namespace {

// Tokens decoded to look for an opened reasoning block at the prompt end.
constexpr size_t kReasoningLookback = 8;

bool IsBlank(std::string_view text) {
  return text.find_first_not_of(" \n\t\r") == std::string_view::npos;
}

}  // namespace

const char* const kChatMlFallbackTemplate =
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

PromptBuilder::PromptBuilder(const tokenizer::Tokenizer& tokenizer, std::string_view chat_template,
                             std::string bos_token, std::string eos_token,
                             PromptBuilderOptions options)
    : tokenizer_(tokenizer),
      template_(chat::Template::Parse(chat_template.empty() ? std::string_view(kChatMlFallbackTemplate)
                                                            : chat_template)),
      bos_token_(std::move(bos_token)),
      eos_token_(std::move(eos_token)),
      options_(std::move(options)) {
  render_options_.clock = options_.clock;
  const tokenizer::Vocabulary& vocab = tokenizer_.vocab();
  if (vocab.bos != tokenizer::kNoToken) bos_text_ = vocab.tokens[static_cast<size_t>(vocab.bos)];
  for (size_t id = 0; id < vocab.size(); ++id) {
    const auto token = static_cast<tokenizer::TokenId>(id);
    if (vocab.type(token) == tokenizer::TokenType::kControl && tokenizer_.IsEndOfGeneration(token)) {
      turn_ends_.push_back(vocab.tokens[id]);
    }
  }
  // Well-known end-of-turn texts too: a template may use them with a
  // vocabulary that has no such control token (fallback only).
  for (const char* text : {"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|end|>", "<end_of_turn>", "</s>"}) {
    if (std::find(turn_ends_.begin(), turn_ends_.end(), text) == turn_ends_.end()) turn_ends_.push_back(text);
  }
  if (options_.probe_unstable_tail) {
    const auto render = [this](const Json& messages, bool add_generation_prompt, const Json& kwargs) {
      return Tokenize(RenderMessages(messages, nullptr, add_generation_prompt, kwargs), nullptr);
    };
    unstable_tail_ = UnstableTail::Measure(render, MergedKwargs(Json::object()));
  }
}

Json PromptBuilder::MergedKwargs(const Json& request_kwargs) const {
  Json kwargs = options_.default_template_kwargs.is_object() ? options_.default_template_kwargs
                                                             : Json::object();
  if (request_kwargs.is_object()) {
    for (const auto& [key, value] : request_kwargs.items()) kwargs[key] = value;
  }
  return kwargs;
}

std::string PromptBuilder::RenderMessages(const Json& messages, const Json& tools,
                                          bool add_generation_prompt, const Json& kwargs) const {
  try {
    return chat::RenderChat(template_, messages, tools, add_generation_prompt, bos_token_,
                            eos_token_, kwargs, render_options_);
  } catch (const Error& e) {
    throw RequestError(std::string("could not apply chat template: ") + e.what());
  }
}

std::vector<int32_t> PromptBuilder::Tokenize(std::string_view text, bool* bos_added) const {
  std::vector<int32_t> tokens;
  const bool add_bos = tokenizer_.add_bos() && tokenizer_.bos() != tokenizer::kNoToken &&
                       !(!bos_text_.empty() && text.substr(0, bos_text_.size()) == bos_text_);
  tokens.reserve(text.size() / 3 + 8);
  if (add_bos) tokens.push_back(tokenizer_.bos());
  tokenizer_.EncodeAppend(text, /*parse_special=*/true, tokens);
  if (bos_added != nullptr) *bos_added = add_bos;
  return tokens;
}

int PromptBuilder::OpenReasoningPair(const std::vector<int32_t>& tokens) const {
  const size_t n = std::min(tokens.size(), kReasoningLookback);
  const std::string tail = tokenizer_.DecodeBytes(
      std::span<const int32_t>(tokens).subspan(tokens.size() - n), /*render_special=*/true);
  for (size_t i = 0; i < options_.reasoning_tags.size(); ++i) {
    const ReasoningTags& tags = options_.reasoning_tags[i];
    const size_t open = tail.rfind(tags.open);
    if (open == std::string::npos) continue;
    // Open only when nothing but whitespace follows the opener.
    if (IsBlank(std::string_view(tail).substr(open + tags.open.size()))) return static_cast<int>(i);
  }
  return -1;
}

std::string PromptBuilder::RenderFitting(Json& messages, const Json& tools, bool add_generation_prompt,
                                         const Json& kwargs) const {
  try {
    return RenderMessages(messages, tools, add_generation_prompt, kwargs);
  } catch (const RequestError& e) {
    int folded = 0;
    Json fitted = FoldLateSystemMessages(messages, &folded);
    if (folded == 0) throw;
    std::string text = RenderMessages(fitted, tools, add_generation_prompt, kwargs);
    LogInfo("chat template refused {} system message(s) after the first message ({}); folded them into user turns",
            folded, e.what());
    messages = std::move(fitted);
    return text;
  }
}

std::string PromptBuilder::Render(const GenerationInput& input) const {
  if (input.messages) {
    Json messages = NormalizeMessages(*input.messages);
    return RenderFitting(messages, input.tools, input.add_generation_prompt, MergedKwargs(input.template_kwargs));
  }
  if (input.prompt) return *input.prompt;
  throw RequestError("the request has neither 'messages' nor 'prompt'");
}

BuiltPrompt PromptBuilder::Build(const GenerationInput& input) const {
  BuiltPrompt prompt;
  if (!input.messages) {
    if (!input.prompt) throw RequestError("the request has neither 'messages' nor 'prompt'");
    prompt.text = *input.prompt;
    prompt.tokens = Tokenize(prompt.text, &prompt.bos_added);
    prompt.unstable_tail = 1;
    prompt.stable_boundary = std::max<int64_t>(0, static_cast<int64_t>(prompt.tokens.size()) - 1);
    return prompt;
  }

  Json messages = NormalizeMessages(*input.messages);
  const Json kwargs = MergedKwargs(input.template_kwargs);
  prompt.text = RenderFitting(messages, input.tools, input.add_generation_prompt, kwargs);
  prompt.tokens = Tokenize(prompt.text, &prompt.bos_added);

  if (input.add_generation_prompt) {
    const int pair = OpenReasoningPair(prompt.tokens);
    prompt.reasoning_open = pair >= 0;
    const auto thinking = kwargs.find("enable_thinking");
    const bool thinking_off = thinking != kwargs.end() && thinking->is_boolean() && !thinking->get<bool>();
    if (prompt.reasoning_open && thinking_off) {
      // The template ignored the flag: close the block ourselves, so the tail
      // reads "<think>\n\n</think>\n\n" as thinking-off templates render it.
      const ReasoningTags& tags = options_.reasoning_tags[static_cast<size_t>(pair)];
      prompt.text.erase(prompt.text.rfind(tags.open) + tags.open.size());
      prompt.text += "\n\n" + tags.close + "\n\n";
      prompt.tokens = Tokenize(prompt.text, &prompt.bos_added);
      prompt.reasoning_open = false;
      prompt.closed_empty_reasoning = true;
    }
  }

  ComputeMessageStarts(messages, input.tools, kwargs, prompt);
  prompt.unstable_tail = unstable_tail_.UnstableLength(prompt.tokens);
  prompt.stable_boundary = unstable_tail_.StableBoundary(prompt.tokens);
  return prompt;
}

void PromptBuilder::ComputeMessageStarts(const Json& messages, const Json& tools, const Json& kwargs,
                                         BuiltPrompt& prompt) const {
  // keys[k]: hash of everything the render of messages[0:k] depends on.
  std::vector<uint64_t> keys(messages.size() + 1);
  keys[0] = HashBytes(tools.dump(), HashBytes(kwargs.dump()));
  for (size_t i = 0; i < messages.size(); ++i) keys[i + 1] = HashBytes(messages[i].dump(), keys[i]);
  const auto render_prefix = [&](size_t count) {
    if (auto memo = prefix_memo_.Find(keys[count])) return *memo;
    Json prefix = Json::array();
    for (size_t i = 0; i < count; ++i) prefix.push_back(messages[i]);
    auto text = std::make_shared<const std::string>(chat::RenderChat(
        template_, prefix, tools, /*add_generation_prompt=*/false, bos_token_, eos_token_, kwargs,
        render_options_));
    prefix_memo_.Insert(keys[count], text);
    return *text;
  };
  const std::vector<size_t> bytes =
      MessageByteStarts(messages.size(), prompt.text, render_prefix, turn_ends_);

  std::vector<size_t> offsets;
  const bool aligned = TokenByteOffsets(tokenizer_, prompt.tokens, prompt.text,
                                        prompt.bos_added ? 1 : 0, offsets);
  prompt.message_starts.reserve(messages.size());
  int64_t previous = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    int64_t position = 0;
    if (i > 0) {
      if (aligned) {
        position = TokenAtByte(offsets, bytes[i]);
      } else {
        // Slow path (token bytes do not spell the text): tokenize the prefix
        // and keep the part that agrees with the prompt.
        const std::vector<int32_t> head = Tokenize(std::string_view(prompt.text).substr(0, bytes[i]), nullptr);
        const size_t n = std::min(head.size(), prompt.tokens.size());
        size_t same = 0;
        while (same < n && head[same] == prompt.tokens[same]) ++same;
        position = static_cast<int64_t>(same);
      }
    }
    position = std::max(position, previous);
    previous = position;
    prompt.message_starts.push_back(
        {position, RoleOf(messages[i]["role"].get<std::string>())});
  }
  if (aligned && options_.volatile_marks) {
    size_t first_turn_end = prompt.text.size();
    for (size_t i = 0; i < messages.size(); ++i) {
      if (RoleOf(messages[i]["role"].get<std::string>()) == cache::Role::kAssistant) {
        first_turn_end = bytes[i];
        break;
      }
    }
    ComputeMarks(offsets, first_turn_end, prompt);
  }
}

void PromptBuilder::ComputeMarks(const std::vector<size_t>& offsets, size_t first_turn_end,
                                 BuiltPrompt& prompt) const {
  // The planner takes a few per request (the first usable ones), so later
  // sessions can reach lines this far into the first turn.
  constexpr size_t kMaxMarks = 64;
  constexpr int64_t kMarkSpacing = 16;  // tokens: one mark per cluster of volatile lines
  // One candidate per cluster of volatile lines (its first line's start,
  // the cluster's best score): a divergence anywhere in the cluster resumes
  // at most a few lines early.
  struct Cluster {
    int64_t position;
    int score;
  };
  std::vector<Cluster> clusters;
  for (const VolatileLine& line : FindVolatileLines(prompt.text, first_turn_end)) {
    const int64_t position = TokenAtByte(offsets, line.offset);
    if (position <= 0) continue;
    if (clusters.empty() || position - clusters.back().position >= kMarkSpacing) {
      clusters.push_back({position, line.score});
    } else {
      clusters.back().score = std::max(clusters.back().score, line.score);
    }
  }
  // Strong signals first: a session-specific path, date or hash is where
  // another session of the same client diverges; a generic path in a tool's
  // documentation is the same in every session. Within a score, prompt order:
  // a session diverges at the first line that differs. Marks an earlier
  // session already planted on this prefix are cached and the planner skips
  // them, so the next session's marks move on to later lines.
  for (const int score : {2, 1}) {
    for (const Cluster& c : clusters) {
      if (c.score == score && prompt.marks.size() < kMaxMarks) prompt.marks.push_back(c.position);
    }
  }
}

}  // namespace cairn::engine
