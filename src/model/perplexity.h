// Perplexity by llama-perplexity's protocol (llama.cpp 3f545bec, default
// mode; see src/cli/cmd_perplexity.cc for the steps). Shared by
// `cairn perplexity` and the real-model tests.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "model/model.h"

namespace cairn::model {

struct PerplexityResult {
  double ppl = 0;         // exp(mean nll)
  double ppl_stderr = 0;  // llama-perplexity's error estimate: ppl * stderr(nll)
  int chunks = 0;
  int64_t count = 0;      // scored tokens
};

// `tokens`: the whole text, tokenized with BOS already prepended when add_bos
// (Tokenizer::Encode(text, false, true)). bos >= 0 replaces token 0 of every
// chunk (pass -1 when the vocabulary does not add BOS). Needs >= 2 * ctx
// tokens. on_chunk(i, running_ppl) after each chunk.
PerplexityResult Perplexity(const Model& model, std::span<const int32_t> tokens, int ctx, int max_chunks,
                            int32_t bos, DType kv_dtype, bool k_q8, ThreadPool& pool,
                            const std::function<void(int chunk, double running_ppl)>& on_chunk = {});

}  // namespace cairn::model
