// A deterministic stand-in for the engine, used by the server tests, the
// cairn_fake_server binary and the Python end-to-end tests.
//
// Tokens are bytes (vocabulary 256). The prompt is rendered as
// "<|role|>content\n" per message (+ "<|assistant|>"); the answer is the last
// user message (or the completion prompt) upper-cased, one token per
// character. Directives in that text steer the fake:
//   [delay=MS]    sleep MS per generated token
//   [prefill=MS]  sleep MS before the first token, reporting progress every 50 ms
//   [think]       reason first: reasoning "thinking..." then the answer
//   [long]        answer "abc abc ..." until max_tokens
//   [error]       throw std::runtime_error("fake engine failure")
//   [reject]      throw RequestError("could not apply chat template: fake rejection")
// Directives are removed from the answer. Temperature > 0 appends " #N" with
// N drawn from the seed (or at random without one). Prompts longer than the
// context window (4096 tokens) are refused like the real engine does.
// Prefix "cache": the longest common prefix with the previous prompt.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <mutex>
#include <random>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/service.h"

namespace cairn::server::testing {

class FakeService : public engine::GenerationService {
 public:
  static constexpr int64_t kContextWindow = 4096;

  std::atomic<int> generate_calls{0};
  std::atomic<int> cancelled{0};
  std::atomic<int> active{0};
  // The last input/options the fake received (for request-mapping tests;
  // read them only while no request is running).
  engine::GenerationInput last_input;
  engine::GenerationOptions last_options;

  engine::GenerationResult Generate(const engine::GenerationInput& input,
                                    const engine::GenerationOptions& options,
                                    const std::function<bool(const engine::GenerationDelta&)>& on_delta,
                                    const std::function<bool(int64_t, int64_t)>& on_progress) override {
    auto queued = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);  // the real engine serves FIFO, one at a time
    ++generate_calls;
    ++active;
    struct Active {
      std::atomic<int>& n;
      ~Active() { --n; }
    } active_guard{active};
    auto start = std::chrono::steady_clock::now();
    {
      std::lock_guard state_lock(state_mutex_);
      last_input = input;
      last_options = options;
    }

    engine::GenerationResult result;
    result.queue_seconds = Seconds(queued, start);
    std::string prompt = RenderPrompt(input);
    result.prompt_tokens = static_cast<int64_t>(prompt.size());
    if (result.prompt_tokens >= kContextWindow) {
      throw engine::RequestError("prompt is too long: " + std::to_string(result.prompt_tokens) +
                                 " tokens > " + std::to_string(kContextWindow) + " maximum");
    }
    std::string source = input.prompt ? *input.prompt : LastUserText(input);
    if (source.find("[reject]") != std::string::npos) {
      throw engine::RequestError("could not apply chat template: fake rejection");
    }
    if (source.find("[error]") != std::string::npos) throw std::runtime_error("fake engine failure");
    int delay_ms = Directive(source, "delay");
    int prefill_ms = Directive(source, "prefill");
    bool think = source.find("[think]") != std::string::npos;
    bool long_answer = source.find("[long]") != std::string::npos;

    {
      std::lock_guard state_lock(state_mutex_);
      if (options.use_prefix_cache) {
        size_t common = 0;
        while (common < prompt.size() && common < last_prompt_.size() &&
               prompt[common] == last_prompt_[common]) {
          ++common;
        }
        result.cached_tokens = static_cast<int64_t>(std::min(common, prompt.size() - 1));
      }
      last_prompt_ = prompt;
    }
    result.cache = {{"kind", result.cached_tokens > 0 ? "hit" : "miss"},
                    {"cached_tokens", result.cached_tokens}};
    result.spec = {{"mode", options.spec_mode.empty() ? "baseline" : options.spec_mode}};

