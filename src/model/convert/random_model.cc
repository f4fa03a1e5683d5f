#include "model/convert/random_model.h"

#include <cmath>
#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "gguf/gguf_writer.h"
#include "kernels/quant.h"
#include "model/convert/hf_tokenizer_metadata.h"
#include "model/convert/model_shape.h"
#include "model/convert/tensor_encoding.h"

namespace cairn::model {
namespace {

struct Preset {
  const char* arch;
  const char* name;
  const char* description;
  ModelShape shape;
};

ModelShape Dense(const char* arch, int layers, int embd, int ff, int heads, int kv, int hd, float theta, bool tied,
                 int vocab) {
  ModelShape s;
  s.arch = arch;
  s.n_layers = layers;
  s.n_embd = embd;
  s.n_ff = ff;
  s.n_head = heads;
  s.n_head_kv = kv;
  s.head_dim = hd;
  s.rope_dims = hd;
  s.rope_theta = theta;
  s.tied = tied;
  s.n_vocab = vocab;
  s.n_ctx = 40960;
  return s;
}

ModelShape Hybrid(int layers, int embd, int ff, int heads, int kv, int hd, int nk, int nv, int d_state, int vocab) {
  ModelShape s = Dense("qwen35", layers, embd, ff, heads, kv, hd, 1e7f, true, vocab);
  s.rope_dims = hd / 4;  // partial_rotary_factor 0.25
  s.full_attention_interval = 4;
  s.recurrent.resize(layers);
  for (int il = 0; il < layers; ++il) s.recurrent[il] = (il + 1) % 4 != 0;
  s.n_k_heads = nk;
  s.n_v_heads = nv;
  s.d_state = d_state;
  s.n_ctx = 262144;
  return s;
}

ModelShape Gemma3(int layers, int embd, int ff, int heads, int kv, int hd, int window, int vocab) {
  ModelShape s = Dense("gemma3", layers, embd, ff, heads, kv, hd, 1e6f, true, vocab);
  s.sliding_window = window;
  s.n_ctx = 32768;
  return s;
}

// Shapes of published models (hybrid-architectures.md §1.2; Qwen3 / Llama 3.2
// config.json values). vocab 0 = the tokenizer's size rounded up to 64.
const std::vector<Preset>& Presets() {
  static const std::vector<Preset> presets = {
      {"llama", "tiny", "4 layers, 128 hidden (tests)", Dense("llama", 4, 128, 384, 4, 2, 32, 10000.0f, false, 0)},
      {"llama", "1b", "Llama-3.2-1B shape", Dense("llama", 16, 2048, 8192, 32, 8, 64, 500000.0f, true, 128256)},
      {"qwen3", "tiny", "4 layers, 128 hidden (tests)", Dense("qwen3", 4, 128, 384, 4, 2, 32, 1e6f, true, 0)},
      {"qwen3", "0.6b", "Qwen3-0.6B shape", Dense("qwen3", 28, 1024, 3072, 16, 8, 128, 1e6f, true, 151936)},
      {"qwen3", "1.7b", "Qwen3-1.7B shape", Dense("qwen3", 28, 2048, 6144, 16, 8, 128, 1e6f, true, 151936)},
      {"qwen35", "tiny", "4 layers (3 GDN + 1 attn), 128 hidden, 2 k-heads / 4 v-heads (tests)",
       Hybrid(4, 128, 384, 4, 2, 64, 2, 4, 32, 0)},
      {"gemma3", "tiny", "6 layers (5 sliding, window 24 + 1 global), 128 hidden, 4 heads / 1 kv head (tests)",
       Gemma3(6, 128, 384, 4, 1, 64, 24, 0)},
      {"gemma3", "270m", "Gemma-3-270M shape (window 512)", Gemma3(18, 640, 2048, 4, 1, 256, 512, 262144)},
      {"qwen35", "0.8b", "Qwen3.5-0.8B shape", Hybrid(24, 1024, 3584, 8, 2, 256, 16, 16, 128, 248320)},
      {"qwen35", "2b", "Qwen3.5-2B shape", Hybrid(24, 2048, 6144, 8, 2, 256, 16, 16, 128, 248320)},
      {"qwen35", "4b", "Qwen3.5-4B shape", Hybrid(32, 2560, 9216, 16, 4, 256, 16, 32, 128, 248320)},
  };
  return presets;
}

// Counter-based generator: every (tensor, row) has its own stream, so the
// file is identical whatever the thread count.
class RowRng {
 public:
  explicit RowRng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
  // Approximately normal (sum of 4 uniforms, variance-corrected): fast and
  // bounded (|x| <= 3.46), which keeps random models free of outliers.
  float Normal() {
    const double s = Uniform() + Uniform() + Uniform() + Uniform() - 2.0;
    return static_cast<float>(s * 1.7320508075688772);
  }

