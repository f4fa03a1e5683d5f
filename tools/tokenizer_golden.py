#!/usr/bin/env python3
"""Generates the tokenizer golden files for Cairn's differential tests.

1. Qwen3: loads the real HF tokenizer (shared/testdata/qwen3-tokenizer/
   tokenizer.json) with the `tokenizers` library, builds a deterministic corpus
   (prose, code, JSON, CJK, emoji, combining marks, whitespace runs, digits,
   contractions, mixed scripts, random Unicode, special-token-looking strings,
   and non-NFC text: decomposed accents, Hangul jamo, unordered combining-mark
   runs, emoji ZWJ sequences, random code points of every plane) and writes
   tests/tokenizer/golden/qwen3_hf_golden.jsonl. Texts are written as
   generated (not NFC'd): the tokenizer's NFC normalizer is part of the test.
2. Two small tokenizers trained here with `tokenizers`, committed with their
   goldens (tests/tokenizer/golden/tiny_*):
   - tiny_spm: SentencePiece-style BPE (byte_fallback, <0xXX> tokens,
     Prepend("▁") + Replace(" " -> "▁") normalizer; Llama-2/TinyLlama layout);
   - tiny_spm_metaspace_{first,always}: the same vocabulary with a Metaspace
     pre-tokenizer (split: false) instead, as newer Llama/Mistral files;
   - tiny_nfc_bpe: byte-level BPE with the Qwen2 split and an NFC normalizer.
   Both carry added tokens with lstrip / rstrip / single_word / normalized.

Each golden line is {"text": "...", "special": bool, "ids": [...]}.
`special: false` lines are encoded with add_special_tokens=False and special
tokens NOT parsed (tokenizer.encode_special_tokens = True; HF still splits out
non-special added tokens such as <think>, as Cairn does). `special: true`
lines parse special tokens (HF's default).

CI does not run this (it needs `pip install tokenizers`); the outputs are
committed. Usage: tools/tokenizer_golden.py [--out PATH] [--count N]
"""
import argparse
import json
import os
import random
import string
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("CAIRN_SHARED_DIR", os.path.join(os.path.dirname(ROOT), "shared"))

WORDS = ("the of and to in is was that for it with as his on be at by this had not are but "
         "from or have an they which one you were her all she there would their we him been has "
         "when who will more no if out so said what up its about into than them can only other new "
         "some could time these two may then do first any my now such like our over man me even most "
         "made after also did many before must through back years where much your way well down "
         "should because each just those people Mr how too little state good very make world still "
         "own see men work long get here between both life being under never day same another know "
         "while last might us great old year off come since against go came right used take three "
         "tokenizer inference server cache prefix model attention recurrent speculative decoding "
         "naïve café résumé Zürich Straße façade coöperate").split()
CONTRACTIONS = ["I've", "don't", "won't", "it's", "we're", "they'll", "she'd", "I'm", "'RE", "'S",
                "'ll", "'Ve", "y'all", "o'clock", "rock'n'roll", "'tis", "'M", "'D", "'T", "'lL"]
SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>",
            "</tool_call>", "<|fim_prefix|>", "<|vision_pad|>", "<tool_response>"]
NEAR_SPECIALS = ["<|im_start|", "<|im_end", "< |im_end|>", "<|IM_END|>", "<think >", "<<think>>",
                 "<|endoftext||>", "|>", "<|", "</think", "<tool_call>>"]
EMOJI = ["🦙", "🚀", "😁", "😶‍🌫️", "👩‍👩‍👧‍👦", "👍🏽", "🇫🇷", "🇯🇵", "❤️", "✅", "🏳️‍🌈", "🤖",
         "🧑🏿‍💻", "⌚", "☕", "🫠", "1️⃣", "#️⃣", "🐍", "🍣"]
WHITESPACE = [" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\r", " \n", "\t\t", "\u00a0", "\u3000",
              "\u0085", "\u000b", "\u000c", "\u2028", "\u2009", "    ", "\n    ", "\n\t"]
