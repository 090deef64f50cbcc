// The README's library example: tie-stressing inputs, the CPU device, and the differential report
// against the reference interpreter, first bit for bit, then under the single-rounding opt-in.
#include "examples.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/runtime/device.hpp"

#include <iostream>

using halfway::examples::narrow_f16;

int main() {
  try {
    auto k = narrow_f16();
    auto in = halfway::diff::inputs::make_inputs(k.kernel(), 1 << 20,
                                                 halfway::diff::inputs::Kind::Ties, 1);
    auto cpu = halfway::rt::make_device("cpu");
    auto strict = halfway::diff::run(k, *cpu, in.grid, in.args); // bit for bit: no opt-in
    auto accepted = halfway::policy::accept_single_rounding(
        halfway::policy::Scope::kernel("narrow_f16"), "f16 output only feeds a display");
    if (!accepted.ok())
      return 2; // a blank reason or the default kernel name is refused
    auto relaxed = halfway::diff::run(k, *cpu, in.grid, in.args); // now within the bound
    std::cout << halfway::diff::to_text(strict) << "\n" << halfway::diff::to_text(relaxed);
    return strict.ok() && relaxed.ok() ? 0 : 1;
  } catch (const halfway::Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}
