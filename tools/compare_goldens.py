#!/usr/bin/env python3
"""Compare two cairn-golden-v1 files (JSON sidecars): max |diff| of every float array, mismatch
count of every int array, and argmax agreement restricted to positions whose reference top-2 gap
exceeds --gap.  Usage: compare_goldens.py REF.json OTHER.json [--gap 1e-3]
"""
from __future__ import annotations

import argparse
import json
import os

import numpy as np


def load(path):
    with open(path) as f:
        meta = json.load(f)
    with open(os.path.join(os.path.dirname(path), meta["bin"]), "rb") as f:
        blob = f.read()
    out = {}
    for name, a in meta["arrays"].items():
        dt = "<f4" if a["dtype"] == "f32" else "<i4"
        out[name] = np.frombuffer(blob, dtype=dt, count=int(np.prod(a["shape"])) if a["shape"] else 1,
                                  offset=a["offset"]).reshape(a["shape"])
    return meta, out


def compare(ref_path, other_path, gap=1e-3):
    _, r = load(ref_path)
    _, o = load(other_path)
    res = {}
    for k, a in r.items():
        if k not in o:
            continue
        b = o[k]
        if a.dtype.kind == "f":
            res[k] = float(np.abs(a - b).max()) if a.size else 0.0
        elif k.endswith("argmax"):
            gk = k.replace("argmax", "top2_gap")
            mask = r[gk] > gap if gk in r else np.ones(a.shape, bool)
            res[k] = {"mismatch": int((a != b).sum()), "mismatch_where_gap_gt": int(((a != b) & mask).sum()),
                      "n": int(a.size)}
        else:
            res[k] = int((a != b).sum())
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("other")
    ap.add_argument("--gap", type=float, default=1e-3)
    a = ap.parse_args()
    res = compare(a.ref, a.other, a.gap)
    fl = {k: v for k, v in res.items() if isinstance(v, float)}
    print("max |diff| over float arrays:", max(fl.values()) if fl else None)
    for k, v in res.items():
        print(f"  {k}: {v}")


if __name__ == "__main__":
    main()
