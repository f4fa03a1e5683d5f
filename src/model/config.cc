#include "model/config.h"

#include <fmt/format.h>

#include "core/error.h"
#include "gguf/gguf_file.h"

namespace cairn::model {
namespace {

int GetInt(const gguf::GgufFile& file, const std::string& key) {
  const uint64_t v = file.GetU64(key);
  if (v == 0 || v > (1ull << 30)) Fail("metadata key '{}' has invalid value {}", key, v);
  return static_cast<int>(v);
}

int GetIntOr(const gguf::GgufFile& file, const std::string& key, int fallback) {
  if (file.Find(key) == nullptr) return fallback;
  return GetInt(file, key);
}

}  // namespace

int ModelConfig::n_attn_layers() const {
  int n = 0;
  for (LayerKind k : layer_kinds) n += (k == LayerKind::kAttention || k == LayerKind::kGatedAttention);
  return n;
}

int ModelConfig::n_sliding_layers() const {
  int n = 0;
  for (LayerKind k : layer_kinds) n += (k == LayerKind::kSlidingAttention);
  return n;
}

int ModelConfig::n_recurrent_layers() const {
  int n = 0;
  for (LayerKind k : layer_kinds) n += (k == LayerKind::kGatedDeltaNet);
  return n;
}

std::string ModelConfig::Describe() const {
  std::string s = fmt::format("{} layers={} (attn {}, gdn {}) embd={} ff={} heads={}/{}x{} vocab={}", arch_name,
                              n_layers, n_attn_layers(), n_recurrent_layers(), n_embd, n_ff, n_head, n_head_kv,
                              head_dim, n_vocab);
  if (is_hybrid()) {
    s += fmt::format(" gdn_heads={}/{}x{} conv={}", ssm_n_k_heads, ssm_n_v_heads, ssm_d_state, ssm_conv_kernel);
  }
  if (has_sliding()) s += fmt::format(" swa={} window={} theta_local={}", n_sliding_layers(), sliding_window, rope_theta_local);
  if (n_nextn > 0) s += fmt::format(" mtp={}", n_nextn);
  return s;
}

ModelConfig ReadModelConfig(const gguf::GgufFile& file) {
  ModelConfig c;
  c.arch_name = file.architecture();
  if (c.arch_name == "llama") {
    c.arch = Arch::kLlama;
  } else if (c.arch_name == "qwen3") {
    c.arch = Arch::kQwen3;
  } else if (c.arch_name == "qwen35") {
    c.arch = Arch::kQwen35;
  } else if (c.arch_name == "qwen2") {
    c.arch = Arch::kQwen2;  // llama layout + q/k/v biases (optional tensors), NEOX rope, no q/k norm
  } else if (c.arch_name == "gemma3") {
    c.arch = Arch::kGemma3;
  } else if (c.arch_name.empty()) {
    Fail("missing metadata key 'general.architecture'");
  } else {
    Fail("unsupported architecture '{}' (supported: llama, qwen2, qwen3, qwen35, gemma3)", c.arch_name);
  }
  const std::string p = c.arch_name + ".";
  c.name = file.GetString("general.name", "");
  const int block_count = GetInt(file, p + "block_count");
  c.n_nextn = static_cast<int>(file.GetU64(p + "nextn_predict_layers", 0));
  if (c.n_nextn < 0 || c.n_nextn >= block_count) Fail("metadata '{}nextn_predict_layers' = {} is invalid", p, c.n_nextn);
  c.n_layers = block_count - c.n_nextn;
  c.n_embd = GetInt(file, p + "embedding_length");
  c.n_ff = GetInt(file, p + "feed_forward_length");
  c.n_ctx_train = static_cast<int64_t>(file.GetU64(p + "context_length", 4096));
  c.n_head = GetInt(file, p + "attention.head_count");
  c.n_head_kv = GetIntOr(file, p + "attention.head_count_kv", c.n_head);
  c.head_dim = GetIntOr(file, p + "attention.key_length", c.n_embd / c.n_head);
  const int value_length = GetIntOr(file, p + "attention.value_length", c.head_dim);
  if (value_length != c.head_dim) Fail("attention.value_length {} != key_length {} is not supported", value_length, c.head_dim);
  if (c.n_head % c.n_head_kv != 0) Fail("attention.head_count {} is not a multiple of head_count_kv {}", c.n_head, c.n_head_kv);
  c.rms_eps = static_cast<float>(file.GetF64(p + "attention.layer_norm_rms_epsilon", 1e-6));
  c.rope_theta = static_cast<float>(file.GetF64(p + "rope.freq_base", 10000.0));
  c.rope_dims = GetIntOr(file, p + "rope.dimension_count", c.head_dim);
  if (c.rope_dims > c.head_dim || c.rope_dims % 2 != 0) Fail("rope.dimension_count {} is invalid for head dim {}", c.rope_dims, c.head_dim);
  c.rope_style = c.arch == Arch::kLlama ? RopeStyle::kNorm : RopeStyle::kNeox;
  c.qk_norm = c.arch == Arch::kQwen3 || c.arch == Arch::kQwen35 || c.arch == Arch::kGemma3;

  c.layer_kinds.assign(c.n_layers, c.arch == Arch::kQwen35 ? LayerKind::kGatedAttention : LayerKind::kAttention);
  if (c.arch == Arch::kGemma3) ReadGemma3Config(file, &c);  // gemma3.cc: window, layer pattern, scales
  if (c.arch == Arch::kQwen35) {
    c.ssm_conv_kernel = GetInt(file, p + "ssm.conv_kernel");
    c.ssm_d_state = GetInt(file, p + "ssm.state_size");
    c.ssm_n_k_heads = GetInt(file, p + "ssm.group_count");
    c.ssm_n_v_heads = GetInt(file, p + "ssm.time_step_rank");
    c.ssm_inner = GetInt(file, p + "ssm.inner_size");
    if (c.ssm_inner != c.ssm_n_v_heads * c.ssm_d_state) {
      Fail("ssm.inner_size {} != time_step_rank {} x state_size {} (head_v_dim must equal head_k_dim)", c.ssm_inner,
           c.ssm_n_v_heads, c.ssm_d_state);
    }
    if (c.ssm_n_v_heads % c.ssm_n_k_heads != 0) Fail("ssm.time_step_rank {} is not a multiple of ssm.group_count {}", c.ssm_n_v_heads, c.ssm_n_k_heads);
    if (const gguf::Value* pattern = file.Find(p + "attention.recurrent_layers")) {
      const std::vector<int64_t> flags = pattern->AsI64s();
      if (static_cast<int>(flags.size()) < c.n_layers) Fail("attention.recurrent_layers has {} entries for {} layers", flags.size(), c.n_layers);
      for (int i = 0; i < c.n_layers; ++i) {
        c.layer_kinds[i] = flags[i] ? LayerKind::kGatedDeltaNet : LayerKind::kGatedAttention;
      }
    } else {
      const int interval = GetIntOr(file, p + "full_attention_interval", 4);
      for (int i = 0; i < c.n_layers; ++i) {
        c.layer_kinds[i] = ((i + 1) % interval != 0) ? LayerKind::kGatedDeltaNet : LayerKind::kGatedAttention;
      }
    }
  }
  return c;
}

}  // namespace cairn::model
