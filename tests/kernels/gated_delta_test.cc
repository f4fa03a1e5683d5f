#include "kernels/gated_delta.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "kernels/norm.h"
#include "kernels/ref/gated_delta_ref.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

// Random GDN inputs with realistic ranges: q, k L2-normalised (as the model
// does), v ~ U(-1, 1), gates from GatedDeltaGates with A_log ~ U(-2, 1.5),
// a ~ N(0, 1.5), dt_bias ~ U(-1, 1) (g in about [-30, 0], mostly [-3, 0]),
// beta = sigmoid(N(0, 2)).
struct Inputs {
  Inputs(const GatedDeltaShape& sh, int64_t n, uint32_t seed) : n_tokens(n) {
    const int64_t qk = static_cast<int64_t>(sh.n_k_heads) * sh.d_k;
    q = test::RandomVector(n * qk, -1.0f, 1.0f, seed);
    k = test::RandomVector(n * qk, -1.0f, 1.0f, seed + 1);
    v = test::RandomVector(n * sh.n_v_heads * sh.d_v, -1.0f, 1.0f, seed + 2);
    L2NormHeads(q.data(), n, sh.n_k_heads, sh.d_k, qk, sh.d_k, 1e-6f);
    L2NormHeads(k.data(), n, sh.n_k_heads, sh.d_k, qk, sh.d_k, 1e-6f);
    std::mt19937 rng(seed + 3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uni(0.0f, 1.0f);
    std::vector<float> a(n * sh.n_v_heads), b(n * sh.n_v_heads), a_log(sh.n_v_heads), dt_bias(sh.n_v_heads);
    for (float& x : a) x = 1.5f * normal(rng);
    for (float& x : b) x = 2.0f * normal(rng);
    for (float& x : a_log) x = -2.0f + 3.5f * uni(rng);
    for (float& x : dt_bias) x = -1.0f + 2.0f * uni(rng);
    g.resize(a.size());
    beta.resize(a.size());
    GatedDeltaGates(a.data(), b.data(), a_log.data(), dt_bias.data(), n, sh.n_v_heads, g.data(), beta.data());
    in.q = q.data();
    in.q_stride = qk;
    in.k = k.data();
    in.k_stride = qk;
    in.v = v.data();
    in.v_stride = static_cast<int64_t>(sh.n_v_heads) * sh.d_v;
    in.g = g.data();
    in.beta = beta.data();
  }
  // Inputs of tokens [t, ...).
  GatedDeltaInputs From(int64_t t, const GatedDeltaShape& sh) const {
    GatedDeltaInputs r = in;
    r.q += t * in.q_stride;
    r.k += t * in.k_stride;
    r.v += t * in.v_stride;
    r.g += t * sh.n_v_heads;
    r.beta += t * sh.n_v_heads;
    return r;
  }
  int64_t n_tokens;
  std::vector<float> q, k, v, g, beta;
  GatedDeltaInputs in;
};

GatedDeltaShape Shape(int hk, int hv, int dk, int dv) {
  GatedDeltaShape sh;
  sh.n_k_heads = hk;
  sh.n_v_heads = hv;
  sh.d_k = dk;
  sh.d_v = dv;
  sh.q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  return sh;
}

float MaxAbs(const std::vector<float>& x) {
  float m = 0;
  for (float v : x) m = std::max(m, std::fabs(v));
  return m;
}

// max |a - b| / max |b|
float RelDiff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m / std::max(MaxAbs(b), 1e-30f);
}

TEST(GatedDeltaTest, GatesMatchReference) {
  const GatedDeltaShape sh = Shape(2, 4, 8, 8);
  Inputs x(sh, 5, 1);
  std::vector<float> a(20), b(20), al = {0.5f, -1.0f, 1.0f, 0.0f}, dt = {0.1f, -0.2f, 0.3f, 0.0f};
  for (int i = 0; i < 20; ++i) { a[i] = -25.0f + 2.6f * i; b[i] = -8.0f + 0.8f * i; }
  std::vector<float> g(20), be(20), g_ref(20), be_ref(20);
  ref::GatedDeltaGates(a.data(), b.data(), al.data(), dt.data(), 5, 4, g_ref.data(), be_ref.data());
  test::ForEachTarget([&] {
    GatedDeltaGates(a.data(), b.data(), al.data(), dt.data(), 5, 4, g.data(), be.data());
    for (int i = 0; i < 20; ++i) {
      EXPECT_NEAR(g[i], g_ref[i], 1e-6f * std::fabs(g_ref[i]) + 1e-30f);   // softplus 4 ulp + 1 mul
      EXPECT_NEAR(be[i], be_ref[i], 1e-6f * be_ref[i]);
      EXPECT_LE(g[i], 0.0f);
    }
  });
}

// SIMD recurrence vs the literal scalar recurrence. Both F32; the SIMD one
// uses FMAs (one rounding less per multiply-add), so values differ by
// rounding only; the recurrence is contractive (alpha <= 1, |beta k k^T| < 1),
// so errors do not grow with length. Bound: max|dO| / max|O| <= 2e-6 and the
// same for the state, over 300 tokens.
TEST(GatedDeltaTest, RecurrentMatchesReference) {
  struct Case { int hk, hv, dk, dv; int64_t n; };
  for (const Case& c : {Case{2, 2, 128, 128, 40}, Case{1, 2, 32, 40, 300}, Case{2, 6, 16, 12, 17}}) {
    const GatedDeltaShape sh = Shape(c.hk, c.hv, c.dk, c.dv);
    Inputs x(sh, c.n, 10);
    const std::vector<float> s0 = test::RandomVector(sh.StateFloats(), -0.5f, 0.5f, 11);
    std::vector<float> want(c.n * c.hv * c.dv), want_state = s0;
    ref::GatedDeltaRecurrent(sh, x.in, c.n, want_state.data(), want.data(), c.hv * c.dv);
    test::ForEachTarget([&] {
      ThreadPool pool(2);
      std::vector<float> got(want.size()), state = s0;
      GatedDeltaRecurrent(sh, x.in, c.n, state.data(), got.data(), c.hv * c.dv, pool);
      EXPECT_LE(RelDiff(got, want), 2e-6f) << c.dv;
      EXPECT_LE(RelDiff(state, want_state), 2e-6f) << c.dv;
    });
  }
}

