#include "model/convert/hf_convert.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"
#include "core/log.h"
#include "gguf/gguf_writer.h"
#include "model/convert/hf_tokenizer_metadata.h"
#include "model/convert/model_shape.h"
#include "model/convert/safetensors.h"
#include "model/convert/tensor_encoding.h"

namespace cairn::model {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Architecture-level facts drawn from config.json.
struct HfModel {
  std::string arch;          // GGUF architecture: llama, qwen3, qwen35
  json cfg;                  // the text config
  std::string weight_prefix; // "model." or "model.language_model."
  int n_layers = 0;
  int n_embd = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  int n_mtp = 0;
  // qwen35
  int n_k_heads = 0, n_v_heads = 0, d_k = 0, d_v = 0, conv_kernel = 4;
};

template <typename T>
T Get(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<T>();
}

template <typename T>
T Require(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) Fail("config.json is missing '{}'", key);
  return it->get<T>();
}

HfModel ReadHfConfig(const json& root) {
  HfModel m;
  const std::string model_type = Get<std::string>(root, "model_type", "");
  m.cfg = root.contains("text_config") ? root.at("text_config") : root;
  m.weight_prefix = "model.";
  if (model_type == "llama") {
    m.arch = "llama";
  } else if (model_type == "qwen3") {
    m.arch = "qwen3";
  } else if (model_type == "qwen3_5" || model_type == "qwen3_5_text") {
    m.arch = "qwen35";
    if (model_type == "qwen3_5") m.weight_prefix = "model.language_model.";
  } else {
    Fail("unsupported model_type '{}' in config.json (supported: llama, qwen3, qwen3_5)", model_type);
  }
  const json& c = m.cfg;
  m.n_layers = Require<int>(c, "num_hidden_layers");
  m.n_embd = Require<int>(c, "hidden_size");
  m.n_head = Require<int>(c, "num_attention_heads");
  m.n_head_kv = Get<int>(c, "num_key_value_heads", m.n_head);
  m.head_dim = Get<int>(c, "head_dim", m.n_embd / m.n_head);
  if (m.arch == "qwen35") {
    m.n_k_heads = Require<int>(c, "linear_num_key_heads");
    m.n_v_heads = Require<int>(c, "linear_num_value_heads");
    m.d_k = Require<int>(c, "linear_key_head_dim");
    m.d_v = Require<int>(c, "linear_value_head_dim");
    m.conv_kernel = Get<int>(c, "linear_conv_kernel_dim", 4);
    m.n_mtp = Get<int>(c, "mtp_num_hidden_layers", 0);
    if (m.d_k != m.d_v) Fail("linear_key_head_dim {} != linear_value_head_dim {} is not supported", m.d_k, m.d_v);
  }
  return m;
}

double RopeTheta(const json& c) {
  if (c.contains("rope_parameters") && c["rope_parameters"].contains("rope_theta")) {
    return c["rope_parameters"]["rope_theta"].get<double>();
  }
  return Get<double>(c, "rope_theta", 10000.0);
}

double PartialRotary(const json& c) {
  if (c.contains("rope_parameters") && c["rope_parameters"].contains("partial_rotary_factor")) {
    return c["rope_parameters"]["partial_rotary_factor"].get<double>();
  }
  return Get<double>(c, "partial_rotary_factor", 1.0);
}

// Layer kinds for qwen35: layer_types wins over full_attention_interval.
std::vector<bool> RecurrentLayers(const HfModel& m) {
  std::vector<bool> recurrent(m.n_layers);
  if (m.cfg.contains("layer_types")) {
    const auto types = m.cfg["layer_types"].get<std::vector<std::string>>();
    if (static_cast<int>(types.size()) < m.n_layers) Fail("config.json layer_types has too few entries");
    for (int i = 0; i < m.n_layers; ++i) recurrent[i] = types[i] == "linear_attention";
  } else {
    const int interval = Get<int>(m.cfg, "full_attention_interval", 4);
    for (int i = 0; i < m.n_layers; ++i) recurrent[i] = (i + 1) % interval != 0;
  }
  return recurrent;
}

// A tensor about to be written: F32 data in GGUF orientation (ne0 = cols).
struct OutTensor {
  std::string name;
  std::vector<int64_t> ne;   // ggml order
  std::vector<float> data;
  bool matrix = false;       // eligible for quantization
};

