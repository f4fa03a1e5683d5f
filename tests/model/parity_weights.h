// Random qwen35 GGUFs for the hybrid parity tests, bit for bit the files that
// tools/random_gguf.py writes with gguf-py (same generator, names, shapes and
// metadata), so the goldens made from the Python files (transformers on the
// dequantized weights, llama.cpp's top-5) apply to these. Generated on first
// use into the per-user temp folder; see docs/hybrid-parity.md.
//
// Generator (keep in sync with tools/random_gguf.py):
//   key(name)  = FNV-1a 64 of the tensor name ^ (seed * 0x9E3779B97F4A7C15)
//   h(i)       = splitmix64 finaliser of key + (i + 1) * 0x9E3779B97F4A7C15
//   u_j        = (((h >> 16 j) & 0xFFFF) + 0.5) / 65536, j = 0..3
//   normal(i)  = float((u_0 + u_1 + u_2 + u_3 - 2) * sqrt(3) * std)
//   uniform(i) = u_0
// Matrices and the conv kernel: normal; norms 1; ssm_dt.bias 1; ssm_a = -(1 + 15 uniform).
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "gguf/gguf_writer.h"
#include "kernels/quant.h"

namespace cairn::test {

struct ParityShape {
  std::string name;   // "0.8b" | "tiny-nv2" (tools/random_gguf.py SHAPES)
  int layers, hidden, ff, heads, kv, hd, nk, nv, dk;
  std::vector<int32_t> sections;
};

inline ParityShape ParityShapeNamed(const std::string& name, int layers = 0) {
  ParityShape s;
  if (name == "0.8b") {
    s = {name, 24, 1024, 3584, 8, 2, 256, 16, 16, 128, {11, 11, 10, 0}};
  } else {
    s = {"tiny-nv2", 8, 256, 512, 4, 2, 64, 2, 4, 64, {3, 3, 2, 0}};
  }
  if (layers > 0) s.layers = layers;
  return s;
}

inline uint64_t ParityFnv1a(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

inline uint64_t ParityHash(uint64_t key, uint64_t i) {
  uint64_t z = key + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline double ParityUniform(uint64_t h, int j) {
  return static_cast<double>((h >> (16 * j)) & 0xFFFF) * (1.0 / 65536) + 0.5 / 65536;
}

enum class ParityInit { kMatrix, kOne, kDt, kA };

inline void ParityFill(const std::string& name, ParityInit init, uint64_t seed, double stddev, std::vector<float>* out) {
  const uint64_t key = ParityFnv1a(name) ^ (seed * 0x9E3779B97F4A7C15ull);
  for (size_t i = 0; i < out->size(); ++i) {
    float v = 1.0f;
    if (init == ParityInit::kMatrix) {
      const uint64_t h = ParityHash(key, i);
      const double s = ((ParityUniform(h, 0) + ParityUniform(h, 1)) + ParityUniform(h, 2)) + ParityUniform(h, 3) - 2.0;
      v = static_cast<float>(s * std::sqrt(3.0) * stddev);
    } else if (init == ParityInit::kA) {
      v = static_cast<float>(-(1.0 + 15.0 * ParityUniform(ParityHash(key, i), 0)));
    }
    (*out)[i] = v;
  }
}

// Writes the model (llama.cpp qwen35 conventions; tokenizer "none").
inline void WriteParityModel(const ParityShape& s, int vocab, DType matrix_type, uint64_t seed, double stddev,
                             const std::string& path) {
  using gguf::Value;
  gguf::GgufWriter w;
  w.Set("general.architecture", Value::String("qwen35"));
  w.Set("general.name", Value::String("cairn-parity-qwen35-" + s.name + "-" + std::to_string(s.layers) + "l"));
  w.Set("general.file_type", Value::U32(matrix_type == DType::kF32 ? 0 : 7));
  w.Set("general.quantization_version", Value::U32(2));
  const std::string p = "qwen35.";
  w.Set(p + "context_length", Value::U32(262144));
  w.Set(p + "embedding_length", Value::U32(s.hidden));
  w.Set(p + "feed_forward_length", Value::U32(s.ff));
  w.Set(p + "block_count", Value::U32(s.layers));
  w.Set(p + "attention.head_count", Value::U32(s.heads));
  w.Set(p + "attention.head_count_kv", Value::U32(s.kv));
  w.Set(p + "attention.key_length", Value::U32(s.hd));
  w.Set(p + "attention.value_length", Value::U32(s.hd));
  w.Set(p + "attention.layer_norm_rms_epsilon", Value::F32(1e-6f));
  w.Set(p + "rope.freq_base", Value::F32(1e7f));
  w.Set(p + "rope.dimension_count", Value::U32(s.hd / 4));
  w.Set(p + "rope.dimension_sections", Value::I32Array(s.sections));
  w.Set(p + "ssm.conv_kernel", Value::U32(4));
  w.Set(p + "ssm.state_size", Value::U32(s.dk));
  w.Set(p + "ssm.group_count", Value::U32(s.nk));
  w.Set(p + "ssm.time_step_rank", Value::U32(s.nv));
  w.Set(p + "ssm.inner_size", Value::U32(s.nv * s.dk));
  w.Set(p + "full_attention_interval", Value::U32(4));
  w.Set(p + "vocab_size", Value::U32(vocab));
  w.Set("tokenizer.ggml.model", Value::String("none"));

  auto add = [&](const std::string& name, int64_t rows, int64_t cols, ParityInit init, bool matrix) {
    std::vector<float> v(static_cast<size_t>(rows * cols));
    ParityFill(name, init, seed, stddev, &v);
    const DType type = matrix ? matrix_type : DType::kF32;
    const size_t row_bytes = RowBytes(type, cols);
    std::vector<uint8_t> bytes(row_bytes * rows);
    for (int64_t r = 0; r < rows; ++r) kernels::QuantizeRow(type, v.data() + r * cols, cols, bytes.data() + r * row_bytes);
    std::vector<int64_t> shape = rows == 1 && !matrix ? std::vector<int64_t>{cols} : std::vector<int64_t>{cols, rows};
    w.AddTensor(name, shape, type, bytes);
  };
  const int64_t H = s.hidden, key_dim = s.nk * s.dk, value_dim = s.nv * s.dk, conv_dim = 2 * key_dim + value_dim;
  add("token_embd.weight", vocab, H, ParityInit::kMatrix, true);
  for (int il = 0; il < s.layers; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    add(b + "attn_norm.weight", 1, H, ParityInit::kOne, false);
    add(b + "post_attention_norm.weight", 1, H, ParityInit::kOne, false);
    if ((il + 1) % 4 != 0) {
      add(b + "attn_qkv.weight", conv_dim, H, ParityInit::kMatrix, true);
      add(b + "attn_gate.weight", value_dim, H, ParityInit::kMatrix, true);
      add(b + "ssm_beta.weight", s.nv, H, ParityInit::kMatrix, true);
      add(b + "ssm_alpha.weight", s.nv, H, ParityInit::kMatrix, true);
      add(b + "ssm_conv1d.weight", conv_dim, 4, ParityInit::kMatrix, false);
      add(b + "ssm_dt.bias", 1, s.nv, ParityInit::kDt, false);
      add(b + "ssm_a", 1, s.nv, ParityInit::kA, false);
      add(b + "ssm_norm.weight", 1, s.dk, ParityInit::kOne, false);
      add(b + "ssm_out.weight", H, value_dim, ParityInit::kMatrix, true);
    } else {
      add(b + "attn_q.weight", 2 * s.heads * s.hd, H, ParityInit::kMatrix, true);
      add(b + "attn_k.weight", s.kv * s.hd, H, ParityInit::kMatrix, true);
      add(b + "attn_v.weight", s.kv * s.hd, H, ParityInit::kMatrix, true);
      add(b + "attn_q_norm.weight", 1, s.hd, ParityInit::kOne, false);
      add(b + "attn_k_norm.weight", 1, s.hd, ParityInit::kOne, false);
      add(b + "attn_output.weight", H, s.heads * s.hd, ParityInit::kMatrix, true);
    }
    add(b + "ffn_gate.weight", s.ff, H, ParityInit::kMatrix, true);
    add(b + "ffn_up.weight", s.ff, H, ParityInit::kMatrix, true);
    add(b + "ffn_down.weight", H, s.ff, ParityInit::kMatrix, true);
  }
  add("output_norm.weight", 1, H, ParityInit::kOne, false);
  w.WriteFile(path);
}

// Cached path of a parity model (generated on first use).
inline std::string ParityModelPath(const ParityShape& s, int vocab, DType matrix_type, uint64_t seed = 1,
                                   double stddev = 0.02) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "cairn-test-models";
  fs::create_directories(dir);
  const std::string name = "parity-qwen35-" + s.name + "-" + std::to_string(s.layers) + "l-v" + std::to_string(vocab) +
                           "-" + std::string(GetDTypeInfo(matrix_type).name) + "-s" + std::to_string(seed) + "-std" +
                           std::to_string(static_cast<int>(std::lround(stddev * 1e4))) + "-pv1-gen" +
                           CAIRN_TEST_MODEL_GENERATOR_HASH + ".gguf";
  const fs::path path = dir / name;
  if (!fs::exists(path)) {
    const fs::path tmp = dir / (name + ".tmp" + std::to_string(::getpid()));
    WriteParityModel(s, vocab, matrix_type, seed, stddev, tmp.string());
    fs::rename(tmp, path);
  }
  return path.string();
}

}  // namespace cairn::test
