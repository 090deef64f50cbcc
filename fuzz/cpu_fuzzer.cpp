// Differential libFuzzer target: whatever parses and verifies runs on the reference interpreter
// (a step budget, small buffers, a small grid) and on the CPU device (LLVM JIT, the same inputs
// in buffers of its own, a timeout), and the two outcomes are compared. Budgets come from a
// registry of this fuzzer's that accepts no opt-in, so the CPU device owes the interpreter's bits.
//
// What is a bug (the process aborts, libFuzzer keeps the input):
//  - a crash, a sanitizer report, a hang, an exception other than halfway::Error;
//  - an error of a kind neither device documents, or one that names another kernel;
//  - a failed launch that changed a buffer (either device);
//  - on a comparable kernel (below): both succeed with different buffers; or the interpreter
//    reports an error the CPU device must see too and the CPU device succeeds, fails with an
//    error of another kind, or names another workgroup (for kernels without loops: another
//    message at all, since both then report the smallest (node, lane) of the lowest workgroup).
//
// Which errors the CPU device must see (codegen/llvm/README.md):
//  - OutOfBounds: always (every launch is memory-safe);
//  - DivideByZero, ShiftOverflow: only with LaunchOptions::check_bounds (the fuzzer sets it on
//    half the launches); without it the CPU device computes the defined fallback values, so it
//    may succeed or fail later (an index computed from such a value may be out of bounds);
//  - DataRace (shared memory) and Barrier: the CPU device detects neither; after one its outcome
//    is not compared (it only must not crash and must restore buffers when it fails);
//  - Limit from the interpreter's step budget: the CPU device, which has no step budget, may
//    finish, fail, or time out; not compared.
// Within one workgroup, inside loops, the two may pick different failures of the same launch
// (the interpreter's lockstep order is by iteration, the CPU device's by check and lane): then
// any of the three kinds the CPU device checks is accepted, in the same workgroup.
//
// Comparable kernels. Lanes of one workgroup run in lockstep on the interpreter and one after
// another within each part on the CPU device, so a kernel whose lanes communicate through a
// buffer without a barrier between (a global race, which the interpreter does not detect) may
// legitimately differ; so may one whose workgroups communicate through a buffer (the interpreter
// runs barrier-free workgroups in lockstep batches, the CPU device one after another). The fuzzer
// compares only kernels where neither can happen: 1-D workgroups where every access (load, store,
// atomic) to a buffer the kernel writes is at index global_id(0), or group_id(0) for workgroups of
// one lane (directly or through a local set once from it). Other kernels
// still run on both devices (crashes, sanitizer reports, undocumented errors and restored
// buffers are checked), their results are not compared.
//
// Sizes come from a hash of the input, as in interp_fuzzer: 1 to 3 workgroups along x, buffers
// of 1 to 256 elements, scalars from a small set. The JIT costs milliseconds per new kernel; the
// device keeps every compiled kernel until it is destroyed, so the fuzzer replaces it after
// kDeviceKernels compilations to bound its memory.
#include "fuzz_support.hpp"
#include "halfway/interp/interp.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

const char* const fuzz::kTarget = "cpu_fuzzer";

