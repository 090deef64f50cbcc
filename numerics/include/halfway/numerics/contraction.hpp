#pragma once
// A canary for the -ffp-contract=off build flag.
//
// g++ in GNU mode with -march=native contracts a * b + c into one FMA unless told not to. The
// interpreter's strict semantics are two roundings, so halfway compiles everything with
// -ffp-contract=off; this function is an ordinary multiply-add in a file built with the project's
// flags, and the numerics test feeds it inputs where fusing changes the answer. If anyone drops the
// flag, that test fails.

namespace halfway::num {

// round(round(a * b) + c) in f32: two roundings, never fused.
float mul_add_two_roundings(float a, float b, float c);

} // namespace halfway::num
