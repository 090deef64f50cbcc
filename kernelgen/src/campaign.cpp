#include "halfway/kernelgen/campaign.hpp"

#include "halfway/diff/compare.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/report.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/support/error.hpp"
#include "quirks.hpp"

#include <algorithm>
#include <set>
#include <spdlog/spdlog.h>

namespace halfway::kernelgen {

RunSetup setup_of(const Generated& g) {
  RunSetup s;
  s.lanes = g.lanes;
  s.lanes_y = g.lanes_y;
  s.lanes_z = g.lanes_z;
  s.inputs = g.inputs;
  s.input_seed = g.input_seed;
  s.single_rounding = g.single_rounding;
  s.exact_models = g.exact_models;
  s.relaxed_accumulation = g.relaxed_accumulation;
  return s;
}

std::string_view name(Outcome o) {
  switch (o) {
  case Outcome::Match:
    return "match";
  case Outcome::Inconclusive:
    return "inconclusive";
  case Outcome::Unsupported:
    return "unsupported";
  case Outcome::Explained:
    return "explained";
  case Outcome::Unexplained:
    return "unexplained";
  }
  return "?";
}

void apply_opt_in(policy::Registry& registry, const std::string& kernel, const RunSetup& setup) {
  if (setup.single_rounding &&
      !registry.accept_single_rounding(policy::Scope::kernel(kernel), "fuzz campaign"))
    throw Error(ErrorKind::Internal,
                "the policy refused the single-rounding opt-in of kernel " + kernel);
  if (setup.relaxed_accumulation &&
      !registry.accept_relaxed_accumulation(policy::Scope::kernel(kernel), "fuzz campaign"))
    throw Error(ErrorKind::Internal,
                "the policy refused the relaxed-accumulation opt-in of kernel " + kernel);
}

namespace {
bool is_vulkan(const std::string& device) {
  return device.rfind("vulkan", 0) == 0;
}
} // namespace

namespace {
// Whether both patterns are NaNs of a float format `width` bits wide (f16 and bf16 for 16 bits),
// or, wider than 16 bits, their halves are equal or such NaNs: a NaN's sign and payload moved by
// a bitcast or a pack, possibly next to another value in the same word.
bool nan_patterns(uint32_t width, uint64_t a, uint64_t b) {
  if (a == b)
    return true;
  auto both = [&](num::Format f) { return num::is_nan(f, a) && num::is_nan(f, b); };
  if ((width == 16 && (both(num::Format::F16) || both(num::Format::BF16))) ||
      (width == 32 && both(num::Format::F32)) || (width == 64 && both(num::Format::F64)))
    return true;
  if (width <= 16)
    return false;
  const uint32_t half = width / 2;
  const uint64_t mask = (uint64_t{1} << half) - 1;
  return nan_patterns(half, a & mask, b & mask) && nan_patterns(half, a >> half, b >> half);
}
} // namespace

namespace {
// A device that "runs" a kernel by writing the results another device produced: the checker then
// judges those results against another reference (a quirk model's rewritten kernel) with the
// same inputs, float controls and math profile.
class Replay final : public rt::Device {
public:
  Replay(const rt::DeviceInfo& info, const std::vector<diff::BufferResults>& results,
         const policy::Registry& registry)
      : info_(info), results_(results), registry_(registry) {}
  const rt::DeviceInfo& info() const override { return info_; }
  rt::LaunchResult launch(const ir::VerifiedKernel& kernel, const rt::Grid&,
                          std::span<const rt::Arg> args, const rt::LaunchOptions&) override {
    for (const diff::BufferResults& b : results_) {
      rt::HostBuffer& out = *args[b.param].buffer;
      for (size_t i = 0; i < b.device.size() && i < out.size(); ++i)
        out.set_bits(i, b.device.get_bits(i));
    }
    rt::LaunchResult r;
    r.budget = registry_.budget(kernel.name());
    return r;
  }

private:
  rt::DeviceInfo info_;
  const std::vector<diff::BufferResults>& results_;
  const policy::Registry& registry_;
};
} // namespace

std::optional<std::string> explain(const ir::Kernel& k, const std::string& device,
                                   ir::ScalarType type, uint64_t reference, uint64_t device_bits) {
  if (!is_vulkan(device))
    return std::nullopt; // the interpreter and the CPU device are bit-exact for every op
  // A NaN result's sign and payload are unspecified (IEEE 754 §6.3): the interpreter returns the
  // canonical NaN, lavapipe keeps an operand's sign and payload, and f16 payloads are lost
  // through its float registers. Equal under the checker's NaN rule, they differ once copysign
  // takes the sign or bitcast/pack expose the bits (tests/known-device-issues/).
  bool copysign = false, bits = false;
  for (const ir::Expr& e : k.exprs) {
    copysign |= e.op == ir::Op::Copysign;
    bits |= e.op == ir::Op::Bitcast && ir::is_float(k.expr(e.args[0]).type);
    bits |= e.op == ir::Op::Pack && !ir::is_fp8(e.aux);
  }
  if (copysign && ir::is_float(type)) {
    const auto f = diff::float_format(type);
    if ((reference ^ device_bits) == num::info(*f).sign_mask)
      return "known device issue: NaN sign observed (copysign)";
  }
  if (bits && type != ir::ScalarType::Bool &&
      nan_patterns(ir::info(type).bits, reference, device_bits))
    return "known device issue: NaN sign or payload observed (bitcast, pack)";
  return std::nullopt;
}

Check check(const ir::Kernel& kernel, rt::Device& device, const std::string& device_name,
            const RunSetup& setup, const policy::Registry& registry) {
  Check c;
  try {
    ir::VerifiedKernel vk = ir::verify(kernel);
    const uint64_t elements = uint64_t{setup.lanes} * setup.lanes_y * setup.lanes_z;
    auto inputs = diff::inputs::make_inputs(kernel, elements, setup.inputs, setup.input_seed);
    if (setup.lanes_y * setup.lanes_z > 1)
      inputs.grid = rt::Grid::for_lanes(kernel, {setup.lanes, setup.lanes_y, setup.lanes_z});
    diff::Options o;
    o.registry = &registry;
    o.accept_inconclusive = true;
    o.exact_models = setup.exact_models;
    o.launch.timeout = setup.timeout;
    o.launch.threads = setup.threads;
    o.reference_threads = setup.threads;
    o.max_shown = 3;
    std::vector<diff::BufferResults> results;
    o.results = &results;
    diff::Report r = diff::run(vk, device, inputs.grid, inputs.args, o);
    c.violations = r.violations();
    c.undecided_lanes = r.undecided_lanes;
    for (const diff::BufferReport& b : r.buffers) {
      c.undecided += b.undecided;
      c.unchecked += b.unchecked;
    }
    if (c.violations == 0) {
      // Inconclusive only when no output proved anything: one all-NaN output among several
      // still leaves the others compared.
      c.outcome = r.inconclusive.size() < r.buffers.size() ? Outcome::Match : Outcome::Inconclusive;
      return c;
    }
    c.report = diff::to_text(r);
    // Every element the checker still calls a violation needs a cause of its own: a rule on the
    // element's bits (explain()), or a quirk model whose rewritten kernel accepts it.
    std::set<std::string> causes;
    std::set<std::pair<uint32_t, uint64_t>> pending; // (param, element)
    for (const diff::BufferResults& b : results) {
      const ir::ScalarType t = b.reference.type();
      for (size_t i = 0; i < b.verdicts.size(); ++i) {
        if (b.verdicts[i] != diff::Verdict::Violation)
          continue;
        auto why = explain(kernel, device_name, t, b.reference.get_bits(i), b.device.get_bits(i));
        if (why)
          causes.insert(*why);
        else
          pending.emplace(b.param, i);
      }
    }
    if (!pending.empty())
      for (const detail::QuirkModel& m : detail::quirk_models(kernel, device_name)) {
        Replay replay(device.info(), results, registry);
        std::vector<diff::BufferResults> judged;
        diff::Options mo = o;
        mo.results = &judged;
        std::optional<ir::VerifiedKernel> model;
        try {
          model.emplace(ir::verify(m.kernel));
        } catch (const Error& e) { // a bug of the model's rewrite
          throw Error(ErrorKind::Internal,
                      "the quirk model '" + m.cause +
                          "' rewrote the kernel into one the verifier refuses: " + e.message() +
                          "\n" + ir::print(m.kernel));
        }
        diff::run(*model, replay, inputs.grid, inputs.args, mo);
        for (const diff::BufferResults& b : judged)
          for (size_t i = 0; i < b.verdicts.size(); ++i)
            if (b.verdicts[i] != diff::Verdict::Violation &&
                b.verdicts[i] != diff::Verdict::Undecided && pending.erase({b.param, i}))
              causes.insert(m.cause);
        if (pending.empty())
          break;
      }
    if (pending.empty() && !causes.empty()) {
      c.outcome = Outcome::Explained;
      for (const auto& why : causes)
        c.cause += (c.cause.empty() ? "" : "; ") + why;
    } else {
      c.outcome = Outcome::Unexplained;
      c.cause = "mismatch";
    }
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Unsupported) {
      c.outcome = Outcome::Unsupported;
      c.cause = e.message();
      return c;
    }
    c.outcome = Outcome::Unexplained;
    c.cause = "error: " + std::string(error_kind_name(e.kind()));
    c.report = e.what();
  }
  return c;
}

