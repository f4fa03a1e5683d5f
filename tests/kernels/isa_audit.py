#!/usr/bin/env python3
"""Audits built code: every function uses only instructions its ISA target guarantees.

Highway compiles each kernel once per target, in namespaces N_AVX3_DL, N_AVX3,
N_AVX2, N_SSE4, N_SSSE3, N_EMU128 and N_SCALAR, and dispatch runs a target only
when the CPU check for it passes. A function of one target that contains an
instruction outside that target's check dies with SIGILL on a CPU that passes
the check but lacks the instruction (Highway 1.0.3's AVX3_DL string compiled
VEX AVX-VNNI code that Zen 4 and Ice Lake lack: docs/kernels-matmul.md).

The audit disassembles binaries and static libraries with binutils objdump,
assigns each function the target named in its demangled name (the most
permissive one when several appear, e.g. std::function thunks whose template
arguments name a lambda of a target; code in no N_* namespace is x86-64
baseline, since Cairn builds without -march) and checks every instruction
against the rules below. It exits 1 and lists each violation (function,
address, instruction, rule) when there is one.

AArch64 binaries (cross builds, scripts/check-arm-tests.sh) are audited with
aarch64-linux-gnu-objdump against the Arm rules (ARM_RULES): Highway's NEON
target (N_NEON, checked: AdvSIMD + AES) and the portable and baseline code
(armv8-a) may not contain SVE, dotprod, I8MM, BF16, FP16 arithmetic, LSE
atomics, CRC32 or the other optional extensions; SVE targets (N_SVE,
N_SVE_256) may add SVE and FP16, SVE2 targets (N_SVE2, N_SVE2_128) SVE2.
--arm-dotprod: the binary was built with -march=armv8.2-a+dotprod, so
AdvSIMD sdot/udot and the Armv8.1/8.2 mandatory extensions (LSE, RDM, CRC32)
are baseline. libgcc's outline atomics (__aarch64_*) pick
LSE or LL/SC at run time and are not audited.

Usage: isa_audit.py [--arm-dotprod] FILE [FILE ...]
"""

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

# Targets from the least to the most permissive. Each target's rules are the
# instructions it must not contain; a rule applies to every target listed
# before the one that introduces the extension.
TARGETS = ["BASELINE", "SSSE3", "SSE4", "AVX2", "AVX3", "AVX3_DL"]

NAMESPACE_TARGET = {
    "N_SCALAR": "BASELINE",
    "N_EMU128": "BASELINE",
    "N_SSSE3": "SSSE3",
    "N_SSE4": "SSE4",
    "N_AVX2": "AVX2",
    "N_AVX3": "AVX3",
    "N_AVX3_DL": "AVX3_DL",
}


@dataclass(frozen=True)
class Rule:
    name: str  # extension, as reported
    allowed_from: str  # first target whose CPU check guarantees it (None: no target)
    mnemonic: re.Pattern = None  # matched against the mnemonic
    operands: re.Pattern = None  # matched against the operand text
    line: re.Pattern = None  # matched against the whole instruction text


def mn(pattern):
    return re.compile(r"^(?:" + pattern + r")$")


