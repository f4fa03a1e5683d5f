#!/usr/bin/env python3
"""Checks GGUF files written by Cairn against llama.cpp's gguf-py (`pip install gguf`).

For every file given (default: fuzz/corpus/gguf/*.gguf, which Cairn's writer
generates, see tests/gguf/gguf_corpus_test.cc):

1. gguf.GGUFReader reads it; for the known reference files the metadata
   (keys, order, types, values) and tensors (names, types, shapes, sizes,
   offsets, data) are compared with what the C++ generator wrote
   (tests/gguf/gguf_test_util.h, mirrored below).
2. gguf.GGUFWriter writes the same content (keys in the same order with the
   same types, tensors in the same order, same alignment) and the result must
   be byte-identical to the file. Files gguf-py cannot express (empty arrays,
   nested arrays of other than i32/f32/bool/string) skip this step with a note.

Exit status 0 when everything matches, 1 otherwise. Not a pytest file; run it
directly:  python3 tools/check_gguf_with_gguf_py.py [FILE.gguf ...]
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

try:
    import gguf
    from gguf import GGUFValueType as VT
    from gguf import GGMLQuantizationType as QT
except ImportError:  # pragma: no cover
    sys.exit("check_gguf_with_gguf_py: needs llama.cpp's gguf-py: pip install gguf")

REPO = Path(__file__).resolve().parent.parent

# gguf-py's size table still has the old Q8_1 block (two f32 + 32 i8 = 40 B);
# ggml-common.h defines block_q8_1 as two f16 + 32 i8 = 36 B (static_assert
# "wrong q8_1 block size/padding"), which is what Cairn and llama.cpp use.
# Patch the shared table so GGUFReader/GGUFWriter agree with ggml.
gguf.GGML_QUANT_SIZES[QT.Q8_1] = (32, 2 + 2 + 32)


# --- Expected content of the reference files (mirror of gguf_test_util.h) ---

def pattern(n: int, seed: int) -> bytes:
    return bytes(((i * 37 + seed * 11 + 7) & 0xFF) for i in range(n))


ALL_TYPE_TENSORS = [
    ("t.f32", [8, 2], QT.F32), ("t.f32_4d", [2, 2, 2, 2], QT.F32),
    ("t.f16", [8, 2], QT.F16), ("t.bf16", [8, 2], QT.BF16),
    ("t.q4_0", [32, 2], QT.Q4_0), ("t.q4_1", [32], QT.Q4_1),
    ("t.q5_0", [32], QT.Q5_0), ("t.q5_1", [32], QT.Q5_1),
    ("t.q8_0", [32, 2], QT.Q8_0), ("t.q8_1", [32], QT.Q8_1),
    ("t.q2_K", [256], QT.Q2_K), ("t.q3_K", [256], QT.Q3_K),
    ("t.q4_K", [256], QT.Q4_K), ("t.q5_K", [256], QT.Q5_K),
    ("t.q6_K", [256], QT.Q6_K), ("t.q8_K", [256], QT.Q8_K),
    ("t.i8", [8], QT.I8), ("t.i16", [8], QT.I16),
    ("t.i32", [8], QT.I32), ("t.i64", [8], QT.I64),
    ("t.f64", [8], QT.F64),
]

S = lambda s: s.encode("utf-8")  # noqa: E731  (strings are compared as bytes)

EXPECTED = {
    "tiny.gguf": {
        "kv": [
            ("general.architecture", VT.STRING, None, S("llama")),
            ("general.name", VT.STRING, None, S("tiny")),
            ("llama.block_count", VT.UINT32, None, 1),
        ],
        "tensors": [("token_embd.weight", [4, 2], QT.F32)],
        "alignment": 32,
    },
    "values.gguf": {
        "kv": [
            ("general.architecture", VT.STRING, None, S("test")),
            ("test.u8", VT.UINT8, None, 200),
            ("test.i8", VT.INT8, None, -100),
            ("test.u16", VT.UINT16, None, 60000),
            ("test.i16", VT.INT16, None, -30000),
            ("test.u32", VT.UINT32, None, 4000000000),
            ("test.i32", VT.INT32, None, -2000000000),
            ("test.f32", VT.FLOAT32, None, 1.5),
            ("test.bool", VT.BOOL, None, True),
            ("test.string", VT.STRING, None, S("héllo wörld ✓")),
            ("test.u64", VT.UINT64, None, 9223372036854775813),
            ("test.i64", VT.INT64, None, -4611686018427387904),
            ("test.f64", VT.FLOAT64, None, 3.141592653589793),
            ("test.arr.u8", VT.ARRAY, VT.UINT8, [1, 2, 255]),
            ("test.arr.i8", VT.ARRAY, VT.INT8, [-128, 0, 127]),
            ("test.arr.u16", VT.ARRAY, VT.UINT16, [0, 65535]),
            ("test.arr.i16", VT.ARRAY, VT.INT16, [-32768, 32767]),
            ("test.arr.u32", VT.ARRAY, VT.UINT32, [0, 4294967295]),
            ("test.arr.i32", VT.ARRAY, VT.INT32, [-1, 0, 1]),
            ("test.arr.u64", VT.ARRAY, VT.UINT64, [0, 18446744073709551615]),
            ("test.arr.i64", VT.ARRAY, VT.INT64, [-(2**63), 2**63 - 1]),
            ("test.arr.f32", VT.ARRAY, VT.FLOAT32, [0.5, -2.25]),
            ("test.arr.f64", VT.ARRAY, VT.FLOAT64, [1e300, -0.0]),
            ("test.arr.bool", VT.ARRAY, VT.BOOL, [True, False, True]),
            ("test.arr.string", VT.ARRAY, VT.STRING, [S("a"), S(""), S("ünï")]),
            ("test.arr.nested", VT.ARRAY, VT.ARRAY, [("a", VT.INT32, [1, 2]), ("a", VT.INT32, [3])]),
            ("test.arr.nested_str", VT.ARRAY, VT.ARRAY,
             [("a", VT.STRING, [S("x"), S("y")]), ("a", VT.STRING, [S("z")])]),
            ("test.arr.nested3", VT.ARRAY, VT.ARRAY, [("a", VT.ARRAY, [("a", VT.INT32, [7])])]),
            ("test.empty_string", VT.STRING, None, S("")),
        ],
        "tensors": [],
        "alignment": 32,
    },
    "tensors.gguf": {
        "kv": [
            ("general.architecture", VT.STRING, None, S("test")),
            ("general.name", VT.STRING, None, S("every tensor type")),
        ],
        "tensors": ALL_TYPE_TENSORS,
        "alignment": 32,
    },
    "align64.gguf": {
        "kv": [
            ("general.architecture", VT.STRING, None, S("test")),
            ("general.alignment", VT.UINT32, None, 64),
            ("general.name", VT.STRING, None, S("align64")),
        ],
        "tensors": [("a", [32], QT.Q8_0), ("b", [3], QT.F16), ("c", [5, 3], QT.F32), ("d", [256], QT.Q4_K)],
        "alignment": 64,
    },
    "vocab.gguf": {
        "kv": [
            ("general.architecture", VT.STRING, None, S("qwen2")),
            ("tokenizer.ggml.model", VT.STRING, None, S("gpt2")),
            ("tokenizer.ggml.pre", VT.STRING, None, S("qwen2")),
            ("tokenizer.ggml.tokens", VT.ARRAY, VT.STRING, [S("a"), S("b"), S("ab"), S("Ġ"), S("<|endoftext|>")]),
            ("tokenizer.ggml.token_type", VT.ARRAY, VT.INT32, [1, 1, 1, 1, 3]),
            ("tokenizer.ggml.merges", VT.ARRAY, VT.STRING, [S("a b")]),
            ("tokenizer.ggml.bos_token_id", VT.UINT32, None, 4),
            ("tokenizer.ggml.eos_token_id", VT.UINT32, None, 4),
            ("tokenizer.ggml.add_bos_token", VT.BOOL, None, False),
            ("tokenizer.chat_template", VT.STRING, None, S("{% for m in messages %}{{ m.content }}\n{% endfor %}")),
        ],
        "tensors": [],
        "alignment": 32,
    },
    "edge.gguf": {
        "kv": [
            ("general.architecture", VT.STRING, None, S("test")),
            ("general.alignment", VT.UINT32, None, 16),
            ("test.empty.u8", VT.ARRAY, VT.UINT8, []),
            ("test.empty.string", VT.ARRAY, VT.STRING, []),
            ("test.empty.f32", VT.ARRAY, VT.FLOAT32, []),
            ("test.empty.nested", VT.ARRAY, VT.ARRAY, [("a", VT.STRING, [])]),
            ("test.empty.arrays", VT.ARRAY, VT.ARRAY, []),
            ("test.empty_string", VT.STRING, None, S("")),
        ],
        "tensors": [("e", [3], QT.F32), ("f", [1], QT.I8)],
        "alignment": 16,
    },
}


# --- Decoding GGUFReader fields into (type, subtype, value) ---

SCALAR_TYPES = {VT.UINT8, VT.INT8, VT.UINT16, VT.INT16, VT.UINT32, VT.INT32, VT.FLOAT32,
                VT.BOOL, VT.UINT64, VT.INT64, VT.FLOAT64}


def decode(parts, i, vtype):
    """Decodes one value of `vtype` from a ReaderField's parts starting at i.

    Returns (value, next_i). Arrays decode to ("a", element_type, [values]).
    """
    if vtype == VT.STRING:
        return bytes(parts[i + 1]), i + 2
    if vtype in SCALAR_TYPES:
        x = parts[i][0]
        if vtype == VT.BOOL:
            return bool(x), i + 1
        if vtype in (VT.FLOAT32, VT.FLOAT64):
            return float(x), i + 1
        return int(x), i + 1
    if vtype == VT.ARRAY:
        etype = VT(int(parts[i][0]))
        n = int(parts[i + 1][0])
        i += 2
        out = []
        for _ in range(n):
            v, i = decode(parts, i, etype)
            out.append(v)
        return ("a", etype, out), i
    raise ValueError(f"unknown type {vtype}")


def read_kv(reader):
    kv = []
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):
            continue
        vtype = VT(int(field.parts[2][0]))
        value, end = decode(field.parts, 3, vtype)
        assert end == len(field.parts), name
        if vtype == VT.ARRAY:
            kv.append((name, vtype, value[1], value[2]))
        else:
            kv.append((name, vtype, None, value))
    return kv


def same(a, b) -> bool:
    """Equality with floats compared exactly (incl. the sign of zero)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return float(a) == float(b) and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return a == b


