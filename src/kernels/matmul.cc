// MatMul driver: quantizes activations once per call, then splits weight rows
// across the thread pool and runs the per-target kernels (gemm_*-inl.h).
// Dispatch happens once per MatMul call (HWY_DYNAMIC_DISPATCH at the bottom).
//
// Loop structure per thread (rows [r0, r1) of the output features):
//   for each block of kRowBlock weight rows (kept hot in L1/L2)
//     for each tile of up to kMaxActs activation rows
//       for each group of kTileRows weight rows: kernel tile -> y[tile][rows]
// Tile shapes are per kernel (Q8_0/Q4_0 on x86: 2 x 4, and 1 x up to 8 for
// batches 1..16; K-quants: 1 x 8; others 1 x 4); activation tiles are
// balanced (width 12: 6 + 6). Batch 1 (decode) degenerates to one
// streaming pass over the weights, one row at a time. Small batches
// (speculative verification) load and unpack every weight block once per
// tile. Large batches (prefill) reuse each block of rows from cache for every
// tile, and each activation tile from L1 for every row. Products under
// kMinParallelMacs run on the calling thread (no fork-join). Each y[b][r] is
// produced by one kernel call whose operation sequence for (r, b) does not
// depend on the tile shape, the tile, the row block or the thread: the
// exactness contract of matmul.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/matmul.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <vector>

#include "kernels/gemm_float-inl.h"
#include "kernels/gemm_q8-inl.h"
// After gemm_q8-inl.h (reuses its RefKernel).
#include "kernels/gemm_kquant-inl.h"
#include "kernels/quant_act-inl.h"

#ifndef CAIRN_KERNELS_MATMUL_ONCE_
#define CAIRN_KERNELS_MATMUL_ONCE_
#include "core/error.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "kernels/quant_act.h"
namespace cairn::kernels {
// Weight rows whose data is reused from cache across all activation tiles.
inline constexpr int64_t kRowBlock = 16;
// Products smaller than this many multiply-accumulates (rows x cols x batch)
// run on the calling thread: 2^18 MACs take ~5-10 us on one core, about what
// handing half of it to a spinning worker saves, while a worker that has gone
// to sleep or lost its core (shared machine) costs 10 us to milliseconds.
// E.g. the 16-row beta/alpha projections of Gated DeltaNet run inline, a
// 1024 x 1024 decode matmul (2^20) is split.
inline constexpr int64_t kMinParallelMacs = int64_t{1} << 18;
}  // namespace cairn::kernels
#endif

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

// Kernels either provide a register tile of kTileRows weight rows x up to
// kMaxActs activation rows (Tile<R, NB>, out[i * NB + b]), or only
// Rows<NB> for one weight row and up to 4 activation rows (float, reference).
template <class Kernel>
constexpr int TileRowsOf() {
  if constexpr (requires { Kernel::kTileRows; }) return Kernel::kTileRows;
  return 1;
}

template <class Kernel>
constexpr int MaxActsOf() {
  if constexpr (requires { Kernel::kMaxActs; }) return Kernel::kMaxActs;
  return 4;
}

// Optional 1-row tile for verification widths (kWideActs activation rows);
// 0 if the kernel has none.
template <class Kernel>
constexpr int WideActsOf() {
  if constexpr (requires { Kernel::kWideActs; }) return Kernel::kWideActs;
  return 0;
}

template <class Kernel, int R, int NB, class Act>
HWY_INLINE void CallTile(const MatrixView& w, int64_t r, const Act* acts, float* out) {
  if constexpr (requires { Kernel::kTileRows; }) {
    Kernel::template Tile<R, NB>(w.Row(r), w.row_stride_bytes, w.cols, acts, out);
  } else {
    static_assert(R == 1);
    Kernel::template Rows<NB>(w.Row(r), w.cols, acts, out);
  }
}