# Extensions no compiled target guarantees (Highway 1.0.3's AVX3_DL check:
# AVX512 F/VL/DQ/BW + VNNI, VPCLMULQDQ, VBMI2, VAES, VPOPCNTDQ, BITALG; Cairn
# additionally requires VBMI there, see kernels/cpu_features.cc).
NEVER = None
RULES = [
    Rule("AVX-VNNI (VEX-encoded VNNI)", NEVER, line=re.compile(r"\{vex\}\s*vpdp(bus|ws)ds?\b")),
    Rule("AVX-VNNI-INT8/INT16", NEVER, mnemonic=mn(r"vpdpb(ss|su|uu)ds?|vpdpw(su|us|uu)ds?")),
    Rule("AVX512-BF16", NEVER, mnemonic=mn(r"vdpbf16ps|vcvtne2ps2bf16|vcvtneps2bf16")),
    Rule("AVX512-FP16", NEVER,
         mnemonic=mn(r"v(add|sub|mul|div|min|max|sqrt|rcp|rsqrt|fc?madd|fmsub|fnm(add|sub)|getexp|getmant|"
                     r"reduce|rndscale|scalef|fpclass|cmp|comi|ucomi)[a-z0-9]*[ps]h|"
                     r"vcvt(u?(dq|qq|w)|pd)2ph[a-z]*|vcvtps2phx|vcvts[sd]2sh|vcvtsh2[a-z0-9]+|vcvtph2(?!ps\b)[a-z0-9]+|"
                     r"vmovw|vmovsh|vf[c]?mul[c]?[ps]h")),
    Rule("AMX", NEVER, mnemonic=mn(r"ldtilecfg|sttilecfg|tileloadd(t1)?|tilestored|tilerelease|tilezero|tdp[a-z0-9]+")),
    Rule("AVX512-IFMA", NEVER, mnemonic=mn(r"vpmadd52[lh]uq")),
    Rule("AVX512-CD", NEVER, mnemonic=mn(r"vpconflict[dq]|vplzcnt[dq]|vpbroadcastm[a-z0-9]+")),
    Rule("GFNI", NEVER, mnemonic=mn(r"v?gf2p8[a-z0-9]+")),
    # AVX3_DL extensions.
    Rule("AVX512-VNNI", "AVX3_DL", mnemonic=mn(r"vpdp(bus|ws)ds?")),
    Rule("AVX512-VBMI", "AVX3_DL", mnemonic=mn(r"vpermb|vpermi2b|vpermt2b|vpmultishiftqb")),
    Rule("AVX512-VBMI2", "AVX3_DL", mnemonic=mn(r"vpsh[lr]dv?[wdq]|vpcompress[bw]|vpexpand[bw]")),
    Rule("AVX512-BITALG", "AVX3_DL", mnemonic=mn(r"vpopcnt[bw]|vpshufbitqmb")),
    Rule("AVX512-VPOPCNTDQ", "AVX3_DL", mnemonic=mn(r"vpopcnt[dq]")),
    Rule("VAES / VPCLMULQDQ (256/512-bit)", "AVX3_DL", mnemonic=mn(r"vaes(enc|dec)(last)?|vpclmul[a-z]*"),
         operands=re.compile(r"%[yz]mm")),
    # AVX-512 F/VL/DQ/BW (AVX3): EVEX-only registers, masks, broadcasts and mnemonics.
    Rule("AVX-512 (zmm register)", "AVX3", operands=re.compile(r"%zmm")),
    Rule("AVX-512 (xmm/ymm16-31)", "AVX3", operands=re.compile(r"%[xy]mm(1[6-9]|2[0-9]|3[01])\b")),
    Rule("AVX-512 (opmask)", "AVX3", operands=re.compile(r"%k[0-7]\b|\{%k[0-7]\}")),
    Rule("AVX-512 (embedded broadcast)", "AVX3", operands=re.compile(r"\{1to\d+\}")),
    Rule("AVX-512 (EVEX encoding)", "AVX3", line=re.compile(r"\{evex\}")),
    Rule("AVX-512 (EVEX-only mnemonic)", "AVX3",
         mnemonic=mn(r"k[a-z]+[bwdq]|vpternlog[dq]|vperm[it]2[a-z]+|vpmov[usq]*[bwdq][bwdq]|vpmov[bwdq]2m|vpmovm2[bwdq]|"
                     r"vpro[lr]v?[dq]|vpsraq|vpsravq|vpsrav?w|vpsllvw|vpsrlvw|vpabsq|vpm(ax|in)[su]q|vpmullq|"
                     r"vrcp14[ps][sd]|vrsqrt14[ps][sd]|vgetexp[ps][sd]|vgetmant[ps][sd]|vfixupimm[ps][sd]|"
                     r"vscalef[ps][sd]|vrndscale[ps][sd]|vreduce[ps][sd]|vrange[ps][sd]|vfpclass[ps][sd]|"
                     r"vdbpsadbw|vpcompress[dq]|vcompressp[sd]|vpexpand[dq]|vexpandp[sd]|valign[dq]|"
                     r"vcvt[a-z]*2u[a-z]+|vcvtu[a-z0-9]+|vcvt[a-z]*2qq|vcvtqq2[a-z]+|vcvtt[a-z]*2qq|"
                     r"vpcmpu?[bwdq]|vpcmp(eq|gt)[bwdq]k|vptestn?m[bwdq]|vpblendm[bwdq]|vblendmp[sd]|"
                     r"v(insert|extract)[fi](32x4|32x8|64x2|64x4)|vshuf[fi](32x4|64x2)|vbroadcast[fi](32x[248]|64x[24])|"
                     r"vmovdq[au](8|16|32|64)|vpermw|vpsllvw")),
    # AVX2 group (AVX, AVX2, FMA, F16C, BMI1/2, LZCNT): any VEX instruction.
    Rule("AVX/AVX2/FMA/F16C (VEX)", "AVX2", mnemonic=mn(r"v[a-z0-9]+"),),
    Rule("AVX (ymm register)", "AVX2", operands=re.compile(r"%ymm")),
    # tzcnt is left out: GCC emits `rep bsf` for count-trailing-zeros in
    # generic code, which objdump shows as tzcnt and which runs as bsf on CPUs
    # without BMI1.
    Rule("BMI1/BMI2/LZCNT", "AVX2", mnemonic=mn(r"andn|bextr|blsi|blsr|blsmsk|bzhi|pdep|pext|rorx|sarx|shlx|shrx|mulx|lzcnt")),
    # SSE4.1/4.2 and SSSE3 (Highway's SSE4 and SSSE3 targets).
    Rule("SSE4.1/SSE4.2", "SSE4",
         mnemonic=mn(r"pmulld|pmuldq|pminsb|pminsd|pminud|pminuw|pmaxsb|pmaxsd|pmaxud|pmaxuw|ptest|pblendvb|blendvp[sd]|"
                     r"pblendw|blendp[sd]|round[ps][sd]|dpp[sd]|pextr[bdq]|pinsr[bdq]|extractps|insertps|"
                     r"pmov[sz]x[bwd][wdq]|pcmpeqq|pcmpgtq|packusdw|phminposuw|mpsadbw|movntdqa|"
                     r"pcmp[ei]str[im]|crc32[bwlq]?|popcnt")),
    Rule("SSSE3", "SSSE3",
         mnemonic=mn(r"pshufb|palignr|pmaddubsw|pmulhrsw|phaddw|phaddd|phaddsw|phsubw|phsubd|phsubsw|psign[bwd]|pabs[bwd]")),
]


