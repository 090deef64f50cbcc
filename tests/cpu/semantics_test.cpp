// Op by op, the CPU device against the interpreter, bit for bit: every conversion between the
// scalar types in every rounding mode, float arithmetic in f16, bf16, f32 and f64 (NaN payloads,
// signed zeros, subnormals, min/max of zeros, fract near 1), fma, the math functions, integer ops,
// pack/unpack and bitcasts of arithmetic NaNs. Kernels are built directly in IR: y[i] = f(x0[i],
// ...).
#include "halfway/ir/bits.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "harness.hpp"
#include "tie_inputs.hpp"

#include <bit>
#include <functional>
#include <gtest/gtest.h>
#include <random>

using namespace halfway;
using namespace halfway::cpu_test;
using ir::Op;
using ir::ScalarType;

namespace {

constexpr size_t kCount = 3000;

struct MapKernel {
  ir::Kernel k;
  std::vector<ir::ExprId> inputs; // the loads x0[i], x1[i], ...

  MapKernel(std::string name, const std::vector<ScalarType>& in) {
    k.name = std::move(name);
    k.workgroup = {64, 1, 1};
    for (size_t j = 0; j < in.size(); ++j)
      k.params.push_back(
          {"x" + std::to_string(j), ir::Param::Kind::Buffer, in[j], ir::Access::Read});
    k.locals.push_back({"i", ScalarType::U32});
    for (size_t j = 0; j < in.size(); ++j) {
      ir::Expr load;
      load.op = Op::Load;
      load.type = in[j];
      load.nargs = 1;
      load.args[0] = local_i();
      load.ref = static_cast<uint32_t>(j);
      inputs.push_back(k.add(load));
    }
  }
  ir::ExprId local_i() {
    ir::Expr e;
    e.op = Op::LocalGet;
    e.type = ScalarType::U32;
    e.ref = 0;
    return k.add(e);
  }
  ir::ExprId node(Op op, ScalarType type, std::vector<ir::ExprId> args, uint64_t imm = 0) {
    ir::Expr e;
    e.op = op;
    e.type = type;
    e.nargs = static_cast<uint8_t>(args.size());
    for (size_t j = 0; j < args.size(); ++j)
      e.args[j] = args[j];
    e.imm = imm;
    return k.add(e);
  }
  ir::ExprId constant(ScalarType type, uint64_t bits) { return node(Op::Const, type, {}, bits); }
  ir::ExprId convert(ScalarType to, ir::ExprId x,
                     ir::RoundingMode r = ir::RoundingMode::NearestEven, bool saturate = false) {
    ir::ExprId id = node(Op::Convert, to, {x});
    k.exprs[id].rounding = r;
    k.exprs[id].saturate = saturate;
    return id;
  }
  // Finishes the kernel: y[i] = value, for i < len(y).
  ir::VerifiedKernel finish(ir::ExprId value) {
    ScalarType out = k.exprs[value].type;
    uint32_t y = static_cast<uint32_t>(k.params.size());
    k.params.push_back({"y", ir::Param::Kind::Buffer, out, ir::Access::Write});
    ir::Stmt let;
    let.kind = ir::StmtKind::Let;
    let.local = 0;
    let.a = node(Op::GlobalId, ScalarType::U32, {}, 0);
    ir::Expr len;
    len.op = Op::BufferLen;
    len.type = ScalarType::U32;
    len.ref = y;
    ir::Stmt store;
    store.kind = ir::StmtKind::Store;
    store.space = ir::Space::Buffer;
    store.mem = y;
    store.a = local_i();
    store.b = value;
    ir::Stmt guard;
    guard.kind = ir::StmtKind::If;
    guard.a = node(Op::Lt, ScalarType::Bool, {local_i(), k.add(len)});
    guard.body.push_back(store);
    k.body = {let, guard};
    return ir::verify(std::move(k));
  }
};

// Values worth testing for a type: specials, boundaries and random bit patterns.
rt::HostBuffer values(ScalarType t, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  rt::HostBuffer b(t, n);
  std::vector<float> ties = tie_floats(n, seed), specials = special_floats();
  for (size_t i = 0; i < n; ++i) {
    uint64_t r = rng();
    uint64_t bits = r;
    int kind = static_cast<int>(i % 8);
    switch (t) {
    case ScalarType::F32:
      bits = kind < 3   ? std::bit_cast<uint32_t>(ties[i])
             : kind < 4 ? std::bit_cast<uint32_t>(specials[i / 8 % specials.size()])
             : kind < 6 ? std::bit_cast<uint32_t>(
                              std::ldexp(static_cast<float>(r % 2000) - 1000, -int(r >> 60)))
                        : r;
      break;
    case ScalarType::F64: {
      double d = kind < 3   ? ties[i] * (1 + std::ldexp(static_cast<double>(r % 5) - 2, -40))
                 : kind < 4 ? specials[i / 8 % specials.size()]
                 : kind < 6 ? std::ldexp(static_cast<double>(r % 2000) - 1000, -int(r >> 60))
                            : std::bit_cast<double>(r);
      bits = std::bit_cast<uint64_t>(d);
      break;
    }
    case ScalarType::F16:
    case ScalarType::BF16:
    case ScalarType::E4M3:
    case ScalarType::E5M2:
      break; // every pattern is interesting
    default:
      if (kind < 3)
        bits = r % 17; // small values
      else if (kind < 4)
        bits = (r & 1) ? ~uint64_t{0} << (ir::info(t).bits - 1)
                       : ~(~uint64_t{0} << (ir::info(t).bits - 1));
      else if (kind < 5)
        bits = static_cast<uint64_t>(-static_cast<int64_t>(r % 300));
      break;
    }
    b.set_bits(i, ir::truncate_bits(t, bits));
  }
  return b;
}

// The input buffers of one case, in parameter order (HostBuffer is move-only, so braces build
// this rather than an initializer_list).
struct Inputs {
  std::vector<rt::HostBuffer> v;
  Inputs(rt::HostBuffer a) { v.push_back(std::move(a)); }
  Inputs(rt::HostBuffer a, rt::HostBuffer b) : Inputs(std::move(a)) { v.push_back(std::move(b)); }
  Inputs(rt::HostBuffer a, rt::HostBuffer b, rt::HostBuffer c)
      : Inputs(std::move(a), std::move(b)) {
    v.push_back(std::move(c));
  }
};

void expect_matches(const ir::VerifiedKernel& k, Inputs given, const std::string& what) {
  std::vector<rt::HostBuffer>& inputs = given.v;
  static policy::Registry registry;
  static rt::CpuDevice cpu_device(&registry); // one JIT for the whole suite
  rt::CpuDevice* cpu = &cpu_device;
  const ir::Kernel& kk = k.kernel();
  size_t n = inputs.front().size();
  Launch in(kk, rt::Grid::for_lanes(kk, n));
  for (size_t j = 0; j < inputs.size(); ++j)
    in.buffers[j] = std::move(inputs[j]);
  in.buffers.back() = rt::HostBuffer(kk.params.back().type, n);
  Launch want = run_interp(k, in);
  Launch got = run_device(*cpu, k, in);
  std::string diff = compare_bits(kk, want, got, 3);
  if (!diff.empty()) {
    std::string args;
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < 3; ++i) {
      if (want.buffers.back().get_bits(i) == got.buffers.back().get_bits(i))
        continue;
      ++shown;
      args += "  at " + std::to_string(i) + ":";
      for (size_t j = 0; j + 1 < kk.params.size(); ++j)
        args += " " + ir::print_constant(kk.params[j].type, in.buffers[j].get_bits(i));
      args += "\n";
    }
    ADD_FAILURE() << what << "\n" << diff << args;
  }
}

