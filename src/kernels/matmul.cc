// MatMul driver: quantizes activations once per call (once per activation
// format for MatMulSameInput), then splits the weight rows of every output
// across the thread pool in one parallel section and runs the per-target
// kernels (gemm_*-inl.h). Dispatch happens once per call
// (HWY_DYNAMIC_DISPATCH at the bottom).
//
// Loop structure per thread (rows [r0, r1) of the output features):
//   for each block of kRowBlock weight rows (kept hot in L1/L2)
//     for each tile of up to kMaxActs activation rows
//       for each group of kTileRows weight rows: kernel tile -> y[tile][rows]
// Tile shapes are per kernel (32-element block types on x86: 1 x up to 8, 16 or 8 blocks
// transposed per row; K-quants incl. Q2_K/Q3_K/IQ4_XS: 1 x 8; others 1 x 4); activation tiles are
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
#include <type_traits>
#include <vector>

#include "kernels/gemm_float-inl.h"
#include "kernels/gemm_q8-inl.h"
// After gemm_q8-inl.h (reuses its RefKernel).
#include "kernels/gemm_kquant-inl.h"
// After gemm_kquant-inl.h (AVX2 Q4_K/Q5_K/Q6_K: its kernels plus prefill with activation rows in lanes).
#include "kernels/gemm_kquant_avx2_prefill-inl.h"
// After gemm_kquant-inl.h (AVX-512 Q4_K/Q5_K/Q6_K tiles; decode and scale unpacking from there).
#include "kernels/gemm_kquant_avx512-inl.h"
// After gemm_kquant-inl.h (reuses its tiles and streaming loop).
#include "kernels/gemm_kquant2-inl.h"
// Arm (NEON and SVE targets): the K-quant kernels of both files above.
#include "kernels/gemm_kquant_neon-inl.h"
// Row-group layout (AVX3_DL: Q4_K, Q5_K, Q6_K, Q8_0, Q5_0, Q4_0, every width).
#include "kernels/gemm_row_groups-inl.h"
#include "kernels/quant_act-inl.h"

#ifndef CAIRN_KERNELS_MATMUL_ONCE_
#define CAIRN_KERNELS_MATMUL_ONCE_
#include "core/aligned_buffer.h"
#include "core/error.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "kernels/quant_act.h"
#include "kernels/row_groups.h"
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