# AArch64: the targets from the least to the most permissive, and the rules.
ARM_TARGETS = ["BASELINE", "NEON", "SVE", "SVE2"]

ARM_NAMESPACE_TARGET = {
    "N_SCALAR": "BASELINE",
    "N_EMU128": "BASELINE",
    "N_NEON": "NEON",
    "N_SVE": "SVE",
    "N_SVE_256": "SVE",
    "N_SVE2": "SVE2",
    "N_SVE2_128": "SVE2",
}

_Z = re.compile(r"\bz\d{1,2}\b")
_V = re.compile(r"\bv\d{1,2}\.")
ARM_DOTPROD_RULE = "AdvSIMD dotprod (sdot/udot)"
ARM_RULES = [
    # Extensions no compiled target guarantees (armv8-a baseline; Highway's
    # NEON target requires AES, its SVE / SVE2 targets the SVE / SVE2 HWCAPs).
    Rule(ARM_DOTPROD_RULE, NEVER, mnemonic=mn(r"[su]dot"), operands=_V),
    Rule("I8MM", NEVER, mnemonic=mn(r"[su]mmla|usmmla|usdot|sudot")),
    Rule("BF16", NEVER, mnemonic=mn(r"bfdot|bfmmla|bfmlal[bt]?|bfcvtn?2?|bfcvtnt")),
    Rule("LSE atomics", NEVER,
         mnemonic=mn(r"(ld(add|clr|eor|set|smax|smin|umax|umin)|swp|casp?)(a|l|al)?[bh]?")),
    Rule("CRC32", NEVER, mnemonic=mn(r"crc32c?[bhwx]")),
    Rule("RDM (sqrdmlah/sqrdmlsh)", NEVER, mnemonic=mn(r"sqrdml[as]h"), operands=_V),
    Rule("SHA2/SHA3/SHA512/SM3/SM4", NEVER,
         mnemonic=mn(r"sha1[a-z0-9]+|sha256[a-z0-9]+|sha512[a-z0-9]+|eor3|bcax|rax1|xar|sm3[a-z0-9]+|sm4e(kc)?"),
         operands=re.compile(r"^(?!.*\bz\d)")),
    Rule("FHM/FCMA/JSCVT/FRINTTS", NEVER,
         mnemonic=mn(r"fmlal2?|fmlsl2?|fcmla|fcadd|fjcvtzs|frint(32|64)[xz]"), operands=re.compile(r"^(?!.*\bz\d)")),
    Rule("RCPC / MTE", NEVER, mnemonic=mn(r"ldapr[bh]?|ldapur[a-z]*|stlur[bh]?|irg|gmi|subp|subps|st2?g|stz2?g|ldg|stgp")),
    # AES and 64-bit PMULL: Highway's NEON target requires AES.
    Rule("AES / PMULL (crypto)", "NEON", mnemonic=mn(r"aes[de]|aesi?mc|pmull2?"),
         operands=re.compile(r"\.1q|\.16b")),
    # SVE: z / p registers and the SVE-only scalar forms.
    Rule("SVE (z/p registers)", "SVE", operands=re.compile(r"\b[zp]\d{1,2}(\.[bhsdq]\b|/[zm]\b|\b)")),
    Rule("SVE (scalar forms)", "SVE",
         mnemonic=mn(r"rdvl|addvl|addpl|cnt[bhwd]|(inc|dec|sqinc|uqinc|sqdec|uqdec)[bhwd]|setffr")),
    # FP16 arithmetic (FEAT_FP16: SVE requires it); conversions to/from F32 are baseline.
    Rule("FP16 arithmetic", "SVE", mnemonic=re.compile(r"^(?!fcvt[ln]?2?$|fcvt$)f[a-z0-9]+$"),
         operands=re.compile(r"\bv\d{1,2}\.[48]h\b|(^|[ ,])h\d{1,2}\b")),
    # SVE2-only instructions (on z registers).
    Rule("SVE2", "SVE2",
         mnemonic=mn(r"[su](add|sub)[lw][bt]|[su]ml[as]l[bt]|[su]mull[bt]|sqdm(ull|lal|lsl)[bt]|"
                     r"u?sq?xtu?n[bt]|sqxtun[bt]|u?q?r?shrn[bt]|sq?r?shrun?[bt]|r?(add|sub)hn[bt]|[su]shll[bt]|"
                     r"eor3|bcax|bsl|bsl[12]n|nbsl|xar|histcnt|histseg|n?match|while(ge|gt|hi|hs|rw|wr)|"
                     r"adcl[bt]|sbcl[bt]|s?q?cadd|cmla|sqrdcmlah|[su]aba?l[bt]|[su]abd?l[bt]|"
                     r"[su]h(add|sub)r?|[su]rhadd|[su]qrshl|[su]qshlu?|[su]rshl|[su]sra|[su]rsra|sli|sri|"
                     r"[su]minp|[su]maxp|addp|faddp|fmaxn?m?p|fminn?m?p|tbx|sqrdml[as]h|sqdmulh|"
                     r"sqrdmulh|[su]adalp|pmul|pmull[bt]|bdep|bext|bgrp"),
         operands=re.compile(r"\b[zp]\d{1,2}\b")),
]