// out[i * nb + b] for the R rows starting at r; nb in [1, kMax].
template <class Kernel, int R, int kMax, class Act>
HWY_INLINE void TileSwitch(const MatrixView& w, int64_t r, const Act* acts, int nb, float* out) {
  static_assert(kMax == 4 || kMax == 8);
  switch (nb) {
    case 1:
      return CallTile<Kernel, R, 1>(w, r, acts, out);
    case 2:
      return CallTile<Kernel, R, 2>(w, r, acts, out);
    case 3:
      return CallTile<Kernel, R, 3>(w, r, acts, out);
    case 4:
      return CallTile<Kernel, R, 4>(w, r, acts, out);
    default:
      break;
  }
  if constexpr (kMax == 8) {
    switch (nb) {
      case 5:
        return CallTile<Kernel, R, 5>(w, r, acts, out);
      case 6:
        return CallTile<Kernel, R, 6>(w, r, acts, out);
      case 7:
        return CallTile<Kernel, R, 7>(w, r, acts, out);
      default:
        return CallTile<Kernel, R, 8>(w, r, acts, out);
    }
  }
}

// Rows [r0, r1) with register tiles of kRows weight rows x kActs activation rows.
template <class Kernel, int kRows, int kActs, class Act>
void RunRowsTiled(const MatrixView& w, const Act* acts, int64_t batch, float* y, int64_t ldy, int64_t r0,
                  int64_t r1) {
  for (int64_t rb = r0; rb < r1; rb += kRowBlock) {
    const int64_t re = std::min(r1, rb + kRowBlock);
    // Balanced activation tiles (e.g. width 12: 6 + 6, not 8 + 4; width 9:
    // 5 + 4, not 8 + 1): small tiles re-read the row block for little work.
    const int64_t num_tiles = (batch + kActs - 1) / kActs;
    int64_t b = 0;
    for (int64_t t = 0; t < num_tiles; ++t) {
      const int nb = static_cast<int>(
          std::clamp<int64_t>((batch - b + (num_tiles - t) - 1) / (num_tiles - t), 1, kActs));
      for (int64_t r = rb; r < re;) {
        float out[kRows * kActs];
        // A full tile of kRows rows, else single rows (the block tail, and
        // decode: at width 1 two interleaved weight streams per thread measured
        // ~25% slower than one). Either way y[b][r] gets the same
        // per-(row, activation row) operations.
        const int rows = (nb > 1 && r + kRows <= re) ? kRows : 1;
        if (rows == kRows) {
          TileSwitch<Kernel, kRows, kActs>(w, r, acts + b, nb, out);
        } else {
          TileSwitch<Kernel, 1, kActs>(w, r, acts + b, nb, out);
        }
        for (int i = 0; i < rows; ++i) {
          for (int j = 0; j < nb; ++j) y[(b + j) * ldy + r + i] = out[i * nb + j];
        }
        r += rows;
      }
      b += nb;
    }
  }
}

template <class Kernel, class Act>
void RunRows(const MatrixView& w, const Act* acts, int64_t batch, float* y, int64_t ldy, int64_t r0,
             int64_t r1) {
  // Verification widths 2..16 (up to two wide tiles): 1 x nb tiles stream
  // each weight row as one sequential, prefetched stream per tile (widths 2
  // and 4 measured 20-30% faster than with 2 x nb tiles). Prefill keeps the
  // default tile (1 x 8 there measured no better than 2 x 4, within noise).
  constexpr int kWide = WideActsOf<Kernel>();
  if constexpr (kWide > 0) {
    if (batch > 1 && batch <= 2 * kWide) {
      return RunRowsTiled<Kernel, 1, kWide>(w, acts, batch, y, ldy, r0, r1);
    }
  }
  RunRowsTiled<Kernel, TileRowsOf<Kernel>(), MaxActsOf<Kernel>()>(w, acts, batch, y, ldy, r0, r1);
}