SCRIPTS = {
    "cjk": (0x4E00, 0x9FA5), "hiragana": (0x3041, 0x3096), "katakana": (0x30A1, 0x30FA),
    "hangul": (0xAC00, 0xD7A3), "cyrillic": (0x0410, 0x044F), "greek": (0x0391, 0x03C9),
    "arabic": (0x0621, 0x064A), "hebrew": (0x05D0, 0x05EA), "devanagari": (0x0905, 0x0939),
    "thai": (0x0E01, 0x0E2E), "khmer": (0x1780, 0x17B3), "georgian": (0x10D0, 0x10F0),
}
MARKS = {
    "latin": [0x0300, 0x0301, 0x0302, 0x0303, 0x0308, 0x030A, 0x0327, 0x0328, 0x0331, 0x0361],
    "devanagari": [0x093E, 0x093F, 0x0940, 0x0941, 0x0947, 0x094D, 0x0902],
    "thai": [0x0E31, 0x0E34, 0x0E35, 0x0E47, 0x0E48, 0x0E49],
    "arabic": [0x064B, 0x064E, 0x064F, 0x0650, 0x0651, 0x0652],
    "hebrew": [0x05B0, 0x05B4, 0x05B7, 0x05BC, 0x05C1],
}


def script_word(rng, script, n=None):
    lo, hi = SCRIPTS[script]
    return "".join(chr(rng.randint(lo, hi)) for _ in range(n or rng.randint(1, 8)))


def prose(rng):
    out = []
    for _ in range(rng.randint(5, 60)):
        r = rng.random()
        w = rng.choice(WORDS)
        if r < 0.1:
            w = w.capitalize()
        elif r < 0.15:
            w = rng.choice(CONTRACTIONS)
        elif r < 0.18:
            w = w.upper()
        out.append(w)
        if rng.random() < 0.12:
            out[-1] += rng.choice([",", ".", "!", "?", ";", ":", "...", " —", "\"", ")"])
    text = " ".join(out)
    if rng.random() < 0.3:
        text = "\n\n".join([text, prose_short(rng)])
    return text


def prose_short(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) + "."


def ident(rng):
    parts = [rng.choice(WORDS).lower().strip("'") for _ in range(rng.randint(1, 3))]
    style = rng.random()
    if style < 0.4:
        return "_".join(parts)
    if style < 0.8:
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    return "".join(p.capitalize() for p in parts)


def python_code(rng):
    name = ident(rng)
    args = ", ".join(ident(rng) for _ in range(rng.randint(0, 3)))
    lines = [f"def {name}({args}):", f'    """{prose_short(rng)}"""']
    for _ in range(rng.randint(1, 8)):
        indent = "    " * rng.randint(1, 3)
        kind = rng.random()
        if kind < 0.3:
            lines.append(f"{indent}{ident(rng)} = {rng.randint(0, 10**rng.randint(1, 9))}")
        elif kind < 0.5:
            lines.append(f"{indent}if {ident(rng)} >= {rng.random():.3f}:")
        elif kind < 0.7:
            lines.append(f"{indent}for i in range(len({ident(rng)})):")
        elif kind < 0.85:
            lines.append(f"{indent}return {ident(rng)}[{rng.randint(0, 9)}:]  # {prose_short(rng)}")
        else:
            lines.append(f"{indent}print(f\"{{{ident(rng)}!r}}: {rng.choice(WORDS)}\")")
    return "\n".join(lines) + "\n"


def cpp_code(rng):
    name = ident(rng)
    lines = [f"// {prose_short(rng)}", "#include <vector>", "",
             f"static int {name}(const std::vector<int>& {ident(rng)}) {{"]
    for _ in range(rng.randint(1, 8)):
        kind = rng.random()
        if kind < 0.3:
            lines.append(f"  int {ident(rng)} = {rng.randint(-999, 99999)};")
        elif kind < 0.6:
            lines.append(f"  for (size_t i = 0; i < n; ++i) {{ acc += a[i] * 0x{rng.randint(0, 65535):X}; }}")
        elif kind < 0.8:
            lines.append(f"  if ({ident(rng)} != nullptr && x->{ident(rng)}() <= {rng.randint(0, 99)}) return -1;")
        else:
            lines.append(f"\tstd::printf(\"%d\\n\", {ident(rng)});")
    lines.append("}")
    return "\n".join(lines) + "\n"


