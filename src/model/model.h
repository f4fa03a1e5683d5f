// A loaded model: config, weights bound to the mapped GGUF file, tokenizer
// metadata, and the forward pass over a run of tokens.
//
// Forward() appends `tokens` to a SequenceState at position state.n_tokens().
// It processes the run in chunks of at most `chunk_tokens` (bounded scratch
// memory, cancellable between chunks). Every operation's arithmetic for a
// token is independent of the chunking (see kernels/matmul.h and
// kernels/attention.h), so one-shot prefill, chunked prefill and
// token-by-token decode produce bit-identical logits.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/kv_block.h"
#include "core/thread_pool.h"
#include "model/config.h"
#include "model/state.h"
#include "model/weights.h"

namespace cairn::gguf {
class GgufFile;
}

namespace cairn::model {

// Recurrence inputs kept by a speculative verification pass so that the state
// can be rolled back to any accepted prefix without re-reading weights.
struct VerifyCapture;

struct ForwardRequest {
  std::span<const int32_t> tokens;      // appended at state.n_tokens()
  bool all_logits = false;              // logits for every token (else only the last)
  bool want_hidden = false;             // final-norm hidden state of each logits row
  // Final-norm hidden state of EVERY token ([tokens][n_embd] in
  // ForwardResult::hidden), whatever all_logits says: an MTP drafter needs the
  // prompt's hidden rows but not its logits (the LM head is the costly part).
  bool all_hidden = false;
  // Absolute positions p (state.n_tokens() < p <= end) at which to snapshot the
  // recurrent state (state after p tokens); delivered through on_checkpoint.
  std::vector<int64_t> checkpoint_positions;
  std::function<void(RecurrentSnapshotRef)> on_checkpoint;
  // Called after each chunk with (tokens done, total); returning false cancels.
  // State stays consistent: it then holds exactly the tokens processed so far.
  std::function<bool(int64_t done, int64_t total)> progress;
  int64_t chunk_tokens = 256;
  // > 0: logits only for token ids [0, LogitsVocab()) (logits_vocab rounded
  // up to a multiple of 16, at most n_vocab); the rest of each row is left
  // unset. A drafter's cheaper LM head (draft_model_drafter.h).
  int64_t logits_vocab = 0;
  VerifyCapture* verify = nullptr;      // speculative verification (see RollbackVerify)
  // Diagnostics and parity tests: called after each trunk layer of each chunk
  // with the residual stream [n][n_embd] of that chunk's tokens (positions
  // p0 .. p0 + n - 1). Not called for MTP layers.
  std::function<void(int layer, int64_t p0, int64_t n, const float* residual)> on_layer;
};

struct ForwardResult {
  int64_t n_processed = 0;              // tokens appended (== tokens.size() unless cancelled)
  bool cancelled = false;
  int64_t n_rows = 0;                   // logits rows: tokens.size() or 1
  AlignedBuffer<float> logits;          // [n_rows][n_vocab]
  AlignedBuffer<float> hidden;          // [n_rows][n_embd] when want_hidden
};

class Model {
 public:
  struct LoadOptions {
    bool verbose = false;  // progress on a terminal
    // Convert the matrices that have a faster row-group kernel on this CPU
    // (BindWeights; same results). CAIRN_ROW_GROUPS=0 in the environment
    // turns it off (A/B timing).
    bool row_groups = true;
    // Re-encode matrices wider than this type (BindOptions::narrow_to): for
    // draft models only, since it changes the model's numbers.
    std::optional<DType> narrow_to;
  };
  // Maps and validates the file; throws cairn::Error naming the bad key/tensor.
  static std::unique_ptr<Model> Load(const std::string& path, const LoadOptions& options);
  static std::unique_ptr<Model> Load(const std::string& path) { return Load(path, LoadOptions{}); }
  ~Model();

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  const gguf::GgufFile& file() const { return *file_; }
  int n_vocab() const { return config_.n_vocab; }
  bool has_mtp() const { return !weights_.mtp.empty(); }

  std::unique_ptr<SequenceState> NewState(DType kv_dtype = DType::kF16, bool k_q8 = false) const {
    return std::make_unique<SequenceState>(config_, kv_dtype, 64, k_q8);
  }

  void Forward(SequenceState& state, const ForwardRequest& request, ForwardResult* result,
               ThreadPool& pool) const;

  // Restores a cached prefix of n_tokens: KV `blocks` covering [0, n_tokens)
  // and the recurrent state from `recurrent`, taken at n_tokens or, for a
  // reply-tail snapshot (model/reply_tail.h), at most its replay log's length
  // before it (the log is then replayed). Dense models pass null.
  void RestorePrefix(SequenceState& state, const KvBlockTable& blocks, int64_t n_tokens,
                     const RecurrentSnapshotRef& recurrent, ThreadPool& pool) const;

  // After a verification Forward (request.verify set) of n tokens, keeps only
  // the first `accepted` (1..n) of them: KV length and recurrent state become
  // exactly what a pass over those tokens alone would have produced.
  void RollbackVerify(SequenceState& state, VerifyCapture& capture, int64_t accepted, ThreadPool& pool) const;

 private:
  Model() = default;
  std::unique_ptr<gguf::GgufFile> file_;
  ModelConfig config_;
  ModelWeights weights_;
  std::vector<AlignedBuffer<float>> f32_arena_;
  std::vector<AlignedBuffer<uint8_t>> matrix_arena_;  // matrices converted at load (row groups, narrowed)
};

}  // namespace cairn::model