constexpr ScalarType kAllTypes[] = {
    ScalarType::I8,  ScalarType::U8,  ScalarType::I16,  ScalarType::U16, ScalarType::I32,
    ScalarType::U32, ScalarType::I64, ScalarType::U64,  ScalarType::F16, ScalarType::BF16,
    ScalarType::F32, ScalarType::F64, ScalarType::E4M3, ScalarType::E5M2};
constexpr ScalarType kFloatTypes[] = {ScalarType::F16, ScalarType::BF16, ScalarType::F32,
                                      ScalarType::F64};
constexpr ir::RoundingMode kRoundings[] = {ir::RoundingMode::NearestEven,
                                           ir::RoundingMode::TowardZero, ir::RoundingMode::Up,
                                           ir::RoundingMode::Down};

TEST(CpuSemantics, EveryConversionInEveryRoundingMode) {
  for (ScalarType from : kAllTypes)
    for (ScalarType to : kAllTypes) {
      if (from == to)
        continue;
      for (ir::RoundingMode r : kRoundings)
        for (bool saturate : {false, true}) {
          if (saturate && to != ScalarType::E4M3)
            continue;
          MapKernel m("convert", {from});
          auto k = m.finish(m.convert(to, m.inputs[0], r, saturate));
          expect_matches(k, {values(from, kCount, 1)},
                         std::string(ir::name(from)) + " -> " + std::string(ir::name(to)) + " " +
                             std::string(ir::name(r)) + (saturate ? " saturate" : ""));
        }
    }
}

