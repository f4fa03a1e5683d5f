// Typed views of a model's tensors inside a mapped GGUF file.
//
// Matrices stay in the file mapping (zero copy, any supported type per tensor).
// Small 1-D tensors (norm weights, GDN gates, conv taps) are converted to F32
// once at load, whatever their stored type. Every tensor's presence, type and
// shape is checked at load, so a bad file fails with a message naming the
// tensor — never at the first request.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/aligned_buffer.h"
#include "kernels/matmul.h"
#include "model/config.h"

namespace cairn::gguf {
class GgufFile;
}

namespace cairn::model {

using kernels::MatrixView;

struct AttentionWeights {
  MatrixView wq;      // rows n_head*head_dim (x2 for gated attention: [q_h | gate_h] per head)
  MatrixView wk;      // rows n_head_kv*head_dim
  MatrixView wv;      // rows n_head_kv*head_dim
  MatrixView wo;      // rows n_embd, cols n_head*head_dim
  const float* q_norm = nullptr;  // [head_dim] (qk_norm models)
  const float* k_norm = nullptr;  // [head_dim]
  // Optional biases (nullptr when the file has none): qwen2 has q/k/v biases;
  // llama.cpp also accepts them, and an attn_output bias, for `llama` files.
  const float* q_bias = nullptr;  // [rows of wq]
  const float* k_bias = nullptr;  // [rows of wk]
  const float* v_bias = nullptr;  // [rows of wv]
  const float* o_bias = nullptr;  // [n_embd]
};

struct DeltaNetWeights {
  MatrixView w_qkv;     // rows conv_dim: [q all heads | k all heads | v all heads (tiled order)]
  MatrixView w_gate;    // rows ssm_inner (z)
  MatrixView w_beta;    // rows n_v_heads
  MatrixView w_alpha;   // rows n_v_heads
  MatrixView w_out;     // rows n_embd, cols ssm_inner
  const float* conv = nullptr;     // [conv_dim][conv_kernel] taps, last tap = current token
  const float* a = nullptr;        // [n_v_heads] = -exp(A_log)
  const float* dt_bias = nullptr;  // [n_v_heads]
  const float* norm = nullptr;     // [d_v] gated RMSNorm weight (plain, not 1+w)
};

struct FfnWeights {
  MatrixView gate;  // rows n_ff
  MatrixView up;    // rows n_ff
  MatrixView down;  // rows n_embd, cols n_ff
};

struct LayerWeights {
  LayerKind kind = LayerKind::kAttention;
  const float* attn_norm = nullptr;  // [n_embd]
  const float* ffn_norm = nullptr;   // [n_embd] (post_attention_norm for qwen35)
  // gemma3 post-norms of the block outputs, before the residual add.
  const float* post_attn_norm = nullptr;  // [n_embd] post_attention_norm
  const float* post_ffn_norm = nullptr;   // [n_embd] post_ffw_norm
  AttentionWeights attn;             // attention layers
  DeltaNetWeights gdn;               // Gated DeltaNet layers
  FfnWeights ffn;
};

// The MTP (nextn) block of Qwen3.5: one gated-attention decoder layer plus the
// fusion projection of [norm_e(embedding) ; norm_h(hidden)].
struct MtpWeights {
  MatrixView eh_proj;             // rows n_embd, cols 2*n_embd
  const float* enorm = nullptr;   // [n_embd]
  const float* hnorm = nullptr;   // [n_embd]
  const float* shared_head_norm = nullptr;  // [n_embd] final norm (falls back to output_norm)
  LayerWeights layer;             // a gated-attention layer
};

struct ModelWeights {
  MatrixView token_embd;          // rows n_vocab, cols n_embd
  MatrixView output;              // rows n_vocab (== token_embd when tied)
  const float* output_norm = nullptr;
  const float* output_bias = nullptr;       // [n_vocab], optional `output.bias`
  // Optional `rope_freqs.weight` [rope_dims / 2] (Llama 3.1+ rope scaling):
  // pair i rotates at inv_freq[i] / factor[i].
  const float* rope_freq_factors = nullptr;
  std::vector<LayerWeights> layers;
  std::vector<MtpWeights> mtp;    // empty when the file has no nextn block
  size_t bytes = 0;               // total bytes of all tensors used
};

// How BindWeights may convert matrices at load. Neither conversion is
// visible to callers except through speed (and, for `narrow_to`, the
// matrices' values).
struct BindOptions {
  // Receives the converted matrices; null: every matrix stays in the file
  // mapping (no conversion at all).
  std::vector<AlignedBuffer<uint8_t>>* matrix_arena = nullptr;
  // Matrices whose type has a row-group kernel on the CPU's dispatch target
  // (kernels::MatMulPrefersRowGroups) and whose rows are a multiple of 16 are
  // converted into that layout (kernels/row_groups.h): same results.
  bool row_groups = false;
  // Matrices stored with more bits per weight than this type are re-encoded
  // to it (dequantize, then kernels::QuantizeRow), when their width is a
  // multiple of its block. This changes the model's numbers, so it is for
  // draft models only: a draft's values move its acceptance, never the
  // target's output. A draft step reads every weight once, so fewer bytes
  // per weight make each draft cheaper (docs/speculative.md).
  std::optional<DType> narrow_to;
};

// Binds every tensor the config needs. `f32_arena` receives the F32 copies of
// small tensors and must outlive the returned pointers, like
// options.matrix_arena. The file pages of converted matrices are dropped from
// the process (a mapped file), so resident memory stays one copy of the
// weights.
ModelWeights BindWeights(const gguf::GgufFile& file, const ModelConfig& config,
                         std::vector<AlignedBuffer<float>>* f32_arena, const BindOptions& options = {});

}  // namespace cairn::model
