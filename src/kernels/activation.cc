// Highway implementations of kernels/activation.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/activation.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "kernels/activation-inl.h"
#include "kernels/activation.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

void ExpImpl(const float* x, float* out, int64_t n) {
  MapUnary(x, out, n, [](auto d, auto v) HWY_ATTR { return ExpV(d, v); });
}
void SigmoidImpl(const float* x, float* out, int64_t n) {
  MapUnary(x, out, n, [](auto d, auto v) HWY_ATTR { return SigmoidV(d, v); });
}
void SiluImpl(const float* x, float* out, int64_t n) {
  MapUnary(x, out, n, [](auto d, auto v) HWY_ATTR { return SiluV(d, v); });
}
void SoftplusImpl(const float* x, float* out, int64_t n) {
  MapUnary(x, out, n, [](auto d, auto v) HWY_ATTR { return SoftplusV(d, v); });
}
void SwiGluImpl(const float* gate, const float* up, float* out, int64_t n) {
  MapBinary(gate, up, out, n,
            [](auto d, auto g, auto u) HWY_ATTR { return hn::Mul(SiluV(d, g), u); });
}
void MulSigmoidImpl(const float* gate, float* x, int64_t n) {
  MapBinary(gate, x, x, n,
            [](auto d, auto g, auto v) HWY_ATTR { return hn::Mul(v, SigmoidV(d, g)); });
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(ExpImpl);
HWY_EXPORT(SigmoidImpl);
HWY_EXPORT(SiluImpl);
HWY_EXPORT(SoftplusImpl);
HWY_EXPORT(SwiGluImpl);
HWY_EXPORT(MulSigmoidImpl);

void Exp(const float* x, float* out, int64_t n) { HWY_DYNAMIC_DISPATCH(ExpImpl)(x, out, n); }
void Sigmoid(const float* x, float* out, int64_t n) { HWY_DYNAMIC_DISPATCH(SigmoidImpl)(x, out, n); }
void Silu(const float* x, float* out, int64_t n) { HWY_DYNAMIC_DISPATCH(SiluImpl)(x, out, n); }
void Softplus(const float* x, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SoftplusImpl)(x, out, n);
}
void SwiGlu(const float* gate, const float* up, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SwiGluImpl)(gate, up, out, n);
}
void MulSigmoid(const float* gate, float* x, int64_t n) {
  HWY_DYNAMIC_DISPATCH(MulSigmoidImpl)(gate, x, n);
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
