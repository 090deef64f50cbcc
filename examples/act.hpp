#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// A generic activation, o[i] = |w[i]·w[i] − 1| + clamp(w[i], 0, 1), computed in T: one source,
// instantiated for f32 and for f16 arithmetic (kernels `act<f32>` and `act<f16>`). In f16 every
// operation rounds to f16, as a kernel written over `half` would; nothing narrows, so there is no
// narrowing site and the result is bit-exact on every device. The clamp is min(max(w, 0), 1),
// which is what clamp means for non-NaN w (a NaN w gives NaN either way: min and max return the
// NaN operand's quiet form as the op table defines them).
template <class T> Kernel act() {
  return kernel("act<" + type_name<T>() + ">", {64}, {"w", "o"}, [](In<T> w, Out<T> o) {
    Var i(global_id(0), "i");
    If(i < o.size(), [&] {
      Var v(w[i], "v");
      o[i] = abs(v * v - Value<T>(1.0)) + min(max(v, Value<T>(0.0)), Value<T>(1.0));
    });
  });
}

} // namespace halfway::examples