def js_code(rng):
    name = ident(rng)
    body = "\n".join(
        f"  const {ident(rng)} = await fetch(`/api/{rng.choice(WORDS)}/${{{ident(rng)}}}`);"
        if rng.random() < 0.5 else f"  if ({ident(rng)} === {rng.randint(0, 100)}) {{ return null; }}"
        for _ in range(rng.randint(1, 6)))
    return f"export async function {name}({ident(rng)}) {{\n{body}\n}}\n"


def json_value(rng, depth=0):
    r = rng.random()
    if depth > 2 or r < 0.3:
        return rng.choice([rng.randint(-10**6, 10**6), round(rng.uniform(-1e3, 1e3), rng.randint(0, 6)),
                           rng.choice(WORDS), prose_short(rng), True, False, None,
                           script_word(rng, rng.choice(list(SCRIPTS)))])
    if r < 0.6:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {ident(rng): json_value(rng, depth + 1) for _ in range(rng.randint(1, 5))}


def json_text(rng):
    value = {ident(rng): json_value(rng) for _ in range(rng.randint(1, 6))}
    indent = rng.choice([None, 2, 4, "\t"])
    return json.dumps(value, indent=indent, ensure_ascii=rng.random() < 0.3)


def cjk(rng):
    parts = []
    for _ in range(rng.randint(1, 10)):
        s = rng.choice(["cjk", "cjk", "hiragana", "katakana", "hangul"])
        parts.append(script_word(rng, s, rng.randint(1, 12)))
        parts.append(rng.choice(["", "，", "。", "、", " ", "！", "？", "「", "」", "（", "）", "～"]))
    return "".join(parts)


def emoji(rng):
    return "".join(rng.choice(EMOJI + [" ", "", " ", rng.choice(WORDS)]) for _ in range(rng.randint(1, 20)))


def combining(rng):
    out = []
    for _ in range(rng.randint(1, 12)):
        kind = rng.choice(list(MARKS))
        if kind == "latin":
            base = rng.choice(string.ascii_letters + "ıȷøæ")
        else:
            base = script_word(rng, kind, 1)
        marks = "".join(chr(rng.choice(MARKS[kind])) for _ in range(rng.randint(1, 3)))
        out.append(base + marks + rng.choice(["", "", " ", script_word(rng, rng.choice(["greek", "cyrillic"]), 2)]))
    return "".join(out)


def whitespace(rng):
    out = []
    for _ in range(rng.randint(1, 15)):
        out.append(rng.choice(WHITESPACE) * rng.randint(1, 4))
        if rng.random() < 0.6:
            out.append(rng.choice([rng.choice(WORDS), "x", "1", "{", "}", "#", "'s", "🦙"]))
    return "".join(out)


def digits(rng):
    out = []
    for _ in range(rng.randint(1, 12)):
        kind = rng.random()
        if kind < 0.3:
            out.append(str(rng.randint(0, 10**rng.randint(1, 20))))
        elif kind < 0.5:
            out.append(f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 8)}f}")
        elif kind < 0.6:
            out.append(f"+1 ({rng.randint(100, 999)}) {rng.randint(100, 999)}-{rng.randint(1000, 9999)}")
        elif kind < 0.7:
            out.append("".join(rng.choice("٠١٢٣٤٥٦٧٨٩०१२३४५६७८९０１２３４５６７８９①②③ⅣⅫ") for _ in range(rng.randint(1, 6))))
        else:
            out.append(f"{rng.randint(1, 31)}/{rng.randint(1, 12)}/{rng.randint(1900, 2100)}")
        out.append(rng.choice([" ", ", ", "\n", "", "x", "..."]))
    return "".join(out)


def mixed(rng):
    gens = [prose_short, cjk, emoji, combining, digits, whitespace,
            lambda r: script_word(r, r.choice(list(SCRIPTS)), r.randint(1, 10))]
    return rng.choice(["", " ", "\n"]).join(rng.choice(gens)(rng) for _ in range(rng.randint(2, 8)))


