#!/usr/bin/env python3
"""Unit tests of isa_audit.py's rules on synthetic objdump output (no build needed)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import isa_audit  # noqa: E402


def audit(function, *instructions, arch=isa_audit.X86):
    lines = [f"0000000000001000 <{function}>:"]
    lines += [f"    {0x1000 + 4 * i:x}:\t{text}" for i, text in enumerate(instructions)]
    return [(target, rule) for _, _, _, target, rule in isa_audit.audit_disassembly(lines, arch=arch)]


def arm(function, *instructions, dotprod=False):
    return audit(function, *instructions, arch=isa_audit.aarch64_arch(dotprod))


NEON_FN = "void cairn::kernels::N_NEON::NeonKQuantKernel<cairn::kernels::N_NEON::NeonQ6KTraits>::Tile<1, 4>(long)"
SVE_FN = "cairn::kernels::N_SVE::Softmax(float*, long)"
SVE256_FN = "cairn::kernels::N_SVE_256::Softmax(float*, long)"
SVE2_FN = "cairn::kernels::N_SVE2::Softmax(float*, long)"
ARM_EMU_FN = "cairn::kernels::N_EMU128::Softmax(float*, long)"


AVX3_DL_FN = "void cairn::kernels::N_AVX3_DL::Blocks32Kernel<cairn::kernels::N_AVX3_DL::Q8_0Levels>::Tile<1, 1>(long)"
AVX3_FN = "cairn::kernels::N_AVX3::RmsNorm(float*, long)"
AVX2_FN = "cairn::kernels::N_AVX2::Softmax(float*, long)"
EMU_FN = "cairn::kernels::N_EMU128::Softmax(float*, long)"
PLAIN_FN = "cairn::ThreadPool::Run(long)"


class TargetOfTest(unittest.TestCase):
    def test_namespaces(self):
        self.assertEqual(isa_audit.target_of(AVX3_DL_FN), "AVX3_DL")
        self.assertEqual(isa_audit.target_of(AVX3_FN), "AVX3")
        self.assertEqual(isa_audit.target_of(AVX2_FN), "AVX2")
        self.assertEqual(isa_audit.target_of(EMU_FN), "BASELINE")
        self.assertEqual(isa_audit.target_of(PLAIN_FN), "BASELINE")

    def test_most_permissive_namespace_wins(self):
        thunk = "std::_Function_handler<void (long), cairn::kernels::N_AVX2::F(long)::{lambda(long)#1}>::_M_invoke"
        self.assertEqual(isa_audit.target_of(thunk), "AVX2")


class RulesTest(unittest.TestCase):
    def test_vex_vnni_is_rejected_in_avx3_dl(self):
        self.assertEqual(audit(AVX3_DL_FN, "{vex} vpdpbusd %ymm2,%ymm5,%ymm1"),
                         [("AVX3_DL", "AVX-VNNI (VEX-encoded VNNI)")])

    def test_evex_vnni_is_allowed_in_avx3_dl_only(self):
        self.assertEqual(audit(AVX3_DL_FN, "vpdpbusd %ymm2,%ymm5,%ymm1", "vpdpbusd %zmm5,%zmm3,%zmm2"), [])
        self.assertIn(("AVX3", "AVX512-VNNI"), audit(AVX3_FN, "vpdpbusd %zmm5,%zmm3,%zmm2"))

    def test_avx3_dl_extensions_are_rejected_in_avx3(self):
        self.assertIn(("AVX3", "AVX512-VBMI"), audit(AVX3_FN, "vpermb %zmm1,%zmm2,%zmm3"))
        self.assertIn(("AVX3", "AVX512-VBMI2"), audit(AVX3_FN, "vpshldd $0x3,%zmm1,%zmm2,%zmm3"))
        self.assertIn(("AVX3", "AVX512-VPOPCNTDQ"), audit(AVX3_FN, "vpopcntd %zmm1,%zmm2"))
        self.assertIn(("AVX3", "VAES / VPCLMULQDQ (256/512-bit)"), audit(AVX3_FN, "vaesenc %zmm1,%zmm2,%zmm3"))
        self.assertEqual(audit(AVX3_FN, "vpternlogd $0x96,%zmm1,%zmm2,%zmm3", "kmovw %k1,%eax",
                               "vaddps (%rax){1to16},%zmm1,%zmm2{%k1}"), [])

    def test_extensions_no_target_guarantees(self):
        self.assertIn(("AVX3_DL", "AVX512-BF16"), audit(AVX3_DL_FN, "vdpbf16ps %zmm1,%zmm2,%zmm3"))
        self.assertIn(("AVX3_DL", "AVX512-FP16"), audit(AVX3_DL_FN, "vaddph %zmm1,%zmm2,%zmm3"))
        self.assertIn(("AVX3_DL", "AMX"), audit(AVX3_DL_FN, "tdpbssd %tmm1,%tmm2,%tmm3"))
        # F16C conversions are not FP16 arithmetic.
        self.assertEqual(audit(AVX3_DL_FN, "vcvtph2ps %ymm1,%zmm2", "vcvtps2ph $0x0,%zmm1,%ymm2"), [])

    def test_avx512_is_rejected_in_avx2(self):
        rules = {rule for _, rule in audit(AVX2_FN, "vaddps %zmm1,%zmm2,%zmm3", "vmovups %ymm17,(%rax)",
                                               "vpternlogd $0x96,%ymm1,%ymm2,%ymm3", "vaddps %ymm1,%ymm2,%ymm3{%k1}",
                                               "{evex} vpaddd %ymm1,%ymm2,%ymm3", "vbroadcastss (%rax){1to8},%ymm1")}
        self.assertEqual(rules, {"AVX-512 (zmm register)", "AVX-512 (xmm/ymm16-31)", "AVX-512 (EVEX-only mnemonic)",
                                 "AVX-512 (opmask)", "AVX-512 (EVEX encoding)", "AVX-512 (embedded broadcast)"})
        self.assertEqual(audit(AVX2_FN, "vfmadd231ps %ymm1,%ymm2,%ymm3", "vpmaddubsw %ymm1,%ymm2,%ymm3",
                               "vcvtph2ps %xmm1,%ymm2", "shlx %eax,%ebx,%ecx", "vzeroupper"), [])

    def test_vnni_is_rejected_in_avx2(self):
        self.assertIn(("AVX2", "AVX512-VNNI"), audit(AVX2_FN, "vpdpbusd %ymm2,%ymm5,%ymm1"))

    def test_avx_and_sse4_are_rejected_in_baseline(self):
        for fn in (EMU_FN, PLAIN_FN):
            rules = {rule for _, rule in audit(fn, "vaddps %xmm1,%xmm2,%xmm3", "pshufb %xmm1,%xmm2",
                                               "pmulld %xmm1,%xmm2", "andn %eax,%ebx,%ecx")}
            self.assertEqual(rules, {"AVX/AVX2/FMA/F16C (VEX)", "SSSE3", "SSE4.1/SSE4.2", "BMI1/BMI2/LZCNT"})
        # SSE2, pause and GCC's rep bsf (shown as tzcnt) are baseline.
        self.assertEqual(audit(PLAIN_FN, "addps %xmm1,%xmm2", "pause", "tzcnt %eax,%eax", "rep stos %rax,(%rdi)",
                               "xgetbv", "cpuid"), [])



class ArmRulesTest(unittest.TestCase):
    def test_namespaces(self):
        a = isa_audit.AARCH64
        self.assertEqual(isa_audit.target_of(NEON_FN, a), "NEON")
        self.assertEqual(isa_audit.target_of(SVE_FN, a), "SVE")
        self.assertEqual(isa_audit.target_of(SVE256_FN, a), "SVE")
        self.assertEqual(isa_audit.target_of(SVE2_FN, a), "SVE2")
        self.assertEqual(isa_audit.target_of(ARM_EMU_FN, a), "BASELINE")
        self.assertEqual(isa_audit.target_of(PLAIN_FN, a), "BASELINE")

    def test_neon_code_is_armv8_advsimd(self):
        # The instructions of the NEON kernels (widening dot, table lookup,
        # F16 -> F32 conversion, FMA) and AES (Highway's NEON check) pass.
        self.assertEqual(arm(NEON_FN, "smull\tv1.8h, v2.8b, v3.8b", "smlal2\tv1.8h, v2.16b, v3.16b",
                             "sadalp\tv0.4s, v1.8h", "tbl\tv0.16b, {v1.16b}, v2.16b", "fcvt\ts0, h0",
                             "fcvtl\tv0.4s, v1.4h", "fmla\tv0.4s, v1.4s, v2.4s", "mla\tv0.4s, v1.4s, v2.s[3]",
                             "ldr\th0, [x0, #2]", "aese\tv0.16b, v1.16b", "pmull\tv0.8h, v1.8b, v2.8b",
                             "add\tx0, x0, #0x1", "ld1\t{v0.16b}, [x0]"), [])

    def test_sve_dotprod_and_others_are_rejected_in_neon(self):
        rules = {rule for _, rule in arm(NEON_FN, "sdot\tv0.4s, v1.16b, v2.16b", "ld1w\t{z0.s}, p0/z, [x0]",
                                         "ptrue\tp0.b", "cntw\tx0", "fadd\tv0.8h, v1.8h, v2.8h",
                                         "fmul\th0, h1, h2", "ldaddal\tw1, w0, [x2]", "crc32cb\tw0, w0, w1",
                                         "smmla\tv0.4s, v1.16b, v2.16b", "bfdot\tv0.4s, v1.8h, v2.8h",
                                         "sqrdmlah\tv0.8h, v1.8h, v2.8h", "sha256h\tq0, q1, v2.4s")}
        self.assertEqual(rules, {"AdvSIMD dotprod (sdot/udot)", "SVE (z/p registers)", "SVE (scalar forms)",
                                 "FP16 arithmetic", "LSE atomics", "CRC32", "I8MM", "BF16", "RDM (sqrdmlah/sqrdmlsh)",
                                 "SHA2/SHA3/SHA512/SM3/SM4"})

    def test_dotprod_build_allows_advsimd_sdot(self):
        self.assertEqual(arm(NEON_FN, "sdot\tv0.4s, v1.16b, v2.16b", dotprod=True), [])
        self.assertEqual(arm(PLAIN_FN, "udot\tv0.4s, v1.16b, v2.16b", "ldaddal\tw2, w3, [x1]",
                             "crc32cb\tw0, w0, w1", dotprod=True), [])
        self.assertIn(("NEON", "SVE (z/p registers)"), arm(NEON_FN, "ptrue\tp0.b", dotprod=True))

    def test_sve_targets(self):
        self.assertEqual(arm(SVE_FN, "ld1w\t{z0.s}, p0/z, [x0]", "fmla\tz0.s, p0/m, z1.s, z2.s", "cntw\tx0",
                             "sdot\tz0.s, z1.b, z2.b", "fadd\tv0.8h, v1.8h, v2.8h", "tbl\tz0.b, {z1.b}, z2.b",
                             "smull\tv1.8h, v2.8b, v3.8b"), [])
        self.assertIn(("SVE", "SVE2"), arm(SVE256_FN, "saddlb\tz0.h, z1.b, z2.b"))
        self.assertIn(("SVE", "SVE2"), arm(SVE_FN, "whilege\tp0.s, x0, x1"))
        self.assertEqual(arm(SVE2_FN, "saddlb\tz0.h, z1.b, z2.b", "sqxtnb\tz0.b, z1.h"), [])
        # Neither SVE target guarantees AdvSIMD dotprod or I8MM.
        self.assertIn(("SVE2", "AdvSIMD dotprod (sdot/udot)"), arm(SVE2_FN, "sdot\tv0.4s, v1.16b, v2.16b"))
        self.assertIn(("SVE2", "I8MM"), arm(SVE2_FN, "smmla\tz0.s, z1.b, z2.b"))

    def test_baseline_rejects_aes_and_sve(self):
        rules = {rule for _, rule in arm(ARM_EMU_FN, "aese\tv0.16b, v1.16b", "ld1b\t{z0.b}, p0/z, [x0]")}
        self.assertEqual(rules, {"AES / PMULL (crypto)", "SVE (z/p registers)"})

    def test_outline_atomics_are_exempt(self):
        self.assertEqual(arm("__aarch64_ldadd4_acq_rel", "ldaddal\tw0, w2, [x1]"), [])

    def test_comments_and_immediates(self):
        # AArch64 immediates start with '#', comments with '//'.
        self.assertEqual(arm(NEON_FN, "movi\tv0.16b, #0xf", "ldr\tq0, [x1, #16]  // 10 <x>"), [])


if __name__ == "__main__":
    unittest.main()