template <class Kernel, class Act>
void RunParallel(const MatrixView& w, const Act* acts, int64_t batch, float* y, int64_t ldy,
                 ThreadPool& pool) {
  // Small products: no fork-join (same kernel calls, so the same bits).
  if (pool.num_threads() == 1 || w.rows * w.cols * batch < kMinParallelMacs) {
    RunRows<Kernel>(w, acts, batch, y, ldy, 0, w.rows);
    return;
  }
  // A few chunks per thread balance uneven progress; chunks stay contiguous
  // so each thread streams its rows sequentially (prefetcher-friendly).
  pool.ParallelFor(
      w.rows, kRowBlock,
      [&](int64_t r0, int64_t r1, int) { RunRows<Kernel>(w, acts, batch, y, ldy, r0, r1); },
      /*chunks_per_thread=*/4);
}

template <class Kernel>
void RunQuantized(const MatrixView& w, const float* x, int64_t ldx, int64_t batch, float* y, int64_t ldy,
                  ThreadPool& pool) {
  const ActFormat format = ActFormatFor(w.type);
  const size_t row_bytes = ActRowBytes(format, w.cols);
  uint8_t* scratch = ActScratch(row_bytes * static_cast<size_t>(batch));
  auto quantize = [&](int64_t b0, int64_t b1, int) {
    for (int64_t b = b0; b < b1; ++b)
      QuantizeActivationRowTarget(format, x + b * ldx, w.cols, scratch + b * row_bytes);
  };
  if (batch >= 8 && batch * w.cols >= (int64_t{1} << 16)) {
    pool.ParallelFor(batch, 1, quantize);
  } else {
    quantize(0, batch, 0);
  }
  std::vector<ActRow> acts(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) acts[b] = ActRowAt(format, scratch + b * row_bytes, w.cols);
  RunParallel<Kernel>(w, acts.data(), batch, y, ldy, pool);
}

template <DType kType>
void RunFloat(const MatrixView& w, const float* x, int64_t ldx, int64_t batch, float* y, int64_t ldy,
              ThreadPool& pool) {
  std::vector<const float*> acts(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) acts[b] = x + b * ldx;
  RunParallel<FloatKernel<kType>>(w, acts.data(), batch, y, ldy, pool);
}

void MatMulTarget(const MatrixView& w, const float* x, int64_t ldx, int64_t batch, float* y, int64_t ldy,
                  ThreadPool& pool) {
  switch (w.type) {
    case DType::kF32:
      return RunFloat<DType::kF32>(w, x, ldx, batch, y, ldy, pool);
    case DType::kF16:
      return RunFloat<DType::kF16>(w, x, ldx, batch, y, ldy, pool);
    case DType::kBF16:
      return RunFloat<DType::kBF16>(w, x, ldx, batch, y, ldy, pool);
    case DType::kQ8_0:
      return RunQuantized<Q8_0Kernel>(w, x, ldx, batch, y, ldy, pool);
    case DType::kQ4_0:
      return RunQuantized<Q4_0Kernel>(w, x, ldx, batch, y, ldy, pool);
    case DType::kQ4_K:
      return RunQuantized<Q4KKernel>(w, x, ldx, batch, y, ldy, pool);
    case DType::kQ5_K:
      return RunQuantized<Q5KKernel>(w, x, ldx, batch, y, ldy, pool);
    case DType::kQ6_K:
      return RunQuantized<Q6KKernel>(w, x, ldx, batch, y, ldy, pool);
    default:
      CAIRN_CHECK(false && "MatMul: unsupported weight type");
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(MatMulTarget);

void MatMul(const MatrixView& w, const float* x, int64_t ldx, int64_t batch, float* y, int64_t ldy,
            ThreadPool& pool) {
  CAIRN_CHECK(IsSupportedWeightType(w.type));
  CAIRN_CHECK(w.cols % GetDTypeInfo(w.type).block_elems == 0);
  CAIRN_CHECK(ldx >= w.cols && ldy >= w.rows && batch >= 0);
  if (batch == 0 || w.rows == 0) return;
  HWY_DYNAMIC_DISPATCH(MatMulTarget)(w, x, ldx, batch, y, ldy, pool);
}

void GetRow(const MatrixView& w, int64_t r, float* out) {
  CAIRN_CHECK(r >= 0 && r < w.rows);
  DequantizeRow(w.type, w.Row(r), w.cols, out);
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