# --- Rewriting with gguf-py's writer ---

PY_AUTO_TYPES = {VT.INT32, VT.FLOAT32, VT.BOOL, VT.STRING}


def py_value(etype, v):
    """Converts a decoded value to what GGUFWriter packs for `etype`."""
    if isinstance(v, tuple):  # nested array: gguf-py infers inner types from Python types
        _, inner, items = v
        if not items:
            raise NotImplementedError("gguf-py cannot write empty arrays")
        if inner == VT.ARRAY:
            return [py_value(inner, x) for x in items]
        if inner not in PY_AUTO_TYPES:
            raise NotImplementedError(f"gguf-py cannot write nested arrays of {inner.name}")
        return [x.decode("utf-8") if isinstance(x, bytes) else x for x in items]
    return v


def rewrite_with_gguf_py(reader, kv, path_out: str) -> None:
    arch = next((v for k, t, s, v in kv if k == "general.architecture"), b"")
    w = gguf.GGUFWriter(path_out, arch.decode("utf-8") if isinstance(arch, bytes) else str(arch))
    w.kv_data[0].clear()  # re-add every key in file order (the constructor added the architecture)
    alignment = 32
    for key, vtype, sub, value in kv:
        if vtype == VT.ARRAY:
            if not value:
                raise NotImplementedError("gguf-py cannot write empty arrays")
            items = [py_value(sub, x) for x in value]
            w.add_key_value(key, items, VT.ARRAY, sub_type=sub)
        else:
            w.add_key_value(key, value, vtype)
        if key == "general.alignment":
            alignment = int(value)
    w.data_alignment = alignment
    for t in reader.tensors:
        raw = np.frombuffer(bytes(reader.data[t.data_offset:t.data_offset + t.n_bytes]), dtype=np.uint8)
        ne = [int(d) for d in t.shape]
        block, type_size = gguf.GGML_QUANT_SIZES[t.tensor_type]
        row_bytes = ne[0] // block * type_size
        byte_shape = tuple(reversed(ne[1:])) + (row_bytes,)
        w.add_tensor(t.name, raw.reshape(byte_shape), raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# --- Checks ---

def check_file(path: Path) -> list[str]:
    errors: list[str] = []
    data = path.read_bytes()
    reader = gguf.GGUFReader(str(path))
    kv = read_kv(reader)

    expected = EXPECTED.get(path.name)
    if expected is not None:
        got_keys = [k for k, *_ in kv]
        want_keys = [k for k, *_ in expected["kv"]]
        if got_keys != want_keys:
            errors.append(f"keys {got_keys} != expected {want_keys}")
        for (k, t, s, v), (ek, et, es, ev) in zip(kv, expected["kv"]):
            if (t, s) != (et, es):
                errors.append(f"{k}: type {t.name}/{s and s.name} != expected {et.name}/{es and es.name}")
            elif not same(v, ev):
                errors.append(f"{k}: value {v!r} != expected {ev!r}")
        want_tensors = expected["tensors"]
        if [t.name for t in reader.tensors] != [n for n, _, _ in want_tensors]:
            errors.append(f"tensor names {[t.name for t in reader.tensors]} != {[n for n, _, _ in want_tensors]}")
        align = expected["alignment"]
        if reader.alignment != align:
            errors.append(f"alignment {reader.alignment} != {align}")
        offset = 0
        for seed, (t, (name, ne, qt)) in enumerate(zip(reader.tensors, want_tensors)):
            block, type_size = gguf.GGML_QUANT_SIZES[qt]
            n_bytes = int(np.prod(ne)) // block * type_size
            if t.tensor_type != qt or [int(d) for d in t.shape] != ne or t.n_bytes != n_bytes:
                errors.append(f"tensor {name}: {t.tensor_type.name} {list(t.shape)} {t.n_bytes} B != "
                              f"{qt.name} {ne} {n_bytes} B")
                continue
            if t.data_offset != reader.data_offset + offset:
                errors.append(f"tensor {name}: data at {t.data_offset} != {reader.data_offset + offset}")
            if bytes(data[t.data_offset:t.data_offset + n_bytes]) != pattern(n_bytes, seed):
                errors.append(f"tensor {name}: data differs from the pattern")
            offset += (n_bytes + align - 1) // align * align

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rewritten.gguf")
        try:
            rewrite_with_gguf_py(reader, kv, out)
        except NotImplementedError as e:
            print(f"  {path.name}: byte comparison skipped ({e})")
        else:
            rewritten = Path(out).read_bytes()
            if rewritten != data:
                first = next((i for i, (a, b) in enumerate(zip(rewritten, data)) if a != b),
                             min(len(rewritten), len(data)))
                errors.append(f"gguf-py writes {len(rewritten)} bytes, Cairn wrote {len(data)}; "
                              f"first difference at byte {first}")
            else:
                print(f"  {path.name}: byte-identical to gguf-py's GGUFWriter output")
    return errors


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((REPO / "fuzz/corpus/gguf").glob("*.gguf"))
    if not paths:
        print("check_gguf_with_gguf_py: no files")
        return 1
    if not argv:
        missing = sorted(set(EXPECTED) - {p.name for p in paths})
        if missing:
            print(f"check_gguf_with_gguf_py: reference files missing: {missing}")
            return 1
    failed = 0
    for path in paths:
        try:
            errors = check_file(path)
        except Exception as e:  # noqa: BLE001  (report and continue)
            errors = [f"{type(e).__name__}: {e}"]
        status = "ok" if not errors else "FAILED"
        print(f"{path}: {status}")
        for e in errors:
            print(f"    {e}")
        failed += bool(errors)
    print(f"check_gguf_with_gguf_py: {len(paths) - failed}/{len(paths)} files ok (gguf-py {gguf_version()})")
    return 1 if failed else 0


def gguf_version() -> str:
    try:
        from importlib.metadata import version
        return version("gguf")
    except Exception:  # noqa: BLE001
        return "?"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
