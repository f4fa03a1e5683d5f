// The unstable-tail probe (spec §3.4) on real templates with the Qwen3
// tokenizer, checked by the property it exists for: over a simulated agent
// session, turn N's stable boundary lies inside the common token prefix of
// turn N's and turn N+1's prompts (so the next turn hits), and message starts
// before the divergence do not move between turns.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/prompt_builder.h"
#include "prompt_test_util.h"

namespace cairn::engine {
namespace {

using test::Json;

int64_t CommonPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

PromptBuilder MakeBuilder(const std::string& name) {
  PromptBuilderOptions options;
  options.clock = test::FixedClock;
  return PromptBuilder(test::Qwen3Tokenizer(), test::TemplateSource(name), "", "<|im_end|>", options);
}

TEST(UnstableTail, ProbesOnRealTemplates) {
  const tokenizer::Tokenizer& tok = test::Qwen3Tokenizer();
  for (const std::string name : {"qwen3", "qwen35", "llama31", "mistral"}) {
    const PromptBuilder builder = MakeBuilder(name);
    // Mistral's template has no generation prompt (g = 0): no probe, unstable = 1.
    EXPECT_EQ(builder.unstable_tail().probes().empty(), name == "mistral") << name;
    for (const TailProbe& probe : builder.unstable_tail().probes()) {
      const std::string tail_text = tok.DecodeBytes(probe.tail, true);
      std::printf("%-8s tail '%s' g=%zu u=%lld\n", name.c_str(), tail_text.c_str(), probe.tail.size(),
                  static_cast<long long>(probe.unstable));
      EXPECT_GE(probe.tail.size(), 1u);
      EXPECT_LE(probe.tail.size(), 64u);
      EXPECT_LE(probe.unstable, 64);
    }
  }
  // Qwen3.5 opens "<think>\n" and re-renders the turn without it: >= 2 tokens unstable.
  const PromptBuilder qwen35 = MakeBuilder("qwen35");
  GenerationInput input;
  input.messages = Json::parse(R"([{"role":"user","content":"hello there"}])");
  const BuiltPrompt prompt = qwen35.Build(input);
  EXPECT_GE(prompt.unstable_tail, 2);
  EXPECT_EQ(prompt.stable_boundary, static_cast<int64_t>(prompt.tokens.size()) - prompt.unstable_tail);
}

TEST(UnstableTail, ExplicitProbesAndFallback) {
  const UnstableTail tail({{{7}, 3}, {{5, 7}, 0}, {{9, 9, 9}, 2}});
  EXPECT_EQ(tail.probes()[0].tail.size(), 3u);  // longest first
  EXPECT_EQ(tail.UnstableLength(std::vector<int32_t>{1, 5, 7}), 1);  // matches {5,7} first: max(1, 0)
  EXPECT_EQ(tail.UnstableLength(std::vector<int32_t>{1, 4, 7}), 3);
  EXPECT_EQ(tail.UnstableLength(std::vector<int32_t>{9, 9, 9}), 2);
  EXPECT_EQ(tail.UnstableLength(std::vector<int32_t>{1, 2}), 1);
  EXPECT_EQ(tail.StableBoundary(std::vector<int32_t>{1, 4, 7}), 0);
  EXPECT_EQ(UnstableTail().StableBoundary(std::vector<int32_t>{1, 2, 3}), 2);
}

// One simulated session: the client resends the whole conversation each turn,
// echoing our replies (content + reasoning_content as we split them).
struct Step {
  bool new_user;  // false: a tool-loop step (assistant tool call + tool result)
};

void CheckSession(const std::string& name, const Json& kwargs, bool reasoning) {
  SCOPED_TRACE(name + " kwargs=" + kwargs.dump() + " reasoning=" + std::to_string(reasoning));
  const PromptBuilder builder = MakeBuilder(name);
  Json tools = Json::array({test::Tool(0), test::Tool(1), test::Tool(2)});
  Json messages = Json::array();
  messages.push_back({{"role", "system"}, {"content", "You are a coding agent."}});
  messages.push_back(test::User(0, 120));
  const std::vector<Step> steps = {{false}, {false}, {true}, {false}, {true}, {true}, {false}, {true}};

  auto build = [&]() {
    GenerationInput input;
    input.messages = messages;
    input.tools = tools;
    input.template_kwargs = kwargs;
    return builder.Build(input);
  };
  BuiltPrompt previous = build();
  // An assistant turn since the last user query rendered with a think block:
  // Qwen3 when it carries reasoning, Qwen3.5 always.
  bool loop_had_think_block = false;
  int n = 1;
  for (const Step& step : steps) {
    size_t last_user = 0;  // the previous prompt's last user message
    for (size_t i = 0; i < messages.size(); ++i) {
      if (messages[i]["role"] == "user") last_user = i;
    }
    if (step.new_user) {
      messages.push_back(test::AssistantAnswer(n, 200, reasoning));
      messages.push_back(test::User(n, 150));
    } else {
      messages.push_back(test::AssistantToolCall(n, 160, reasoning));
      messages.push_back(test::ToolResult(n, 300));
    }
    ++n;
    const BuiltPrompt next = build();
    const int64_t lcp = CommonPrefix(previous.tokens, next.tokens);
    if (step.new_user && loop_had_think_block) {
      // Qwen templates drop the reasoning of every assistant turn before the
      // new query (llama-cpp-notes §6): the divergence moves back into the
      // tool loop, but never before the first assistant turn after the
      // previous user query, whose message start is the checkpoint to restore.
      ASSERT_LT(last_user + 1, previous.message_starts.size());
      EXPECT_LE(previous.message_starts[last_user + 1].position, lcp) << "turn " << n;
    } else if (step.new_user && name == "mistral") {
      // Mistral renders [AVAILABLE_TOOLS] right before the last user message,
      // so every new user turn re-renders the history after the system prompt.
      EXPECT_GE(lcp, previous.message_starts[1].position) << "turn " << n;
    } else {
      EXPECT_LE(previous.stable_boundary, lcp)
          << "turn " << n << ": stable " << previous.stable_boundary << " prompt "
          << previous.tokens.size() << " lcp " << lcp;
      EXPECT_LT(previous.stable_boundary, static_cast<int64_t>(previous.tokens.size()));
    }
    // Message starts before the divergence are the same in both turns.
    for (size_t i = 0; i < previous.message_starts.size(); ++i) {
      if (next.message_starts[i].position >= lcp) break;
      EXPECT_EQ(next.message_starts[i].position, previous.message_starts[i].position)
          << "turn " << n << " message " << i;
      EXPECT_EQ(next.message_starts[i].role, previous.message_starts[i].role);
    }
    const bool think_block = (name == "qwen3" && reasoning) || name == "qwen35";
    loop_had_think_block = step.new_user ? false : (loop_had_think_block || think_block);
    previous = next;
  }
}

TEST(UnstableTail, NextTurnHitsOnRealTemplates) {
  std::vector<Json> variants = {Json::object(), Json{{"enable_thinking", true}},
                                Json{{"enable_thinking", false}}};
  if (test::Sanitized()) variants.resize(1);  // ASan/UBSan build: one variant is enough
  for (const std::string name : {"qwen3", "qwen35", "llama31", "mistral"}) {
    for (const Json& kwargs : variants) {
      for (bool reasoning : {false, true}) CheckSession(name, kwargs, reasoning);
    }
  }
}

}  // namespace
}  // namespace cairn::engine
