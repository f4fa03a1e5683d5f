#include "model/bench/model_bench.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>

#include "core/error.h"
#include "core/timer.h"
#include "model/bench/memory_probe.h"

namespace cairn::model::bench {
namespace {

size_t MatrixBytes(const kernels::MatrixView& m) {
  return m.data == nullptr ? 0 : static_cast<size_t>(m.rows) * m.row_stride_bytes;
}

int32_t Argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return static_cast<int32_t>(best);
}

std::vector<int32_t> RandomTokens(std::mt19937_64& rng, int64_t n, int n_vocab) {
  std::uniform_int_distribution<int32_t> dist(0, n_vocab - 1);
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int32_t& t : tokens) t = dist(rng);
  return tokens;
}

// Wall and CPU clocks (and the profiler) around one timed phase.
class PhaseClock {
 public:
  PhaseClock() : cpu0_(ProcessCpuSeconds()), thread_cpu0_(prof::ThreadCpuNanos()) { prof::Reset(); }
  PhaseTiming Finish(int64_t tokens, int threads) const {
    PhaseTiming t;
    t.wall_s = wall_.Seconds();
    t.cpu_s = (ProcessCpuSeconds() - cpu0_) / threads;
    t.thread_cpu_s = 1e-9 * static_cast<double>(prof::ThreadCpuNanos() - thread_cpu0_);
    t.tokens = tokens;
    t.load_avg = LoadAverage1();
    if (prof::Enabled()) t.profile = prof::Snapshot();
    return t;
  }

 private:
  Stopwatch wall_;
  double cpu0_;
  int64_t thread_cpu0_;
};

void Prefill(const Model& model, SequenceState& state, std::span<const int32_t> tokens, int64_t chunk_tokens,
             ThreadPool& pool) {
  ForwardRequest request;
  request.tokens = tokens;
  request.chunk_tokens = chunk_tokens;
  ForwardResult result;
  model.Forward(state, request, &result, pool);
}

// DepthFill::kCopy: extends `state` from n0 = state.n_tokens() to `depth`
// positions, every attention layer: position p >= n0 gets the K/V rows of
// position p mod (B * full_blocks), i.e. the written whole blocks are cycled
// through, into freshly allocated blocks (real memory, as a prefill would
// use), F16 rows and Q8_0 K regions alike (KvLayout::CopyTokens). Recurrent
// state is left as the prefill left it.
void ReplicateKv(SequenceState& state, int64_t depth) {
  const KvLayout& layout = state.kv_layout();
  const int64_t B = layout.block_tokens;
  const int64_t n0 = state.n_tokens();
  const int64_t full_blocks = n0 / B;
  if (full_blocks < 1) Fail("--depth-fill copy needs at least {} prefilled tokens (got {})", B, n0);
  for (int64_t pos = n0; pos < depth;) {
    const int64_t block = pos / B;
    const int64_t t0 = pos % B;
    const int64_t t1 = std::min(B, depth - block * B);
    // Written positions [0, n0) include whole blocks [0, full_blocks); block
    // `block` takes its rows from block (block mod full_blocks), same offsets.
    const KvBlock& src = *state.blocks()[static_cast<size_t>(block % full_blocks)];
    layout.CopyTokens(src.data(), state.WritableBlock(block).data(), t0, t1);
    pos = block * B + t1;
  }
  state.Advance(depth - n0);
}

}  // namespace

DecodeBytes CountDecodeBytes(const Model& model, bool k_q8) {
  const ModelConfig& cfg = model.config();
  const ModelWeights& w = model.weights();
  constexpr size_t kF32 = sizeof(float);
  const size_t E = static_cast<size_t>(cfg.n_embd);
  DecodeBytes b;
  for (const LayerWeights& l : w.layers) {
    size_t bytes = 2 * E * kF32;  // attn_norm, ffn_norm
    if (l.kind == LayerKind::kGatedDeltaNet) {
      const DeltaNetWeights& g = l.gdn;
      bytes += MatrixBytes(g.w_qkv) + MatrixBytes(g.w_gate) + MatrixBytes(g.w_beta) + MatrixBytes(g.w_alpha) +
               MatrixBytes(g.w_out);
      bytes += (static_cast<size_t>(cfg.conv_dim()) * cfg.ssm_conv_kernel + 2 * cfg.ssm_n_v_heads +
                cfg.ssm_d_state) * kF32;
    } else {
      bytes += MatrixBytes(l.attn.wq) + MatrixBytes(l.attn.wk) + MatrixBytes(l.attn.wv) + MatrixBytes(l.attn.wo);
      if (cfg.qk_norm) bytes += 2 * static_cast<size_t>(cfg.head_dim) * kF32;
    }
    bytes += MatrixBytes(l.ffn.gate) + MatrixBytes(l.ffn.up) + MatrixBytes(l.ffn.down);
    b.layer_weights += bytes;
  }
  b.output_head = MatrixBytes(w.output) + E * kF32;  // + output_norm
  b.embed_row = w.token_embd.row_stride_bytes;
  KvLayout kv;   // as SequenceState lays it out
  kv.n_attn_layers = cfg.n_attn_layers();
  kv.n_kv_heads = cfg.n_head_kv;
  kv.head_dim = cfg.head_dim;
  kv.k_q8 = k_q8;
  b.kv_per_token = kv.BytesPerToken();
  if (cfg.is_hybrid()) {
    const size_t per_layer = static_cast<size_t>(cfg.ssm_conv_kernel - 1) * cfg.conv_dim() +
                             static_cast<size_t>(cfg.ssm_n_v_heads) * cfg.ssm_d_state * cfg.ssm_d_state;
    b.recurrent_rw = 2 * per_layer * kF32 * static_cast<size_t>(cfg.n_recurrent_layers());
  }
  return b;
}

