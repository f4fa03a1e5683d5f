#include "spec/cap_controller.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "core/timer.h"
#include "model/verify_capture.h"

namespace cairn::spec {

double VerifyCostCurve::At(int width) const {
  if (seconds.empty()) return 1.0;
  if (width <= 1) return seconds[0];
  if (width <= max_width()) return seconds[static_cast<size_t>(width - 1)];
  if (max_width() == 1) return seconds[0] * width;
  const double slope = seconds.back() - seconds[seconds.size() - 2];
  return seconds.back() + std::max(0.0, slope) * (width - max_width());
}

VerifyCostCurve MeasureVerifyCost(const model::Model& model, ThreadPool& pool, int max_width, int depth,
                                  int iterations) {
  VerifyCostCurve curve;
  auto state = model.NewState();
  // A fixed pseudo-random context of `depth` tokens.
  std::vector<int32_t> context(static_cast<size_t>(depth));
  for (int i = 0; i < depth; ++i) context[i] = static_cast<int32_t>((i * 7919 + 13) % model.n_vocab());
  model::ForwardResult result;
  model::ForwardRequest prefill;
  prefill.tokens = context;
  model.Forward(*state, prefill, &result, pool);
  const model::StateSnapshot snapshot = state->Snapshot();
  model::VerifyCapture capture;
  std::vector<int32_t> block(static_cast<size_t>(max_width));
  for (int i = 0; i < max_width; ++i) block[i] = static_cast<int32_t>((i * 104729 + 7) % model.n_vocab());
  for (int w = 1; w <= max_width; ++w) {
    std::vector<double> times;
    for (int it = 0; it < iterations + 1; ++it) {  // the first run warms up
      state->Restore(snapshot);
      model::ForwardRequest req;
      req.tokens = std::span<const int32_t>(block.data(), static_cast<size_t>(w));
      req.all_logits = true;
      req.verify = w > 1 ? &capture : nullptr;
      Stopwatch watch;
      model.Forward(*state, req, &result, pool);
      if (w > 1) model.RollbackVerify(*state, capture, 1, pool);
      if (it > 0) times.push_back(watch.Seconds());
    }
    // The minimum, not the median: interference from other processes only
    // ever adds time, and the curve is cached on disk, so one busy moment
    // must not skew it for good.
    curve.seconds.push_back(*std::min_element(times.begin(), times.end()));
  }
  return curve;
}

namespace {

std::filesystem::path CacheFile() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::filesystem::path(xdg) / "cairn" / "spec-calibration.json";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::filesystem::path(home) / ".cache" / "cairn" / "spec-calibration.json";
  }
  return {};
}

std::string CacheKey(const std::string& path, int threads, int max_width, int iterations) {
  struct stat st {};
  std::string abs = path;
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(path, ec);
  if (!ec) abs = canonical.string();
  if (::stat(path.c_str(), &st) != 0) return {};
  return fmt::format("v2|{}|{}|{}|w{}|i{}|t{}", abs, static_cast<int64_t>(st.st_size),
                     static_cast<int64_t>(st.st_mtime), max_width, iterations, threads);
}

std::mutex& CacheMutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, VerifyCostCurve>& MemoryCache() {
  static std::map<std::string, VerifyCostCurve> cache;
  return cache;
}

}  // namespace