def random_unicode(rng):
    out = []
    for _ in range(rng.randint(1, 40)):
        r = rng.random()
        if r < 0.4:
            cp = rng.randint(0x20, 0x7E)
        elif r < 0.6:
            cp = rng.randint(0x80, 0x7FF)
        elif r < 0.9:
            cp = rng.randint(0x800, 0xFFFD)
        else:
            cp = rng.randint(0x10000, 0x10FFFF)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        out.append(chr(cp))
    return "".join(out)


def decomposed(rng):
    """NFD (or NFKD) prose with accented words: HF composes it back."""
    words = ["café", "naïve", "résumé", "Zürich", "Ångström", "ñandú", "Dvořák", "Łódź", "São Paulo",
             "Việt Nam", "Ελληνικά", "ῥῆμα", "한국어", "ダブル", "Ǆemal", "ﬁnance", "Å"]
    text = " ".join(rng.choice(words + WORDS) for _ in range(rng.randint(2, 15)))
    return unicodedata.normalize(rng.choice(["NFD", "NFD", "NFKD"]), text)


def hangul_jamo(rng):
    """Conjoining jamo L V (T): NFC composes them into syllables."""
    out = []
    for _ in range(rng.randint(1, 12)):
        s = chr(rng.randint(0x1100, 0x1112)) + chr(rng.randint(0x1161, 0x1175))
        if rng.random() < 0.5:
            s += chr(rng.randint(0x11A8, 0x11C2))
        if rng.random() < 0.2:  # precomposed LV + trailing T jamo
            s = chr(0xAC00 + 28 * rng.randint(0, 398)) + chr(rng.randint(0x11A8, 0x11C2))
        out.append(s + rng.choice(["", "", " ", ".", "\n"]))
    return "".join(out)


def mark_runs(rng):
    """Bases followed by combining marks in non-canonical order (NFC reorders)."""
    marks = [0x0300, 0x0301, 0x0308, 0x0316, 0x0323, 0x0327, 0x0328, 0x031B, 0x0345, 0x0338,
             0x05B0, 0x064B, 0x0E48, 0x302A, 0x20D7, 0x1DF6, 0x0898, 0x1E08F, 0x11F41]
    out = []
    for _ in range(rng.randint(1, 10)):
        base = rng.choice(list("aeiouAEOUnNcCsSzZ<>=ω") + ["α", "Α", "и", "ᄀ"])
        out.append(base + "".join(chr(rng.choice(marks)) for _ in range(rng.randint(1, 5))))
        out.append(rng.choice(["", " ", "x", "\n"]))
    return "".join(out)


def emoji_zwj(rng):
    parts = ["👨", "👩", "👧", "👦", "❤", "💋",
             "🏻", "🏿", "️", "‍", "⃣", "🇦", "🇺"]
    out = []
    for _ in range(rng.randint(1, 8)):
        out.append("‍".join(rng.choice(parts) for _ in range(rng.randint(1, 5))))
        out.append(rng.choice(["", " ", rng.choice(WORDS)]))
    return "".join(out)


def random_code_points(rng):
    """Any code point of any plane (unassigned, private use, noncharacters too)."""
    out = []
    for _ in range(rng.randint(1, 30)):
        r = rng.random()
        cp = rng.randint(0x300, 0x36F) if r < 0.2 else rng.randint(1, 0x10FFFF)
        if 0xD800 <= cp <= 0xDFFF:
            cp = 0x301
        out.append(chr(cp))
    return "".join(out)


def near_special_marks(rng):
    """Marks right after special-token text: NFC must not reach across a split token."""
    parts = []
    for _ in range(rng.randint(1, 5)):
        parts.append(rng.choice(SPECIALS + NEAR_SPECIALS + ["=", "<", ">"]))
        parts.append(rng.choice(["̸", "́", "é", "가", ""]))
    return "".join(parts)


def ascii_noise(rng):
    return "".join(rng.choice(string.printable) for _ in range(rng.randint(1, 80)))