BenchResult RunModelBench(const Model& model, const BenchOptions& options, ThreadPool& pool) {
  if (options.decode_tokens < 1 && !options.depths.empty()) Fail("--decode-tokens must be >= 1");
  for (int64_t n : options.prompt_tokens) {
    if (n < 0) Fail("prompt lengths must be >= 0 (got {})", n);
  }
  for (int64_t d : options.depths) {
    if (d < 0) Fail("depths must be >= 0 (got {})", d);
  }
  prof::SetEnabled(options.profile);
  const int threads = pool.num_threads();
  const int n_vocab = model.n_vocab();
  const DecodeBytes decode_bytes = CountDecodeBytes(model, options.k_q8);
  std::mt19937_64 rng(options.seed);

  // (length, kind) with kind 0 = prompt, 1 = decode depth; prompts first on ties.
  std::vector<std::pair<int64_t, int>> events;
  for (int64_t n : options.prompt_tokens) {
    if (n > 0) events.emplace_back(n, 0);  // 0: no prefill measurement
  }
  for (int64_t d : options.depths) events.emplace_back(d, 1);
  std::sort(events.begin(), events.end());
  events.erase(std::unique(events.begin(), events.end()), events.end());
  const int64_t max_depth = options.depths.empty() ? -1 : *std::max_element(options.depths.begin(), options.depths.end());

  // Warm-up, untimed: the first token faults in every page of the mapped
  // weights (minor faults), which would otherwise be charged to the first phase.
  {
    if (options.on_phase) options.on_phase("warm-up (untimed)", 1);
    std::unique_ptr<SequenceState> state = model.NewState(DType::kF16, options.k_q8);
    Prefill(model, *state, RandomTokens(rng, 1, n_vocab), options.chunk_tokens, pool);
  }

  BenchResult out;
  std::unique_ptr<SequenceState> running = model.NewState(DType::kF16, options.k_q8);  // continued from depth to depth
  int64_t real_tokens = 0;   // leading positions of `running` computed by a real prefill
  for (const auto& [length, kind] : events) {
    if (kind == 0) {
      if (options.on_phase) options.on_phase("prefill", length);
      std::unique_ptr<SequenceState> state = model.NewState(DType::kF16, options.k_q8);
      const std::vector<int32_t> tokens = RandomTokens(rng, length, n_vocab);
      PhaseClock clock;
      Prefill(model, *state, tokens, options.chunk_tokens, pool);
      out.prefill.push_back(PrefillResult{length, clock.Finish(length, threads)});
      if (length <= max_depth && length > running->n_tokens()) {
        running = std::move(state);
        real_tokens = length;
      }
      continue;
    }
    // Real prefill up to `prefill_to`; the rest (kCopy) by replicating KV.
    const int64_t prefill_to =
        options.depth_fill == DepthFill::kCopy ? std::min(length, options.fill_prompt_tokens) : length;
    if (running->n_tokens() < prefill_to) {
      if (options.on_phase) options.on_phase("prefill to depth (untimed)", prefill_to);
      const std::vector<int32_t> tokens = RandomTokens(rng, prefill_to - running->n_tokens(), n_vocab);
      Prefill(model, *running, tokens, options.chunk_tokens, pool);
      real_tokens = running->n_tokens();
    }
    if (running->n_tokens() < length) {
      if (options.on_phase) options.on_phase("replicate KV to depth (untimed)", length);
      ReplicateKv(*running, length);
    }
    if (options.on_phase) options.on_phase("decode", length);
    const StateSnapshot at_depth = running->Snapshot();
    int32_t token = RandomTokens(rng, 1, n_vocab)[0];
    double best_step = 1e30;
    const int32_t first_token = token;
    auto step = [&] {   // one decode step with greedy feedback; returns its wall seconds
      Stopwatch sw;
      ForwardRequest request;
      request.tokens = std::span<const int32_t>(&token, 1);
      ForwardResult result;
      model.Forward(*running, request, &result, pool);
      token = Argmax(result.logits.data(), n_vocab);
      return sw.Seconds();
    };
    PhaseClock clock;
    for (int64_t i = 0; i < options.decode_tokens; ++i) best_step = std::min(best_step, step());
    DecodeResult r;
    r.depth = length;
    r.prefilled = std::min(real_tokens, length);
    r.bytes_per_token = decode_bytes.Total(length);
    r.timing = clock.Finish(options.decode_tokens, threads);
    r.timing.best_step_s = best_step;
    running->Restore(at_depth);
    if (options.probe != nullptr && options.paired_steps > 0) {
      if (options.on_phase) options.on_phase("decode paired with bandwidth passes", length);
      token = first_token;
      double before = options.probe->PassGbps();
      for (int64_t i = 0; i < options.paired_steps; ++i) {
        const double seconds = step();
        const double after = options.probe->PassGbps();
        const double step_gbps = static_cast<double>(r.bytes_per_token) / 1e9 / seconds;
        r.paired_of_ceiling.push_back(step_gbps / (0.5 * (before + after)));
        before = after;
      }
      running->Restore(at_depth);
    }
    out.decode.push_back(std::move(r));
  }
  prof::SetEnabled(false);
  return out;
}

}  // namespace cairn::model::bench
