#include "model/convert/model_shape.h"

#include "gguf/gguf_writer.h"

namespace cairn::model {

void WriteShapeMetadata(const ModelShape& s, uint32_t file_type, gguf::GgufWriter* w) {
  using gguf::Value;
  const std::string a = s.arch + ".";
  w->Set("general.architecture", Value::String(s.arch));
  w->Set("general.name", Value::String(s.name));
  w->Set("general.file_type", Value::U32(file_type));
  w->Set("general.quantization_version", Value::U32(2));
  w->Set(a + "block_count", Value::U32(static_cast<uint32_t>(s.n_layers + s.n_mtp)));
  w->Set(a + "context_length", Value::U32(s.n_ctx));
  w->Set(a + "embedding_length", Value::U32(static_cast<uint32_t>(s.n_embd)));
  w->Set(a + "feed_forward_length", Value::U32(static_cast<uint32_t>(s.n_ff)));
  w->Set(a + "attention.head_count", Value::U32(static_cast<uint32_t>(s.n_head)));
  w->Set(a + "attention.head_count_kv", Value::U32(static_cast<uint32_t>(s.n_head_kv)));
  w->Set(a + "attention.key_length", Value::U32(static_cast<uint32_t>(s.head_dim)));
  w->Set(a + "attention.value_length", Value::U32(static_cast<uint32_t>(s.head_dim)));
  w->Set(a + "attention.layer_norm_rms_epsilon", Value::F32(s.rms_eps));
  w->Set(a + "rope.freq_base", Value::F32(s.rope_theta));
  w->Set(a + "rope.dimension_count", Value::U32(static_cast<uint32_t>(s.rope_dims)));
  if (s.arch == "gemma3" && s.sliding_window > 0) {
    w->Set(a + "attention.sliding_window", Value::U32(static_cast<uint32_t>(s.sliding_window)));
  }
  if (s.arch == "qwen35") {
    w->Set(a + "rope.dimension_sections", Value::I32Array({11, 11, 10, 0}));
    w->Set(a + "ssm.conv_kernel", Value::U32(static_cast<uint32_t>(s.conv_kernel)));
    w->Set(a + "ssm.state_size", Value::U32(static_cast<uint32_t>(s.d_state)));
    w->Set(a + "ssm.group_count", Value::U32(static_cast<uint32_t>(s.n_k_heads)));
    w->Set(a + "ssm.time_step_rank", Value::U32(static_cast<uint32_t>(s.n_v_heads)));
    w->Set(a + "ssm.inner_size", Value::U32(static_cast<uint32_t>(s.n_v_heads * s.d_state)));
    // The interval rule reproduces the pattern whenever it applies; otherwise
    // write the explicit per-layer array (llama.cpp reads either).
    bool interval_ok = true;
    for (int il = 0; il < s.n_layers; ++il) {
      interval_ok &= s.IsRecurrent(il) == ((il + 1) % s.full_attention_interval != 0);
    }
    if (interval_ok) {
      w->Set(a + "full_attention_interval", Value::U32(static_cast<uint32_t>(s.full_attention_interval)));
    } else {
      std::vector<Value> flags;
      for (int il = 0; il < s.n_layers; ++il) flags.push_back(Value::Bool(s.IsRecurrent(il)));
      w->Set(a + "attention.recurrent_layers", Value::Array(gguf::ValueType::kBool, std::move(flags)));
    }
    if (s.n_mtp > 0) w->Set(a + "nextn_predict_layers", Value::U32(static_cast<uint32_t>(s.n_mtp)));
  }
}

namespace {

void AddLayerSpecs(const ModelShape& s, int il, bool recurrent, std::vector<TensorSpec>* out) {
  using Init = TensorSpec::Init;
  const std::string b = "blk." + std::to_string(il) + ".";
  const bool qwen35 = s.arch == "qwen35";
  const int64_t E = s.n_embd;
  const Init norm = Init::kNormOnes;
  out->push_back({b + "attn_norm.weight", {E}, false, norm});
  out->push_back({b + (qwen35 ? "post_attention_norm.weight" : "ffn_norm.weight"), {E}, false, norm});
  if (recurrent) {
    const int64_t key_dim = static_cast<int64_t>(s.n_k_heads) * s.d_state;
    const int64_t value_dim = static_cast<int64_t>(s.n_v_heads) * s.d_state;
    const int64_t conv_dim = 2 * key_dim + value_dim;
    out->push_back({b + "attn_qkv.weight", {E, conv_dim}, true, Init::kMatrix});
    out->push_back({b + "attn_gate.weight", {E, value_dim}, true, Init::kMatrix});
    out->push_back({b + "ssm_beta.weight", {E, s.n_v_heads}, true, Init::kMatrix});
    out->push_back({b + "ssm_alpha.weight", {E, s.n_v_heads}, true, Init::kMatrix});
    out->push_back({b + "ssm_conv1d.weight", {s.conv_kernel, conv_dim}, false, Init::kConv});
    out->push_back({b + "ssm_dt.bias", {s.n_v_heads}, false, Init::kDtBias});
    out->push_back({b + "ssm_a", {s.n_v_heads}, false, Init::kSsmA});
    out->push_back({b + "ssm_norm.weight", {s.d_state}, false, norm});
    out->push_back({b + "ssm_out.weight", {value_dim, E}, true, Init::kMatrix});
  } else {
    const int64_t q_rows = static_cast<int64_t>(s.n_head) * s.head_dim * (qwen35 ? 2 : 1);
    const int64_t kv_rows = static_cast<int64_t>(s.n_head_kv) * s.head_dim;
    out->push_back({b + "attn_q.weight", {E, q_rows}, true, Init::kMatrix});
    out->push_back({b + "attn_k.weight", {E, kv_rows}, true, Init::kMatrix});
    out->push_back({b + "attn_v.weight", {E, kv_rows}, true, Init::kMatrix});
    out->push_back({b + "attn_output.weight", {static_cast<int64_t>(s.n_head) * s.head_dim, E}, true, Init::kMatrix});
    if (s.arch != "llama") {
      out->push_back({b + "attn_q_norm.weight", {s.head_dim}, false, norm});
      out->push_back({b + "attn_k_norm.weight", {s.head_dim}, false, norm});
    }
  }
  if (s.arch == "gemma3") {   // post-norms of the attention and FFN outputs
    out->push_back({b + "post_attention_norm.weight", {E}, false, norm});
    out->push_back({b + "post_ffw_norm.weight", {E}, false, norm});
  }
  out->push_back({b + "ffn_gate.weight", {E, s.n_ff}, true, Init::kMatrix});
  out->push_back({b + "ffn_up.weight", {E, s.n_ff}, true, Init::kMatrix});
  out->push_back({b + "ffn_down.weight", {s.n_ff, E}, true, Init::kMatrix});
}

}  // namespace

std::vector<TensorSpec> ShapeTensors(const ModelShape& s) {
  using Init = TensorSpec::Init;
  std::vector<TensorSpec> out;
  out.push_back({"token_embd.weight", {s.n_embd, s.n_vocab}, true, Init::kEmbedding});
  for (int il = 0; il < s.n_layers; ++il) AddLayerSpecs(s, il, s.IsRecurrent(il), &out);
  out.push_back({"output_norm.weight", {s.n_embd}, false, Init::kNormOnes});
  if (!s.tied) out.push_back({"output.weight", {s.n_embd, s.n_vocab}, true, Init::kMatrix});
  for (int i = 0; i < s.n_mtp; ++i) {
    const int il = s.n_layers + i;
    const std::string b = "blk." + std::to_string(il) + ".";
    out.push_back({b + "nextn.eh_proj.weight", {2 * static_cast<int64_t>(s.n_embd), s.n_embd}, true, Init::kMatrix});
    out.push_back({b + "nextn.enorm.weight", {s.n_embd}, false, Init::kNormOnes});
    out.push_back({b + "nextn.hnorm.weight", {s.n_embd}, false, Init::kNormOnes});
    out.push_back({b + "nextn.shared_head_norm.weight", {s.n_embd}, false, Init::kNormOnes});
    AddLayerSpecs(s, il, false, &out);
  }
  return out;
}

}  // namespace cairn::model