def special_looking(rng):
    parts = []
    for _ in range(rng.randint(1, 8)):
        r = rng.random()
        if r < 0.4:
            parts.append(rng.choice(SPECIALS))
        elif r < 0.6:
            parts.append(rng.choice(NEAR_SPECIALS))
        else:
            parts.append(rng.choice([prose_short(rng), "user\n", "assistant\n", "\n", " ", cjk(rng)]))
    return "".join(parts)


def long_runs(rng):
    unit = rng.choice([" ", "\n", "\t", "a", "ab", "=", "-", "0", "é", "中", "🦙", "'s", ". "])
    return rng.choice(["", "x", " y"]) + unit * rng.randint(20, 600) + rng.choice(["", "z", "\n"])


GENERATORS = [
    (prose, 14), (python_code, 8), (cpp_code, 8), (js_code, 5), (json_text, 8), (cjk, 8),
    (emoji, 5), (combining, 6), (whitespace, 8), (digits, 6), (mixed, 10), (random_unicode, 6),
    (ascii_noise, 4), (special_looking, 6), (long_runs, 3),
    (decomposed, 5), (hangul_jamo, 3), (mark_runs, 4), (emoji_zwj, 3), (random_code_points, 4),
]


def write_golden(tok, texts_specials, path):
    lines = []
    for text, special in texts_specials:
        tok.encode_special_tokens = not special
        ids = tok.encode(text, add_special_tokens=False).ids
        lines.append(json.dumps({"text": text, "special": special, "ids": ids}, ensure_ascii=False))
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    total = sum(len(t.encode()) for t, _ in texts_specials)
    print(f"wrote {len(lines)} cases, {total} text bytes, to {path}")


def qwen3_corpus(rng, count, special_count):
    funcs = [f for f, w in GENERATORS for _ in range(w)]
    out = []
    for i in range(count + special_count):
        special = i >= count
        r = rng.random()
        if special and r < 0.6:
            text = special_looking(rng)
        elif special and r < 0.75:
            text = near_special_marks(rng)
        else:
            text = rng.choice(funcs)(rng)
        out.append((text, special))
    return out


def training_text(rng, n):
    funcs = [prose, prose, python_code, json_text, cjk, digits, whitespace, decomposed]
    return [rng.choice(funcs)(rng) for _ in range(n)]


