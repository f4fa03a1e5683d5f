"""Command-line options that pick a numeric class: each spelling reaches the engine, bad ones are refused."""
import re
import subprocess

import pytest

from conftest import THREADS, cairn_bin

TEXT = "def parse(argv):\n    return [a for a in argv if not a.startswith('-')]\n" * 40


def perplexity(model, text_path, *extra):
    argv = [cairn_bin(), "perplexity", "-m", model, "-f", str(text_path), "-c", "128", "--chunks", "2",
            "-t", THREADS, *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def final_estimate(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = re.search(r"Final estimate: PPL = ([0-9.]+)", proc.stdout + proc.stderr)
    assert found, proc.stdout + proc.stderr
    return float(found.group(1))


def test_cache_type_k_spellings_pick_the_class(models, tmp_path):
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    f16 = final_estimate(perplexity(models["dense"], text))
    assert final_estimate(perplexity(models["dense"], text, "--cache-type-k", "f16")) == f16
    assert final_estimate(perplexity(models["dense"], text, "--cache-type-k", "F16")) == f16
    q8 = final_estimate(perplexity(models["dense"], text, "--cache-type-k", "q8_0"))
    assert q8 != f16   # the integer-score class rounds K and the queries
    assert final_estimate(perplexity(models["dense"], text, "--cache-type-k", "Q8_0")) == q8


@pytest.mark.parametrize("value", ["q9", "1", "q4_0", ""])
def test_cache_type_k_refuses_other_values(models, tmp_path, value):
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    proc = perplexity(models["dense"], text, "--cache-type-k", value)
    assert proc.returncode != 0
    assert "--cache-type-k" in proc.stderr and "not in {f16" in proc.stderr, proc.stderr
