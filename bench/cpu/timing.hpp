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
// The same where each side measures itself and returns milliseconds (e.g. a dispatch's GPU
// timestamps, without the host's copies).
Pair time_pair_measured(int reps, const std::function<double()>& halfway,
                        const std::function<double()>& baseline);
double median_ms(int reps, const std::function<void()>& f);

// {"case": ..., "device": ..., "metric": ..., "value": ..., "baseline": ..., "ratio": ...}
// ratio = baseline / value for times (above 1: halfway is faster). `extra` is appended inside the
// object as it is: empty, or fields each starting with a comma (`, "threads": 2`).
void print_line(const std::string& name, const std::string& metric, double value, double baseline,
                const std::string& device = "cpu", const std::string& extra = {});

} // namespace halfway::bench
