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

enum class Arch { kLlama, kQwen3, kQwen35, kQwen2, kGemma3 };

// How RoPE pairs dimensions. kNorm rotates adjacent pairs (2i, 2i+1) — GGUF
// `llama` files, whose converter permutes q/k rows for it. kNeox rotates
// (i, i + rot/2) — qwen2, qwen3, qwen35 (IMROPE equals NEOX for text-only
// positions). The style is not stored in GGUF: it is fixed per architecture.
enum class RopeStyle { kNorm, kNeox };

// kSlidingAttention: attention over the last `sliding_window` positions only
// (gemma3 local layers); its KV lives in the sequence's window-bounded table.
enum class LayerKind { kAttention, kGatedAttention, kGatedDeltaNet, kSlidingAttention };

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

  // Sliding-window attention (gemma3). A sliding layer's query at position p
  // sees keys [p - sliding_window + 1, p]. 0 = no sliding layers.
  int sliding_window = 0;
  float rope_theta_local = 10000.0f;  // RoPE base of sliding layers
  float attn_scale = 0.0f;            // q scale; 0 = 1/sqrt(head_dim)
  float embd_scale = 1.0f;            // token embedding multiplier (gemma3: sqrt(n_embd))

  // MTP (nextn) layers appended after the trunk (0 when absent).
  int n_nextn = 0;

  bool tied_output = false;     // output.weight absent: use token_embd
  std::vector<LayerKind> layer_kinds;  // n_layers entries

  // Derived sizes.
  int key_dim() const { return ssm_n_k_heads * ssm_d_state; }        // q (or k) channels
  int conv_dim() const { return 2 * key_dim() + ssm_inner; }          // conv channels [q|k|v]
  int n_attn_layers() const;        // layers with full-length KV (blocks shared with the prefix cache)
  int n_sliding_layers() const;     // layers with window-bounded KV
  int n_recurrent_layers() const;
  bool is_hybrid() const { return n_recurrent_layers() > 0; }
  bool has_sliding() const { return n_sliding_layers() > 0; }
  // State that cannot be truncated freely (recurrent state, or sliding KV
  // freed outside the window): the prefix cache works in checkpoint mode.
  bool checkpointed() const { return is_hybrid() || has_sliding(); }
  std::string Describe() const;   // one-line summary for logs
};

// Reads and validates the config; throws cairn::Error naming the missing or
// inconsistent key.
ModelConfig ReadModelConfig(const gguf::GgufFile& file);

// gemma3's own keys (gemma3.cc), after the common ones: sliding window,
// local/global layer pattern, local RoPE base, q and embedding scales.
void ReadGemma3Config(const gguf::GgufFile& file, ModelConfig* config);

}  // namespace cairn::model
