#include "engine/engine.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "cache/checkpoint_planner.h"
#include "cache/disk/model_identity.h"
#include "kernels/targets.h"
#include "core/error.h"
#include "core/log.h"
#include "core/timer.h"
#include "engine/prompt_builder.h"
#include "engine/spec_runner.h"
#include "spec/draft_model_drafter.h"
#include "engine/answer_stream.h"
#include "model/reply_tail.h"
#include "sampling/sampler.h"
#include "sampling/token_history.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/stop_string_matcher.h"
#include "tokenizer/streaming_detokenizer.h"

namespace cairn::engine {
namespace {

size_t DefaultCacheBudget() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  const size_t ram = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : (size_t{8} << 30);
  return std::min(ram / 4, size_t{8} << 30);
}

Json CacheJson(const cache::LookupResult& hit, bool enabled) {
  Json j = Json::object();
  j["kind"] = enabled ? std::string(cache::ToString(hit.kind)) : "off";
  j["cached_tokens"] = hit.reuse_tokens;
  j["common_prefix"] = hit.lcp;
  if (hit.replay_tokens > 0) j["replayed_tokens"] = hit.replay_tokens;
  if (!hit.reason.empty()) j["reason"] = hit.reason;
  if (hit.divergence.position >= 0) {
    j["divergence"] = Json{{"position", hit.divergence.position},
                           {"message_index", hit.divergence.message_index},
                           {"role", std::string(cache::ToString(hit.divergence.role))},
                           {"prompt_text", hit.divergence.prompt_text},
                           {"cached_text", hit.divergence.cached_text}};
  }
  return j;
}

cache::disk::StateGeometry DiskGeometry(const model::SequenceState& state) {
  cache::disk::StateGeometry g;
  g.kv = state.kv_layout();
  g.checkpointed = state.config().checkpointed();
  if (g.checkpointed) g.snapshot_bytes = state.SnapshotRecurrent()->bytes();
  return g;
}

// What a pack must match to be this server's state (docs/disk-cache.md).
cache::disk::PackIdentity DiskIdentity(const model::Model& model, const cache::disk::StateGeometry& g,
                                       const std::string& dir) {
  cache::disk::PackIdentity id;
  const Stopwatch clock;
  id.model_id = cache::disk::CachedModelContentId(model.file(), dir + "/model-ids.json");
  if (clock.Seconds() > 0.5) LogInfo("model content id {} ({:.1f} s)", id.model_id, clock.Seconds());
  id.layout = fmt::format("arch={} kv_layers={} kv_heads={} head_dim={} kv_dtype={} block_tokens={} snapshot_bytes={} "
                          "checkpointed={}",
                          model.config().arch_name, g.kv.n_attn_layers, g.kv.n_kv_heads, g.kv.head_dim,
                          static_cast<int>(g.kv.dtype), g.kv.block_tokens, g.snapshot_bytes, g.checkpointed);
  // (F16 caches keep their identity.) "wht": keys stored Walsh-Hadamard rotated
  // (KvQ8Geometry::Rotation), so packs of the unrotated Q8_0 K of earlier builds
  // are another state layout.
  if (g.kv.k_q8) id.layout += " k=q8_0+wht";
  // Kernels on every target match the scalar reference bit for bit (tests/kernels),
  // but the disk never stakes an answer on that: state from another target is a miss.
  id.target = kernels::ActiveTargetName();
  return id;
}

// The resolved --draft-quant: the type name, or "none".
std::string DraftQuantName(const std::string& option) {
  const std::optional<DType> type = spec::DraftNarrowType(option);
  return type ? std::string(GetDTypeInfo(*type).name) : "none";
}

}  // namespace

Engine::Engine(const EngineOptions& options) : options_(options) {}
Engine::~Engine() = default;