std::string grid_text(const RunSetup& setup) {
  std::string g = std::to_string(setup.lanes);
  if (setup.lanes_y * setup.lanes_z > 1)
    g += "x" + std::to_string(setup.lanes_y);
  if (setup.lanes_z > 1)
    g += "x" + std::to_string(setup.lanes_z);
  return g;
}

std::string diff_command(const std::string& file, const std::string& kernel,
                         const std::string& device_name, const RunSetup& setup) {
  std::string cmd = "halfway diff " + file + " --device " + device_name + " --grid " +
                    grid_text(setup) + " --inputs " +
                    std::string(diff::inputs::name(setup.inputs)) + " --seed " +
                    std::to_string(setup.input_seed);
  if (setup.single_rounding)
    cmd += " --accept-single-rounding=" + kernel + ":fuzz";
  if (setup.relaxed_accumulation)
    cmd += " --accept-relaxed-accumulation=" + kernel + ":fuzz";
  if (setup.exact_models)
    cmd += " --exact-models";
  return cmd;
}

std::vector<uint64_t> shard_indices(uint64_t count, uint64_t shard, uint64_t shards) {
  if (shards == 0 || shard >= shards)
    throw Error(ErrorKind::Usage, "shard " + std::to_string(shard) + "/" + std::to_string(shards) +
                                      ": the index must be below the count of shards");
  std::vector<uint64_t> out;
  for (uint64_t i = shard; i < count; i += shards)
    out.push_back(i);
  return out;
}

