#include "engine/unstable_tail.h"

#include <algorithm>

namespace cairn::engine {
namespace {

using Json = nlohmann::ordered_json;

int64_t CommonPrefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

Json Message(const char* role, const char* content) {
  return Json{{"role", role}, {"content", content}};
}

}  // namespace

UnstableTail::UnstableTail(std::vector<TailProbe> probes) : probes_(std::move(probes)) {
  std::stable_sort(probes_.begin(), probes_.end(), [](const TailProbe& a, const TailProbe& b) {
    return a.tail.size() > b.tail.size();
  });
}

UnstableTail UnstableTail::Measure(const RenderTokens& render, const Json& default_kwargs) {
  const Json base = default_kwargs.is_object() ? default_kwargs : Json::object();
  std::vector<Json> variants = {base, base, base};
  variants[1]["enable_thinking"] = true;
  variants[2]["enable_thinking"] = false;

  Json with_reasoning_field = Message("assistant", "b");
  with_reasoning_field["reasoning_content"] = "r";
  const std::vector<Json> replies = {Message("assistant", "b"),
                                     Message("assistant", "<think>\nr\n</think>\n\nb"),
                                     with_reasoning_field};

  std::vector<TailProbe> probes;
  for (const Json& kwargs : variants) {
    try {
      const Json first = Json::array({Message("user", "a")});
      const std::vector<int32_t> p = render(first, true, kwargs);
      const std::vector<int32_t> ng = render(first, false, kwargs);
      const int64_t g = static_cast<int64_t>(p.size()) - CommonPrefix(p, ng);
      int64_t u = 0;
      for (const Json& reply : replies) {
        const Json next = Json::array({first[0], reply, Message("user", "c")});
        try {
          const std::vector<int32_t> rendered = render(next, true, kwargs);
          u = std::max(u, static_cast<int64_t>(p.size()) - CommonPrefix(p, rendered));
        } catch (const std::exception&) {
          // A template may reject one reply shape; the others still count.
        }
      }
      if (g <= 0 || g > kMaxTail || u > kMaxUnstable) continue;
      std::vector<int32_t> tail(p.end() - g, p.end());
      auto same = std::find_if(probes.begin(), probes.end(),
                               [&](const TailProbe& probe) { return probe.tail == tail; });
      if (same != probes.end()) {
        same->unstable = std::max(same->unstable, u);
      } else {
        probes.push_back({std::move(tail), u});
      }
    } catch (const std::exception&) {
      // Probe failures are ignored: that variant falls back to unstable = 1.
    }
  }
  return UnstableTail(std::move(probes));
}

int64_t UnstableTail::UnstableLength(std::span<const int32_t> prompt) const {
  for (const TailProbe& probe : probes_) {
    if (probe.tail.size() > prompt.size()) continue;
    if (std::equal(probe.tail.begin(), probe.tail.end(), prompt.end() - probe.tail.size())) {
      return std::max<int64_t>(1, probe.unstable);
    }
  }
  return 1;
}

int64_t UnstableTail::StableBoundary(std::span<const int32_t> prompt) const {
  return std::max<int64_t>(0, static_cast<int64_t>(prompt.size()) - UnstableLength(prompt));
}

}  // namespace cairn::engine
