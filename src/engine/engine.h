// The generation engine: one loaded model, its tokenizer and chat template,
// the prefix cache shared by every session, and the request loop.
//
// Request flow (Generate):
//   build prompt (template + tokenize, message starts, stable boundary)
//   -> prefix-cache lookup -> restore blocks (+ recurrent snapshot)
//   -> plan checkpoints -> prefill the uncached suffix, snapshotting at the plan
//   -> decode (baseline or speculative), streaming deltas through the
//      detokenizer, stop-string matcher and reasoning splitter
//   -> insert prompt + verified generated tokens (+ checkpoints) into the cache.
// Requests run one at a time in arrival order (FifoLock).
#pragma once

#include <memory>
#include <string>

#include "engine/cache_tiers.h"
#include "core/thread_pool.h"
#include "engine/engine_options.h"
#include "engine/fifo_lock.h"
#include "engine/metrics.h"
#include "engine/service.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace cairn::engine {

class PromptBuilder;
class SpecRunner;
struct BuiltPrompt;

class Engine : public GenerationService {
 public:
  // Loads the model (progress on a terminal when verbose). Throws cairn::Error.
  static std::unique_ptr<Engine> Create(const EngineOptions& options);
  ~Engine() override;

  GenerationResult Generate(const GenerationInput& input, const GenerationOptions& options,
                            const std::function<bool(const GenerationDelta&)>& on_delta,
                            const std::function<bool(int64_t, int64_t)>& on_progress) override;
  std::vector<int32_t> Tokenize(const std::string& text, bool parse_special) override;
  std::string Detokenize(const std::vector<int32_t>& ids) override;
  std::string RenderPrompt(const GenerationInput& input) override;
  ServiceInfo Info() override;
  std::string MetricsText() override;
  Json CacheListing() override;
  void ClearCache() override;
  bool RemoveCacheEntry(const std::string& id) override;

  CacheTiers& cache() { return *cache_; }

  const model::Model& model() const { return *model_; }
  const tokenizer::Tokenizer& tokenizer() const { return *tokenizer_; }
  int64_t context() const { return context_; }
  const EngineOptions& options() const { return options_; }

 private:
  explicit Engine(const EngineOptions& options);
  GenerationResult GenerateLocked(const BuiltPrompt& prompt, const Json& tools, const GenerationOptions& options,
                                  const std::function<bool(const GenerationDelta&)>& on_delta,
                                  const std::function<bool(int64_t, int64_t)>& on_progress);

  EngineOptions options_;
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<model::Model> draft_model_;  // --draft-model, same vocabulary
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::unique_ptr<PromptBuilder> prompt_builder_;
  std::unique_ptr<CacheTiers> cache_;
  std::unique_ptr<model::SequenceState> state_;
  size_t snapshot_bytes_ = 0;  // one recurrent (or window) snapshot; 0 for dense models
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<SpecRunner> spec_;
  std::vector<int32_t> end_tokens_;  // end-of-generation ids
  int64_t context_ = 0;
  FifoLock fifo_;
  EngineMetrics metrics_;
};

}  // namespace cairn::engine