# Functions not audited: libgcc's outline atomics choose LSE or LL/SC at run time.
ARM_EXEMPT = re.compile(r"^__aarch64_")


@dataclass(frozen=True)
class Arch:
    name: str
    targets: list
    namespace_target: dict
    rules: list
    objdump: str
    exempt: re.Pattern = None


X86 = Arch("x86-64", TARGETS, NAMESPACE_TARGET, RULES, "objdump")
AARCH64 = Arch("aarch64", ARM_TARGETS, ARM_NAMESPACE_TARGET, ARM_RULES, "aarch64-linux-gnu-objdump", ARM_EXEMPT)


# Baseline of an -march=armv8.2-a+dotprod build: dotprod and the extensions
# Armv8.1/8.2 make mandatory.
ARM_V82_DOTPROD = {ARM_DOTPROD_RULE, "LSE atomics", "RDM (sqrdmlah/sqrdmlsh)", "CRC32"}


def aarch64_arch(dotprod=False):
    """The AArch64 rules; dotprod: the build's baseline is -march=armv8.2-a+dotprod
    (AdvSIMD sdot/udot, LSE, RDM and CRC32 allowed everywhere)."""
    if not dotprod:
        return AARCH64
    rules = [r for r in ARM_RULES if r.name not in ARM_V82_DOTPROD]
    return Arch(AARCH64.name, ARM_TARGETS, ARM_NAMESPACE_TARGET, rules, AARCH64.objdump, ARM_EXEMPT)


def target_of(function_name, arch=X86):
    """The most permissive target whose namespace the demangled name mentions."""
    best = "BASELINE"
    for ns in re.findall(r"\b(N_[A-Z0-9_]+)::", function_name):
        target = arch.namespace_target.get(ns)
        if target and arch.targets.index(target) > arch.targets.index(best):
            best = target
    return best


