#include "spec/speculative_decoder.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/timer.h"
#include "sampling/speculative.h"

namespace cairn::spec {
namespace {

bool IsStop(const DecodeOptions& options, int32_t token) {
  return std::find(options.stop_tokens.begin(), options.stop_tokens.end(), token) != options.stop_tokens.end();
}

// Appends `t` to the output; true when the decode must end here.
bool Emit(const sampling::SampledToken& t, const DecodeOptions& options, DecodeOutput* out) {
  out->tokens.push_back(t);
  ++out->stats.committed;
  if (options.on_token && !options.on_token(t)) {
    out->finish = FinishReason::kCaller;
    return true;
  }
  if (IsStop(options, t.token)) {
    out->finish = FinishReason::kStop;
    return true;
  }
  return static_cast<int>(out->tokens.size()) >= options.max_tokens;
}

}  // namespace

PrefillOutput Prefill(const model::Model& model, model::SequenceState& state, std::span<const int32_t> tokens,
                      bool want_hidden, ThreadPool& pool, int64_t chunk) {
  PrefillOutput out;
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t V = model.n_vocab();
  const int64_t E = model.config().n_embd;
  if (n == 0) Fail("Prefill: empty prompt");
  model::ForwardResult result;
  if (!want_hidden) {
    model::ForwardRequest req;
    req.tokens = tokens;
    model.Forward(state, req, &result, pool);
    out.last_logits.assign(result.logits.data(), result.logits.data() + V);
    return out;
  }
  out.hidden.resize(static_cast<size_t>(n * E));
  for (int64_t p = 0; p < n; p += chunk) {
    const int64_t m = std::min(chunk, n - p);
    model::ForwardRequest req;
    req.tokens = tokens.subspan(static_cast<size_t>(p), static_cast<size_t>(m));
    req.all_logits = true;
    req.want_hidden = true;
    req.chunk_tokens = chunk;
    model.Forward(state, req, &result, pool);
    std::memcpy(out.hidden.data() + p * E, result.hidden.data(), static_cast<size_t>(m * E) * sizeof(float));
    if (p + m == n) out.last_logits.assign(result.logits.data() + (m - 1) * V, result.logits.data() + m * V);
  }
  return out;
}

DecodeOutput DecodePlain(const model::Model& target, model::SequenceState& state, std::span<const float> last_logits,
                         sampling::Sampler& sampler, sampling::TokenHistory& history, const DecodeOptions& options,
                         ThreadPool& pool) {
  DecodeOutput out;
  out.stats.mode = "baseline";
  out.stats.accept_histogram.assign(1, 0);
  if (options.max_tokens <= 0) return out;
  Stopwatch watch;
  sampling::SampledToken t = sampler.Sample(last_logits, history);
  history.Append(t.token);
  model::ForwardResult result;
  model::VerifyCapture capture;  // reply tail only: this step's recurrence inputs
  capture.keep_start_state = false;
  while (!Emit(t, options, &out)) {
    model::ForwardRequest req;
    req.tokens = std::span<const int32_t>(&t.token, 1);
    req.verify = options.tail != nullptr ? &capture : nullptr;
    const Stopwatch step_watch;
    target.Forward(state, req, &result, pool);
    out.stats.verify_seconds += step_watch.Seconds();
    if (options.tail != nullptr) options.tail->Commit(state, capture, req.tokens);
    ++out.stats.target_forwards;
    ++out.stats.rounds;
    ++out.stats.accept_histogram[0];
    t = sampler.Sample(std::span<const float>(result.logits.data(), target.n_vocab()), history);
    history.Append(t.token);
  }
  out.stats.seconds = watch.Seconds();
  return out;
}

DecodeOutput DecodeSpeculative(const model::Model& target, model::SequenceState& state,
                               std::span<const float> last_logits, std::span<const float> prompt_hidden,
                               sampling::Sampler& sampler, sampling::TokenHistory& history, Drafter& drafter,
                               const DecodeOptions& options, ThreadPool& pool) {
  DecodeOutput out;
  SpecStats& stats = out.stats;
  stats.mode = drafter.name();
  if (options.max_tokens <= 0) return out;
  if (static_cast<size_t>(state.n_tokens()) != history.tokens().size()) {
    Fail("DecodeSpeculative: state holds {} tokens but the history has {}", state.n_tokens(), history.tokens().size());
  }
  const int64_t V = target.n_vocab();
  const int64_t E = target.config().n_embd;
  const bool want_hidden = drafter.wants_target_hidden();
  Stopwatch watch;

  sampling::SampledToken first = sampler.Sample(last_logits, history);
  history.Append(first.token);
  if (Emit(first, options, &out)) {
    stats.seconds = watch.Seconds();
    return out;
  }
  {
    // The whole history; hidden rows (MTP) cover its tokens [hidden_from, N).
    std::span<const int32_t> fed = history.tokens().first(history.tokens().size() - 1);
    if (want_hidden) {
      const size_t from = static_cast<size_t>(std::clamp<int64_t>(options.hidden_from, 0, static_cast<int64_t>(fed.size())));
      if (prompt_hidden.size() != (fed.size() - from) * static_cast<size_t>(E)) {
        Fail("DecodeSpeculative: {} hidden floats for {} fed tokens", prompt_hidden.size(), fed.size() - from);
      }
    }
    drafter.Begin(fed, want_hidden ? prompt_hidden : std::span<const float>(), first.token);
  }

  model::VerifyCapture capture;
  model::ForwardResult result;
  std::vector<sampling::DraftToken> drafts;
  std::vector<int32_t> block;  // [pending, d_1..d_k]
  int32_t pending = first.token;
  for (;;) {
    const int remaining = options.max_tokens - static_cast<int>(out.tokens.size());
    const int cap = options.controller ? options.controller->NextCap() : options.cap;
    const int limit = std::min(remaining - 1, kMaxDraft);
    drafts.clear();
    if (cap > 0 && limit > 0) {
      const Stopwatch draft_watch;
      drafter.Propose(std::min(cap, limit), &drafts);
      stats.draft_seconds += draft_watch.Seconds();
      if (options.controller && !drafts.empty()) {
        options.controller->ObserveDraftCost(draft_watch.Seconds(), static_cast<int>(drafts.size()));
      }
    }
    if (static_cast<int>(drafts.size()) > limit) drafts.resize(static_cast<size_t>(limit));
    const int k = static_cast<int>(drafts.size());
    stats.cap = std::max(stats.cap, k);

    block.assign(1, pending);
    for (const sampling::DraftToken& d : drafts) block.push_back(d.token);
    model::ForwardRequest req;
    req.tokens = block;
    req.all_logits = true;
    req.want_hidden = want_hidden;
    // A pass with drafts may be rolled back (it keeps its start state); a
    // pass without them is captured only for the reply tail.
    capture.keep_start_state = k > 0;
    req.verify = k > 0 || options.tail != nullptr ? &capture : nullptr;
    const Stopwatch verify_watch;
    target.Forward(state, req, &result, pool);
    const double verify_seconds = verify_watch.Seconds();
    stats.verify_seconds += verify_seconds;
    if (options.controller) options.controller->ObserveVerifyCost(verify_seconds, k + 1);
    ++stats.target_forwards;
    ++stats.rounds;

    const size_t generated_before = history.generated_size();
    const sampling::VerifyResult verdict = sampling::VerifyDraft(
        sampler, history, std::span<const float>(result.logits.data(), static_cast<size_t>((k + 1) * V)), drafts);
    const int j = verdict.num_accepted;
    stats.drafted += k;
    stats.accepted += j;
    if (stats.accept_histogram.size() <= static_cast<size_t>(j)) stats.accept_histogram.resize(j + 1, 0);
    ++stats.accept_histogram[j];
    if (options.controller && k > 0) options.controller->Observe(k, j);

    // Emit d_1..d_j, b; a stop at emitted index t keeps fed tokens [x_N, d_1..d_t].
    int kept_fed = j + 1;
    bool done = false;
    for (size_t t = 0; t < verdict.tokens.size(); ++t) {
      if (Emit(verdict.tokens[t], options, &out)) {
        done = true;
        kept_fed = std::min<int>(kept_fed, static_cast<int>(t) + 1);
        history.TruncateGenerated(generated_before + t + 1);
        break;
      }
    }
    if (k > 0) target.RollbackVerify(state, capture, kept_fed, pool);
    if (options.tail != nullptr) {
      options.tail->Commit(state, capture, std::span<const int32_t>(block.data(), static_cast<size_t>(kept_fed)));
    }
    if (done) break;
    const int32_t next_pending = verdict.tokens.back().token;
    drafter.Accept(std::span<const int32_t>(block.data(), static_cast<size_t>(j + 1)),
                   want_hidden ? std::span<const float>(result.hidden.data(), static_cast<size_t>((j + 1) * E))
                               : std::span<const float>(),
                   next_pending);
    pending = next_pending;
  }
  stats.seconds = watch.Seconds();
  return out;
}

}  // namespace cairn::spec
