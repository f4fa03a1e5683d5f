// Row-group weight layout: 16 weight rows interleaved by 32-bit words.
//
// A natural GGUF matrix stores each row's blocks one after another. For the
// K-quants, a decode (width 1) kernel working on one row at a time spends
// most of its instructions on per-row work: unpacking the 12 scale bytes,
// spreading scales to the lanes of each sub-block, folding lanes into one sum.
// In the row-group layout, a group of 16 consecutive rows stores super-block i
// of all 16 rows together, word by word: word k of row r's block is at
// plane k, lane r (64 bytes per plane). One 512-bit load then holds the same
// four bytes of 16 rows, so one vpdpbusd with a broadcast activation word
// advances 16 rows' dots by four levels, the scales of 16 rows unpack with a
// handful of vector operations, and no horizontal sums are needed: every
// lane is a row from the first load to the final store (kernels in
// gemm_row_groups-inl.h).
//
// Group g, block i (block bytes B) starts at
//   data + (g * blocks_per_row + i) * 16 * B:
// 32-element types with B % 4 == 2 (Q8_0, Q5_0, Q4_0, IQ4_NL) first store
// the 16 rows' F16 d (head, 32 bytes); Q4_1 / Q5_1 (B % 4 == 0) have no
// head, their [d | m] word is plane 0; then plane k (k < P = (B - head) / 4) at 64 k
// holds word k of the rest of each row's block; K-quants with B % 4 == 2
// (Q6_K: its trailing F16 d) end with the 16 rows' last two bytes. The bytes are those of the
// natural layout, moved: a matrix takes the same memory either way, and any
// row can be rebuilt exactly (RowFromGroups).
//
// Only matrices whose row count is a multiple of 16 are converted, and only
// for the types and targets with a row-group kernel
// (MatMulPrefersRowGroups), which then run every width; on a target without
// the kernel, natural rows are rebuilt on the fly, so any view works everywhere.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace cairn::kernels {

inline constexpr int kGroupRows = 16;

// Whether `type` has a row-group form (Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_XS,
// Q8_0, Q5_0, Q4_0, IQ4_NL, Q4_1, Q5_1).
bool HasRowGroupLayout(DType type);

// Converts `rows` (a multiple of 16) natural rows of `cols` columns, row r at
// src + r * src_stride, into the row-group layout at dst (RowBytes(type, cols)
// * rows bytes). Rows [group0 * 16, group1 * 16) only, for splitting the work.
void ToRowGroups(DType type, const uint8_t* src, size_t src_stride, int64_t cols, int64_t group0, int64_t group1,
                 uint8_t* dst);

// Rebuilds natural row r (RowBytes(type, cols) bytes) of a row-group matrix at data.
void RowFromGroups(DType type, const uint8_t* data, int64_t cols, int64_t r, uint8_t* out);

}  // namespace cairn::kernels