namespace {

using halfway::Error;
using halfway::ErrorKind;

using fuzz::Bits;
using fuzz::bug;

bool interp_documented(ErrorKind kind) {
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

// What the CPU device may report: the checks it makes (division and shifts only when asked), its
// limits (checked before anything runs) and the timeout.
bool cpu_documented(ErrorKind kind, bool checked) {
  switch (kind) {
  case ErrorKind::OutOfBounds:
  case ErrorKind::Limit:
  case ErrorKind::Timeout:
    return true;
  case ErrorKind::DivideByZero:
  case ErrorKind::ShiftOverflow:
    return checked;
  default:
    return false;
  }
}

bool checked_kind(ErrorKind kind) {
  return kind == ErrorKind::OutOfBounds || kind == ErrorKind::DivideByZero ||
         kind == ErrorKind::ShiftOverflow;
}

// Whether no two lanes can communicate through a buffer (see "Comparable kernels" above).
bool comparable(const halfway::ir::Kernel& k) {
  using namespace halfway::ir;
  if (k.workgroup[1] != 1 || k.workgroup[2] != 1)
    return false;
  // global_id(0) is one lane's own in the fuzzer's 1-D grids; so is group_id(0) when a workgroup
  // has one lane. (One lane per workgroup is not enough on its own: the interpreter runs
  // barrier-free workgroups in lockstep batches, the CPU device one after another.)
  auto own = [&](const Expr& e) {
    return e.imm == 0 &&
           (e.op == Op::GlobalId || (e.op == Op::GroupId && k.workgroup_lanes() == 1));
  };
  // Locals set exactly once, by a let of such a builtin.
  std::vector<int> sets(k.locals.size(), 0);
  std::set<uint32_t> own_locals;
  std::set<uint32_t> written;
  for_each_stmt(k.body, [&](const Stmt& s) {
    if (s.local != kNone && s.local < sets.size() &&
        (s.kind == StmtKind::Let || s.kind == StmtKind::Assign || s.kind == StmtKind::For ||
         s.kind == StmtKind::Atomic))
      ++sets[s.local];
    if (s.kind == StmtKind::Let && own(k.expr(s.a)))
      own_locals.insert(s.local);
    if ((s.kind == StmtKind::Store || s.kind == StmtKind::Atomic) && s.space == Space::Buffer)
      written.insert(s.mem);
  });
  auto lane_private = [&](ExprId index) {
    const Expr& e = k.expr(index);
    return own(e) || (e.op == Op::LocalGet && own_locals.count(e.ref) && sets[e.ref] == 1);
  };
  bool ok = true;
  for_each_stmt(k.body, [&](const Stmt& s) {
    if ((s.kind == StmtKind::Store || s.kind == StmtKind::Atomic) && s.space == Space::Buffer &&
        !lane_private(s.a))
      ok = false;
  });
  for (const Expr& e : k.exprs)
    if (e.op == Op::Load && e.space == Space::Buffer && written.count(e.ref) &&
        !lane_private(e.args[0]))
      ok = false;
  return ok;
}

bool has_loops(const halfway::ir::Kernel& k) {
  bool loops = false;
  halfway::ir::for_each_stmt(k.body, [&](const halfway::ir::Stmt& s) {
    if (s.kind == halfway::ir::StmtKind::For || s.kind == halfway::ir::StmtKind::While)
      loops = true;
  });
  return loops;
}

std::string describe(const std::optional<Error>& e) {
  return e ? std::string(halfway::error_kind_name(e->kind())) + ": " + e->what() : "success";
}

// Counts printed when the process exits, for the campaign's report: how many launches reached
// the CPU device and how many of them were compared.
struct Counts {
  uint64_t launches = 0;     // kernels run on both devices
  uint64_t comparable = 0;   // of which comparable kernels
  uint64_t compared_ok = 0;  // both succeeded, buffers compared
  uint64_t compared_err = 0; // the interpreter failed and the CPU device had to fail alike
  uint64_t cpu_errors = 0;   // CPU launches that failed (any kernel)
  uint64_t guard_faults = 0; // of the CPU launches, those that ended in a guard-page fault
  uint64_t devices = 0;      // CPU devices made
};
Counts counts;

void print_counts() {
  std::fprintf(stderr,
               "cpu_fuzzer: %llu launches on both devices, %llu comparable (%llu results and "
               "%llu errors compared), %llu CPU errors, %llu guard faults, %llu CPU devices\n",
               static_cast<unsigned long long>(counts.launches),
               static_cast<unsigned long long>(counts.comparable),
               static_cast<unsigned long long>(counts.compared_ok),
               static_cast<unsigned long long>(counts.compared_err),
               static_cast<unsigned long long>(counts.cpu_errors),
               static_cast<unsigned long long>(counts.guard_faults),
               static_cast<unsigned long long>(counts.devices));
}

// The CPU device and the registry it reads budgets from (no opt-in is ever accepted in it).
struct Cpu {
  static constexpr size_t kDeviceKernels = 256;
  halfway::policy::Registry registry;
  std::unique_ptr<halfway::rt::CpuDevice> device;
  uint64_t faults_before = 0; // guard faults of the devices already replaced
  halfway::rt::CpuDevice& get() {
    if (!device || device->memo_size() >= kDeviceKernels) {
      if (device)
        faults_before += device->stats().guard_faults;
      device = std::make_unique<halfway::rt::CpuDevice>(
          &registry, halfway::rt::CpuDeviceOptions{.threads = 2});
      ++counts.devices;
    }
    return *device;
  }
  uint64_t guard_faults() const {
    return faults_before + (device ? device->stats().guard_faults : 0);
  }
};

Cpu& cpu() {
  static Cpu* c = new Cpu(); // never destroyed: libFuzzer exits without unwinding
  return *c;
}

void run_one(const halfway::ir::VerifiedKernel& k, Bits& bits) {
  using namespace halfway;
  const ir::Kernel& kernel = k.kernel();
  // Large shared arrays are valid but only make the run slow and the fuzzer's RSS large.
  if (std::optional<uint64_t> shared = rt::shared_bytes(kernel); !shared || *shared > (1u << 20))
    return;
  std::vector<rt::HostBuffer> buffers, cpu_buffers, before;
  buffers.reserve(kernel.params.size());
  cpu_buffers.reserve(kernel.params.size());
  std::vector<rt::Arg> args, cpu_args;
  static constexpr uint64_t kScalars[] = {0, 1, 3, 64, 255, ~uint64_t{0}};
  for (const ir::Param& p : kernel.params) {
    if (!p.is_buffer()) {
      args.push_back(rt::Arg::bits(kScalars[bits.next() % 6]));
      cpu_args.push_back(args.back());
      continue;
    }
    const size_t n = 1 + bits.next() % 256;
    rt::HostBuffer& b = buffers.emplace_back(p.type, n);
    auto* bytes = reinterpret_cast<uint8_t*>(b.data());
    for (size_t i = 0; i < b.size_bytes(); ++i)
      bytes[i] = static_cast<uint8_t>(bits.next());
    args.push_back(rt::Arg::of(b));
    cpu_args.push_back(rt::Arg::of(cpu_buffers.emplace_back(b.clone())));
    before.push_back(b.clone());
  }
  const uint64_t mode = bits.next();
  rt::Grid grid;
  grid.groups = {static_cast<uint32_t>(1 + bits.next() % 3), 1, 1};

  interp::Options o;
  o.deterministic = true;
  o.max_steps = 20000;
  std::optional<Error> ie;
  try {
    interp::run(k, grid, args, o);
  } catch (const Error& e) {
    if (!interp_documented(e.kind()) || e.context().kernel != kernel.name)
      bug("undocumented interpreter error", e.what());
    ie = e;
  }

  rt::LaunchOptions lo;
  lo.check_bounds = mode & 1;
  lo.deterministic = mode & 2;
  // A kernel the interpreter stopped at its step budget may loop for ever here: a short
  // deadline. Otherwise a generous one: the launch (JIT compile included) of a kernel that ran
  // within 20,000 lockstep steps takes milliseconds, so a timeout then is a finding.
  const bool budget_hit = ie && ie->kind() == ErrorKind::Limit;
  lo.timeout = std::chrono::milliseconds(budget_hit ? 200 : 8000);
  std::optional<Error> ce;
  try {
    ++counts.launches;
    cpu().get().launch(k, grid, cpu_args, lo);
  } catch (const Error& e) {
    if (!cpu_documented(e.kind(), lo.check_bounds) || e.context().kernel != kernel.name)
      bug("undocumented CPU device error", e.what());
    ce = e;
    ++counts.cpu_errors;
  }
  counts.guard_faults = cpu().guard_faults();

  if (ie)
    for (size_t i = 0; i < buffers.size(); ++i)
      if (!(buffers[i] == before[i]))
        bug("a failed interpreter launch changed a buffer", ie->what());
  if (ce)
    for (size_t i = 0; i < cpu_buffers.size(); ++i)
      if (!(cpu_buffers[i] == before[i]))
        bug("a failed CPU launch changed a buffer", ce->what());
  // A Limit before anything ran (the CPU device's own limits) is the same on both: the kernel
  // and grid are small here, so the interpreter's would have said so too.
  if (!comparable(kernel) || budget_hit ||
      (ie && (ie->kind() == ErrorKind::DataRace || ie->kind() == ErrorKind::Barrier)))
    return;
  ++counts.comparable;
  const std::string both = "kernel " + kernel.name + "\n  interp: " + describe(ie) +
                           "\n  cpu:    " + describe(ce) + "\n  check_bounds " +
                           std::to_string(lo.check_bounds) + ", groups " +
                           std::to_string(grid.groups[0]);
  if (!ie) {
    if (ce)
      bug("the CPU device failed where the interpreter succeeded", both);
    for (size_t i = 0; i < buffers.size(); ++i)
      if (!(buffers[i] == cpu_buffers[i]))
        bug("the CPU device's results differ from the interpreter's",
            both + "\n  buffer of parameter #" + std::to_string(i));
    ++counts.compared_ok;
    return;
  }
  const bool must_see =
      ie->kind() == ErrorKind::OutOfBounds || (lo.check_bounds && checked_kind(ie->kind()));
  if (!must_see) {
    // Division or shift without checks: the CPU device computes on; only a later failure of its
    // own (out of bounds, in this or a later workgroup) may follow.
    if (ce &&
        (ce->kind() != ErrorKind::OutOfBounds || ce->context().workgroup < ie->context().workgroup))
      bug("the CPU device failed before the interpreter's unchecked error", both);
    return;
  }
  if (!ce)
    bug("the CPU device missed the interpreter's error", both);
  if (!checked_kind(ce->kind()) || ce->context().workgroup != ie->context().workgroup ||
      (!lo.check_bounds && ce->kind() != ErrorKind::OutOfBounds))
    bug("the CPU device reported another failure", both);
  if (!has_loops(kernel) && std::string(ce->what()) != ie->what())
    bug("the CPU device reported another failure of a kernel without loops", both);
  ++counts.compared_err;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::atexit(print_counts);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::for_each_verified_kernel(data, size, 2, run_one);
  return 0;
}