def rule_applies(rule, target, arch=X86):
    return rule.allowed_from is None or arch.targets.index(target) < arch.targets.index(rule.allowed_from)


def violations_in_instruction(target, text, arch=X86):
    """Rules that the instruction text (mnemonic and operands) breaks on target."""
    # Prefixes such as {vex}, {evex}, rep, lock, notrack, bnd, data16 precede the mnemonic.
    words = text.split()
    mnemonic = ""
    rest_at = 0
    for i, word in enumerate(words):
        if word.startswith("{") or word in ("rep", "repz", "repnz", "repe", "repne", "lock", "notrack", "bnd",
                                              "data16", "addr32", "cs", "ds", "es", "fs", "gs", "ss"):
            continue
        mnemonic = word
        rest_at = i + 1
        break
    operands = " ".join(words[rest_at:])
    broken = []
    for rule in arch.rules:
        if not rule_applies(rule, target, arch):
            continue
        if rule.mnemonic is not None and not rule.mnemonic.match(mnemonic):
            continue
        if rule.operands is not None and not rule.operands.search(operands):
            continue
        if rule.line is not None and not rule.line.search(text):
            continue
        broken.append(rule.name)
    return broken


FUNCTION_RE = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSTRUCTION_RE = re.compile(r"^\s+([0-9a-f]+):\s+(.*)$")


def audit_disassembly(lines, functions_per_target=None, arch=X86):
    """Yields (function, address, instruction, target, rule) for every violation.

    functions_per_target, when given, counts the functions seen per target."""
    function, target = None, "BASELINE"
    for line in lines:
        line = line.rstrip("\n")
        m = FUNCTION_RE.match(line)
        if m:
            function = m.group(2)
            if arch.exempt is not None and arch.exempt.match(function):
                function = None
                continue
            target = target_of(function, arch)
            if functions_per_target is not None:
                functions_per_target[target] = functions_per_target.get(target, 0) + 1
            continue
        m = INSTRUCTION_RE.match(line)
        if not m or function is None:
            continue
        # Drop objdump's symbol annotations (<f+0x10>) and comments (x86 "# 0x...",
        # AArch64 "// #16"); AArch64 immediates start with '#', so cut there only on x86.
        text = m.group(2).split("//")[0]
        if arch is X86:
            text = text.split("#")[0]
        text = text.split("<")[0].strip()
        if not text or text.startswith("(bad)") or text.startswith(".inst") or text.startswith("udf"):
            continue
        for rule in violations_in_instruction(target, text, arch):
            yield function, m.group(1), text, target, rule


def arch_of(path, arm_dotprod=False):
    """X86 or the AArch64 rules, from the ELF header's e_machine."""
    with open(path, "rb") as f:
        header = f.read(20)
    machine = int.from_bytes(header[18:20], "little") if header[:4] == b"\x7fELF" else 0
    if machine == 0xB7:
        return aarch64_arch(arm_dotprod)
    return X86


def disassemble(path, arch=X86):
    # A native AArch64 machine has no cross objdump: its own objdump reads the file.
    objdump = arch.objdump if shutil.which(arch.objdump) else "objdump"
    cmd = [objdump, "-d", "-C", "-w", "--no-show-raw-insn", path]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, errors="replace")
    yield from proc.stdout
    if proc.wait() != 0:
        raise SystemExit(f"isa_audit: {' '.join(cmd)} failed with exit code {proc.returncode}")


def main(argv):
    args = argv[1:]
    arm_dotprod = "--arm-dotprod" in args
    paths = [a for a in args if a != "--arm-dotprod"]
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    total = 0
    for path in paths:
        arch = arch_of(path, arm_dotprod)
        functions_per_target = {}
        found = list(audit_disassembly(disassemble(path, arch), functions_per_target, arch))
        counts = ", ".join(f"{t} {functions_per_target.get(t, 0)}" for t in arch.targets)
        print(f"{path} ({arch.name}): functions per target: {counts}")
        by_rule = {}
        for function, address, text, target, rule in found:
            by_rule.setdefault((target, rule), []).append((function, address, text))
        for (target, rule), hits in sorted(by_rule.items()):
            print(f"  VIOLATION {target} code uses {rule}: {len(hits)} instruction(s)")
            for function, address, text in hits[:5]:
                print(f"    {address}: {text}    in {function[:160]}")
        total += len(found)
    if total:
        print(f"isa_audit: {total} instruction(s) outside their target's ISA")
        return 1
    print("isa_audit: every function uses only its target's instructions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
