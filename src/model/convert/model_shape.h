// The architecture-level description shared by the HF converter and the
// random-model writer: it produces the GGUF metadata keys (exactly as
// llama.cpp names them) and the list of tensors with their GGUF shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cairn::gguf {
class GgufWriter;
}

namespace cairn::model {

struct ModelShape {
  std::string arch;         // llama | qwen3 | qwen35
  std::string name;
  int n_layers = 0;         // trunk layers
  int n_embd = 0;
  int n_ff = 0;
  int n_vocab = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  int rope_dims = 0;        // rotary dims per head
  float rope_theta = 10000.0f;
  float rms_eps = 1e-6f;
  uint32_t n_ctx = 4096;
  bool tied = false;
  // qwen35
  int full_attention_interval = 4;
  std::vector<bool> recurrent;  // per trunk layer
  int conv_kernel = 4;
  int n_k_heads = 0, n_v_heads = 0, d_state = 0;
  int n_mtp = 0;
  // gemma3
  int sliding_window = 0;   // attention.sliding_window (layers il % 6 < 5 slide)

  bool IsRecurrent(int il) const { return il < static_cast<int>(recurrent.size()) && recurrent[il]; }
};

// Writes general.architecture and every <arch>.* hyper-parameter key.
void WriteShapeMetadata(const ModelShape& shape, uint32_t file_type, gguf::GgufWriter* writer);

struct TensorSpec {
  std::string name;
  std::vector<int64_t> ne;   // ggml order (ne0 = row length)
  bool matrix = false;       // a weight matrix (quantizable)
  enum class Init { kMatrix, kEmbedding, kNormOnes, kZeroCentredNorm, kSsmA, kDtBias, kConv } init = Init::kMatrix;
};

// Every tensor of the model, in the order llama.cpp's converter writes them.
std::vector<TensorSpec> ShapeTensors(const ModelShape& shape);

}  // namespace cairn::model
