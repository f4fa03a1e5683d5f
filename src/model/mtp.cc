#include "model/mtp.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "kernels/matmul.h"
#include "kernels/norm.h"
#include "kernels/rope.h"
#include "model/layers.h"

namespace cairn::model {

MtpHead::MtpHead(const Model& target, int index) : target_(&target), config_(target.config()) {
  if (index < 0 || index >= static_cast<int>(target.weights().mtp.size())) {
    Fail("model has {} MTP (nextn) layers; layer {} requested", target.weights().mtp.size(), index);
  }
  w_ = &target.weights().mtp[index];
  // The head's own KV: one gated full-attention layer, no recurrent layers.
  config_.n_layers = 1;
  config_.layer_kinds = {LayerKind::kGatedAttention};
  config_.n_nextn = 0;
}

void MtpHead::Forward(SequenceState& st, std::span<const float> hidden, std::span<const int32_t> tokens,
                      bool all_logits, MtpResult* result, ThreadPool& pool) const {
  const ModelConfig& cfg = config_;
  const ModelWeights& tw = target_->weights();
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t E = cfg.n_embd;
  const int64_t V = cfg.n_vocab;
  result->n_rows = 0;
  if (n == 0) return;
  if (static_cast<int64_t>(hidden.size()) != n * E) {
    Fail("MtpHead::Forward: {} hidden floats for {} rows of {}", hidden.size(), n, E);
  }
  for (int32_t t : tokens) {
    if (t < 0 || t >= V) Fail("token id {} is out of range for a vocabulary of {}", t, V);
  }
  const int64_t p0 = st.n_tokens();
  kernels::RopeTable rope(cfg.rope_dims, cfg.rope_theta);
  std::vector<int64_t> positions(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) positions[i] = p0 + i;
  rope.Compute(positions.data(), n);
  st.ReserveTokens(p0 + n);
  ForwardChunk c{&cfg, &tw, &st, &pool, p0, n, &rope, nullptr};

  // Fusion: cat = [enorm(emb(x_{i+1})) ; hnorm(h_i)]  [n][2E], x = eh_proj · cat  [n][E].
  float* cat = st.Scratch(kScratchZ, n * 2 * E);
  float* x = st.Scratch(kScratchX, n * E);
  float* h = st.Scratch(kScratchH, n * E);
  float* out = st.Scratch(kScratchOut, n * E);
  for (int64_t i = 0; i < n; ++i) kernels::GetRow(tw.token_embd, tokens[i], h + i * E);
  kernels::RmsNorm(h, E, w_->enorm, cfg.rms_eps, n, E, cat, 2 * E);
  kernels::RmsNorm(hidden.data(), E, w_->hnorm, cfg.rms_eps, n, E, cat + E, 2 * E);
  Project(c, w_->eh_proj, cat, n, x);

  // One pre-norm decoder layer (gated attention + SwiGLU), residual from x.
  const LayerWeights& lw = w_->layer;
  kernels::RmsNorm(x, E, lw.attn_norm, cfg.rms_eps, n, E, h, E);
  AttentionBlock(c, lw, /*attn_layer=*/0, h, out);
  for (int64_t i = 0; i < n * E; ++i) x[i] += out[i];
  kernels::RmsNorm(x, E, lw.ffn_norm, cfg.rms_eps, n, E, h, E);
  FfnBlock(c, lw.ffn, h, out);
  for (int64_t i = 0; i < n * E; ++i) x[i] += out[i];
  st.Advance(n);

  // g = shared_head_norm(y) for the requested rows, then the shared output head.
  const int64_t rows = all_logits ? n : 1;
  const int64_t first = n - rows;
  result->n_rows = rows;
  result->hidden.Resize(static_cast<size_t>(rows * E));
  result->logits.Resize(static_cast<size_t>(rows * V));
  kernels::RmsNorm(x + first * E, E, w_->shared_head_norm, cfg.rms_eps, rows, E, result->hidden.data(), E);
  kernels::MatMul(tw.output, result->hidden.data(), E, rows, result->logits.data(), V, pool);
}

}  // namespace cairn::model
