// PromptBuilder on the real Qwen3 tokenizer and real chat templates: tokens,
// BOS, message starts (checked against tokenizing each prefix), reasoning
// detection, template errors, and the build time of a 20k-token agent prompt.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "engine/prompt_builder.h"
#include "engine/prompt_messages.h"
#include "prompt_test_util.h"

namespace cairn::engine {
namespace {

using test::Json;

PromptBuilderOptions Options() {
  PromptBuilderOptions options;
  options.clock = test::FixedClock;
  return options;
}

PromptBuilder MakeBuilder(const std::string& name) {
  return PromptBuilder(test::Qwen3Tokenizer(), test::TemplateSource(name), "", "<|im_end|>", Options());
}

GenerationInput Chat(Json messages, Json tools = nullptr, Json kwargs = Json::object()) {
  GenerationInput input;
  input.messages = std::move(messages);
  input.tools = std::move(tools);
  input.template_kwargs = std::move(kwargs);
  return input;
}

// Every message start p: the prompt's first p tokens are exactly what the
// rendered text up to that token tokenizes to, and positions ascend.
void ExpectStartsAreTokenPrefixes(const BuiltPrompt& prompt, size_t n_messages) {
  const tokenizer::Tokenizer& tok = test::Qwen3Tokenizer();
  ASSERT_EQ(prompt.message_starts.size(), n_messages);
  EXPECT_EQ(prompt.message_starts[0].position, 0);
  for (size_t i = 1; i < n_messages; ++i) {
    const int64_t p = prompt.message_starts[i].position;
    ASSERT_GE(p, prompt.message_starts[i - 1].position);
    ASSERT_LE(p, static_cast<int64_t>(prompt.tokens.size()));
    const std::span<const int32_t> head(prompt.tokens.data(), static_cast<size_t>(p));
    const std::string head_text = tok.DecodeBytes(head, /*render_special=*/true);
    ASSERT_EQ(prompt.text.compare(0, head_text.size(), head_text), 0) << "message " << i;
    EXPECT_EQ(tok.Encode(head_text, true), std::vector<int32_t>(head.begin(), head.end()))
        << "message " << i;
  }
}

TEST(PromptBuilder, ChatMatchesRenderAndTokenize) {
  const PromptBuilder builder = MakeBuilder("qwen3");
  const Json messages = test::AgentConversation(12, 600, /*reasoning=*/true);
  const BuiltPrompt prompt = builder.Build(Chat(messages, Json::array({test::Tool(0), test::Tool(1)})));
  EXPECT_EQ(prompt.text, builder.Render(Chat(messages, Json::array({test::Tool(0), test::Tool(1)}))));
  EXPECT_EQ(prompt.tokens, test::Qwen3Tokenizer().Encode(prompt.text, true));
  EXPECT_FALSE(prompt.bos_added);  // Qwen3: add_bos false
  EXPECT_EQ(prompt.text.substr(prompt.text.size() - 22), "<|im_start|>assistant\n");
  ExpectStartsAreTokenPrefixes(prompt, messages.size());
  // ChatML: each message (except a tool reply right after another) starts at <|im_start|>.
  const tokenizer::Tokenizer& tok = test::Qwen3Tokenizer();
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& start = prompt.message_starts[i];
    if (i > 0 && messages[i]["role"] == "tool" && messages[i - 1]["role"] == "tool") continue;
    EXPECT_EQ(tok.TokenToBytes(prompt.tokens[static_cast<size_t>(start.position)], true), "<|im_start|>")
        << "message " << i;
  }
  EXPECT_EQ(prompt.message_starts[0].role, cache::Role::kSystem);
  EXPECT_EQ(prompt.message_starts[1].role, cache::Role::kUser);
  EXPECT_EQ(prompt.message_starts[2].role, cache::Role::kAssistant);
  EXPECT_EQ(prompt.message_starts[3].role, cache::Role::kTool);
}

TEST(PromptBuilder, MessageStartsOnOtherTemplates) {
  for (const std::string name : {"qwen35", "llama31", "mistral"}) {
    const PromptBuilder builder = MakeBuilder(name);
    const Json messages = test::AgentConversation(9, 400, /*reasoning=*/true);
    const BuiltPrompt prompt = builder.Build(Chat(messages, Json::array({test::Tool(0)})));
    SCOPED_TRACE(name);
    ExpectStartsAreTokenPrefixes(prompt, messages.size());
    // Starts strictly increase for these conversations (no merged messages).
    for (size_t i = 1; i < messages.size(); ++i) {
      EXPECT_GT(prompt.message_starts[i].position, prompt.message_starts[i - 1].position) << i;
    }
  }
}

TEST(PromptBuilder, ContentNormalization) {
  const PromptBuilder builder = MakeBuilder("qwen3");
  const Json parts = Json::parse(R"([{"role":"user","content":[{"type":"text","text":"Hello "},
      {"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"world"}]},
      {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
       "function":{"name":"f","arguments":"{\"a\": 1}"}}]}])");
  const std::string text = builder.Render(Chat(parts));
  EXPECT_NE(text.find("<|im_start|>user\nHello world<|im_end|>"), std::string::npos) << text;
  EXPECT_NE(text.find("{\"name\": \"f\", \"arguments\": {\"a\": 1}}"), std::string::npos) << text;
}