std::unique_ptr<Engine> Engine::Create(const EngineOptions& options) {
  std::unique_ptr<Engine> e(new Engine(options));
  model::Model::LoadOptions load;
  load.verbose = options.verbose;
  e->model_ = model::Model::Load(options.model_path, load);
  const model::ModelConfig& cfg = e->model_->config();
  e->tokenizer_ = std::make_unique<tokenizer::Tokenizer>(tokenizer::VocabularyFromGguf(e->model_->file()));
  const tokenizer::Vocabulary& vocab = e->tokenizer_->vocab();
  const auto token_text = [&](tokenizer::TokenId id) {
    return id >= 0 && id < static_cast<int32_t>(vocab.size()) ? vocab.tokens[static_cast<size_t>(id)] : std::string();
  };
  PromptBuilderOptions prompt_options;
  prompt_options.volatile_marks = cfg.checkpointed();  // marks serve checkpoint placement only
  e->prompt_builder_ = std::make_unique<PromptBuilder>(*e->tokenizer_, vocab.chat_template, token_text(vocab.bos),
                                                       token_text(vocab.eos), std::move(prompt_options));
  e->context_ = options.context > 0 ? options.context : std::min<int64_t>(cfg.n_ctx_train, 65536);
  e->pool_ = std::make_unique<ThreadPool>(options.threads > 0 ? options.threads : ThreadPool::DefaultThreadCount());
  e->state_ = std::make_unique<model::SequenceState>(cfg, options.kv_dtype, 64, options.k_q8);
  if (cfg.checkpointed()) e->snapshot_bytes_ = e->state_->SnapshotRecurrent()->bytes();
  if (!options.draft_model_path.empty()) {
    model::Model::LoadOptions draft_load = load;
    draft_load.narrow_to = spec::DraftNarrowType(options.draft_quant);
    e->draft_model_ = model::Model::Load(options.draft_model_path, draft_load);
    if (e->draft_model_->n_vocab() != cfg.n_vocab) {
      Fail("draft model {} has a vocabulary of {} tokens but the model has {}: they must share one",
           options.draft_model_path, e->draft_model_->n_vocab(), cfg.n_vocab);
    }
  }
  e->spec_ = std::make_unique<SpecRunner>(*e->model_, options.model_path, e->draft_model_.get(),
                                          options.draft_model_path, *e->pool_, options.spec_mode,
                                          options.spec_max_cap);
  if (options.spec_mode != "baseline") e->spec_->Calibrate();

  cache::PrefixCacheConfig cc;
  cc.enabled = options.prefix_cache;
  cc.hybrid = cfg.checkpointed();   // recurrent state or freed sliding KV: checkpoint mode
  cc.block_tokens = e->state_->kv_layout().block_tokens;
  cc.budget_bytes = options.cache_ram_mb > 0 ? static_cast<size_t>(options.cache_ram_mb) << 20 : DefaultCacheBudget();
  cc.rung_tokens = options.cache_rung_tokens;
  cc.min_reuse = options.cache_min_reuse;
  cc.tail_tokens = options.cache_tail_tokens;
  cc.checkpoint_budget_fraction = options.cache_checkpoint_fraction;
  CacheTiersOptions tiers;
  tiers.ram = cc;
  tiers.memory_guard = options.memory_guard;
  if (options.disk_cache && cc.enabled) {
    tiers.disk = true;
    tiers.disk_options.dir = options.cache_dir.empty() ? DefaultCacheDir() : options.cache_dir;
    tiers.disk_options.budget_bytes = options.cache_disk_gb > 0
                                          ? static_cast<uint64_t>(options.cache_disk_gb * double(uint64_t{1} << 30))
                                          : DefaultDiskBudget(tiers.disk_options.dir);
    tiers.geometry = DiskGeometry(*e->state_);
    tiers.identity = DiskIdentity(*e->model_, tiers.geometry, tiers.disk_options.dir);
  }
  e->cache_ = std::make_unique<CacheTiers>(std::move(tiers));

  for (int32_t id = 0; id < static_cast<int32_t>(e->tokenizer_->size()); ++id) {
    if (e->tokenizer_->IsEndOfGeneration(id)) e->end_tokens_.push_back(id);
  }
  return e;
}