// Whether the kernel has a prepared form for prefill (RunRowsPrepared).
template <class Kernel>
constexpr bool IsPreparable() {
  if constexpr (requires { Kernel::kPreparable; }) return Kernel::kPreparable;
  return false;
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

// call(std::integral_constant<int, nb>{}) for nb in [1, kMax] (kMax 4 or 8):
// kernels take the activation count as a template argument.
template <int kMax, class Call>
HWY_INLINE void SwitchActs(int nb, const Call& call) {
  static_assert(kMax == 4 || kMax == 8);
  switch (nb) {
    case 1:
      return call(std::integral_constant<int, 1>{});
    case 2:
      return call(std::integral_constant<int, 2>{});
    case 3:
      return call(std::integral_constant<int, 3>{});
    case 4:
      return call(std::integral_constant<int, 4>{});
    default:
      break;
  }
  if constexpr (kMax == 8) {
    switch (nb) {
      case 5:
        return call(std::integral_constant<int, 5>{});
      case 6:
        return call(std::integral_constant<int, 6>{});
      case 7:
        return call(std::integral_constant<int, 7>{});
      default:
        return call(std::integral_constant<int, 8>{});
    }
  }
}

// out[i * nb + b] for the R rows starting at r; nb in [1, kMax].
template <class Kernel, int R, int kMax, class Act>
HWY_INLINE void TileSwitch(const MatrixView& w, int64_t r, const Act* acts, int nb, float* out) {
  SwitchActs<kMax>(nb, [&](auto n) { CallTile<Kernel, R, decltype(n)::value>(w, r, acts, out); });
}

// Activation tiles of at most kActs rows over `batch` rows, balanced (e.g.
// width 12: 6 + 6, not 8 + 4; width 9: 5 + 4, not 8 + 1: small tiles re-read
// the row block for little work): call(b, nb) per tile.
template <int kActs, class Call>
HWY_INLINE void ForEachActTile(int64_t batch, const Call& call) {
  const int64_t num_tiles = (batch + kActs - 1) / kActs;
  int64_t b = 0;
  for (int64_t t = 0; t < num_tiles; ++t) {
    const int nb =
        static_cast<int>(std::clamp<int64_t>((batch - b + (num_tiles - t) - 1) / (num_tiles - t), 1, kActs));
    call(b, nb);
    b += nb;
  }
}

// Rows [r0, r1) with register tiles of kRows weight rows x kActs activation rows.
template <class Kernel, int kRows, int kActs, class Act>
void RunRowsTiled(const MatrixView& w, const Act* acts, int64_t batch, float* y, int64_t ldy, int64_t r0,
                  int64_t r1) {
  for (int64_t rb = r0; rb < r1; rb += kRowBlock) {
    const int64_t re = std::min(r1, rb + kRowBlock);
    ForEachActTile<kActs>(batch, [&](int64_t b, int nb) {
      for (int64_t r = rb; r < re;) {
        float out[kRows * kActs] = {};
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
    });
  }
}

// Per-thread scratch for prepared weight rows (64-aligned, reused).
uint8_t* PreparedScratch(size_t bytes) {
  thread_local AlignedBuffer<uint8_t> scratch;
  if (scratch.size() < bytes) scratch.Resize(bytes);
  return scratch.data();
}

// Kernels with a prepared form (Q4_K/Q5_K/Q6_K on x86; Q8_0, Q4_0, Q5_0,
// IQ4_NL on AVX3_DL), widths of two tiles or more: each group of Kernel::kPreparedRows weight rows is unpacked once
// (Kernel::Prepare) into per-thread scratch, and every activation tile reads
// it from there, with the tiles' activation scales arranged once per call
// (Kernel::PrepareActs). A tile walks the columns in chunks of
// Kernel::kPreparedChunk blocks, all the group's rows per chunk, so the
// rows' chunks and the tile's activations stay in L1 together; each (row,
// activation row) keeps its accumulators across chunks and sees its blocks in
// order, so the operations are Tile's and the bits the same.
template <class Kernel>
void RunRowsPrepared(const MatrixView& w, const ActRow* acts, int64_t batch, float* y, int64_t ldy, int64_t r0,
                     int64_t r1) {
  constexpr int kActs = Kernel::kMaxActs;
  constexpr int kRows = Kernel::kPreparedRows;
  const int64_t blocks = Kernel::Blocks(w.cols);
  const size_t row_bytes = Kernel::PreparedRowBytes(w.cols), act_bytes = Kernel::PreparedActBytes(w.cols);
  const int64_t num_tiles = (batch + kActs - 1) / kActs;
  uint8_t* prepared = PreparedScratch(kRows * row_bytes + static_cast<size_t>(num_tiles) * act_bytes);
  uint8_t* prepared_acts = prepared + kRows * row_bytes;
  int64_t tile = 0;
  ForEachActTile<kActs>(batch, [&](int64_t b, int nb) {
    Kernel::PrepareActs(acts + b, nb, w.cols, prepared_acts + tile++ * act_bytes);
  });
  for (int64_t rb = r0; rb < r1; rb += kRows) {
    const int rows = static_cast<int>(std::min<int64_t>(r1 - rb, kRows));
    for (int i = 0; i < rows; ++i) Kernel::Prepare(w.Row(rb + i), w.cols, prepared + i * row_bytes);
    tile = 0;
    ForEachActTile<kActs>(batch, [&](int64_t b, int nb) {
      const uint8_t* tile_acts = prepared_acts + tile++ * act_bytes;
      SwitchActs<kActs>(nb, [&](auto n) {
        constexpr int NB = decltype(n)::value;
        typename Kernel::Accumulators acc[kRows];
        for (int64_t i0 = 0; i0 < blocks; i0 += Kernel::kPreparedChunk) {
          const int64_t i1 = std::min(blocks, i0 + Kernel::kPreparedChunk);
          if constexpr (requires { &Kernel::template PreparedRowsTile<1, NB>; }) {
            SwitchActs<kRows>(rows, [&](auto r) {
              Kernel::template PreparedRowsTile<decltype(r)::value, NB>(prepared, row_bytes, tile_acts, i0, i1, w.cols,
                                                                        acts + b, acc);
            });
          } else {
            for (int i = 0; i < rows; ++i) {
              Kernel::template PreparedTile<NB>(prepared + i * row_bytes, tile_acts, i0, i1, w.cols, acts + b,
                                                acc[i]);
            }
          }
        }
        for (int i = 0; i < rows; ++i) {
          float out[kActs] = {};
          Kernel::template StoreTile<NB>(acc[i], out);
          for (int j = 0; j < NB; ++j) y[(b + j) * ldy + rb + i] = out[j];
        }
      });
    });
  }
}

template <class Kernel, class Act>
void RunRows(const MatrixView& w, const Act* acts, int64_t batch, float* y, int64_t ldy, int64_t r0,
             int64_t r1) {
  // Verification widths 2..16 (up to two wide tiles): 1 x nb tiles stream
  // each weight row as one sequential, prefetched stream per tile (widths 2
  // and 4 measured 20-30% faster than with 2 x nb tiles). Prefill keeps the
  // default tile (1 x 8 there measured no better than 2 x 4, within noise).
  // Decode (width 1) on kernels with a row-streaming entry (K-quants): one
  // call for the whole row range.
  if constexpr (requires { &Kernel::StreamRows; }) {
    if (batch == 1) return Kernel::StreamRows(w.Row(r0), w.row_stride_bytes, w.cols, acts[0], r1 - r0, y + r0);
  }
  if constexpr (IsPreparable<Kernel>()) {
    if (batch > Kernel::kMaxActs) return RunRowsPrepared<Kernel>(w, acts, batch, y, ldy, r0, r1);
  }
  constexpr int kWide = WideActsOf<Kernel>();
  if constexpr (kWide > 0) {
    if (batch > 1 && batch <= 2 * kWide) {
      return RunRowsTiled<Kernel, 1, kWide>(w, acts, batch, y, ldy, r0, r1);
    }
  }
  RunRowsTiled<Kernel, TileRowsOf<Kernel>(), MaxActsOf<Kernel>()>(w, acts, batch, y, ldy, r0, r1);
}

// Rows [r0, r1) of w with the kernel for its type: qacts is the input
// quantized for w's activation format (quantized types), facts its F32 rows
// (float types).
void RunRowsOfType(const MatrixView& w, const ActRow* qacts, const float* const* facts, int64_t batch, float* y,
                   int64_t ldy, int64_t r0, int64_t r1) {
  switch (w.type) {
    case DType::kF32:
      return RunRows<FloatKernel<DType::kF32>>(w, facts, batch, y, ldy, r0, r1);
    case DType::kF16:
      return RunRows<FloatKernel<DType::kF16>>(w, facts, batch, y, ldy, r0, r1);
    case DType::kBF16:
      return RunRows<FloatKernel<DType::kBF16>>(w, facts, batch, y, ldy, r0, r1);
    case DType::kQ8_0:
      return RunRows<Q8_0Kernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kQ4_0:
      return RunRows<Q4_0Kernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kQ4_1:
      return RunRows<Q4_1Kernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kQ5_0:
      return RunRows<Q5_0Kernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kQ5_1:
      return RunRows<Q5_1Kernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kIQ4_NL:
      return RunRows<IQ4NLKernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kQ4_K:
      return RunRows<Q4KKernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kQ5_K:
      return RunRows<Q5KKernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kQ6_K:
      return RunRows<Q6KKernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kQ2_K:
      return RunRows<Q2KKernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kQ3_K:
      return RunRows<Q3KKernel>(w, qacts, batch, y, ldy, r0, r1);
    case DType::kIQ4_XS:
      return RunRows<IQ4XSKernel>(w, qacts, batch, y, ldy, r0, r1);
    default:
      CAIRN_CHECK(false && "MatMul: unsupported weight type");
  }
}

template <class Kernel>
constexpr bool IsSimdKernel() {
  if constexpr (requires { Kernel::kIsReference; }) return !Kernel::kIsReference;
  return true;
}

// MatMulKernelIsSimd on this target.
bool KernelIsSimdTarget(DType type) {
  switch (type) {
    case DType::kQ8_0: return IsSimdKernel<Q8_0Kernel>();
    case DType::kQ4_0: return IsSimdKernel<Q4_0Kernel>();
    case DType::kQ4_1: return IsSimdKernel<Q4_1Kernel>();
    case DType::kQ5_0: return IsSimdKernel<Q5_0Kernel>();
    case DType::kQ5_1: return IsSimdKernel<Q5_1Kernel>();
    case DType::kIQ4_NL: return IsSimdKernel<IQ4NLKernel>();
    case DType::kQ4_K: return IsSimdKernel<Q4KKernel>();
    case DType::kQ5_K: return IsSimdKernel<Q5KKernel>();
    case DType::kQ6_K: return IsSimdKernel<Q6KKernel>();
    case DType::kQ2_K: return IsSimdKernel<Q2KKernel>();
    case DType::kQ3_K: return IsSimdKernel<Q3KKernel>();
    case DType::kIQ4_XS: return IsSimdKernel<IQ4XSKernel>();
    default: return false;
  }
}

bool IsFloatWeight(DType type) { return type == DType::kF32 || type == DType::kF16 || type == DType::kBF16; }

// The activation layout this target's kernel for `type` reads at this
// width: on x86 every 32-element type reads kQ8X (the numbers of kQ8_1,
// interleaved for the transposed block dots of gemm_q8-inl.h); the
// Q4_K/Q5_K/Q6_K tiles read kQ8KX (widths > 1; decode streams natural Q8K,
// and AVX2 prefill, widths above kKQuantMaxActs, transposes natural Q8K
// rows: gemm_kquant_avx2_prefill-inl.h); otherwise the reference's format.
ActFormat TargetActFormat(DType type, int64_t batch) {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if (GetDTypeInfo(type).block_elems == 32) return ActFormat::kQ8X;
#endif
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  const bool kquant_tile = type == DType::kQ4_K || type == DType::kQ5_K || type == DType::kQ6_K;
#if HWY_TARGET == HWY_AVX2
  if (kquant_tile && batch > kKQuantMaxActs) return ActFormat::kQ8K;
#endif
  if (kquant_tile && batch > 1) return ActFormat::kQ8KX;
#else
  (void)batch;
#endif
  return ActFormatFor(type);
}

// Whether this target runs row-group matrices of `type` with a row-group
// kernel, at every width (else: natural rows rebuilt on the fly).
bool UsesRowGroupKernel(DType type) {
  switch (type) {
    case DType::kQ4_K: return RowGroupKernel<DType::kQ4_K>::kAvailable;
    case DType::kQ5_K: return RowGroupKernel<DType::kQ5_K>::kAvailable;
    case DType::kQ6_K: return RowGroupKernel<DType::kQ6_K>::kAvailable;
    case DType::kQ8_0: return RowGroupKernel<DType::kQ8_0>::kAvailable;
    case DType::kQ5_0: return RowGroupKernel<DType::kQ5_0>::kAvailable;
    case DType::kQ4_0: return RowGroupKernel<DType::kQ4_0>::kAvailable;
    case DType::kIQ4_NL: return RowGroupKernel<DType::kIQ4_NL>::kAvailable;
    case DType::kQ4_1: return RowGroupKernel<DType::kQ4_1>::kAvailable;
    case DType::kQ5_1: return RowGroupKernel<DType::kQ5_1>::kAvailable;
    case DType::kQ2_K: return RowGroupKernel<DType::kQ2_K>::kAvailable;
    case DType::kQ3_K: return RowGroupKernel<DType::kQ3_K>::kAvailable;
    case DType::kIQ4_XS: return RowGroupKernel<DType::kIQ4_XS>::kAvailable;
    default: return false;
  }
}

// The activation format w's kernel reads at this width (row-group kernels:
// natural Q8K).
ActFormat ActFormatOf(const MatrixView& w, int64_t batch) {
  if (w.row_groups && UsesRowGroupKernel(w.type) && GetDTypeInfo(w.type).block_elems == kQKK) {
    return ActFormat::kQ8K;  // 32-element types: kQ8X (TargetActFormat)
  }
  return TargetActFormat(w.type, batch);
}

template <DType kType>
void RunRowGroupsOf(const MatrixView& w, const ActRow* acts, int64_t batch, float* y, int64_t ldy, int64_t r0,
                    int64_t r1) {
  using Kernel = RowGroupKernel<kType>;
  if constexpr (Kernel::kAvailable) {
    const int64_t blocks = w.cols / GetDTypeInfo(kType).block_elems;
    const auto* data = static_cast<const uint8_t*>(w.data);
    // Whole groups; a range that starts or ends inside one (a split of
    // MatMulSameInput's global rows) computes the group and keeps its rows.
    // Per group, activation tiles of up to 8 rows (balanced): the group's
    // weights are re-read from cache by each tile, the tile's activations
    // from L1/L2 by each group.
    for (int64_t g = r0 / kGroupRows; g * kGroupRows < r1; ++g) {
      const int64_t lo = std::max(r0, g * kGroupRows), hi = std::min(r1, (g + 1) * kGroupRows);
      const uint8_t* group = data + static_cast<size_t>(g * blocks) * Kernel::kGroupBlockBytes;
      ForEachActTile<kRowGroupMaxActs>(batch, [&](int64_t b0, int nb) {
        alignas(64) float out[kRowGroupMaxActs * kGroupRows];
        SwitchActs<kRowGroupMaxActs>(nb, [&](auto n) {
          Kernel::template Run<decltype(n)::value>(group, blocks, acts + b0, out);
        });
        for (int b = 0; b < nb; ++b) {
          for (int64_t r = lo; r < hi; ++r) y[(b0 + b) * ldy + r] = out[b * kGroupRows + (r - g * kGroupRows)];
        }
      });
    }
  }
}

// Rows [r0, r1) of a row-group matrix: the row-group kernel, or natural rows
// rebuilt group by group into per-thread scratch for the type's usual kernel
// (prefill, and targets without a row-group kernel: the same operations per
// (row, activation row), so the same bits).
void RunRowGroups(const MatrixView& w, const ActRow* qacts, const float* const* facts, int64_t batch, float* y,
                  int64_t ldy, int64_t r0, int64_t r1) {
  if (UsesRowGroupKernel(w.type)) {
    switch (w.type) {
      case DType::kQ4_K: return RunRowGroupsOf<DType::kQ4_K>(w, qacts, batch, y, ldy, r0, r1);
      case DType::kQ5_K: return RunRowGroupsOf<DType::kQ5_K>(w, qacts, batch, y, ldy, r0, r1);
      case DType::kQ6_K: return RunRowGroupsOf<DType::kQ6_K>(w, qacts, batch, y, ldy, r0, r1);
      case DType::kQ8_0: return RunRowGroupsOf<DType::kQ8_0>(w, qacts, batch, y, ldy, r0, r1);
      case DType::kQ5_0: return RunRowGroupsOf<DType::kQ5_0>(w, qacts, batch, y, ldy, r0, r1);
      case DType::kIQ4_NL: return RunRowGroupsOf<DType::kIQ4_NL>(w, qacts, batch, y, ldy, r0, r1);
      case DType::kQ4_1: return RunRowGroupsOf<DType::kQ4_1>(w, qacts, batch, y, ldy, r0, r1);
      case DType::kQ5_1: return RunRowGroupsOf<DType::kQ5_1>(w, qacts, batch, y, ldy, r0, r1);
      case DType::kQ2_K: return RunRowGroupsOf<DType::kQ2_K>(w, qacts, batch, y, ldy, r0, r1);
      case DType::kQ3_K: return RunRowGroupsOf<DType::kQ3_K>(w, qacts, batch, y, ldy, r0, r1);
      case DType::kIQ4_XS: return RunRowGroupsOf<DType::kIQ4_XS>(w, qacts, batch, y, ldy, r0, r1);
      default: return RunRowGroupsOf<DType::kQ4_0>(w, qacts, batch, y, ldy, r0, r1);
    }
  }
  const size_t row_bytes = RowBytes(w.type, w.cols);
  thread_local AlignedBuffer<uint8_t> rebuilt;
  if (rebuilt.size() < kGroupRows * row_bytes) rebuilt.Resize(kGroupRows * row_bytes);
  for (int64_t g0 = r0 / kGroupRows * kGroupRows; g0 < r1; g0 += kGroupRows) {
    const int64_t lo = std::max(r0, g0), hi = std::min(r1, g0 + kGroupRows);
    for (int64_t r = lo; r < hi; ++r) {
      RowFromGroups(w.type, static_cast<const uint8_t*>(w.data), w.cols, r, rebuilt.data() + (r - lo) * row_bytes);
    }
    const MatrixView natural = MakeMatrixView(w.type, rebuilt.data(), hi - lo, w.cols);
    RunRowsOfType(natural, qacts, facts, batch, y + lo, ldy, 0, hi - lo);
  }
}

void MatMulSameInputTarget(const MatMulOutput* outs, size_t num_outs, const float* x, int64_t ldx, int64_t batch,
                           ThreadPool& pool) {
  const int64_t cols = outs[0].w.cols;
  // The input once per activation format in use (usually one), in one scratch buffer.
  constexpr int kFormats = 5;  // ActFormat::kQ8, kQ8K, kQ8_1, kQ8X, kQ8KX (indexes below)
  static_assert(static_cast<int>(ActFormat::kQ8) == 0 && static_cast<int>(ActFormat::kQ8K) == 1 &&
                static_cast<int>(ActFormat::kQ8_1) == 2 && static_cast<int>(ActFormat::kQ8X) == 3 &&
                static_cast<int>(ActFormat::kQ8KX) == kFormats - 1);
  bool used[kFormats] = {};
  bool any_float = false;
  for (size_t i = 0; i < num_outs; ++i) {
    if (IsFloatWeight(outs[i].w.type)) {
      any_float = true;
    } else {
      used[static_cast<int>(ActFormatOf(outs[i].w, batch))] = true;
    }
  }
  size_t offset[kFormats] = {};
  size_t row_bytes[kFormats] = {};
  size_t total_bytes = 0;
  for (int f = 0; f < kFormats; ++f) {
    if (!used[f]) continue;
    row_bytes[f] = ActRowBytes(static_cast<ActFormat>(f), cols);
    offset[f] = total_bytes;
    total_bytes += row_bytes[f] * static_cast<size_t>(batch);
  }
  std::vector<ActRow> qacts[kFormats];
  if (total_bytes > 0) {
    uint8_t* scratch = ActScratch(total_bytes);
    auto quantize = [&](int64_t b0, int64_t b1, int) {
      for (int f = 0; f < kFormats; ++f) {
        if (!used[f]) continue;
        for (int64_t b = b0; b < b1; ++b) {
          QuantizeActivationRowTarget(static_cast<ActFormat>(f), x + b * ldx, cols,
                                      scratch + offset[f] + b * row_bytes[f]);
        }
      }
    };
    if (batch >= 8 && batch * cols >= (int64_t{1} << 16)) {
      pool.ParallelFor(batch, 1, quantize);
    } else {
      quantize(0, batch, 0);
    }
    for (int f = 0; f < kFormats; ++f) {
      if (!used[f]) continue;
      qacts[f].resize(static_cast<size_t>(batch));
      for (int64_t b = 0; b < batch; ++b) {
        qacts[f][b] = ActRowAt(static_cast<ActFormat>(f), scratch + offset[f] + b * row_bytes[f], cols);
      }
    }
  }
  std::vector<const float*> facts;
  if (any_float) {
    facts.resize(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) facts[b] = x + b * ldx;
  }

  // Global row g runs over outs[0]'s rows, then outs[1]'s, ...
  int64_t total_rows = 0;
  for (size_t i = 0; i < num_outs; ++i) total_rows += outs[i].w.rows;
  auto run = [&](int64_t g0, int64_t g1, int) {
    int64_t base = 0;
    for (size_t i = 0; i < num_outs && base < g1; ++i) {
      const MatrixView& w = outs[i].w;
      const int64_t r0 = std::max<int64_t>(g0 - base, 0);
      const int64_t r1 = std::min<int64_t>(g1 - base, w.rows);
      if (r0 < r1) {
        const ActRow* q = IsFloatWeight(w.type) ? nullptr : qacts[static_cast<int>(ActFormatOf(w, batch))].data();
        if (w.row_groups) {
          RunRowGroups(w, q, facts.data(), batch, outs[i].y, outs[i].ldy, r0, r1);
        } else {
          RunRowsOfType(w, q, facts.data(), batch, outs[i].y, outs[i].ldy, r0, r1);
        }
      }
      base += w.rows;
    }
  };
  // Small products: no fork-join (same kernel calls, so the same bits). Else
  // a few chunks per thread balance uneven progress; chunks stay contiguous
  // so each thread streams its rows sequentially (prefetcher-friendly).
  if (pool.num_threads() == 1 || total_rows * cols * batch < kMinParallelMacs) {
    run(0, total_rows, 0);
    return;
  }
  pool.ParallelFor(total_rows, kRowBlock, run, /*chunks_per_thread=*/4);
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(MatMulSameInputTarget);
HWY_EXPORT(KernelIsSimdTarget);
HWY_EXPORT(UsesRowGroupKernel);

bool MatMulPrefersRowGroups(DType type) { return HWY_DYNAMIC_DISPATCH(UsesRowGroupKernel)(type); }

bool MatMulKernelIsSimd(DType type) { return HWY_DYNAMIC_DISPATCH(KernelIsSimdTarget)(type); }

void MatMulSameInput(std::span<const MatMulOutput> outs, const float* x, int64_t ldx, int64_t batch,
                     ThreadPool& pool) {
  CAIRN_CHECK(!outs.empty() && batch >= 0);
  int64_t rows = 0;
  for (const MatMulOutput& o : outs) {
    CAIRN_CHECK(IsSupportedWeightType(o.w.type));
    CAIRN_CHECK(o.w.cols == outs[0].w.cols);
    CAIRN_CHECK(o.w.cols % GetDTypeInfo(o.w.type).block_elems == 0);
    CAIRN_CHECK(ldx >= o.w.cols && o.ldy >= o.w.rows);
    CAIRN_CHECK(!o.w.row_groups || (HasRowGroupLayout(o.w.type) && o.w.rows % kGroupRows == 0));
    rows += o.w.rows;
  }
  if (batch == 0 || rows == 0) return;
  HWY_DYNAMIC_DISPATCH(MatMulSameInputTarget)(outs.data(), outs.size(), x, ldx, batch, pool);
}

void MatMul(const MatrixView& w, const float* x, int64_t ldx, int64_t batch, float* y, int64_t ldy,
            ThreadPool& pool) {
  const MatMulOutput out{w, y, ldy};
  MatMulSameInput(std::span<const MatMulOutput>(&out, 1), x, ldx, batch, pool);
}

void GetRow(const MatrixView& w, int64_t r, float* out) {
  CAIRN_CHECK(r >= 0 && r < w.rows);
  if (w.row_groups) {
    thread_local std::vector<uint8_t> row;
    row.resize(RowBytes(w.type, w.cols));
    RowFromGroups(w.type, static_cast<const uint8_t*>(w.data), w.cols, r, row.data());
    return DequantizeRow(w.type, row.data(), w.cols, out);
  }
  DequantizeRow(w.type, w.Row(r), w.cols, out);
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