def tiny_spm(rng):
    """SentencePiece-style BPE in the Llama-2 tokenizer.json layout."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, trainers
    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"),
                                           normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    trainer = trainers.BpeTrainer(vocab_size=1200, special_tokens=["<unk>", "<s>", "</s>"],
                                  limit_alphabet=120, max_token_length=10, show_progress=False)
    tok.train_from_iterator(training_text(rng, 1500), trainer)
    # Re-number: <unk> <s> </s>, the 256 byte-fallback tokens, then the rest (Llama-2 order).
    spec = json.loads(tok.to_str())
    trained = sorted(spec["model"]["vocab"].items(), key=lambda kv: kv[1])
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for text, _ in trained:
        vocab.setdefault(text, len(vocab))
    spec["model"]["vocab"] = vocab
    for added in spec["added_tokens"]:
        added["id"] = vocab[added["content"]]
    tok = Tokenizer.from_str(json.dumps(spec))
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False, special=True),
                            AddedToken("<sep>", rstrip=True, normalized=False, special=True)])
    tok.add_tokens([AddedToken("[WORD]", single_word=True, normalized=False),
                    AddedToken("<both>", lstrip=True, rstrip=True, normalized=False)])
    return tok


def tiny_nfc_bpe(rng):
    """Byte-level BPE with the Qwen2 split regex and an NFC normalizer (as Qwen3)."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
    from tokenizers import pre_tokenizers, trainers
    qwen = json.load(open(os.path.join(SHARED, "testdata/qwen3-tokenizer/tokenizer.json")))
    regex = qwen["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1000, special_tokens=["<|end|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(training_text(rng, 1500), trainer)
    tok.add_special_tokens([AddedToken("<|lst|>", lstrip=True, normalized=False, special=True),
                            AddedToken("<|rst|>", rstrip=True, normalized=False, special=True)])
    tok.add_tokens([AddedToken("<w>", single_word=True, normalized=False),
                    AddedToken("Ån", normalized=True),          # also matches "A\u030an", "\u212bn"
                    AddedToken("é!", normalized=True, lstrip=True),
                    AddedToken("<raw é>", normalized=False)])  # matched only as written (NFC)
    return tok


TINY_ADDED = ["<mask>", "<sep>", "[WORD]", "<both>", "<|end|>", "<|lst|>", "<|rst|>", "<w>",
              "Ån", "A\u030an", "\u212bn", "é!", "e\u0301!", "<raw é>", "<raw e\u0301>", "<s>",
              "</s>", "<unk>"]


def tiny_corpus(rng, count):
    """Added tokens with every kind of neighbour, plus ordinary and non-NFC text."""
    neighbours = ["", " ", "  ", "\t", "\n", " \n ", "\u3000", "\u00a0", "x", "_", "1", "é",
                  "e\u0301", ".", "-", "\u0301", "中", "🦙", "\u2581", " \u2581"]
    gens = [prose_short, digits, cjk, combining, decomposed, whitespace, mark_runs]
    out = []
    for i in range(count):
        parts = []
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.5:
                parts.append(rng.choice(neighbours) + rng.choice(TINY_ADDED) + rng.choice(neighbours))
            else:
                parts.append(rng.choice(gens)(rng))
        out.append(("".join(parts), i % 2 == 1))
    return out


def metaspace_variant(spm, scheme):
    """The tiny SPM vocabulary with a Metaspace pre-tokenizer instead of the
    Prepend/Replace normalizer (the layout of newer Llama/Mistral files)."""
    from tokenizers import Tokenizer
    spec = json.loads(spm.to_str())
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": False}
    spec["normalizer"] = None
    spec["pre_tokenizer"] = metaspace
    spec["decoder"] = metaspace
    return Tokenizer.from_str(json.dumps(spec))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(ROOT, "tests/tokenizer/golden/qwen3_hf_golden.jsonl"))
    parser.add_argument("--count", type=int, default=3600)
    parser.add_argument("--special-count", type=int, default=400)
    parser.add_argument("--tiny-count", type=int, default=600)
    parser.add_argument("--retrain", action="store_true",
                        help="retrain the tiny tokenizers (tokenizers' trainer breaks count ties "
                             "arbitrarily, so a retrained vocabulary differs from run to run)")
    args = parser.parse_args()

    from tokenizers import Tokenizer  # imported here so --help works without it

    tok = Tokenizer.from_file(os.path.join(SHARED, "testdata/qwen3-tokenizer/tokenizer.json"))
    rng = random.Random(20260822)
    write_golden(tok, qwen3_corpus(rng, args.count, args.special_count), args.out)

    golden_dir = os.path.dirname(args.out)
    for name, make in [("tiny_spm", tiny_spm), ("tiny_nfc_bpe", tiny_nfc_bpe)]:
        rng = random.Random(name)
        path = os.path.join(golden_dir, f"{name}_tokenizer.json")
        tiny = make(rng)  # always run: keeps the corpus rng stream identical
        if args.retrain or not os.path.exists(path):
            tiny.save(path, pretty=False)
        else:
            tiny = Tokenizer.from_file(path)
        write_golden(tiny, tiny_corpus(rng, args.tiny_count),
                     os.path.join(golden_dir, f"{name}_golden.jsonl"))
        if name == "tiny_spm":
            spm = tiny
    for scheme in ("first", "always"):
        name = f"tiny_spm_metaspace_{scheme}"
        rng = random.Random(name)
        tiny = metaspace_variant(spm, scheme)
        tiny.save(os.path.join(golden_dir, f"{name}_tokenizer.json"), pretty=False)
        write_golden(tiny, tiny_corpus(rng, args.tiny_count // 2),
                     os.path.join(golden_dir, f"{name}_golden.jsonl"))


if __name__ == "__main__":
    main()
