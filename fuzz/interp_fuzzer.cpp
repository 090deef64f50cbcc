// libFuzzer target past the parser: whatever parses and verifies is run on the reference
// interpreter with a step budget, small buffers and a small grid. The launch may fail only with
// the interpreter's documented errors (undefined behaviour, limits), and a failed launch must
// leave every buffer exactly as it was. Anything else (a crash, a sanitizer report, another
// exception, a hang, a leak, changed buffers after an error) is a bug.
//
// Sizes come from a hash of the input so that the fuzzer explores them without the kernel text
// having to spell them: 1 to 3 workgroups along x, buffers of 1 to 256 elements, scalar
// arguments from a small set (0, 1, 3, 64, 255, all ones).
#include "fuzz_support.hpp"
#include "halfway/interp/interp.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

const char* const fuzz::kTarget = "interp_fuzzer";

namespace {

using fuzz::Bits;
using fuzz::bug;

bool documented(halfway::ErrorKind kind) {
  using halfway::ErrorKind;
  switch (kind) {
  case ErrorKind::OutOfBounds:
  case ErrorKind::DivideByZero:
  case ErrorKind::ShiftOverflow:
  case ErrorKind::Barrier:
  case ErrorKind::DataRace:
  case ErrorKind::Limit:
    return true;
  default:
    return false;
  }
}

void run_one(const halfway::ir::VerifiedKernel& k, Bits& bits) {
  using namespace halfway;
  const ir::Kernel& kernel = k.kernel();
  // Large shared arrays are valid but only make the run slow and the fuzzer's RSS large.
  if (std::optional<uint64_t> shared = rt::shared_bytes(kernel); !shared || *shared > (1u << 20))
    return;
  std::vector<rt::HostBuffer> buffers;
  buffers.reserve(kernel.params.size());
  std::vector<rt::Arg> args;
  static constexpr uint64_t kScalars[] = {0, 1, 3, 64, 255, ~uint64_t{0}};
  for (const ir::Param& p : kernel.params) {
    if (!p.is_buffer()) {
      args.push_back(rt::Arg::bits(kScalars[bits.next() % 6]));
      continue;
    }
    const size_t n = 1 + bits.next() % 256;
    rt::HostBuffer& b = buffers.emplace_back(p.type, n);
    auto* bytes = reinterpret_cast<uint8_t*>(b.data());
    for (size_t i = 0; i < b.size_bytes(); ++i)
      bytes[i] = static_cast<uint8_t>(bits.next());
    args.push_back(rt::Arg::of(b));
  }
  std::vector<rt::HostBuffer> before;
  for (const rt::HostBuffer& b : buffers)
    before.push_back(b.clone());

  interp::Options o;
  o.deterministic = true;
  o.max_steps = 20000;
  const uint64_t mode = bits.next();
  o.narrowing = mode & 1 ? interp::NarrowingModel::SingleRounding : interp::NarrowingModel::TwoStep;
  o.shadow = (mode & 6) == 0;
  rt::Grid grid;
  grid.groups = {static_cast<uint32_t>(1 + bits.next() % 3), 1, 1};
  try {
    interp::run(k, grid, args, o);
  } catch (const Error& e) {
    if (!documented(e.kind()) || e.context().kernel != kernel.name)
      bug("undocumented launch error", e.what());
    for (size_t i = 0; i < buffers.size(); ++i)
      if (!(buffers[i] == before[i]))
        bug("a failed launch changed a buffer", e.what());
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::for_each_verified_kernel(data, size, 4, run_one);
  return 0;
}