 private:
  uint64_t state_;
};

uint64_t HashName(const std::string& name, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

void FillRow(const TensorSpec& t, const ModelShape& s, int64_t row, uint64_t seed, float* out) {
  using Init = TensorSpec::Init;
  RowRng rng(HashName(t.name, seed) + static_cast<uint64_t>(row) * 0x632be59bd9b4e019ull);
  const int64_t n = t.ne[0];
  switch (t.init) {
    case Init::kMatrix: {
      // std 1/sqrt(fan_in) keeps every projection's output RMS near its input's.
      const float scale = 1.0f / std::sqrt(static_cast<float>(n));
      for (int64_t i = 0; i < n; ++i) out[i] = rng.Normal() * scale;
      break;
    }
    case Init::kEmbedding:
      // Tied heads read logits off these rows: std 0.5 gives logits of a few
      // units, peaked enough that greedy generation does not collapse.
      for (int64_t i = 0; i < n; ++i) out[i] = rng.Normal() * 0.5f;
      break;
    case Init::kNormOnes:
    case Init::kZeroCentredNorm:
      for (int64_t i = 0; i < n; ++i) out[i] = 1.0f + 0.05f * rng.Normal();
      break;
    case Init::kSsmA:  // -exp(A_log), A ~ U(1, 16) as in the reference init
      for (int64_t i = 0; i < n; ++i) out[i] = -static_cast<float>(1.0 + 15.0 * rng.Uniform());
      break;
    case Init::kDtBias:  // softplus^-1(dt), dt log-uniform in [1e-3, 1e-1]
      for (int64_t i = 0; i < n; ++i) {
        const double dt = std::exp(std::log(1e-3) + rng.Uniform() * (std::log(1e-1) - std::log(1e-3)));
        out[i] = static_cast<float>(dt + std::log(-std::expm1(-dt)));
      }
      break;
    case Init::kConv:
      for (int64_t i = 0; i < n; ++i) out[i] = rng.Normal() * 0.5f;
      break;
  }
  (void)s;
}

}  // namespace

std::vector<std::string> RandomModelPresets() {
  std::vector<std::string> lines;
  for (const Preset& p : Presets()) lines.push_back(fmt::format("{}/{}: {}", p.arch, p.name, p.description));
  return lines;
}

void WriteRandomModel(const RandomModelOptions& options, const std::string& out_path) {
  const Preset* preset = nullptr;
  for (const Preset& p : Presets()) {
    if (options.arch == p.arch && options.preset == p.name) preset = &p;
  }
  if (preset == nullptr) {
    std::string known;
    for (const std::string& line : RandomModelPresets()) known += "\n  " + line;
    Fail("unknown preset '{}/{}'; known presets:{}", options.arch, options.preset, known);
  }
  if (!kernels::IsSupportedWeightType(options.matrix_type)) Fail("unsupported --quant type");
  ModelShape s = preset->shape;
  s.name = fmt::format("cairn-random-{}-{}", options.arch, options.preset);
  if (options.mtp) {
    if (s.arch != "qwen35") Fail("--mtp needs --arch qwen35");
    s.n_mtp = 1;
  }

  gguf::GgufWriter w;
  // The tokenizer decides the vocabulary size of "tiny" presets.
  const int n_tokens = CountHfTokenizerTokens(options.tokenizer_dir);
  if (s.n_vocab == 0) s.n_vocab = std::max(64, (n_tokens + 63) / 64 * 64);
  if (s.n_vocab < n_tokens) s.n_vocab = (n_tokens + 63) / 64 * 64;

  WriteShapeMetadata(s, LlamaFileType(options.matrix_type), &w);
  AddTokenizerMetadata(options.tokenizer_dir, s.n_vocab, &w);

  ThreadPool pool(options.threads > 0 ? options.threads : ThreadPool::DefaultThreadCount());
  const std::vector<TensorSpec> specs = ShapeTensors(s);
  int64_t total_rows = 0;
  for (const TensorSpec& t : specs) total_rows += t.ne.size() == 2 ? t.ne[1] : 1;
  Progress progress("generating " + s.name, total_rows);
  int64_t rows_done = 0;
  for (const TensorSpec& t : specs) {
    const DType type = ChooseTensorType(t.name, t.ne, t.matrix, options.matrix_type);
    const int64_t cols = t.ne[0];
    const int64_t rows = t.ne.size() == 2 ? t.ne[1] : 1;
    const size_t row_bytes = RowBytes(type, cols);
    std::vector<uint8_t> bytes(row_bytes * static_cast<size_t>(rows));
    std::vector<std::vector<float>> scratch(static_cast<size_t>(pool.num_threads()), std::vector<float>(cols));
    pool.ParallelFor(rows, 16, [&](int64_t begin, int64_t end, int thread) {
      float* row = scratch[thread].data();
      for (int64_t r = begin; r < end; ++r) {
        FillRow(t, s, r, options.seed, row);
        kernels::QuantizeRow(type, row, cols, bytes.data() + r * row_bytes);
      }
    }, 8);
    w.AddTensor(t.name, t.ne, type, bytes);
    rows_done += rows;
    progress.Update(rows_done);
  }
  progress.Finish();
  w.WriteFile(out_path);
}

}  // namespace cairn::model
