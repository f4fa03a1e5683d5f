// SwiGLU feed-forward block: down(silu(gate(h)) * up(h)).
#include <array>
#include <span>

#include "core/error.h"
#include "core/profiler.h"
#include "kernels/activation.h"
#include "model/layers.h"

namespace cairn::model {

void Project(const ForwardChunk& c, const kernels::MatrixView& w, const float* x, int64_t n, float* y) {
  ProjectSameInput(c, {{w, y}}, x, n);
}

void ProjectSameInput(const ForwardChunk& c, std::initializer_list<Projection> projections, const float* x,
                      int64_t n) {
  prof::Scope scope(prof::kMatMul);
  std::array<kernels::MatMulOutput, kMaxSameInputProjections> outs;
  CAIRN_CHECK(projections.size() >= 1 && projections.size() <= outs.size());
  size_t k = 0;
  for (const Projection& p : projections) outs[k++] = kernels::MatMulOutput{p.w, p.y, p.w.rows};
  kernels::MatMulSameInput(std::span<const kernels::MatMulOutput>(outs.data(), k), x, outs[0].w.cols, n, *c.pool);
}

void FfnBlock(const ForwardChunk& c, const FfnWeights& w, const float* h, float* out) {
  const int64_t n = c.n;
  const int64_t ff = c.config->n_ff;
  float* gate = c.state->Scratch(kScratchFfnGate, n * ff);
  float* up = c.state->Scratch(kScratchFfnUp, n * ff);
  ProjectSameInput(c, {{w.gate, gate}, {w.up, up}}, h, n);
  {
    prof::Scope scope(prof::kNormRopeAct);
    kernels::SwiGlu(gate, up, gate, n * ff);
  }
  Project(c, w.down, gate, n, out);
}

}  // namespace cairn::model