std::vector<int32_t> Engine::Tokenize(const std::string& text, bool parse_special) {
  return tokenizer_->Encode(text, parse_special);
}

std::string Engine::Detokenize(const std::vector<int32_t>& ids) {
  for (int32_t id : ids) {
    if (id < 0 || id >= static_cast<int32_t>(tokenizer_->size())) {
      throw RequestError(fmt::format("token id {} is out of range (vocabulary has {} tokens)", id, tokenizer_->size()));
    }
  }
  return tokenizer_->Decode(ids);
}

std::string Engine::RenderPrompt(const GenerationInput& input) { return prompt_builder_->Render(input); }

ServiceInfo Engine::Info() {
  ServiceInfo info;
  const model::ModelConfig& cfg = model_->config();
  info.model_path = options_.model_path;
  info.model_name = cfg.name.empty() ? options_.model_path : cfg.name;
  info.architecture = cfg.arch_name;
  info.context_window = context_;
  info.n_vocab = cfg.n_vocab;
  info.model_bytes = static_cast<int64_t>(model_->weights().bytes);
  const cache::PrefixCacheConfig& cc = cache_->ram().config();
  info.settings = Json{{"architecture", cfg.arch_name},
                       {"hybrid", cfg.is_hybrid()},
                       {"context_window", context_},
                       {"threads", pool_->num_threads()},
                       {"prefix_cache", Json{{"enabled", cc.enabled},
                                             {"mode", cc.hybrid ? "checkpoint" : "trim"},
                                             {"budget_mb", cc.budget_bytes >> 20},
                                             {"rung_tokens", cc.rung_tokens},
                                             {"min_reuse", cc.min_reuse},
                                             {"disk", cache_->disk() == nullptr ? Json("off")
                                                      : cache_->disk()->enabled()
                                                          ? Json(cache_->disk()->Stats().dir)
                                                          : Json("off: " + cache_->disk()->Stats().status)},
                                             {"memory_guard", cache_->guard() != nullptr}}},
                       {"spec", Json{{"mode", spec_->default_mode()},
                                     {"draft_model", options_.draft_model_path},
                                     {"draft_quant", DraftQuantName(options_.draft_quant)},
                                     {"mtp", spec_->has_mtp()}}}};
  return info;
}

std::string Engine::MetricsText() {
  const cache::CacheStats stats = cache_->ram().Stats();
  return metrics_.Text(&stats, cache_->MetricsText());
}

Json Engine::CacheListing() { return cache_->Listing(); }

void Engine::ClearCache() { cache_->Clear(); }

bool Engine::RemoveCacheEntry(const std::string& id) { return cache_->RemoveEntry(id); }

GenerationResult Engine::Generate(const GenerationInput& input, const GenerationOptions& options,
                                  const std::function<bool(const GenerationDelta&)>& on_delta,
                                  const std::function<bool(int64_t, int64_t)>& on_progress) {
  const Stopwatch queue_clock;
  std::lock_guard<FifoLock> lock(fifo_);
  const double queue_seconds = queue_clock.Seconds();
  try {
    const BuiltPrompt prompt = prompt_builder_->Build(input);
    GenerationResult result = GenerateLocked(prompt, input.tools, options, on_delta, on_progress);
    result.queue_seconds = queue_seconds;
    RequestRecord record;
    record.finish_reason = result.finish_reason;
    record.prompt_tokens = result.prompt_tokens;
    record.cached_tokens = result.cached_tokens;
    record.completion_tokens = result.completion_tokens;
    record.ttft_seconds = result.ttft_seconds;
    record.decode_tokens_per_sec =
        result.decode_seconds > 0 ? static_cast<double>(result.completion_tokens) / result.decode_seconds : 0;
    metrics_.Record(record);
    return result;
  } catch (...) {
    RequestRecord failed;
    failed.failed = true;
    metrics_.Record(failed);
    throw;
  }
}

