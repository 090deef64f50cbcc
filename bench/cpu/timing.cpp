#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace halfway::bench {

namespace {
double ms(const std::function<void()>& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
} // namespace

Pair time_pair_measured(int reps, const std::function<double()>& halfway,
                        const std::function<double()>& baseline) {
  halfway();
  baseline();
  std::vector<double> h, b;
  for (int r = 0; r < reps; ++r) {
    h.push_back(halfway());
    b.push_back(baseline());
  }
  return {median(h), median(b)};
}

Pair time_pair(int reps, const std::function<void()>& halfway,
               const std::function<void()>& baseline) {
  return time_pair_measured(
      reps, [&] { return ms(halfway); }, [&] { return ms(baseline); });
}

double median_ms(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r)
    t.push_back(ms(f));
  return median(t);
}

void print_line(const std::string& name, const std::string& metric, double value, double baseline,
                const std::string& device, const std::string& extra) {
  std::printf("{\"case\": \"%s\", \"device\": \"%s\", \"metric\": \"%s\", \"value\": %.6g, "
              "\"baseline\": %.6g, \"ratio\": %.4g%s}\n",
              name.c_str(), device.c_str(), metric.c_str(), value, baseline,
              value > 0 ? baseline / value : 0.0, extra.c_str());
  std::fflush(stdout);
}

} // namespace halfway::bench