TEST(PromptBuilder, RawPromptAndBos) {
  // A Llama-3-style vocabulary would add BOS; emulate with a ChatML fallback
  // builder on a vocabulary copy that asks for <|endoftext|> as BOS.
  tokenizer::Vocabulary vocab = test::Qwen3Tokenizer().vocab();
  vocab.bos = vocab.FindToken("<|endoftext|>");
  vocab.add_bos = true;
  const tokenizer::Tokenizer tok(std::move(vocab));
  const PromptBuilder builder(tok, "", "<|endoftext|>", "<|im_end|>", Options());

  GenerationInput raw;
  raw.prompt = "Once upon a time<|im_end|>";
  BuiltPrompt prompt = builder.Build(raw);
  ASSERT_GE(prompt.tokens.size(), 3u);
  EXPECT_TRUE(prompt.bos_added);
  EXPECT_EQ(prompt.tokens[0], tok.bos());
  EXPECT_EQ(prompt.tokens.back(), tok.vocab().FindToken("<|im_end|>"));  // special parsing on
  EXPECT_TRUE(prompt.message_starts.empty());
  EXPECT_EQ(prompt.stable_boundary, static_cast<int64_t>(prompt.tokens.size()) - 1);

  raw.prompt = "<|endoftext|>Once";  // already starts with BOS: not doubled
  prompt = builder.Build(raw);
  EXPECT_FALSE(prompt.bos_added);
  EXPECT_EQ(prompt.tokens[0], tok.bos());
  EXPECT_NE(prompt.tokens[1], tok.bos());

  // Chat through the fallback template: BOS + ChatML, starts shifted past BOS.
  const Json messages = Json::parse(R"([{"role":"system","content":"s"},{"role":"user","content":"u"}])");
  prompt = builder.Build(Chat(messages));
  EXPECT_EQ(prompt.text, "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_TRUE(prompt.bos_added);
  EXPECT_EQ(prompt.message_starts[0].position, 0);
  EXPECT_EQ(prompt.message_starts[1].position,
            1 + static_cast<int64_t>(tok.Encode("<|im_start|>system\ns<|im_end|>\n", true).size()));
}

TEST(PromptBuilder, ReasoningOpenAndThinkingOff) {
  const Json messages = Json::parse(R"([{"role":"user","content":"hi"}])");
  const PromptBuilder qwen35 = MakeBuilder("qwen35");
  BuiltPrompt prompt = qwen35.Build(Chat(messages));
  EXPECT_TRUE(prompt.reasoning_open);  // "<think>\n"
  prompt = qwen35.Build(Chat(messages, nullptr, {{"enable_thinking", false}}));
  EXPECT_FALSE(prompt.reasoning_open);
  EXPECT_FALSE(prompt.closed_empty_reasoning);  // the template closed it itself

  const PromptBuilder qwen3 = MakeBuilder("qwen3");
  EXPECT_FALSE(qwen3.Build(Chat(messages)).reasoning_open);  // Qwen3 never prefills <think>

  // A template that ignores enable_thinking and always opens the block.
  const std::string stubborn = std::string(kChatMlFallbackTemplate) +
                               "{%- if add_generation_prompt %}{{- '<think>\\n' }}{%- endif %}";
  const PromptBuilder forced(test::Qwen3Tokenizer(), stubborn, "", "<|im_end|>", Options());
  prompt = forced.Build(Chat(messages));
  EXPECT_TRUE(prompt.reasoning_open);
  prompt = forced.Build(Chat(messages, nullptr, {{"enable_thinking", false}}));
  EXPECT_FALSE(prompt.reasoning_open);
  EXPECT_TRUE(prompt.closed_empty_reasoning);
  EXPECT_EQ(prompt.text, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(prompt.tokens, test::Qwen3Tokenizer().Encode(prompt.text, true));
}

TEST(PromptBuilder, ClientErrors) {
  const PromptBuilder builder = MakeBuilder("qwen35");
  // Qwen3.5 raises without a user query.
  try {
    builder.Build(Chat(Json::parse(R"([{"role":"system","content":"only system"}])")));
    FAIL() << "expected RequestError";
  } catch (const RequestError& e) {
    EXPECT_EQ(std::string(e.what()), "could not apply chat template: No user query found in messages.");
  }
  EXPECT_THROW(builder.Build(Chat(Json::array())), RequestError);
  EXPECT_THROW(builder.Build(GenerationInput()), RequestError);
  EXPECT_THROW(builder.Build(Chat(Json::parse(R"([{"content":"no role"}])"))), RequestError);
}

TEST(PromptBuilder, LateSystemMessagesFoldIntoUserTurnsWhenTheTemplateRefusesThem) {
  // Claude Code 2.1 sends a system turn after the first user message; Qwen3.5's
  // template raises "System message must be at the beginning.".
  const Json messages = Json::parse(R"([{"role":"system","content":"top"},{"role":"user","content":"hi"},
    {"role":"system","content":"ENV BLOCK"},{"role":"user","content":"go"}])");
  const BuiltPrompt folded = MakeBuilder("qwen35").Build(Chat(messages));
  EXPECT_NE(folded.text.find("<|im_start|>user\nENV BLOCK\n\ngo<|im_end|>"), std::string::npos) << folded.text;
  ExpectStartsAreTokenPrefixes(folded, 3);  // the messages that were rendered
  // Qwen3's template takes a late system message as it is.
  const BuiltPrompt kept = MakeBuilder("qwen3").Build(Chat(messages));
  EXPECT_NE(kept.text.find("<|im_start|>system\nENV BLOCK<|im_end|>"), std::string::npos) << kept.text;
  ExpectStartsAreTokenPrefixes(kept, 4);
  // With no user message after it, the system text joins the previous user turn.
  int count = 0;
  const Json tail = FoldLateSystemMessages(
      Json::parse(R"([{"role":"user","content":"a"},{"role":"developer","content":"b"}])"), &count);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(tail, Json::parse(R"([{"role":"user","content":"a\n\nb"}])"));
}

// CPU time of this thread (the test machine may be shared and loaded).
double CpuMs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

TEST(PromptBuilder, AgentPromptBuildTime) {
  Json tools = Json::array();
  for (int i = 0; i < 20; ++i) tools.push_back(test::Tool(i));
  const int n_messages = 30;
  const Json messages = test::AgentConversation(n_messages + 2, 4400, /*reasoning=*/true);
  Json turn = messages;
  turn.erase(turn.size() - 1);
  turn.erase(turn.size() - 1);
  const int reps = test::Sanitized() ? 1 : 5;
  std::vector<double> cold, warm;
  BuiltPrompt prompt;
  for (int r = 0; r < reps; ++r) {
    // Cold: a fresh builder has no memoized prefix renders.
    const PromptBuilder builder = MakeBuilder("qwen3");
    double t0 = CpuMs();
    prompt = builder.Build(Chat(turn, tools));
    cold.push_back(CpuMs() - t0);
    // Warm: the next turn of the same session (two more messages).
    t0 = CpuMs();
    const BuiltPrompt next = builder.Build(Chat(messages, tools));
    warm.push_back(CpuMs() - t0);
  }
  std::sort(cold.begin(), cold.end());
  std::sort(warm.begin(), warm.end());
  std::printf("agent prompt: %d messages, %zu tools, %zu tokens, %zu bytes: build %.2f ms cold, "
              "%.2f ms next turn (CPU, median of %d)\n",
              n_messages, tools.size(), prompt.tokens.size(), prompt.text.size(),
              cold[cold.size() / 2], warm[warm.size() / 2], reps);
  EXPECT_GE(prompt.tokens.size(), 18000u);
  ExpectStartsAreTokenPrefixes(prompt, static_cast<size_t>(n_messages));
  if (!test::Sanitized()) {
    EXPECT_LT(warm[warm.size() / 2], 20.0);
    EXPECT_LT(cold[cold.size() / 2], 100.0);
  }
}

}  // namespace
}  // namespace cairn::engine