GenerationResult Engine::GenerateLocked(const BuiltPrompt& prompt, const Json& tools, const GenerationOptions& options,
                                        const std::function<bool(const GenerationDelta&)>& on_delta,
                                        const std::function<bool(int64_t, int64_t)>& on_progress) {
  const Stopwatch clock;
  const model::ModelConfig& cfg = model_->config();
  const std::vector<int32_t>& tokens = prompt.tokens;
  const int64_t n_prompt = static_cast<int64_t>(tokens.size());
  if (n_prompt == 0) throw RequestError("the prompt is empty");
  if (n_prompt >= context_) throw RequestError(fmt::format("prompt is too long: {} tokens > {} maximum", n_prompt, context_ - 1));

  sampling::SamplingParams params;
  params.temperature = options.temperature;
  params.top_k = options.top_k;
  params.top_p = options.top_p;
  params.min_p = options.min_p;
  params.seed = options.seed;
  params.presence_penalty = options.presence_penalty;
  params.frequency_penalty = options.frequency_penalty;
  params.repetition_penalty = options.repetition_penalty;
  for (const auto& [id, bias] : options.logit_bias) params.logit_bias[id] = bias;
  params.ignore_eos = options.ignore_eos;
  params.logprobs = options.logprobs;
  params.top_logprobs = options.top_logprobs;
  std::unique_ptr<sampling::Sampler> sampler;
  try {
    sampler = std::make_unique<sampling::Sampler>(params, cfg.n_vocab, end_tokens_);
  } catch (const Error& e) {
    throw RequestError(e.what());
  }
  const int64_t max_tokens = std::max<int64_t>(1, std::min<int64_t>(options.max_tokens, context_ - n_prompt));

  // Seeded sampling must give the same tokens every time: see SpecRunner::Resolve.
  const bool reproducible = options.temperature > 0.0f && options.seed.has_value();
  const SpecChoice spec_choice = spec_->Resolve(options.spec_mode, reproducible);
  const bool want_prompt_hidden = SpecRunner::NeedsPromptHidden(spec_choice.mode);

  GenerationResult result;
  result.prompt_tokens = n_prompt;
  result.report_token_ids = options.return_token_ids;

  // --- prefix cache lookup and restore ---------------------------------------
  model::SequenceState& st = *state_;
  st.Reset();
  const bool use_cache = cache_->ram().config().enabled && options.use_prefix_cache;
  cache::LookupResult hit;
  TieredHit tiered;
  if (use_cache) {
    cache::LookupRequest lookup;
    lookup.tokens = tokens;
    lookup.messages = prompt.message_starts;
    lookup.detokenize = [this](std::span<const int32_t> ids) { return tokenizer_->Decode(ids); };
    tiered = cache_->Lookup(lookup);
    hit = tiered.result;
    if (hit.reuse_tokens > 0) model_->RestorePrefix(st, hit.blocks, hit.reuse_tokens, hit.snapshot, *pool_);
  }
  result.cached_tokens = hit.reuse_tokens;
  result.cache = CacheJson(hit, use_cache);
  if (tiered.disk_tokens > 0) {
    result.cache["disk_tokens"] = tiered.disk_tokens;
    result.cache["disk_bytes"] = tiered.disk_bytes;
    result.cache["disk_seconds"] = tiered.disk_seconds;
  } else if (!tiered.disk_note.empty()) {
    result.cache["disk"] = tiered.disk_note;
  }

  // --- prefill the uncached suffix, snapshotting where the plan says ----------
  std::vector<cache::Checkpoint> checkpoints;
  std::unique_ptr<model::ReplyTail> tail;  // begun after prefill (reply-tail checkpoints)
  model::ForwardRequest prefill;
  std::vector<cache::PlannedCheckpoint> plan;
  if (use_cache && cfg.checkpointed()) {
    cache::CheckpointPlanInput in;
    in.prompt_tokens = n_prompt;
    in.stable_boundary = prompt.stable_boundary;
    in.messages = prompt.message_starts;
    in.reuse_tokens = hit.reuse_tokens;
    in.lcp = hit.lcp;
    in.cached_checkpoints = hit.cached_checkpoints;
    in.marks = prompt.marks;
    in.snapshot_bytes = snapshot_bytes_;
    plan = cache::PlanCheckpoints(cache_->ram().config(), in);
    for (const auto& p : plan) prefill.checkpoint_positions.push_back(p.position);
    prefill.on_checkpoint = [&](RecurrentSnapshotRef snap) {
      const int64_t pos = snap->position();
      for (const auto& p : plan) {
        if (p.position == pos) checkpoints.push_back(cache::Checkpoint{pos, snap, p.kind});
      }
    };
  }
  prefill.tokens = std::span<const int32_t>(tokens).subspan(static_cast<size_t>(hit.reuse_tokens));
  prefill.chunk_tokens = options_.prefill_chunk_tokens;
  prefill.all_hidden = want_prompt_hidden;  // the MTP drafter reads the suffix's hidden rows
  bool cancelled = false;
  const Stopwatch prefill_clock;
  prefill.progress = [&](int64_t done, int64_t total) {
    (void)total;
    result.prefill_trace.push_back({hit.reuse_tokens + done, prefill_clock.Seconds()});
    if (on_progress && !on_progress(hit.reuse_tokens + done, n_prompt)) cancelled = true;
    return !cancelled;
  };
  model::ForwardResult out;
  model_->Forward(st, prefill, &out, *pool_);
  result.prefill_seconds = prefill_clock.Seconds();
  result.prefill_trace.push_back({hit.reuse_tokens + out.n_processed, result.prefill_seconds});

  // Inserts what this request verified: prompt (+ generated tokens fed back).
  auto insert = [&](const std::vector<int32_t>& all_tokens) {
    if (!use_cache || !options.store_in_cache || st.n_tokens() == 0) return;
    std::vector<cache::Checkpoint> cps = checkpoints;
    if (cfg.checkpointed() && st.n_tokens() > hit.reuse_tokens) {
      cps.push_back(cache::Checkpoint{st.n_tokens(), st.SnapshotRecurrent(), cache::CheckpointKind::kEnd});
    }
    if (tail != nullptr) {
      if (RecurrentSnapshotRef t = tail->Snapshot(); t != nullptr && t->position() > hit.reuse_tokens) {
        cps.push_back(cache::Checkpoint{t->position(), t, cache::CheckpointKind::kTail});
      }
    }
    const model::StateSnapshot snap = st.Snapshot();  // freezes the blocks being shared
    cache_->Insert(std::span<const int32_t>(all_tokens).first(static_cast<size_t>(st.n_tokens())), snap.blocks, cps);
  };
  if (out.cancelled) {
    result.finish_reason = "cancelled";
    insert(tokens);
    return result;
  }

  // --- decode (plain or speculative: the same tokens either way) ----------------
  sampling::TokenHistory history(tokens);
  std::vector<int32_t> all_tokens = tokens;
  tokenizer::StreamingDetokenizer detok(*tokenizer_);
  tokenizer::StopStringMatcher stops(options.stop);
  AnswerStream answer(prompt.reasoning_open, tools);
  const Stopwatch decode_clock;
  std::string finish;
  auto emit = [&](const std::string& text, std::vector<TokenLogprob> lps, bool final) -> bool {
    GenerationDelta delta = answer.Push(text, final);
    delta.logprobs = std::move(lps);
    for (const auto& lp : delta.logprobs) result.logprobs.push_back(lp);
    if (delta.content.empty() && delta.reasoning.empty() && delta.logprobs.empty() && delta.tool_calls.is_null()) {
      return true;
    }
    return on_delta ? on_delta(delta) : true;
  };
  // One emitted token: false ends the decode at it (end of generation, stop
  // string, max_tokens, client gone); the decoder then rolls the state back
  // so that it holds exactly the committed tokens before this one.
  auto on_token = [&](const sampling::SampledToken& sampled) -> bool {
    const int32_t tok = sampled.token;
    if (result.completion_tokens == 0) result.ttft_seconds = clock.Seconds();
    all_tokens.push_back(tok);
    result.completion_ids.push_back(tok);
    ++result.completion_tokens;
    std::vector<TokenLogprob> lps;
    if (options.logprobs) {
      TokenLogprob lp;
      lp.id = tok;
      lp.text = tokenizer_->TokenToBytes(tok);
      lp.logprob = sampled.logprob;
      for (const auto& t : sampled.top_logprobs) lp.top.emplace_back(tokenizer_->TokenToBytes(t.token), t.logprob);
      lps.push_back(std::move(lp));
    }
    if (!options.ignore_eos && tokenizer_->IsEndOfGeneration(tok)) {
      finish = "stop";
      if (!emit(stops.Flush(), std::move(lps), true)) finish = "cancelled";
      return false;
    }
    const tokenizer::StopStringMatcher::Result r = stops.Push(detok.Push(tok));
    if (r.stopped) {
      finish = "stop";
      if (r.stop_index >= 0 && static_cast<size_t>(r.stop_index) < options.stop.size()) {
        result.stop_sequence = options.stop[static_cast<size_t>(r.stop_index)];
      }
      emit(r.text, std::move(lps), true);
      return false;
    }
    if (result.completion_tokens >= max_tokens) {
      finish = "length";
      emit(r.text + stops.Push(detok.Flush()).text + stops.Flush(), std::move(lps), true);
      return false;
    }
    if (!emit(r.text, std::move(lps), false)) {
      finish = "cancelled";
      return false;
    }
    return true;
  };
  spec::DecodeOptions decode;
  const cache::PrefixCacheConfig& cache_config = cache_->ram().config();
  if (use_cache && options.store_in_cache && cfg.is_hybrid() && !cfg.has_sliding() && cache_config.tail_tokens > 0) {
    tail = std::make_unique<model::ReplyTail>(cfg, cache_config.tail_tokens);
    tail->Begin(st);
    decode.tail = tail.get();
  }
  decode.max_tokens = static_cast<int>(max_tokens);
  decode.on_token = on_token;
  // MTP context: the hidden rows of the uncached suffix. Seeded sampling uses
  // only the last prompt row, which every request has whatever the cache held,
  // so its drafts (and hence its random-number use) do not depend on the cache.
  decode.hidden_from = reproducible ? n_prompt - 1 : hit.reuse_tokens;
  const std::span<const float> last_logits(out.logits.data() + (out.n_rows - 1) * cfg.n_vocab,
                                           static_cast<size_t>(cfg.n_vocab));
  std::span<const float> prompt_hidden;
  if (want_prompt_hidden) {
    const size_t E = static_cast<size_t>(cfg.n_embd);
    const size_t skip = static_cast<size_t>(decode.hidden_from - hit.reuse_tokens) * E;
    prompt_hidden = std::span<const float>(out.hidden.data() + skip, out.hidden.size() - skip);
  }
  const spec::DecodeOutput decoded =
      spec_->Decode(spec_choice, st, last_logits, prompt_hidden, *sampler, history, decode);
  if (finish.empty()) finish = "length";  // the decoder hit max_tokens first (same condition)
  result.decode_seconds = decode_clock.Seconds();
  result.content = answer.content();
  result.reasoning = answer.reasoning();
  result.tool_calls = answer.tool_calls();
  result.finish_reason = finish == "stop" && !result.tool_calls.empty() ? "tool_calls" : finish;
  result.spec = spec_->StatsJson(spec_choice, decoded.stats);
  metrics_.RecordSpec(spec::SpecModeName(spec_choice.mode), decoded.stats);
  spec_->RecordOutcome(spec_choice, decoded.stats);
  if (st.n_tokens() + 1 != static_cast<int64_t>(all_tokens.size())) {
    Fail("decode left {} tokens in the state for {} committed", st.n_tokens(), all_tokens.size());
  }
  insert(all_tokens);
  return result;
}

}  // namespace cairn::engine
