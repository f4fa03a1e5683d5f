#include "model/reply_tail.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace cairn::model {
namespace {

size_t GateFloats(const ModelConfig& cfg) { return 2 * static_cast<size_t>(cfg.ssm_n_v_heads); }

}  // namespace

ReplyTail::ReplyTail(const ModelConfig& config, int64_t reach) : config_(&config), reach_(std::max<int64_t>(1, reach)) {
  CAIRN_CHECK(config.is_hybrid() && !config.has_sliding());
}

size_t ReplyTail::TokenBytes(const ModelConfig& cfg) {
  return static_cast<size_t>(cfg.n_recurrent_layers()) * (2 * static_cast<size_t>(cfg.conv_dim()) + GateFloats(cfg)) *
         sizeof(float);
}

void ReplyTail::Begin(const SequenceState& state) {
  a_position_ = b_position_ = state.n_tokens();
  b_state_.Resize(state.recurrent_floats());
  std::memcpy(b_state_.data(), state.recurrent(), state.recurrent_floats() * sizeof(float));
  a_is_b_ = true;
  tokens_.clear();
  layers_.assign(static_cast<size_t>(config_->n_recurrent_layers()), LayerLog{});
}

void ReplyTail::Commit(const SequenceState& state, const VerifyCapture& capture, std::span<const int32_t> tokens) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) return;
  const int64_t now = a_position_ + static_cast<int64_t>(tokens_.size()) + n;
  if (state.n_tokens() != now || n > capture.n_tokens) {
    Fail("ReplyTail: {} tokens committed at state length {} (expected {}; capture of {})", n, state.n_tokens(), now,
         capture.n_tokens);
  }
  const size_t conv_dim = static_cast<size_t>(config_->conv_dim());
  const size_t gate = GateFloats(*config_);
  for (size_t r = 0; r < layers_.size(); ++r) {
    LayerLog& log = layers_[r];
    log.conv_inputs.insert(log.conv_inputs.end(), capture.conv_inputs[r].data(),
                           capture.conv_inputs[r].data() + n * conv_dim);
    log.qkv.insert(log.qkv.end(), capture.qkv[r].data(), capture.qkv[r].data() + n * conv_dim);
    log.gates.insert(log.gates.end(), capture.gates[r].data(), capture.gates[r].data() + n * gate);
  }
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());

  if (now - b_position_ < reach_) return;
  // a <- b (drop the log before b), b <- the live state.
  const size_t drop = static_cast<size_t>(b_position_ - a_position_);
  if (drop > 0) {
    for (LayerLog& log : layers_) {
      log.conv_inputs.erase(log.conv_inputs.begin(), log.conv_inputs.begin() + drop * conv_dim);
      log.qkv.erase(log.qkv.begin(), log.qkv.begin() + drop * conv_dim);
      log.gates.erase(log.gates.begin(), log.gates.begin() + drop * gate);
    }
    tokens_.erase(tokens_.begin(), tokens_.begin() + drop);
  }
  std::swap(a_state_, b_state_);
  a_position_ = b_position_;
  if (a_is_b_) {
    // a's state was b's: after the swap a_state_ holds it and b_state_ is empty.
    a_is_b_ = false;
  }
  b_state_.Resize(state.recurrent_floats());
  std::memcpy(b_state_.data(), state.recurrent(), state.recurrent_floats() * sizeof(float));
  b_position_ = now;
}

RecurrentSnapshotRef ReplyTail::Snapshot() const {
  if (tokens_.empty()) return nullptr;
  const AlignedBuffer<float>& base = a_is_b_ ? b_state_ : a_state_;
  AlignedBuffer<uint8_t> state(base.bytes());
  std::memcpy(state.data(), base.data(), base.bytes());
  const int64_t count = static_cast<int64_t>(tokens_.size());
  AlignedBuffer<uint8_t> log(static_cast<size_t>(count) * TokenBytes(*config_));
  uint8_t* out = log.data();
  auto put = [&](const std::vector<float>& v) {
    std::memcpy(out, v.data(), v.size() * sizeof(float));
    out += v.size() * sizeof(float);
  };
  for (const LayerLog& layer : layers_) {
    put(layer.conv_inputs);
    put(layer.qkv);
    put(layer.gates);
  }
  CAIRN_CHECK(out == log.data() + log.bytes());
  return std::make_shared<const RecurrentSnapshot>(a_position_, std::move(state), tokens_, std::move(log));
}

std::vector<RecurrenceRows> ReplayLogRows(const ModelConfig& cfg, const uint8_t* data, int64_t count) {
  const size_t conv_dim = static_cast<size_t>(cfg.conv_dim());
  const size_t gate = GateFloats(cfg);
  std::vector<RecurrenceRows> rows(static_cast<size_t>(cfg.n_recurrent_layers()));
  const float* p = reinterpret_cast<const float*>(data);
  for (RecurrenceRows& r : rows) {
    r.conv_inputs = p;
    p += count * conv_dim;
    r.qkv = p;
    p += count * conv_dim;
    r.gates = p;
    p += count * gate;
  }
  return rows;
}

}  // namespace cairn::model
