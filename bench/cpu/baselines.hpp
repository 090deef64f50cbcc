#pragma once
// Hand-written C++ versions of the benchmark kernels: the obvious loop over the same range of
// workgroups the device gives a task, so that both sides split work identically.
//   baselines.cpp          strict: every op rounds in its own type (-ffp-contract=off)
//   baselines_relaxed.cpp  contraction and reassociation allowed (the opt-ins' freedom)

#include <cstddef>
#include <cstdint>

namespace halfway::bench {

// Elements [begin, end).
void saxpy(float a, const float* x, float* y, size_t begin, size_t end);
void narrow_f16(const float* a, const float* b, const float* c, uint16_t* out, size_t begin,
                size_t end);
// The same with AVX-512 intrinsics (vcvtps2ph): the strongest hand-written baseline.
void narrow_f16_intrinsics(const float* a, const float* b, const float* c, uint16_t* out,
                           size_t begin, size_t end);
// Workgroups [begin, end) of 256 lanes.
void reduce_chunks(const float* x, float* out, uint32_t per_lane, size_t begin, size_t end);
// Rows [begin, end).
void gemv(const float* w, const float* x, float* y, uint32_t cols, size_t begin, size_t end);

namespace relaxed {
void narrow_f16(const float* a, const float* b, const float* c, uint16_t* out, size_t begin,
                size_t end);
void reduce_chunks(const float* x, float* out, uint32_t per_lane, size_t begin, size_t end);
void gemv(const float* w, const float* x, float* y, uint32_t cols, size_t begin, size_t end);
} // namespace relaxed

} // namespace halfway::bench