class Converter {
 public:
  Converter(const HfModel& m, const SafeTensorsSet& st) : m_(m), st_(st) {}

  const SafeTensor& Src(const std::string& name) const {
    const SafeTensor* t = st_.Find(name);
    if (t == nullptr) Fail("checkpoint is missing tensor '{}'", name);
    return *t;
  }
  bool Has(const std::string& name) const { return st_.Find(name) != nullptr; }

  // HF [rows, cols] matrix -> GGUF ne {cols, rows}.
  OutTensor Matrix(const std::string& src, const std::string& dst) const {
    const SafeTensor& t = Src(src);
    if (t.shape.size() != 2) Fail("tensor '{}' should be 2-D", src);
    return OutTensor{dst, {t.shape[1], t.shape[0]}, t.ToF32(), true};
  }

  OutTensor Vector(const std::string& src, const std::string& dst, float add = 0.0f) const {
    const SafeTensor& t = Src(src);
    OutTensor out{dst, {t.elements()}, t.ToF32(), false};
    if (add != 0.0f) {
      for (float& v : out.data) v += add;
    }
    return out;
  }

  // Llama: rows of q/k are permuted so ggml's adjacent-pair RoPE equals HF's
  // rotate-half: within each head, new row 2i = old row i, 2i+1 = old row i+hd/2.
  static void PermuteForNormRope(OutTensor* t, int n_heads) {
    const int64_t cols = t->ne[0];
    const int64_t rows = t->ne[1];
    const int64_t hd = rows / n_heads;
    std::vector<float> out(t->data.size());
    for (int64_t h = 0; h < n_heads; ++h) {
      for (int64_t i = 0; i < hd / 2; ++i) {
        std::memcpy(&out[((h * hd) + 2 * i) * cols], &t->data[((h * hd) + i) * cols], cols * 4);
        std::memcpy(&out[((h * hd) + 2 * i + 1) * cols], &t->data[((h * hd) + i + hd / 2) * cols], cols * 4);
      }
    }
    t->data = std::move(out);
  }

  // Qwen3.5 GGUF value heads are in tiled order (value head t uses key head
  // t mod n_k) while HF groups them (value head h uses key head h / r). Moves
  // `unit`-sized slices of rows [first_row, first_row + n_v*unit) (or, with
  // columns=true, column slices) from grouped to tiled order.
  void TileVHeads(OutTensor* t, int64_t first, int64_t unit, bool columns) const {
    const int nk = m_.n_k_heads, nv = m_.n_v_heads;
    if (nv == nk) return;
    const int r = nv / nk;
    const int64_t cols = t->ne[0];
    const int64_t rows = static_cast<int64_t>(t->data.size()) / cols;
    std::vector<float> src = t->data;
    for (int g = 0; g < nk; ++g) {
      for (int j = 0; j < r; ++j) {
        const int64_t from = g * r + j;   // grouped index
        const int64_t to = j * nk + g;    // tiled index
        if (!columns) {
          std::memcpy(&t->data[(first + to * unit) * cols], &src[(first + from * unit) * cols], unit * cols * 4);
        } else {
          for (int64_t row = 0; row < rows; ++row) {
            std::memcpy(&t->data[row * cols + first + to * unit], &src[row * cols + first + from * unit], unit * 4);
          }
        }
      }
    }
  }

