// Every op of the op table, on every scalar type the verifier accepts for it, on every device
// (interp, cpu and vulkan where the build has one), against the interpreter on edge and random
// inputs. The kernel is y[i] = op(x0[i], x1[i], ...), one lane per input tuple.
//
// Each element is judged twice:
//  - by the checker (diff::run), as a user's diff would be: bit for bit on interp and cpu and for
//    the Vulkan device's exact and correctly rounded ops; within the interval the op table's device
//    precision column gives (specs/device-precision.md) for the Vulkan device's other ops, sin,
//    cos, tan, tanh, pow, fract and fma included. Every element the checker calls a violation
//    fails the test, but one known divergence: an f16 NaN moved by bitcast or pack comes back as
//    the canonical NaN of its sign (lavapipe loads f16 through float registers and drops the
//    payload); those lanes are counted and printed. Elements the intervals cannot decide (a
//    domain where Vulkan leaves the result undefined) are counted and printed.
//  - independently of the interval code, for the Vulkan device's ops with an ulp figure in the
//    column (its rule and its f32 and 16-bit figures, read from the table): within that many ulps,
//    rounded up, where the rule states a bound: operands finite and not subnormal; div for |y| in
//    [2^(1-emax), 2^(emax-1)] of the format; exp and exp2 ulp + 2|x|; log and log2 outside [0.5,
//    2], and inside it the absolute error the column gives; atan2 not at (0, 0). This catches an
//    interval that is wider than the table allows.
//  - a device that refuses an op on a type (Unsupported: erf on Vulkan, f64 math there) must be
//    the Vulkan device, and the refusal must name the op's kernel.
#include "halfway/diff/bound.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/ir/ops.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/formats.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <optional>
#include <random>