// Exactness: one call == any split of the token run == token by token, for
// any thread count, bit for bit (outputs and state). Rollback: the trace after
// token j equals the state from running only the first j tokens.
TEST(GatedDeltaTest, RecurrentBitExactAcrossSplitsAndRollback) {
  const GatedDeltaShape sh = Shape(2, 4, 64, 64);
  const int64_t n = 37;
  Inputs x(sh, n, 20);
  const std::vector<float> s0 = test::RandomVector(sh.StateFloats(), -0.5f, 0.5f, 21);
  const int64_t ostride = sh.n_v_heads * sh.d_v;
  test::ForEachTarget([&] {
    ThreadPool pool1(1), pool2(2);
    std::vector<float> whole(n * ostride), s_whole = s0;
    std::vector<float> trace(n * sh.StateFloats());
    GatedDeltaRecurrent(sh, x.in, n, s_whole.data(), whole.data(), ostride, pool1, trace.data());
    std::vector<float> split(n * ostride), s_split = s0;
    std::mt19937 rng(22);
    for (int64_t t = 0; t < n;) {
      const int64_t len = std::min<int64_t>(1 + rng() % 6, n - t);
      GatedDeltaRecurrent(sh, x.From(t, sh), len, s_split.data(), split.data() + t * ostride, ostride, pool2);
      t += len;
    }
    EXPECT_TRUE(test::BitEqual(whole.data(), split.data(), whole.size()));
    EXPECT_TRUE(test::BitEqual(s_whole.data(), s_split.data(), s_whole.size()));
    EXPECT_TRUE(test::BitEqual(trace.data() + (n - 1) * sh.StateFloats(), s_whole.data(), s_whole.size()));
    for (int64_t j : {1, 5, 20}) {   // accept a prefix of j tokens
      std::vector<float> s = s0, o(j * ostride);
      GatedDeltaRecurrent(sh, x.in, j, s.data(), o.data(), ostride, pool2);
      EXPECT_TRUE(test::BitEqual(trace.data() + (j - 1) * sh.StateFloats(), s.data(), s.size())) << j;
    }
  });
}

// Chunked (WY) vs recurrent, nonzero initial state, lengths around the chunk
// size, chunk alignment offsets, GQA ratio 2. Norm: max|dO| / max|O| and
// max|dS| / max|S| <= 1e-5 (hybrid-architectures.md §7.1; observed ~1e-6).
TEST(GatedDeltaTest, ChunkedMatchesRecurrent) {
  const GatedDeltaShape sh = Shape(1, 2, 128, 128);
  const std::vector<int64_t> lengths = test::Sanitized() ? std::vector<int64_t>{1, 7, 65}
                                                         : std::vector<int64_t>{1, 7, 64, 65, 300};
  for (int64_t n : lengths) {
    for (int64_t pos0 : {int64_t{0}, int64_t{50}}) {
      Inputs x(sh, n, 30 + static_cast<uint32_t>(n));
      const std::vector<float> s0 = test::RandomVector(sh.StateFloats(), -0.3f, 0.3f, 31);
      const int64_t ostride = sh.n_v_heads * sh.d_v;
      test::ForEachTarget([&] {
        ThreadPool pool(2);
        std::vector<float> rec(n * ostride), chunk(n * ostride), s_rec = s0, s_chunk = s0;
        GatedDeltaRecurrent(sh, x.in, n, s_rec.data(), rec.data(), ostride, pool);
        GatedDeltaChunked(sh, x.in, n, pos0, s_chunk.data(), chunk.data(), ostride, pool);
        EXPECT_LE(RelDiff(chunk, rec), 1e-5f) << n << " " << pos0;
        EXPECT_LE(RelDiff(s_chunk, s_rec), 1e-5f) << n << " " << pos0;
      });
    }
  }
}

// Chunked form: splitting the run at absolute chunk boundaries is bit-exact.
TEST(GatedDeltaTest, ChunkedBitExactAtChunkBoundaries) {
  const GatedDeltaShape sh = Shape(2, 2, 32, 32);
  const int64_t n = 150, pos0 = 10;
  Inputs x(sh, n, 40);
  const int64_t ostride = sh.n_v_heads * sh.d_v;
  ThreadPool pool(2);
  std::vector<float> whole(n * ostride), parts(n * ostride), s1(sh.StateFloats(), 0.0f), s2 = s1;
  GatedDeltaChunked(sh, x.in, n, pos0, s1.data(), whole.data(), ostride, pool);
  // Splits at absolute positions 64 and 192 (t = 54, 182 -> only 54 is inside).
  GatedDeltaChunked(sh, x.in, 54, pos0, s2.data(), parts.data(), ostride, pool);
  GatedDeltaChunked(sh, x.From(54, sh), n - 54, pos0 + 54, s2.data(), parts.data() + 54 * ostride, ostride, pool);
  EXPECT_TRUE(test::BitEqual(whole.data(), parts.data(), whole.size()));
  EXPECT_TRUE(test::BitEqual(s1.data(), s2.data(), s1.size()));
}

}  // namespace
}  // namespace cairn::kernels
