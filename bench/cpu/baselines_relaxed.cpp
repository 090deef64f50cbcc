// Compiled with -ffp-contract=fast -fassociative-math -fno-signed-zeros -fno-trapping-math:
// the freedom the single-rounding and relaxed-accumulation opt-ins give the device.
#include "baselines.hpp"

#include <bit>

namespace halfway::bench::relaxed {

void narrow_f16(const float* a, const float* b, const float* c, uint16_t* out, size_t begin,
                size_t end) {
  for (size_t i = begin; i < end; ++i)
    out[i] = std::bit_cast<uint16_t>(static_cast<_Float16>(a[i] * b[i] + c[i]));
}

#include "baseline_loops.inc"

} // namespace halfway::bench::relaxed