  void AddLayer(const std::string& hf, int il, bool recurrent, bool gated_attention, std::vector<OutTensor>* out) const {
    const std::string b = "blk." + std::to_string(il) + ".";
    const bool qwen35 = m_.arch == "qwen35";
    const float norm_add = qwen35 ? 1.0f : 0.0f;  // zero-centred (1+w) norms store the final multiplier
    out->push_back(Vector(hf + "input_layernorm.weight", b + "attn_norm.weight", norm_add));
    out->push_back(Vector(hf + "post_attention_layernorm.weight",
                          b + (qwen35 ? "post_attention_norm.weight" : "ffn_norm.weight"), norm_add));
    if (recurrent) {
      const std::string a = hf + "linear_attn.";
      const int64_t key_dim = static_cast<int64_t>(m_.n_k_heads) * m_.d_k;
      OutTensor qkv = Matrix(a + "in_proj_qkv.weight", b + "attn_qkv.weight");
      TileVHeads(&qkv, 2 * key_dim, m_.d_v, false);
      out->push_back(std::move(qkv));
      OutTensor z = Matrix(a + "in_proj_z.weight", b + "attn_gate.weight");
      TileVHeads(&z, 0, m_.d_v, false);
      out->push_back(std::move(z));
      OutTensor beta = Matrix(a + "in_proj_b.weight", b + "ssm_beta.weight");
      TileVHeads(&beta, 0, 1, false);
      out->push_back(std::move(beta));
      OutTensor alpha = Matrix(a + "in_proj_a.weight", b + "ssm_alpha.weight");
      TileVHeads(&alpha, 0, 1, false);
      out->push_back(std::move(alpha));
      // conv1d.weight [C, 1, K] -> ne {K, C}.
      const SafeTensor& conv = Src(a + "conv1d.weight");
      if (conv.shape.size() != 3 || conv.shape[1] != 1) Fail("tensor '{}' should be [C, 1, K]", conv.name);
      OutTensor conv_out{b + "ssm_conv1d.weight", {conv.shape[2], conv.shape[0]}, conv.ToF32(), false};
      TileVHeads(&conv_out, 2 * key_dim, m_.d_v, false);
      out->push_back(std::move(conv_out));
      OutTensor dt = Vector(a + "dt_bias", b + "ssm_dt.bias");
      dt.ne = {1, static_cast<int64_t>(dt.data.size())};  // one row per head
      TileVHeads(&dt, 0, 1, false);
      dt.ne = {static_cast<int64_t>(dt.data.size())};
      out->push_back(std::move(dt));
      OutTensor ssm_a = Vector(a + "A_log", b + "ssm_a");
      for (float& v : ssm_a.data) v = -std::exp(v);
      ssm_a.ne = {1, static_cast<int64_t>(ssm_a.data.size())};  // one row per head
      TileVHeads(&ssm_a, 0, 1, false);
      ssm_a.ne = {static_cast<int64_t>(ssm_a.data.size())};
      out->push_back(std::move(ssm_a));
      out->push_back(Vector(a + "norm.weight", b + "ssm_norm.weight"));  // plain RMSNorm weight: no +1
      OutTensor o = Matrix(a + "out_proj.weight", b + "ssm_out.weight");
      TileVHeads(&o, 0, m_.d_v, true);
      out->push_back(std::move(o));
    } else {
      const std::string a = hf + "self_attn.";
      OutTensor q = Matrix(a + "q_proj.weight", b + "attn_q.weight");
      OutTensor k = Matrix(a + "k_proj.weight", b + "attn_k.weight");
      if (m_.arch == "llama") {
        PermuteForNormRope(&q, m_.n_head);
        PermuteForNormRope(&k, m_.n_head_kv);
      }
      (void)gated_attention;
      out->push_back(std::move(q));
      out->push_back(std::move(k));
      out->push_back(Matrix(a + "v_proj.weight", b + "attn_v.weight"));
      out->push_back(Matrix(a + "o_proj.weight", b + "attn_output.weight"));
      if (Has(a + "q_norm.weight")) {
        out->push_back(Vector(a + "q_norm.weight", b + "attn_q_norm.weight", norm_add));
        out->push_back(Vector(a + "k_norm.weight", b + "attn_k_norm.weight", norm_add));
      }
    }
    out->push_back(Matrix(hf + "mlp.gate_proj.weight", b + "ffn_gate.weight"));
    out->push_back(Matrix(hf + "mlp.up_proj.weight", b + "ffn_up.weight"));
    out->push_back(Matrix(hf + "mlp.down_proj.weight", b + "ffn_down.weight"));
  }

