#include "model/model.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/error.h"
#include "core/log.h"
#include "core/profiler.h"
#include "gguf/gguf_file.h"
#include "kernels/matmul.h"
#include "kernels/norm.h"
#include "kernels/rope.h"
#include "model/layers.h"
#include "model/verify_capture.h"

namespace cairn::model {

Model::~Model() = default;

std::unique_ptr<Model> Model::Load(const std::string& path, const LoadOptions& options) {
  std::unique_ptr<Model> m(new Model());
  m->file_ = gguf::GgufFile::Open(path);
  m->config_ = ReadModelConfig(*m->file_);
  const gguf::TensorInfo* embd = m->file_->FindTensor("token_embd.weight");
  if (embd == nullptr) Fail("model file is missing tensor 'token_embd.weight'");
  if (embd->shape.size() != 2) Fail("tensor 'token_embd.weight' must be 2-D");
  m->config_.n_vocab = static_cast<int>(embd->shape[1]);
  const char* env = std::getenv("CAIRN_ROW_GROUPS");
  const bool row_groups = options.row_groups && !(env != nullptr && std::string_view(env) == "0");
  BindOptions bind;
  bind.matrix_arena = &m->matrix_arena_;
  bind.row_groups = row_groups;
  bind.narrow_to = options.narrow_to;
  m->weights_ = BindWeights(*m->file_, m->config_, &m->f32_arena_, bind);
  m->config_.tied_output = m->file_->FindTensor("output.weight") == nullptr;
  if (options.verbose) LogInfo("loaded {}: {}", path, m->config_.Describe());
  return m;
}

namespace {

// Positions at which the run is cut into forward passes: chunk limits only.
// Checkpoints inside a chunk are taken within the pass (ForwardChunk::marks),
// so a checkpoint costs a state copy, not an extra read of every weight.
std::vector<int64_t> ChunkEnds(int64_t p0, int64_t total, int64_t chunk_tokens) {
  std::vector<int64_t> ends;
  for (int64_t p = p0 + chunk_tokens; p < p0 + total; p += chunk_tokens) ends.push_back(p);
  ends.push_back(p0 + total);
  return ends;
}

// Requested checkpoint positions in (p0, end], ascending and unique.
std::vector<int64_t> CheckpointsIn(const std::vector<int64_t>& positions, int64_t p0, int64_t end) {
  std::vector<int64_t> in;
  for (const int64_t p : positions) {
    if (p > p0 && p <= end) in.push_back(p);
  }
  std::sort(in.begin(), in.end());
  in.erase(std::unique(in.begin(), in.end()), in.end());
  return in;
}

}  // namespace

void Model::Forward(SequenceState& st, const ForwardRequest& req, ForwardResult* result, ThreadPool& pool) const {
  const ModelConfig& cfg = config_;
  const int64_t total = static_cast<int64_t>(req.tokens.size());
  const int64_t E = cfg.n_embd;
  const int64_t V = cfg.n_vocab;
  *result = ForwardResult();
  if (total == 0) return;
  for (int32_t t : req.tokens) {
    if (t < 0 || t >= V) Fail("token id {} is out of range for a vocabulary of {}", t, V);
  }
  const int64_t start = st.n_tokens();
  const int64_t n_rows = req.all_logits ? total : 1;
  result->n_rows = n_rows;
  result->logits.Resize(static_cast<size_t>(n_rows * V));
  if (req.all_hidden) {
    result->hidden.Resize(static_cast<size_t>(total * E));
  } else if (req.want_hidden) {
    result->hidden.Resize(static_cast<size_t>(n_rows * E));
  }
  if (req.verify != nullptr) req.verify->Begin(st, total);

  const std::vector<int64_t> ends = ChunkEnds(start, total, std::max<int64_t>(1, req.chunk_tokens));
  const bool take_checkpoints = req.on_checkpoint && cfg.checkpointed();
  kernels::RopeTable rope(cfg.rope_dims, cfg.rope_theta);
  if (weights_.rope_freq_factors != nullptr) rope.DivideFrequencies(weights_.rope_freq_factors);
  kernels::RopeTable rope_local(cfg.rope_dims, cfg.rope_theta_local);   // sliding layers (gemma3)
  std::vector<int64_t> positions;
  int64_t p0 = start;
  for (const int64_t end : ends) {
    const int64_t n = end - p0;
    const int64_t offset = p0 - start;  // index of the chunk's first token in the request
    ForwardChunk c{&cfg, &weights_, &st, &pool, p0, n, &rope, req.verify};
    c.rope_local = &rope_local;
    if (cfg.has_sliding()) {
      // Sliding KV no later query can see is freed: queries of this chunk sit
      // at >= p0; a verification pass may roll back to start + 1, so it keeps
      // the window of its start (docs/sliding-window.md).
      st.ReleaseSlidingBefore((req.verify != nullptr ? start : p0) - cfg.sliding_window + 1);
    }
    // Checkpoints strictly inside this chunk are copied out by the recurrent
    // layers as the pass crosses them; one at the chunk end is the state after it.
    std::vector<int64_t> marks;
    std::vector<AlignedBuffer<uint8_t>> mark_bytes;
    std::vector<float*> mark_states;
    bool checkpoint_at_end = false;
    if (take_checkpoints) {
      for (const int64_t p : CheckpointsIn(req.checkpoint_positions, p0, end)) {
        if (p == end) {
          checkpoint_at_end = true;
          continue;
        }
        marks.push_back(p - p0);
        if (cfg.has_sliding()) continue;   // window blobs are copied after the chunk
        mark_bytes.emplace_back(st.recurrent_floats() * sizeof(float));
        mark_states.push_back(reinterpret_cast<float*>(mark_bytes.back().data()));
      }
      if (!cfg.has_sliding()) {
        c.marks = marks;
        c.mark_states = mark_states;
      }
    }
    positions.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) positions[i] = p0 + i;
    {
      prof::Scope scope(prof::kNormRopeAct);
      rope.Compute(positions.data(), n);
      if (cfg.has_sliding()) rope_local.Compute(positions.data(), n);
    }
    st.ReserveTokens(end);

    float* x = st.Scratch(kScratchX, n * E);
    float* h = st.Scratch(kScratchH, n * E);
    float* out = st.Scratch(kScratchOut, n * E);
    {
      prof::Scope scope(prof::kEmbedLogits);
      for (int64_t i = 0; i < n; ++i) kernels::GetRow(weights_.token_embd, req.tokens[offset + i], x + i * E);
      if (cfg.embd_scale != 1.0f) {
        for (int64_t i = 0; i < n * E; ++i) x[i] *= cfg.embd_scale;
      }
    }
    int attn_layer = 0, rec_layer = 0, swa_layer = 0;
    for (int il = 0; il < cfg.n_layers; ++il) {
      const LayerWeights& w = weights_.layers[il];
      if (cfg.arch == Arch::kGemma3) {
        Gemma3Layer(c, w, w.kind == LayerKind::kSlidingAttention ? swa_layer++ : attn_layer++, x, h, out);
        if (req.on_layer) req.on_layer(il, p0, n, x);
        continue;
      }
      {
        prof::Scope scope(prof::kNormRopeAct);
        kernels::RmsNorm(x, E, w.attn_norm, cfg.rms_eps, n, E, h, E);
      }
      if (w.kind == LayerKind::kGatedDeltaNet) {
        DeltaNetBlock(c, w, rec_layer++, h, out);
      } else {
        AttentionBlock(c, w, attn_layer++, h, out);
      }
      for (int64_t i = 0; i < n * E; ++i) x[i] += out[i];
      {
        prof::Scope scope(prof::kNormRopeAct);
        kernels::RmsNorm(x, E, w.ffn_norm, cfg.rms_eps, n, E, h, E);
      }
      FfnBlock(c, w.ffn, h, out);
      for (int64_t i = 0; i < n * E; ++i) x[i] += out[i];
      if (req.on_layer) req.on_layer(il, p0, n, x);
    }
    st.Advance(n);

    // Logits for every token, or only for the request's last token.
    const bool last_chunk = end == start + total;
    const int64_t first_row = req.all_logits ? 0 : n - 1;
    const int64_t rows = req.all_logits ? n : (last_chunk ? 1 : 0);
    if (rows > 0) {
      prof::Scope scope(prof::kEmbedLogits);
      float* normed = st.Scratch(kScratchLogits, rows * E);
      kernels::RmsNorm(x + first_row * E, E, weights_.output_norm, cfg.rms_eps, rows, E, normed, E);
      const int64_t row0 = req.all_logits ? offset : 0;
      // The first `vocab` rows of the head (all of it unless logits_vocab):
      // a multiple of 16 keeps a row-group matrix's groups whole.
      kernels::MatrixView head = weights_.output;
      const int64_t vocab = req.logits_vocab > 0 ? std::min(V, (req.logits_vocab + 15) / 16 * 16) : V;
      head.rows = vocab;
      kernels::MatMul(head, normed, E, rows, result->logits.data() + row0 * V, V, pool);
      if (weights_.output_bias != nullptr) {
        for (int64_t r = 0; r < rows; ++r) {
          float* l = result->logits.data() + (row0 + r) * V;
          for (int64_t j = 0; j < vocab; ++j) l[j] += weights_.output_bias[j];
        }
      }
      if (req.want_hidden && !req.all_hidden) {
        std::memcpy(result->hidden.data() + row0 * E, normed, rows * E * sizeof(float));
      }
    }
    if (req.all_hidden) {
      prof::Scope scope(prof::kNormRopeAct);
      kernels::RmsNorm(x, E, weights_.output_norm, cfg.rms_eps, n, E, result->hidden.data() + offset * E, E);
    }
    result->n_processed += n;
    p0 = end;
    for (size_t i = 0; i < marks.size(); ++i) {
      if (cfg.has_sliding()) {
        req.on_checkpoint(st.SnapshotWindowAt(end - n + marks[i]));
      } else {
        req.on_checkpoint(std::make_shared<const RecurrentSnapshot>(end - n + marks[i], std::move(mark_bytes[i])));
      }
    }
    if (checkpoint_at_end) req.on_checkpoint(st.SnapshotRecurrent());
    if (req.progress && end < start + total && !req.progress(end - start, total)) {
      result->cancelled = true;
      break;
    }
  }
}

}  // namespace cairn::model