    // Prefill.
    if (!on_progress(0, result.prompt_tokens)) return Cancelled(result, start);
    for (int waited = 0; waited < prefill_ms; waited += 50) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50, prefill_ms - waited)));
      if (!on_progress(result.prompt_tokens * waited / std::max(1, prefill_ms), result.prompt_tokens)) {
        return Cancelled(result, start);
      }
    }
    on_progress(result.prompt_tokens, result.prompt_tokens);
    auto prefill_end = std::chrono::steady_clock::now();
    result.prefill_seconds = Seconds(start, prefill_end);

    // The answer, split into reasoning and content pieces (one token each).
    std::string answer = long_answer ? std::string() : Upper(StripDirectives(source));
    if (options.temperature > 0) {
      std::mt19937_64 rng(options.seed ? *options.seed : std::random_device{}());
      answer += " #" + std::to_string(rng() % 1000000);
    }
    // Stop strings: the answer ends before the first one (never emitted,
    // as the real engine's hold-back guarantees).
    std::string matched_stop;
    for (const auto& stop : options.stop) {
      if (size_t at = answer.find(stop); at != std::string::npos) {
        answer.resize(at);
        matched_stop = stop;
      }
    }
    std::vector<std::pair<std::string, bool>> pieces;  // (token text, is reasoning)
    if (think) {
      for (const auto& c : SplitChars("thinking...")) pieces.emplace_back(c, true);
    }
    for (const auto& c : SplitChars(answer)) pieces.emplace_back(c, false);

    std::string content, reasoning;
    result.finish_reason = "stop";
    result.stop_sequence = matched_stop;
    bool first = true;
    for (size_t i = 0;; ++i) {
      std::string piece;
      bool is_reasoning = false;
      if (long_answer && i >= pieces.size()) {
        piece = std::string(1, "abc "[i % 4]);
      } else if (i < pieces.size()) {
        std::tie(piece, is_reasoning) = pieces[i];
      } else {
        break;
      }
      if (result.completion_tokens >= options.max_tokens) {
        result.finish_reason = "length";
        result.stop_sequence.clear();
        break;
      }
      std::string next = (is_reasoning ? reasoning : content) + piece;
      if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      ++result.completion_tokens;
      engine::GenerationDelta delta;
      (is_reasoning ? delta.reasoning : delta.content) = piece;
      (is_reasoning ? reasoning : content) = next;
      if (options.logprobs) {
        engine::TokenLogprob lp{static_cast<int32_t>(static_cast<unsigned char>(piece[0])), piece,
                                -0.25f * static_cast<float>(i % 4), {}};
        for (int k = 0; k < options.top_logprobs; ++k) {
          lp.top.emplace_back(k == 0 ? piece : std::string(1, static_cast<char>('a' + k)),
                              lp.logprob - static_cast<float>(k));
        }
        delta.logprobs.push_back(lp);
        result.logprobs.push_back(lp);
      }
      if (first) {
        result.ttft_seconds = Seconds(start, std::chrono::steady_clock::now());
        first = false;
      }
      if (!on_delta(delta)) return Cancelled(result, prefill_end, content, reasoning);
    }
    result.content = content;
    result.reasoning = reasoning;
    result.decode_seconds = Seconds(prefill_end, std::chrono::steady_clock::now());
    return result;
  }

  std::vector<int32_t> Tokenize(const std::string& text, bool) override {
    std::vector<int32_t> ids;
    for (unsigned char c : text) ids.push_back(c);
    return ids;
  }
  std::string Detokenize(const std::vector<int32_t>& ids) override {
    std::string text;
    for (int32_t id : ids) text += static_cast<char>(id);
    return text;
  }
  std::string RenderPrompt(const engine::GenerationInput& input) override {
    if (input.prompt) return *input.prompt;
    std::string text;
    if (input.messages) {
      for (const auto& m : *input.messages) {
        text += "<|" + m.value("role", "") + "|>" + m.value("content", "") + "\n";
      }
    }
    if (input.add_generation_prompt) text += "<|assistant|>";
    return text;
  }
  engine::ServiceInfo Info() override {
    engine::ServiceInfo info;
    info.model_name = "fake-model";
    info.model_path = "/dev/null/fake.gguf";
    info.architecture = "fake";
    info.context_window = kContextWindow;
    info.n_vocab = 256;
    info.model_bytes = 1234;
    info.settings = {{"prefix_cache", true}, {"spec", "baseline"}};
    return info;
  }
  std::string MetricsText() override {
    return "# TYPE cairn_requests_total counter\ncairn_requests_total " +
           std::to_string(generate_calls.load()) + "\n";
  }
  engine::Json CacheListing() override {
    std::lock_guard lock(state_mutex_);  // not mutex_: must answer during a generation
    return {{"entries", engine::Json::array()}, {"last_prompt_tokens", last_prompt_.size()}};
  }
  void ClearCache() override { ++cache_clears; }
  // One entry exists until it is removed: "0123456789abcdef0123456789abcdef".
  bool RemoveCacheEntry(const std::string& id) override {
    return id == "0123456789abcdef0123456789abcdef" && !entry_removed.exchange(true);
  }
  std::atomic<int> cache_clears{0};
  std::atomic<bool> entry_removed{false};

 private:
  static double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }
  engine::GenerationResult Cancelled(engine::GenerationResult& result, std::chrono::steady_clock::time_point since,
                                     const std::string& content = "", const std::string& reasoning = "") {
    ++cancelled;
    result.finish_reason = "cancelled";
    result.content = content;
    result.reasoning = reasoning;
    result.decode_seconds = Seconds(since, std::chrono::steady_clock::now());
    return result;
  }
  static std::string LastUserText(const engine::GenerationInput& input) {
    if (!input.messages) return "";
    for (auto it = input.messages->rbegin(); it != input.messages->rend(); ++it) {
      if (it->value("role", "") == "user") return it->value("content", "");
    }
    return "";
  }
  static int Directive(const std::string& text, const std::string& name) {
    std::smatch match;
    std::regex pattern("\\[" + name + "=([0-9]{1,6})\\]");
    return std::regex_search(text, match, pattern) ? std::stoi(match[1].str()) : 0;
  }
  static std::string StripDirectives(const std::string& text) {
    static const std::regex pattern(R"(\[(delay=[0-9]+|prefill=[0-9]+|think|long|error|reject)\] ?)");
    return std::regex_replace(text, pattern, "");
  }
  static std::string Upper(std::string text) {
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
  }
  // UTF-8 code points (so every delta is complete UTF-8).
  static std::vector<std::string> SplitChars(const std::string& text) {
    std::vector<std::string> out;
    for (size_t i = 0; i < text.size();) {
      size_t n = 1;
      unsigned char c = static_cast<unsigned char>(text[i]);
      if (c >= 0xF0) n = 4;
      else if (c >= 0xE0) n = 3;
      else if (c >= 0xC0) n = 2;
      n = std::min(n, text.size() - i);
      out.push_back(text.substr(i, n));
      i += n;
    }
    return out;
  }

  std::mutex mutex_;        // held for a whole Generate (serialises like the engine)
  std::mutex state_mutex_;  // last_prompt_, last_input, last_options
  std::string last_prompt_;
};

}  // namespace cairn::server::testing