VerifyCostCurve CalibratedVerifyCost(const model::Model& model, const std::string& model_path, ThreadPool& pool,
                                     bool use_disk, int max_width, int iterations) {
  const std::string key = CacheKey(model_path, pool.num_threads(), max_width, iterations);
  if (key.empty()) return MeasureVerifyCost(model, pool, max_width, 32, iterations);
  std::lock_guard<std::mutex> lock(CacheMutex());
  if (auto it = MemoryCache().find(key); it != MemoryCache().end()) return it->second;
  const std::filesystem::path file = use_disk ? CacheFile() : std::filesystem::path();
  nlohmann::json doc = nlohmann::json::object();
  if (!file.empty()) {
    std::ifstream in(file);
    if (in) {
      try {
        doc = nlohmann::json::parse(in);
        if (doc.contains(key)) {
          VerifyCostCurve curve;
          curve.seconds = doc[key].at("seconds").get<std::vector<double>>();
          if (!curve.empty()) {
            MemoryCache()[key] = curve;
            return curve;
          }
        }
      } catch (const std::exception& e) {
        LogWarn("ignoring unreadable calibration cache {}: {}", file.string(), e.what());
        doc = nlohmann::json::object();
      }
    }
  }
  VerifyCostCurve curve = MeasureVerifyCost(model, pool, max_width, 32, iterations);
  MemoryCache()[key] = curve;
  if (!file.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    doc[key] = {{"seconds", curve.seconds}};
    const std::filesystem::path tmp = file.string() + ".tmp";
    std::ofstream out(tmp);
    out << doc.dump(1) << "\n";
    out.close();
    if (out) std::filesystem::rename(tmp, file, ec);
  }
  return curve;
}

double ExpectedCommitted(double a, int cap) {
  if (a >= 1.0) return cap + 1.0;
  if (a <= 0.0) return 1.0;
  return (1.0 - std::pow(a, cap + 1)) / (1.0 - a);
}

double ModelledRate(const VerifyCostCurve& curve, double a, double draft_cost, int cap) {
  return ExpectedCommitted(a, cap) / (curve.At(cap + 1) + cap * draft_cost);
}

int BestCap(const VerifyCostCurve& curve, double a, double draft_cost, int max_cap) {
  int best = 0;
  double best_rate = ModelledRate(curve, a, draft_cost, 0);
  for (int k = 1; k <= max_cap; ++k) {
    const double r = ModelledRate(curve, a, draft_cost, k);
    if (r > best_rate * 1.03) {  // 3% hysteresis against noise in the curve
      best = k;
      best_rate = r;
    }
  }
  return best;
}

CapController::CapController(VerifyCostCurve curve, CapControllerOptions options)
    : curve_(std::move(curve)), options_(options), acceptance_(options.prior_acceptance) {
  positions_.resize(static_cast<size_t>(std::max(0, options_.max_cap)));
  verify_.resize(positions_.size() + 1);
  double a = 1.0;
  for (Position& p : positions_) {
    a *= acceptance_;
    p.accepted = a;
  }
  cap_ = options_.fixed_cap >= 0 ? options_.fixed_cap : PickCap();
}

std::vector<CapController::Position> CapController::Estimates() const {
  std::vector<Position> est = positions_;
  for (size_t i = 0; i < est.size(); ++i) {
    const Position prev = i == 0 ? Position{1.0, 1.0, 1} : est[i - 1];
    if (est[i].observations == 0) {
      est[i].proposed = prev.proposed;
      est[i].accepted = prev.accepted * acceptance_;
    }
    // Monotone in i, and nothing is accepted that was not proposed.
    est[i].proposed = std::min(est[i].proposed, prev.proposed);
    est[i].accepted = std::min({est[i].accepted, prev.accepted, est[i].proposed});
  }
  return est;
}

double CapController::ModelledRate(int cap) const { return ModelledRate(Estimates(), cap); }

double CapController::ModelledRate(const std::vector<Position>& est, int cap) const {
  double committed = 1.0, drafted = 0.0;
  for (int i = 0; i < std::min<int>(cap, static_cast<int>(est.size())); ++i) {
    committed += est[static_cast<size_t>(i)].accepted;
    drafted += est[static_cast<size_t>(i)].proposed;
  }
  // verify(1 + n) at a fractional width: linear between the integer widths.
  const double width = 1.0 + drafted;
  const int w0 = static_cast<int>(width);
  const double verify = VerifySeconds(w0) + (width - w0) * (VerifySeconds(w0 + 1) - VerifySeconds(w0));
  return committed / (verify + drafted * options_.draft_cost);
}

