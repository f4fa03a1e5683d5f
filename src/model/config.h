// Model hyper-parameters, read from GGUF metadata exactly as llama.cpp writes
// them (../shared/reference/llama-cpp-notes.md §3, hybrid-architectures.md §1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cairn::gguf {
class GgufFile;
}

namespace cairn::model {

enum class Arch { kLlama, kQwen3, kQwen35, kQwen2 };

// How RoPE pairs dimensions. kNorm rotates adjacent pairs (2i, 2i+1) — GGUF
// `llama` files, whose converter permutes q/k rows for it. kNeox rotates
// (i, i + rot/2) — qwen2, qwen3, qwen35 (IMROPE equals NEOX for text-only
// positions). The style is not stored in GGUF: it is fixed per architecture.
enum class RopeStyle { kNorm, kNeox };

enum class LayerKind { kAttention, kGatedAttention, kGatedDeltaNet };

struct ModelConfig {
  Arch arch = Arch::kLlama;
  std::string arch_name;        // "llama", "qwen2", "qwen3", "qwen35"
  std::string name;             // general.name
  int n_layers = 0;             // trunk layers (excludes MTP/nextn layers)
  int n_embd = 0;               // hidden size
  int n_ff = 0;                 // FFN intermediate size
  int n_vocab = 0;
  int64_t n_ctx_train = 0;      // context_length

  // Attention.
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;             // key_length (== value_length)
  float rms_eps = 1e-6f;
  float rope_theta = 10000.0f;
  int rope_dims = 0;            // rotary dims per head (partial rotary when < head_dim)
  RopeStyle rope_style = RopeStyle::kNorm;
  bool qk_norm = false;         // per-head q/k RMSNorm (qwen3, qwen35)

  // Gated DeltaNet (qwen35).
  int ssm_conv_kernel = 0;      // 4
  int ssm_d_state = 0;          // head_k_dim (== head_v_dim)
  int ssm_n_k_heads = 0;        // group_count
  int ssm_n_v_heads = 0;        // time_step_rank
  int ssm_inner = 0;            // value_dim = n_v_heads * head_v_dim

  // MTP (nextn) layers appended after the trunk (0 when absent).
  int n_nextn = 0;

  bool tied_output = false;     // output.weight absent: use token_embd
  std::vector<LayerKind> layer_kinds;  // n_layers entries

  // Derived sizes.
  int key_dim() const { return ssm_n_k_heads * ssm_d_state; }        // q (or k) channels
  int conv_dim() const { return 2 * key_dim() + ssm_inner; }          // conv channels [q|k|v]
  int n_attn_layers() const;
  int n_recurrent_layers() const;
  bool is_hybrid() const { return n_recurrent_layers() > 0; }
  std::string Describe() const;   // one-line summary for logs
};

// Reads and validates the config; throws cairn::Error naming the missing or
// inconsistent key.
ModelConfig ReadModelConfig(const gguf::GgufFile& file);

}  // namespace cairn::model