namespace halfway {
namespace {

using ir::Op;
using ir::ScalarType;

constexpr uint32_t kLanes = 64;

std::vector<ScalarType> all_types() {
  return {
#define HALFWAY_X(name, text, bits, is_float, is_signed, precision) ScalarType::name,
      HALFWAY_SCALAR_TYPES(HALFWAY_X)
#undef HALFWAY_X
  };
}

// Kernel `name`: y[i] = value(loads), where the loads read x0[i]... of the given types, and the
// result is stored as its own type (bool stored as u32 through select).
struct MapKernel {
  ir::Kernel k;
  std::vector<ir::ExprId> loads;
  explicit MapKernel(const std::string& name, const std::vector<ScalarType>& in) {
    k.name = name;
    k.workgroup = {kLanes, 1, 1};
    for (size_t j = 0; j < in.size(); ++j)
      k.params.push_back(
          {"x" + std::to_string(j), ir::Param::Kind::Buffer, in[j], ir::Access::Read});
    ir::ExprId gid = node(Op::GlobalId, ScalarType::U32, {});
    for (size_t j = 0; j < in.size(); ++j) {
      ir::ExprId l = node(Op::Load, in[j], {gid});
      k.exprs[l].ref = static_cast<uint32_t>(j);
      loads.push_back(l);
    }
    index_ = gid;
  }
  ir::ExprId node(Op op, ScalarType t, std::vector<ir::ExprId> args, uint64_t imm = 0) {
    ir::Expr e;
    e.op = op;
    e.type = t;
    e.imm = imm;
    e.nargs = static_cast<uint8_t>(args.size());
    for (size_t j = 0; j < args.size(); ++j)
      e.args[j] = args[j];
    return k.add(e);
  }
  // Throws Verify when the op does not accept these types.
  ir::VerifiedKernel finish(ir::ExprId value) {
    ScalarType t = k.exprs[value].type;
    if (t == ScalarType::Bool) {
      value = node(Op::Select, ScalarType::U32,
                   {value, node(Op::Const, ScalarType::U32, {}, 1),
                    node(Op::Const, ScalarType::U32, {}, 0)});
      t = ScalarType::U32;
    }
    uint32_t y = static_cast<uint32_t>(k.params.size());
    k.params.push_back({"y", ir::Param::Kind::Buffer, t, ir::Access::Write});
    ir::Stmt store;
    store.kind = ir::StmtKind::Store;
    store.space = ir::Space::Buffer;
    store.mem = y;
    store.a = index_;
    store.b = value;
    k.body = {store};
    return ir::verify(std::move(k));
  }
  ir::ExprId index_ = 0;
};

// Edge values of a type (the checker's specials; for integers 0, 1, 2, -1, the extremes), then
// random bit patterns, `n` in all; operand j of an n-ary op cycles the edges at a different
// stride so that pairs of edges meet.
rt::HostBuffer inputs(ScalarType t, size_t n, size_t operand, uint64_t seed) {
  std::vector<uint64_t> edges;
  if (ir::is_float(t)) {
    edges = diff::inputs::special_bits(t);
  } else if (t != ScalarType::Bool) {
    const uint32_t bits = ir::info(t).bits;
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    const uint64_t top = uint64_t{1} << (bits - 1);
    edges = {0, 1, 2, 3, 7, mask, top, top - 1, mask - 1};
  } else {
    edges = {0, 1};
  }
  rt::HostBuffer b(t, n);
  std::mt19937_64 rng(seed);
  const size_t stride = operand == 0 ? 1 : edges.size() + operand;
  const size_t edge_lanes = std::min(n / 2, edges.size() * edges.size());
  for (size_t i = 0; i < n; ++i) {
    uint64_t v = rng();
    if (i < edge_lanes)
      v = edges[(operand == 0 ? i : i / edges.size() * stride + i) % edges.size()];
    if (t == ScalarType::Bool)
      v &= 1;
    b.set_bits(i, v);
  }
  return b;
}

// The interpreter refuses integer division by zero and shifts by the width or more: operands
// that would trip them are moved into range (these are errors, tested elsewhere).
void make_defined(Op op, ScalarType t, std::vector<rt::HostBuffer>& in) {
  if (ir::is_float(t) || in.size() < 2)
    return;
  const uint32_t bits = ir::info(t).bits;
  for (size_t i = 0; i < in[1].size(); ++i) {
    uint64_t b = in[1].get_bits(i);
    if ((op == Op::Div || op == Op::Rem) && b == 0)
      in[1].set_bits(i, 1);
    if (op == Op::Shl || op == Op::Shr)
      in[1].set_bits(i, b % bits);
  }
}

// What the independent check asks of the Vulkan device, from the op's device precision rule.
enum class Check { Exact, Ulp, IntervalOnly };

Check vulkan_check(Op op) {
  switch (ir::info(op).device.rule) {
  case ir::PrecisionRule::Exact:
  case ir::PrecisionRule::CorrectlyRounded:
    return Check::Exact;
  case ir::PrecisionRule::Ulp:
  case ir::PrecisionRule::Division:
  case ir::PrecisionRule::ExpUlp:
  case ir::PrecisionRule::LogUlp:
    return Check::Ulp;
  case ir::PrecisionRule::AbsolutePi:
  case ir::PrecisionRule::Inherited:
    break;
  }
  return Check::IntervalOnly;
}

// The table's Vulkan bound for one element, in ulps of the result; none where the rule states
// none for these operands.
std::optional<double> vulkan_ulps(Op op, ScalarType t, const std::vector<uint64_t>& operands,
                                  uint64_t reference, uint64_t device) {
  const auto f = diff::float_format(t);
  if (!f)
    return std::nullopt;
  std::vector<double> x;
  for (uint64_t b : operands) {
    if (!num::is_finite(*f, b) || num::is_subnormal(*f, b))
      return std::nullopt;
    x.push_back(num::to_double(*f, b));
  }
  const ir::DevicePrecision& p = ir::info(op).device;
  const int bits = static_cast<int>(ir::info(t).bits);
  const double ulp = p.ulp(bits);
  switch (p.rule) {
  case ir::PrecisionRule::Division: {
    const double edge = std::ldexp(1.0, num::info(*f).emax - 1);
    if (std::fabs(x[1]) < 1 / edge || std::fabs(x[1]) > edge)
      return std::nullopt;
    break;
  }
  case ir::PrecisionRule::ExpUlp:
    return std::ceil(ulp + 2 * std::fabs(x[0]));
  case ir::PrecisionRule::LogUlp:
    if (x[0] <= 0)
      return std::nullopt;
    // Inside [0.5, 2] the bound is absolute: any distance within it, none outside.
    if (x[0] >= 0.5 && x[0] <= 2)
      return std::fabs(num::to_double(*f, reference) - num::to_double(*f, device)) <=
                     std::ldexp(1.0, p.abs_exp(bits))
                 ? std::numeric_limits<double>::infinity()
                 : 0.0;
    break;
  default:
    break;
  }
  if (op == Op::Atan2 && x[0] == 0 && x[1] == 0)
    return std::nullopt;
  return std::ceil(ulp);
}

bool f16_nan(uint64_t bits) {
  return num::is_nan(num::Format::F16, bits);
}

struct Tally {
  int ran = 0, refused = 0;
};

class OpTable : public ::testing::TestWithParam<std::string> {};

// The kernels of one op: its operand types for each type T the verifier accepts.
std::vector<std::pair<std::string, ir::VerifiedKernel>> kernels_for(Op op) {
  std::vector<std::pair<std::string, ir::VerifiedKernel>> out;
  const ir::OpInfo& o = ir::info(op);
  const std::string base = "op_" + std::string(o.name);
  auto attempt = [&](const std::string& name, const std::vector<ScalarType>& in, auto build) {
    MapKernel m(name, in);
    try {
      out.emplace_back(name, m.finish(build(m)));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Verify)
        throw;
    }
  };
  for (ScalarType t : all_types()) {
    const std::string tn(ir::info(t).name);
    switch (o.rule) {
    case ir::TypeRule::Leaf:
      break; // every kernel here reads global_id and loads; the other leaves have their tests
    case ir::TypeRule::Numeric:
    case ir::TypeRule::Float:
    case ir::TypeRule::Int:
    case ir::TypeRule::Bitwise:
    case ir::TypeRule::Shift:
      attempt(base + "_" + tn, std::vector<ScalarType>(static_cast<size_t>(o.arity), t),
              [&](MapKernel& m) { return m.node(op, t, m.loads); });
      break;
    case ir::TypeRule::Compare:
      attempt(base + "_" + tn, {t, t},
              [&](MapKernel& m) { return m.node(op, ScalarType::Bool, m.loads); });
      break;
    case ir::TypeRule::Select:
      attempt(base + "_" + tn, {ScalarType::U8, t, t}, [&](MapKernel& m) {
        ir::ExprId c = m.node(Op::Ne, ScalarType::Bool,
                              {m.loads[0], m.node(Op::Const, ScalarType::U8, {}, 0)});
        return m.node(op, t, {c, m.loads[1], m.loads[2]});
      });
      break;
    case ir::TypeRule::Convert:
      for (ScalarType to : all_types())
        attempt(base + "_" + tn + "_to_" + std::string(ir::info(to).name), {t},
                [&](MapKernel& m) { return m.node(op, to, m.loads); });
      break;
    case ir::TypeRule::Bitcast:
      for (ScalarType to : all_types())
        if (ir::info(to).bits == ir::info(t).bits && to != t)
          attempt(base + "_" + tn + "_to_" + std::string(ir::info(to).name), {t},
                  [&](MapKernel& m) { return m.node(op, to, m.loads); });
      break;
    case ir::TypeRule::Pack:
      if (ir::is_float(t)) {
        const size_t parts = ir::info(t).bits == 16 ? 2 : 4;
        attempt(base + "_" + tn, std::vector<ScalarType>(parts, t), [&](MapKernel& m) {
          ir::ExprId p = m.node(op, ScalarType::U32, m.loads);
          m.k.exprs[p].aux = t;
          return p;
        });
      }
      break;
    case ir::TypeRule::Unpack:
      if (ir::is_float(t))
        for (uint64_t lane = 0; lane < 32 / ir::info(t).bits; lane += 1)
          attempt(base + "_" + tn + "_" + std::to_string(lane), {ScalarType::U32},
                  [&](MapKernel& m) {
                    ir::ExprId u = m.node(op, t, m.loads, lane);
                    m.k.exprs[u].aux = t;
                    return u;
                  });
      break;
    }
  }
  return out;
}

TEST_P(OpTable, EveryOpEveryTypeMatchesTheInterpreter) {
  std::unique_ptr<rt::Device> device;
  try {
    device = rt::make_device(GetParam());
  } catch (const Error& e) {
    GTEST_SKIP() << "no " << GetParam() << " device in this build or machine: " << e.what();
  }
  const bool vulkan = GetParam() == "vulkan";
  const num::FloatControls controls = device->info().controls;
  std::map<std::string, Tally> tallies;
  int kernels = 0;
  for (size_t i = 0; i < ir::kOpCount; ++i) {
    const Op op = static_cast<Op>(i);
    const ir::OpInfo& o = ir::info(op);
    Tally& tally = tallies[std::string(o.name)];
    for (auto& [name, vk] : kernels_for(op)) {
      ++kernels;
      const ir::Kernel& k = vk.kernel();
      const size_t n = 4 * kLanes * 4; // 16 workgroups
      std::vector<rt::HostBuffer> in;
      for (size_t j = 0; j + 1 < k.params.size(); ++j)
        in.push_back(inputs(k.params[j].type, n, j, 1000 * i + j));
      make_defined(op, k.params[0].type, in);
      rt::HostBuffer y(k.params.back().type, n);
      std::vector<rt::Arg> args;
      for (auto& b : in)
        args.push_back(rt::Arg::of(b));
      args.push_back(rt::Arg::of(y));
      std::vector<diff::BufferResults> results;
      diff::Options options;
      options.results = &results;
      options.max_shown = n; // every violation, with its index
      diff::Report report;
      try {
        report = diff::run(vk, *device, rt::Grid{{static_cast<uint32_t>(n / kLanes), 1, 1}}, args,
                           options);
      } catch (const Error& e) {
        ASSERT_EQ(e.kind(), ErrorKind::Unsupported)
            << name << " on " << GetParam() << ": " << e.what();
        EXPECT_TRUE(vulkan) << name << ": only the Vulkan device may refuse an op";
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        ++tally.refused;
        continue;
      }
      ASSERT_EQ(results.size(), 1u) << name;
      ASSERT_EQ(report.buffers.size(), 1u) << name;
      const diff::BufferReport& b = report.buffers[0];
      const rt::HostBuffer& ref = results[0].reference;
      const rt::HostBuffer& dev = results[0].device;
      const ScalarType rt = ref.type();
      auto operands_at = [&](size_t e) {
        std::vector<uint64_t> operands;
        for (const rt::HostBuffer& in_b : in)
          operands.push_back(in_b.get_bits(e));
        return operands;
      };
      // The checker's verdict.
      int failures = 0, quieted = 0;
      ASSERT_EQ(b.first_violations.size(), b.violations) << name;
      for (const diff::Violation& v : b.first_violations) {
        const std::vector<uint64_t> operands = operands_at(v.index);
        if (vulkan && o.family == ir::OpFamily::Bits && k.params[0].type == ScalarType::F16 &&
            std::any_of(operands.begin(), operands.end(), f16_nan)) {
          ++quieted;
          continue;
        }
        if (++failures <= 5)
          ADD_FAILURE() << name << " on " << GetParam() << ", lane " << v.index << ": interp "
                        << diff::format_value(rt, v.reference) << ", device "
                        << diff::format_value(rt, v.device) << " (distance " << v.ulps
                        << "), outside " << diff::describe(v.bound, rt);
      }
      // The independent check of the table's ulp figures.
      int unbounded = 0;
      if (vulkan && vulkan_check(op) == Check::Ulp) {
        for (size_t e = 0; e < n; ++e) {
          const uint64_t r = ref.get_bits(e), d = dev.get_bits(e);
          if (diff::same_bits(rt, r, d, controls))
            continue;
          const uint64_t dist = diff::distance(rt, r, d, controls);
          const std::optional<double> bound = vulkan_ulps(op, rt, operands_at(e), r, d);
          unbounded += !bound;
          if (bound && static_cast<double>(dist) > *bound && ++failures <= 5)
            ADD_FAILURE() << name << " on " << GetParam() << ", lane " << e << ": interp "
                          << diff::format_value(rt, r) << ", device " << diff::format_value(rt, d)
                          << " (distance " << dist << ", the table allows " << *bound << ")";
        }
      }
      if (unbounded > 0)
        std::fprintf(stderr, "%s on %s: %d lanes outside the table's bound's domain\n",
                     name.c_str(), GetParam().c_str(), unbounded);
      if (quieted > 0)
        std::fprintf(stderr, "%s on %s: %d lanes with an f16 NaN payload came back canonical\n",
                     name.c_str(), GetParam().c_str(), quieted);
      if (b.undecided > 0 || b.within_interval > 0)
        std::fprintf(stderr,
                     "%s on %s: %llu lanes within the interval (largest distance %llu ulp), %llu "
                     "undecided\n",
                     name.c_str(), GetParam().c_str(),
                     static_cast<unsigned long long>(b.within_interval),
                     static_cast<unsigned long long>(b.max_ulps),
                     static_cast<unsigned long long>(b.undecided));
      EXPECT_EQ(failures, 0) << name << " on " << GetParam();
      // Only the Vulkan device's math is judged by intervals.
      if (!vulkan) {
        EXPECT_EQ(b.within_interval + b.undecided, 0u) << name << " on " << GetParam();
      }
      ++tally.ran;
    }
  }
  // Every op with operands is exercised on at least one type (leaves are in every kernel), and
  // the interpreter and the CPU device refuse nothing.
  for (size_t i = 0; i < ir::kOpCount; ++i) {
    const ir::OpInfo& o = ir::info(static_cast<Op>(i));
    const Tally& t = tallies[std::string(o.name)];
    if (o.rule == ir::TypeRule::Leaf)
      continue;
    EXPECT_GT(t.ran + t.refused, 0) << o.name << " has no accepted type";
    if (!vulkan) {
      EXPECT_EQ(t.refused, 0) << o.name;
    } else if (o.name != "erf") {
      EXPECT_GT(t.ran, 0) << o.name << " runs on no type on Vulkan";
    }
  }
  std::fprintf(stderr, "%s: %d kernels\n", GetParam().c_str(), kernels);
}

INSTANTIATE_TEST_SUITE_P(Devices, OpTable, ::testing::Values("interp", "cpu", "vulkan"),
                         [](const auto& info) { return info.param; });

} // namespace
} // namespace halfway
