#pragma once
// Medians of interleaved runs, and the JSON lines the benchmark prints.

#include <functional>
#include <string>

namespace halfway::bench {

struct Pair {
  double halfway_ms, baseline_ms;
};

// Runs `halfway` and `baseline` alternately `reps` times after one warm-up each; the medians.
Pair time_pair(int reps, const std::function<void()>& halfway,
               const std::function<void()>& baseline);
double median_ms(int reps, const std::function<void()>& f);

// {"case": ..., "device": "cpu", "metric": ..., "value": ..., "baseline": ..., "ratio": ...}
// ratio = baseline / value for times (above 1: halfway is faster).
void print_line(const std::string& name, const std::string& metric, double value, double baseline);

} // namespace halfway::bench
