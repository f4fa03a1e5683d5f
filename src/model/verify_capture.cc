#include "model/verify_capture.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "kernels/gated_delta.h"
#include "model/layers.h"
#include "model/model.h"
#include "model/reply_tail.h"

namespace cairn::model {

void VerifyCapture::Begin(SequenceState& state, int64_t n) {
  const ModelConfig& cfg = state.config();
  start_tokens = state.n_tokens();
  n_tokens = n;
  if (!cfg.is_hybrid()) return;
  if (keep_start_state) {
    recurrent_before.Resize(state.recurrent_floats());
    std::memcpy(recurrent_before.data(), state.recurrent(), state.recurrent_floats() * sizeof(float));
  }
  const int layers = cfg.n_recurrent_layers();
  conv_inputs.resize(layers);
  qkv.resize(layers);
  gates.resize(layers);
  const size_t conv_dim = static_cast<size_t>(cfg.conv_dim());
  for (int r = 0; r < layers; ++r) {
    if (conv_inputs[r].size() < n * conv_dim) conv_inputs[r].Resize(n * conv_dim);
    if (qkv[r].size() < n * conv_dim) qkv[r].Resize(n * conv_dim);
    if (gates[r].size() < static_cast<size_t>(n * 2 * cfg.ssm_n_v_heads)) gates[r].Resize(n * 2 * cfg.ssm_n_v_heads);
  }
}

void ReplayRecurrence(const ModelConfig& cfg, SequenceState& st, std::span<const RecurrenceRows> layers, int64_t count,
                      ThreadPool& pool) {
  if (count <= 0) return;
  CAIRN_CHECK(static_cast<int>(layers.size()) == cfg.n_recurrent_layers());
  const int64_t conv_dim = cfg.conv_dim();
  const int hv = cfg.ssm_n_v_heads, d = cfg.ssm_d_state;
  const int64_t window = cfg.ssm_conv_kernel - 1;
  std::vector<float> scratch_out(static_cast<size_t>(count * hv * d));
  std::vector<float> expanded;
  std::vector<float> g(static_cast<size_t>(count * hv)), beta(static_cast<size_t>(count * hv));
  std::vector<float> rows(static_cast<size_t>((window + count) * conv_dim));
  for (int r = 0; r < cfg.n_recurrent_layers(); ++r) {
    // Conv window = last `window` rows of [old window ; raw inputs].
    float* conv = st.ConvState(r);
    std::memcpy(rows.data(), conv, window * conv_dim * sizeof(float));
    std::memcpy(rows.data() + window * conv_dim, layers[r].conv_inputs, count * conv_dim * sizeof(float));
    std::memcpy(conv, rows.data() + count * conv_dim, window * conv_dim * sizeof(float));

    for (int64_t t = 0; t < count; ++t) {
      std::memcpy(&g[t * hv], layers[r].gates + t * 2 * hv, hv * sizeof(float));
      std::memcpy(&beta[t * hv], layers[r].gates + t * 2 * hv + hv, hv * sizeof(float));
    }
    kernels::GatedDeltaShape shape;
    kernels::GatedDeltaInputs in;
    BindDeltaInputs(cfg, layers[r].qkv, count, g.data(), beta.data(), &expanded, &shape, &in);
    kernels::GatedDeltaRecurrent(shape, in, count, st.SsmState(r), scratch_out.data(), static_cast<int64_t>(hv) * d,
                                 pool);
  }
}

void Model::RestorePrefix(SequenceState& st, const KvBlockTable& blocks, int64_t n_tokens,
                          const RecurrentSnapshotRef& recurrent, ThreadPool& pool) const {
  if (recurrent == nullptr || recurrent->position() == n_tokens) {
    st.RestorePrefix(blocks, n_tokens, recurrent);
    return;
  }
  const int64_t base = recurrent->position();
  const int64_t logged = static_cast<int64_t>(recurrent->replay_tokens().size());
  if (!config_.is_hybrid() || config_.has_sliding() || n_tokens < base || n_tokens > base + logged) {
    Fail("state restore: a snapshot at {} with {} replayable tokens cannot restore {} tokens", base, logged, n_tokens);
  }
  st.RestorePrefix(blocks, base, recurrent);
  st.AdoptKv(blocks, n_tokens);
  ReplayRecurrence(config_, st, ReplayLogRows(config_, recurrent->replay_data(), logged), n_tokens - base, pool);
}

void Model::RollbackVerify(SequenceState& st, VerifyCapture& cap, int64_t accepted, ThreadPool& pool) const {
  const ModelConfig& cfg = config_;
  if (accepted < 1 || accepted > cap.n_tokens || st.n_tokens() != cap.start_tokens + cap.n_tokens) {
    Fail("RollbackVerify: accepted {} of a {}-token pass at state length {} (pass started at {})", accepted,
         cap.n_tokens, st.n_tokens(), cap.start_tokens);
  }
  if (accepted == cap.n_tokens) return;
  st.RewindKv(cap.start_tokens + accepted);
  if (!cfg.is_hybrid()) return;
  if (!cap.keep_start_state) Fail("RollbackVerify: the pass did not keep its start state");

  // Restore the pre-pass recurrent state, then replay `accepted` tokens.
  std::memcpy(st.recurrent(), cap.recurrent_before.data(), st.recurrent_floats() * sizeof(float));
  std::vector<RecurrenceRows> layers(static_cast<size_t>(cfg.n_recurrent_layers()));
  for (int r = 0; r < cfg.n_recurrent_layers(); ++r) {
    layers[r] = {cap.conv_inputs[r].data(), cap.qkv[r].data(), cap.gates[r].data()};
  }
  ReplayRecurrence(cfg, st, layers, accepted, pool);
}

}  // namespace cairn::model
