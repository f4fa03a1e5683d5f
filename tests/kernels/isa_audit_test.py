#!/usr/bin/env python3
"""Unit tests of isa_audit.py's rules on synthetic objdump output (no build needed)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import isa_audit  # noqa: E402


def audit(function, *instructions):
    lines = [f"0000000000001000 <{function}>:"]
    lines += [f"    {0x1000 + 4 * i:x}:\t{text}" for i, text in enumerate(instructions)]
    return [(target, rule) for _, _, _, target, rule in isa_audit.audit_disassembly(lines)]


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


if __name__ == "__main__":
    unittest.main()
