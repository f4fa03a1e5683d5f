#!/usr/bin/env python3
"""Dequantization checksums of pseudo-random blocks with gguf-py (`pip install gguf numpy`).

The independent check behind QuantTest.DequantizeMatchesGgufPyOnRandomBlocks
(tests/kernels/quant_test.cc): the same bytes, dequantized by
gguf.quants.dequantize (llama.cpp's reference formulas), summarised by the
same two checksums of the F32 bit patterns. Prints one line per type:
`name s1 s2`; with --check, compares them with the values in the C++ test
and exits 1 on a mismatch. Skips (exit 0, a note) when gguf-py is absent.

Bytes: an LCG, state = state * 1664525 + 1013904223 (mod 2^32) from
12345 + ggml type id, byte = state >> 24; then each F16 scale field (d, and
m / dmin where present) gets its high byte & 0xBF (exponent < 31: finite).
Checksums over n = 8192 elements: s1 = sum of bits, s2 = sum of bits * (i + 1),
both mod 2^64.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as QT
except ImportError:  # pragma: no cover
    print("dequant_sums_with_gguf_py: gguf-py not installed (pip install gguf numpy); skipped")
    sys.exit(0)

N = 8192
# type -> (block elements, block bytes, byte offsets of the F16 scale fields)
TYPES = {
    "q4_1": (QT.Q4_1, 32, 20, [0, 2]),
    "q5_0": (QT.Q5_0, 32, 22, [0]),
    "q5_1": (QT.Q5_1, 32, 24, [0, 2]),
    "iq4_nl": (QT.IQ4_NL, 32, 18, [0]),
    "q2_K": (QT.Q2_K, 256, 84, [80, 82]),
    "q3_K": (QT.Q3_K, 256, 110, [108]),
    "iq4_xs": (QT.IQ4_XS, 256, 136, [0]),
}


def random_blocks(type_id: int, block_elems: int, block_bytes: int, halves: list[int]) -> np.ndarray:
    raw = bytearray(N // block_elems * block_bytes)
    state = (12345 + type_id) & 0xFFFFFFFF
    for i in range(len(raw)):
        state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
        raw[i] = state >> 24
    for k in range(0, len(raw), block_bytes):
        for h in halves:
            raw[k + h + 1] &= 0xBF
    return np.frombuffer(bytes(raw), dtype=np.uint8)


def sums(name: str) -> tuple[int, int]:
    qt, be, bb, halves = TYPES[name]
    y = gguf.quants.dequantize(random_blocks(int(qt), be, bb, halves), qt).astype(np.float32)
    bits = y.view(np.uint32).astype(np.uint64)
    idx = np.arange(1, N + 1, dtype=np.uint64)
    s1 = int(bits.sum(dtype=np.uint64))
    s2 = int((bits * idx).sum(dtype=np.uint64))  # numpy uint64 wraps mod 2^64
    return s1, s2


def main() -> int:
    got = {name: sums(name) for name in TYPES}
    for name, (s1, s2) in got.items():
        print(name, s1, s2)
    if "--check" not in sys.argv:
        return 0
    test = (Path(__file__).resolve().parent.parent / "tests/kernels/quant_test.cc").read_text()
    bad = 0
    for m in re.finditer(r"\{DType::k(\w+), (\d+)u, (\d+)u", test):
        name = {"Q4_1": "q4_1", "Q5_0": "q5_0", "Q5_1": "q5_1", "IQ4_NL": "iq4_nl", "Q2_K": "q2_K",
                "Q3_K": "q3_K", "IQ4_XS": "iq4_xs"}.get(m.group(1))
        if name and got[name] != (int(m.group(2)), int(m.group(3))):
            print(f"MISMATCH {name}: test has {m.group(2)} {m.group(3)}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