  std::vector<OutTensor> AllTensors(const std::vector<bool>& recurrent, int n_mtp) const {
    std::vector<OutTensor> out;
    const std::string p = m_.weight_prefix;
    const bool qwen35 = m_.arch == "qwen35";
    out.push_back(Matrix(p + "embed_tokens.weight", "token_embd.weight"));
    for (int il = 0; il < m_.n_layers; ++il) {
      AddLayer(p + "layers." + std::to_string(il) + ".", il, recurrent[il], qwen35, &out);
    }
    out.push_back(Vector(p + "norm.weight", "output_norm.weight", qwen35 ? 1.0f : 0.0f));
    if (Has("lm_head.weight") && !Get<bool>(m_.cfg, "tie_word_embeddings", false)) {
      out.push_back(Matrix("lm_head.weight", "output.weight"));
    }
    for (int i = 0; i < n_mtp; ++i) {
      const int il = m_.n_layers + i;
      const std::string b = "blk." + std::to_string(il) + ".";
      out.push_back(Matrix("mtp.fc.weight", b + "nextn.eh_proj.weight"));
      out.push_back(Vector("mtp.pre_fc_norm_embedding.weight", b + "nextn.enorm.weight", 1.0f));
      out.push_back(Vector("mtp.pre_fc_norm_hidden.weight", b + "nextn.hnorm.weight", 1.0f));
      out.push_back(Vector("mtp.norm.weight", b + "nextn.shared_head_norm.weight", 1.0f));
      AddLayer("mtp.layers." + std::to_string(i) + ".", il, false, true, &out);
    }
    return out;
  }

 private:
  const HfModel& m_;
  const SafeTensorsSet& st_;
};

}  // namespace

void ConvertHfToGguf(const std::string& hf_dir, const std::string& out_path, const ConvertOptions& options) {
  const fs::path dir(hf_dir);
  std::ifstream cfg_in(dir / "config.json");
  if (!cfg_in) Fail("'{}' has no config.json", hf_dir);
  json root;
  try {
    root = json::parse(cfg_in);
  } catch (const std::exception& e) {
    Fail("config.json: {}", e.what());
  }
  HfModel m = ReadHfConfig(root);
  const SafeTensorsSet st = SafeTensorsSet::OpenDir(hf_dir);
  if (m.n_mtp > 0 && (!options.keep_mtp || st.Find("mtp.fc.weight") == nullptr)) m.n_mtp = 0;

  ModelShape shape;
  const json& c = m.cfg;
  shape.arch = m.arch;
  shape.name = Get<std::string>(root, "_name_or_path", dir.filename().string());
  shape.n_layers = m.n_layers;
  shape.n_embd = m.n_embd;
  shape.n_ff = Require<int>(c, "intermediate_size");
  shape.n_vocab = Require<int>(c, "vocab_size");
  shape.n_head = m.n_head;
  shape.n_head_kv = m.n_head_kv;
  shape.head_dim = m.head_dim;
  shape.rope_dims = static_cast<int>(std::lround(m.head_dim * PartialRotary(c)));
  shape.rope_theta = static_cast<float>(RopeTheta(c));
  shape.rms_eps = Get<float>(c, "rms_norm_eps", 1e-6f);
  shape.n_ctx = Get<uint32_t>(c, "max_position_embeddings", 4096);
  std::vector<bool> recurrent(m.n_layers, false);
  if (m.arch == "qwen35") {
    recurrent = RecurrentLayers(m);
    shape.full_attention_interval = Get<int>(c, "full_attention_interval", 4);
    shape.recurrent = recurrent;
    shape.conv_kernel = m.conv_kernel;
    shape.n_k_heads = m.n_k_heads;
    shape.n_v_heads = m.n_v_heads;
    shape.d_state = m.d_k;
    shape.n_mtp = m.n_mtp;
  }
  gguf::GgufWriter w;
  WriteShapeMetadata(shape, LlamaFileType(options.matrix_type), &w);
  AddTokenizerMetadata(hf_dir, shape.n_vocab, &w);

  Converter conv(m, st);
  std::vector<OutTensor> tensors = conv.AllTensors(recurrent, m.n_mtp);
  Progress progress("converting", static_cast<int64_t>(tensors.size()));
  int64_t done = 0;
  for (OutTensor& t : tensors) {
    const DType type = ChooseTensorType(t.name, t.ne, t.matrix, options.matrix_type);
    const std::vector<uint8_t> bytes = EncodeRows(t.data, t.ne[0], type);
    w.AddTensor(t.name, t.ne, type, bytes);
    t.data = {};
    progress.Update(++done);
  }
  progress.Finish();
  w.WriteFile(out_path);
  if (options.verbose) LogInfo("wrote {} ({} tensors, {})", out_path, tensors.size(), m.arch);
}

}  // namespace cairn::model