TEST(CpuSemantics, FloatArithmetic) {
  const Op binary[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Min, Op::Max, Op::Copysign};
  const Op unary[] = {Op::Neg, Op::Abs, Op::Sqrt, Op::Floor, Op::Ceil, Op::Fract};
  for (ScalarType t : kFloatTypes) {
    for (Op op : binary) {
      MapKernel m(std::string(ir::name(op)), {t, t});
      auto k = m.finish(m.node(op, t, {m.inputs[0], m.inputs[1]}));
      expect_matches(k, {values(t, kCount, 2), values(t, kCount, 3)},
                     std::string(ir::name(op)) + " " + std::string(ir::name(t)));
    }
    for (Op op : unary) {
      MapKernel m(std::string(ir::name(op)), {t});
      auto k = m.finish(m.node(op, t, {m.inputs[0]}));
      expect_matches(k, {values(t, kCount, 4)},
                     std::string(ir::name(op)) + " " + std::string(ir::name(t)));
    }
    MapKernel m("fma", {t, t, t});
    auto k = m.finish(m.node(Op::Fma, t, {m.inputs[0], m.inputs[1], m.inputs[2]}));
    expect_matches(k, {values(t, kCount, 5), values(t, kCount, 6), values(t, kCount, 7)},
                   "fma " + std::string(ir::name(t)));
  }
}

TEST(CpuSemantics, Comparisons) {
  const Op ops[] = {Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge};
  for (ScalarType t : kAllTypes) {
    if (ir::is_fp8(t))
      continue;
    for (Op op : ops) {
      MapKernel m(std::string(ir::name(op)), {t, t});
      ir::ExprId c = m.node(op, ScalarType::Bool, {m.inputs[0], m.inputs[1]});
      auto k = m.finish(m.node(Op::Select, ScalarType::U8,
                               {c, m.constant(ScalarType::U8, 1), m.constant(ScalarType::U8, 0)}));
      rt::HostBuffer a = values(t, kCount, 8), b = values(t, kCount, 9);
      for (size_t i = 0; i < kCount; i += 4)
        b.set_bits(i, a.get_bits(i)); // equal operands too
      expect_matches(k, {std::move(a), std::move(b)},
                     std::string(ir::name(op)) + " " + std::string(ir::name(t)));
    }
  }
}

TEST(CpuSemantics, MathFunctions) {
  const Op unary[] = {Op::Exp, Op::Exp2, Op::Log,  Op::Log2,  Op::Sin,
                      Op::Cos, Op::Tan,  Op::Tanh, Op::Rsqrt, Op::Erf};
  for (ScalarType t : {ScalarType::F16, ScalarType::BF16, ScalarType::F32}) {
    for (Op op : unary) {
      MapKernel m(std::string(ir::name(op)), {t});
      auto k = m.finish(m.node(op, t, {m.inputs[0]}));
      expect_matches(k, {values(t, 600, 10)},
                     std::string(ir::name(op)) + " " + std::string(ir::name(t)));
    }
    for (Op op : {Op::Pow, Op::Atan2}) {
      MapKernel m(std::string(ir::name(op)), {t, t});
      auto k = m.finish(m.node(op, t, {m.inputs[0], m.inputs[1]}));
      expect_matches(k, {values(t, 600, 11), values(t, 600, 12)},
                     std::string(ir::name(op)) + " " + std::string(ir::name(t)));
    }
  }
}

TEST(CpuSemantics, IntegerOps) {
  const Op binary[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Rem, Op::Min,
                       Op::Max, Op::And, Op::Or,  Op::Xor, Op::Shl, Op::Shr};
  for (ScalarType t : kAllTypes) {
    if (!ir::is_int(t))
      continue;
    uint32_t width = ir::info(t).bits;
    for (Op op : binary) {
      MapKernel m(std::string(ir::name(op)), {t, t});
      auto k = m.finish(m.node(op, t, {m.inputs[0], m.inputs[1]}));
      rt::HostBuffer b = values(t, kCount, 13);
      for (size_t i = 0; i < kCount; ++i) {
        uint64_t v = b.get_bits(i);
        if (op == Op::Div || op == Op::Rem)
          v |= 1; // never zero (an error, tested elsewhere)
        if (op == Op::Shl || op == Op::Shr)
          v &= width - 1; // in range
        b.set_bits(i, v);
      }
      expect_matches(k, {values(t, kCount, 14), std::move(b)},
                     std::string(ir::name(op)) + " " + std::string(ir::name(t)));
    }
    for (Op op : {Op::Neg, Op::Abs, Op::Not}) {
      MapKernel m(std::string(ir::name(op)), {t});
      auto k = m.finish(m.node(op, t, {m.inputs[0]}));
      expect_matches(k, {values(t, kCount, 15)},
                     std::string(ir::name(op)) + " " + std::string(ir::name(t)));
    }
  }
}