CampaignResult run_campaign(const CampaignOptions& o) {
  const auto indices = shard_indices(o.count, o.shard, o.shards);
  // Its own logger, off: the campaign draws thousands of opt-ins, and says which in its findings.
  auto quiet = std::make_shared<spdlog::logger>("kernelgen");
  quiet->set_level(spdlog::level::off);
  policy::Registry registry(quiet);
  std::vector<std::unique_ptr<rt::Device>> devices;
  auto make_devices = [&] {
    devices.clear(); // the old ones go first: two lavapipe instances at once only cost memory
    for (const auto& n : o.devices)
      devices.push_back(rt::make_device(n, &registry));
  };
  make_devices();
  CampaignResult result;
  const auto start = std::chrono::steady_clock::now();
  auto record = [&](Finding f) {
    ++result.mismatches;
    ++(f.check.outcome == Outcome::Explained ? result.explained : result.unexplained);
    ++result.causes[f.check.cause];
    if (o.on_finding)
      o.on_finding(f);
    result.findings.push_back(std::move(f));
  };
  uint64_t done = 0;
  for (size_t position = std::min<uint64_t>(o.resume_at, indices.size()); position < indices.size();
       ++position) {
    const uint64_t index = indices[position];
    if (o.fresh_devices_every && done && done % o.fresh_devices_every == 0)
      make_devices();
    ++result.kernels;
    std::optional<Generated> g;
    try {
      g.emplace(generate(o.seed, index, o.gen));
    } catch (const Error& e) {
      Finding f;
      f.index = index;
      f.kernel = "fz_" + std::to_string(o.seed) + "_" + std::to_string(index);
      f.device = "generator";
      f.check.outcome = Outcome::Unexplained;
      f.check.cause = "generator: invalid kernel";
      f.check.report = e.what();
      record(std::move(f));
      continue;
    }
    RunSetup setup = setup_of(*g);
    setup.timeout = o.timeout;
    apply_opt_in(registry, g->kernel.name, setup);
    for (size_t d = 0; d < devices.size(); ++d) {
      ++result.comparisons;
      if (o.before_check)
        o.before_check(index, d);
      Check c = check(g->kernel, *devices[d], o.devices[d], setup, registry);
      if (c.outcome == Outcome::Inconclusive)
        ++result.inconclusive;
      if (c.outcome == Outcome::Unsupported)
        ++result.unsupported;
      if (c.undecided || c.undecided_lanes || c.unchecked) {
        ++result.undecided_comparisons;
        result.undecided_elements += c.undecided + c.unchecked;
      }
      if (c.outcome == Outcome::Explained || c.outcome == Outcome::Unexplained) {
        Finding f;
        f.index = index;
        f.kernel = g->kernel.name;
        f.device = o.devices[d];
        f.check = std::move(c);
        f.text = ir::print(g->kernel);
        f.setup = setup;
        record(std::move(f));
      }
    }
    ++done;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.progress)
      o.progress(done, result);
    if (o.stop_after_unexplained && result.unexplained >= o.stop_after_unexplained)
      break;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace halfway::kernelgen
