// The contract between the HTTP server (and CLI) and the generation engine.
//
// The server turns API requests (OpenAI chat/completions, later Anthropic and
// Responses) into a GenerationInput plus GenerationOptions, calls
// GenerationService::Generate from its handler thread, and relays deltas to the
// client. The engine owns everything model-side: chat-template rendering,
// tokenization, the prefix cache, speculative decoding, sampling, stop strings
// and reasoning split. Generate() blocks; requests are served FIFO (one at a
// time until continuous batching lands) and the callback runs on the
// generation thread.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cairn::engine {

using Json = nlohmann::ordered_json;

// What to generate from. Exactly one of `messages` (chat) or `prompt` (raw
// completion text, tokenized with special-token parsing off... see below).
struct GenerationInput {
  // Chat: OpenAI-shaped messages [{role, content (string or null), reasoning_content?,
  // tool_calls? (arguments already parsed to objects), tool_call_id?, name?}],
  // validated by the server (non-empty, known roles, content as text).
  std::optional<Json> messages;
  Json tools;                       // OpenAI tool definitions or null
  Json template_kwargs = Json::object();  // chat_template_kwargs (+ enable_thinking)
  bool add_generation_prompt = true;
  // Completions: raw prompt text (special tokens in the text are parsed, as
  // llama-server does for /completion).
  std::optional<std::string> prompt;
};

struct GenerationOptions {
  // Sampling (temperature 0 = greedy).
  float temperature = 0.0f;
  float top_p = 1.0f;
  int top_k = 0;                    // 0 = off
  float min_p = 0.0f;
  std::optional<uint64_t> seed;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  float repetition_penalty = 1.0f;
  std::vector<std::pair<int32_t, float>> logit_bias;
  int max_tokens = 512;             // clamped by the engine to the context left
  std::vector<std::string> stop;    // never included in the output
  bool ignore_eos = false;
  bool logprobs = false;
  int top_logprobs = 0;             // 0..20
  std::string spec_mode;            // "" = server default; lookup|draft|mtp|baseline|auto
  bool use_prefix_cache = true;
  // false: read the prefix cache but leave it as it was (nothing this request
  // computes is inserted). The request does the same work as a storing one, so
  // benchmarks can repeat a hit against an unchanged cache.
  bool store_in_cache = true;
  bool return_token_ids = false;    // x_cairn.completion_token_ids (extension, as vLLM's field)
};

struct TokenLogprob {
  int32_t id = 0;
  std::string text;                 // the token's bytes (may be partial UTF-8)
  float logprob = 0.0f;
  std::vector<std::pair<std::string, float>> top;  // (text, logprob), best first
};

// One streamed step: text is complete UTF-8 and never contains (part of) a stop string.
struct GenerationDelta {
  std::string content;              // answer text
  std::string reasoning;            // text inside <think>...</think>
  std::vector<TokenLogprob> logprobs;  // for the tokens this delta covers
  // Tool-call fragments in OpenAI's stream shape, when the request had tools
  // and the answer calls them (null otherwise), sent as soon as the engine
  // parses each part (tool_call_stream.h):
  //   [{index, id, type: "function", function: {name, arguments: ""}}]  a call begins
  //   [{index, function: {arguments: "<piece>"}}]                       its next piece
  // A call's pieces concatenate to its arguments (a JSON object text; one cut
  // off by max_tokens may be incomplete). In the answer, `content` comes
  // before these fragments, except in the last delta, whose content may also
  // be text that followed the fragments' call.
  Json tool_calls;
};

struct GenerationResult {
  std::string content;              // full answer text (reasoning split out)
  std::string reasoning;
  std::string finish_reason;        // "stop" | "length" | "tool_calls" | "cancelled"
  std::string stop_sequence;        // the stop string that ended the answer ("" for EOS, length, ...)
  // OpenAI message.tool_calls parsed from the answer when the request had
  // tools (content then holds only the text outside the calls): exactly the
  // calls the deltas streamed, each with its pieces joined.
  Json tool_calls = Json::array();
  std::vector<TokenLogprob> logprobs;
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;        // prompt tokens served by the prefix cache
  int64_t completion_tokens = 0;
  std::vector<int32_t> completion_ids;  // the generated token ids, in order
  bool report_token_ids = false;        // options.return_token_ids: put them in x_cairn
  double ttft_seconds = 0;          // request start (queue excluded) to first token
  double prefill_seconds = 0;
  // Prefill progress: (prompt position reached, seconds since the prefill
  // started) after every chunk, the last entry at the end of the prefill. A
  // cold run's trace gives the time it spent on any span of the prompt (how
  // bench/agent_replay.py prices a cache hit's suffix independently).
  struct PrefillMark {
    int64_t position = 0;
    double seconds = 0;
  };
  std::vector<PrefillMark> prefill_trace;
  double decode_seconds = 0;
  double queue_seconds = 0;
  Json cache = Json::object();      // x_cairn.cache: kind, cached_tokens, common_prefix, reason...
  Json spec = Json::object();       // x_cairn.spec: mode, rounds, accepted, ...
};

// A request error the client caused (maps to HTTP 400): bad template render,
// prompt longer than the context ("prompt is too long: N tokens > W maximum").
class RequestError : public std::runtime_error {
 public:
  explicit RequestError(const std::string& message) : std::runtime_error(message) {}
};

struct ServiceInfo {
  std::string model_name;           // reported as the model id
  std::string model_path;
  std::string architecture;
  int64_t context_window = 0;       // tokens
  int64_t n_vocab = 0;
  int64_t model_bytes = 0;
  Json settings = Json::object();   // cache/spec settings for the banner and /health
};

class GenerationService {
 public:
  virtual ~GenerationService() = default;

  // Blocks until done. `on_delta` is called for each step with new text; it
  // returns false when the client is gone (the engine then stops at the next
  // token and returns finish_reason "cancelled", keeping the prefix cache
  // valid). `on_progress(done, total)` reports prefill progress at least every
  // few seconds (the server sends keep-alive frames from it) and may also
  // return false to cancel. Throws RequestError for client errors.
  virtual GenerationResult Generate(const GenerationInput& input, const GenerationOptions& options,
                                    const std::function<bool(const GenerationDelta&)>& on_delta,
                                    const std::function<bool(int64_t done, int64_t total)>& on_progress) = 0;

  virtual std::vector<int32_t> Tokenize(const std::string& text, bool parse_special) = 0;
  virtual std::string Detokenize(const std::vector<int32_t>& ids) = 0;
  // Renders the chat prompt exactly as Generate would (for debugging / count_tokens).
  virtual std::string RenderPrompt(const GenerationInput& input) = 0;

  virtual ServiceInfo Info() = 0;
  // Prometheus text exposition of engine metrics (requests, tokens, TTFT and
  // decode histograms, cache and speculation counters).
  virtual std::string MetricsText() = 0;
  // GET /cache body.
  virtual Json CacheListing() = 0;
  // DELETE /cache: empties every tier.
  virtual void ClearCache() {}
  // DELETE /cache/entries/{id}: false when no tier holds that entry.
  virtual bool RemoveCacheEntry(const std::string& id) { return false; }
};

}  // namespace cairn::engine
