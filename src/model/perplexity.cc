#include "model/perplexity.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"

namespace cairn::model {
namespace {

// -log softmax(logits)[target]: max-shifted, sum of exponentials in double.
double NegLogProb(const float* logits, int64_t n_vocab, int32_t target) {
  float max_logit = logits[0];
  for (int64_t j = 1; j < n_vocab; ++j) max_logit = std::max(max_logit, logits[j]);
  double sum = 0;
  for (int64_t j = 0; j < n_vocab; ++j) sum += std::exp(static_cast<double>(logits[j] - max_logit));
  return -(static_cast<double>(logits[target] - max_logit) - std::log(sum));
}

}  // namespace

PerplexityResult Perplexity(const Model& model, std::span<const int32_t> tokens, int ctx, int max_chunks,
                            int32_t bos, DType kv_dtype, bool k_q8, ThreadPool& pool,
                            const std::function<void(int, double)>& on_chunk) {
  if (ctx < 4) Fail("perplexity: ctx {} is too small", ctx);
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n < 2 * static_cast<int64_t>(ctx)) {
    Fail("perplexity: the text has {} tokens; ctx {} needs at least {}", n, ctx, 2 * ctx);
  }
  const int n_chunk_max = static_cast<int>(n / ctx);
  const int n_chunk = max_chunks < 0 ? n_chunk_max : std::min(max_chunks, n_chunk_max);
  const int first = ctx / 2;
  const int64_t V = model.n_vocab();
  PerplexityResult r;
  double nll = 0, nll2 = 0;
  std::vector<int32_t> chunk(static_cast<size_t>(ctx));
  for (int i = 0; i < n_chunk; ++i) {
    std::copy(tokens.begin() + static_cast<int64_t>(i) * ctx, tokens.begin() + static_cast<int64_t>(i + 1) * ctx,
              chunk.begin());
    if (bos >= 0) chunk[0] = bos;
    auto state = model.NewState(kv_dtype, k_q8);
    ForwardRequest req;
    req.tokens = chunk;
    req.all_logits = true;
    ForwardResult res;
    model.Forward(*state, req, &res, pool);
    for (int p = first; p < ctx - 1; ++p) {
      const double v = NegLogProb(res.logits.data() + static_cast<int64_t>(p) * V, V, chunk[p + 1]);
      nll += v;
      nll2 += v * v;
      ++r.count;
    }
    r.chunks = i + 1;
    if (on_chunk) on_chunk(i, std::exp(nll / static_cast<double>(r.count)));
  }
  const double mean = nll / static_cast<double>(r.count);
  r.ppl = std::exp(mean);
  const double var = nll2 / static_cast<double>(r.count) - mean * mean;
  r.ppl_stderr = r.count > 1 && var > 0 ? r.ppl * std::sqrt(var / static_cast<double>(r.count - 1)) : 0;
  return r;
}

}  // namespace cairn::model
