#include "model/verify_capture.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "kernels/gated_delta.h"
#include "model/layers.h"
#include "model/model.h"

namespace cairn::model {

void VerifyCapture::Begin(SequenceState& state, int64_t n) {
  const ModelConfig& cfg = state.config();
  start_tokens = state.n_tokens();
  n_tokens = n;
  if (!cfg.is_hybrid()) return;
  recurrent_before.Resize(state.recurrent_floats());
  std::memcpy(recurrent_before.data(), state.recurrent(), state.recurrent_floats() * sizeof(float));
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

void Model::RollbackVerify(SequenceState& st, VerifyCapture& cap, int64_t accepted, ThreadPool& pool) const {
  const ModelConfig& cfg = config_;
  if (accepted < 1 || accepted > cap.n_tokens || st.n_tokens() != cap.start_tokens + cap.n_tokens) {
    Fail("RollbackVerify: accepted {} of a {}-token pass at state length {} (pass started at {})", accepted,
         cap.n_tokens, st.n_tokens(), cap.start_tokens);
  }
  if (accepted == cap.n_tokens) return;
  st.RewindKv(cap.start_tokens + accepted);
  if (!cfg.is_hybrid()) return;

  // Restore the pre-pass recurrent state, then replay `accepted` tokens.
  std::memcpy(st.recurrent(), cap.recurrent_before.data(), st.recurrent_floats() * sizeof(float));
  const int64_t conv_dim = cfg.conv_dim();
  const int hv = cfg.ssm_n_v_heads, d = cfg.ssm_d_state;
  const int64_t window = cfg.ssm_conv_kernel - 1;
  std::vector<float> scratch_out(static_cast<size_t>(accepted * hv * d));
  std::vector<float> expanded;
  std::vector<float> g(static_cast<size_t>(accepted * hv)), beta(static_cast<size_t>(accepted * hv));
  for (int r = 0; r < cfg.n_recurrent_layers(); ++r) {
    // Conv window = last `window` rows of [old window ; accepted raw inputs].
    float* conv = st.ConvState(r);
    std::vector<float> rows(static_cast<size_t>((window + accepted) * conv_dim));
    std::memcpy(rows.data(), conv, window * conv_dim * sizeof(float));
    std::memcpy(rows.data() + window * conv_dim, cap.conv_inputs[r].data(), accepted * conv_dim * sizeof(float));
    std::memcpy(conv, rows.data() + accepted * conv_dim, window * conv_dim * sizeof(float));

    const float* qkv = cap.qkv[r].data();
    for (int64_t t = 0; t < accepted; ++t) {
      std::memcpy(&g[t * hv], cap.gates[r].data() + t * 2 * hv, hv * sizeof(float));
      std::memcpy(&beta[t * hv], cap.gates[r].data() + t * 2 * hv + hv, hv * sizeof(float));
    }
    kernels::GatedDeltaShape shape;
    kernels::GatedDeltaInputs in;
    BindDeltaInputs(cfg, qkv, accepted, g.data(), beta.data(), &expanded, &shape, &in);
    kernels::GatedDeltaRecurrent(shape, in, accepted, st.SsmState(r), scratch_out.data(), static_cast<int64_t>(hv) * d,
                                 pool);
  }
}

}  // namespace cairn::model