int CapController::PickCap() const {
  const std::vector<Position> est = Estimates();
  int best = 0;
  double best_rate = ModelledRate(est, 0);
  for (int k = 1; k <= options_.max_cap; ++k) {
    const double r = ModelledRate(est, k);
    if (r > best_rate * 1.03) {  // 3% hysteresis against noise in the curve
      best = k;
      best_rate = r;
    }
  }
  return best;
}

double CapController::ModelledBestRate() const {
  const std::vector<Position> est = Estimates();
  double best = ModelledRate(est, 0);
  for (int k = 1; k <= options_.max_cap; ++k) best = std::max(best, ModelledRate(est, k));
  return best;
}

int CapController::NextCap() {
  if (options_.fixed_cap >= 0) return round_cap_ = options_.fixed_cap;
  if (cap_ == 0) {
    round_cap_ = ++parked_rounds_ % kProbeEvery == 0 ? std::min(2, options_.max_cap) : 0;
  } else if (++explore_rounds_ % kExploreEvery == 0) {
    round_cap_ = std::min(cap_ + kExploreStep, options_.max_cap);
  } else {
    round_cap_ = cap_;
  }
  return round_cap_;
}

void CapController::Observe(int drafted, int accepted) {
  if (drafted <= 0) return;
  for (int i = 0; i < accepted; ++i) acceptance_ += options_.alpha * (1.0 - acceptance_);
  if (accepted < drafted) acceptance_ += options_.alpha * (0.0 - acceptance_);
  // Positions the round could reach: its cap (a lookup draft may run longer).
  const int reach = std::min<int>(std::max(round_cap_, drafted), static_cast<int>(positions_.size()));
  for (int i = 1; i <= reach; ++i) {
    Position& p = positions_[static_cast<size_t>(i - 1)];
    ++p.observations;
    // A plain average over the first 1 / alpha observations, then the EMA.
    const double w = std::max(options_.alpha, 1.0 / static_cast<double>(p.observations));
    p.proposed += w * ((drafted >= i ? 1.0 : 0.0) - p.proposed);
    p.accepted += w * ((accepted >= i ? 1.0 : 0.0) - p.accepted);
  }
  if (options_.fixed_cap >= 0) return;
  ++rounds_;
  if (cap_ == 0 || rounds_ % kRepickRounds == 0) {
    cap_ = PickCap();
    if (cap_ > 0) parked_rounds_ = 0;
  }
}

double CapController::VerifySeconds(int width) const {
  const size_t i = static_cast<size_t>(std::max(1, width) - 1);
  if (i < verify_.size() && verify_[i].observations > 0) return verify_[i].seconds;
  return curve_.At(width) * curve_scale_;
}

void CapController::ObserveVerifyCost(double seconds, int width) {
  if (width < 1 || seconds <= 0 || !options_.measure_draft_cost) return;
  const double prior = curve_.At(width);
  if (prior > 0) {
    ++verify_observations_;
    const double w = std::max(options_.alpha, 1.0 / static_cast<double>(verify_observations_));
    curve_scale_ += w * (seconds / prior - curve_scale_);
  }
  const size_t i = static_cast<size_t>(width - 1);
  if (i >= verify_.size()) return;
  WidthCost& c = verify_[i];
  ++c.observations;
  c.seconds += std::max(options_.alpha * 4, 1.0 / static_cast<double>(c.observations)) * (seconds - c.seconds);
}

void CapController::ObserveDraftCost(double seconds, int drafted) {
  if (drafted <= 0 || seconds < 0 || !options_.measure_draft_cost) return;
  const double per_token = seconds / drafted;
  options_.draft_cost = draft_cost_observed_ ? 0.8 * options_.draft_cost + 0.2 * per_token : per_token;
  draft_cost_observed_ = true;
}

}  // namespace cairn::spec