// NaN bits are observable through stores, bitcasts, packs, conversions and the sign ops; the
// device must produce the interpreter's canonical NaNs there, whatever x86 produced.
TEST(CpuSemantics, ArithmeticNanBitsWhereObservable) {
  for (ScalarType t : kFloatTypes) {
    ScalarType bits = t == ScalarType::F64   ? ScalarType::U64
                      : t == ScalarType::F32 ? ScalarType::U32
                                             : ScalarType::U16;
    auto nan_source = [&](MapKernel& m) { return m.node(Op::Sub, t, {m.inputs[0], m.inputs[1]}); };
    std::vector<std::function<ir::ExprId(MapKernel&)>> shapes = {
        [&](MapKernel& m) { return m.node(Op::Bitcast, bits, {nan_source(m)}); },
        [&](MapKernel& m) {
          return m.node(Op::Bitcast, bits, {m.node(Op::Neg, t, {nan_source(m)})});
        },
        [&](MapKernel& m) {
          return m.node(Op::Bitcast, bits, {m.node(Op::Abs, t, {nan_source(m)})});
        },
        [&](MapKernel& m) {
          return m.node(Op::Copysign, t,
                        {m.inputs[0], m.node(Op::Mul, t, {m.inputs[1], nan_source(m)})});
        },
        [&](MapKernel& m) {
          return m.convert(ScalarType::F64 == t ? ScalarType::F32 : ScalarType::F64, nan_source(m));
        },
        [&](MapKernel& m) {
          return m.node(Op::Select, t,
                        {m.node(Op::Lt, ScalarType::Bool, {m.inputs[0], m.inputs[1]}),
                         nan_source(m), m.inputs[1]});
        },
    };
    for (size_t s = 0; s < shapes.size(); ++s) {
      MapKernel m("nan_bits", {t, t});
      auto k = m.finish(shapes[s](m));
      rt::HostBuffer a = values(t, kCount, 16), b = values(t, kCount, 17);
      for (size_t i = 0; i < kCount; i += 3)
        b.set_bits(i, a.get_bits(i)); // inf - inf = NaN
      expect_matches(k, {std::move(a), std::move(b)},
                     "NaN shape " + std::to_string(s) + " " + std::string(ir::name(t)));
    }
  }
  // Packs of arithmetic NaNs.
  for (ScalarType t : {ScalarType::F16, ScalarType::BF16}) {
    MapKernel m("pack", {t, t});
    ir::ExprId add = m.node(Op::Add, t, {m.inputs[0], m.inputs[1]});
    ir::ExprId pk = m.node(Op::Pack, ScalarType::U32, {add, m.inputs[1]});
    m.k.exprs[pk].aux = t;
    auto k = m.finish(pk);
    expect_matches(k, {values(t, kCount, 18), values(t, kCount, 19)},
                   "pack " + std::string(ir::name(t)));
  }
}

TEST(CpuSemantics, UnpackAndWiden) {
  for (ScalarType t : {ScalarType::F16, ScalarType::BF16, ScalarType::E4M3, ScalarType::E5M2}) {
    uint32_t lanes = ir::info(t).bits == 16 ? 2 : 4;
    for (uint32_t lane = 0; lane < lanes; ++lane) {
      MapKernel m("unpack", {ScalarType::U32});
      ir::ExprId u = m.node(Op::Unpack, t, {m.inputs[0]}, lane);
      m.k.exprs[u].aux = t;
      auto k = m.finish(m.convert(ScalarType::F32, u));
      rt::HostBuffer words = values(ScalarType::U32, kCount, 20 + lane);
      for (uint32_t code = 0; code < 256; ++code) // every fp8 code in every byte, in vector runs
        words.set_bits(code, code * 0x01010101u);
      expect_matches(k, {std::move(words)}, "unpack " + std::string(ir::name(t)));
    }
  }
}

} // namespace
