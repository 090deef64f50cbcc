// The ulp histogram of a report: buckets on a log scale, and their text bars.
#include "halfway/diff/report.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <sstream>

namespace halfway::diff {

size_t UlpHistogram::bucket(uint64_t ulps) {
  if (ulps <= 1)
    return static_cast<size_t>(ulps);
  // 2 -> 2, 3-4 -> 3, 5-8 -> 4: one more than the bits of ulps - 1.
  return 1 + static_cast<size_t>(std::bit_width(ulps - 1));
}

uint64_t UlpHistogram::lo(size_t k) {
  return k <= 1 ? k : (uint64_t{1} << (k - 2)) + 1;
}

uint64_t UlpHistogram::hi(size_t k) {
  if (k <= 1)
    return k;
  // 2^64 does not fit; the largest distance is 2^64-2 (2^64-1 stands for a NaN mismatch).
  return k >= kBuckets - 1 ? std::numeric_limits<uint64_t>::max() - 1 : uint64_t{1} << (k - 1);
}

std::string UlpHistogram::label(size_t k) {
  if (k <= 2)
    return std::to_string(k);
  // Decimal while it stays short (up to 65536), powers of two beyond: every label fits 11 columns.
  if (k <= 17)
    return std::to_string(lo(k)) + "-" + std::to_string(hi(k));
  return "2^" + std::to_string(k - 2) + "+1-2^" + std::to_string(k - 1);
}

void UlpHistogram::add(uint64_t ulps) {
  if (ulps == std::numeric_limits<uint64_t>::max())
    ++nan_mismatch;
  else
    ++counts[bucket(ulps)];
}

size_t UlpHistogram::used() const {
  size_t n = kBuckets;
  while (n > 1 && counts[n - 1] == 0)
    --n;
  return n;
}

uint64_t UlpHistogram::total() const {
  uint64_t n = nan_mismatch;
  for (uint64_t c : counts)
    n += c;
  return n;
}

std::string histogram_text(const UlpHistogram& h, std::string_view indent) {
  constexpr size_t kColumns = 80, kLabel = 11;
  const size_t used = h.used();
  uint64_t largest = h.nan_mismatch;
  for (size_t k = 0; k < used; ++k)
    largest = std::max(largest, h.counts[k]);
  const size_t count_width = std::to_string(largest).size();
  // indent, label, space, bar, space, count.
  const size_t fixed = indent.size() + kLabel + 2 + count_width;
  const size_t bar_width = fixed + 8 <= kColumns ? kColumns - fixed : 8;
  std::ostringstream out;
  auto line = [&](const std::string& label, uint64_t count) {
    size_t bar = 0;
    if (count > 0) {
      // In double: count * bar_width can pass 2^64, and a bar needs no more precision.
      const double share = static_cast<double>(count) / static_cast<double>(largest);
      bar = std::clamp<size_t>(static_cast<size_t>(share * double(bar_width) + 0.5), 1, bar_width);
    }
    std::string count_text = std::to_string(count);
    out << indent << std::string(kLabel - std::min(kLabel, label.size()), ' ') << label << ' '
        << std::string(bar, '#') << std::string(bar_width - bar, ' ') << ' '
        << std::string(count_width - count_text.size(), ' ') << count_text << '\n';
  };
  for (size_t k = 0; k < used; ++k)
    line(UlpHistogram::label(k), h.counts[k]);
  if (h.nan_mismatch)
    line("NaN", h.nan_mismatch);
  return out.str();
}

} // namespace halfway::diff
