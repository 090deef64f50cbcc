// The random kernel generator: see generate.hpp for what it guarantees and specs/kernelgen.md for
// the shapes it builds.
#include "halfway/kernelgen/generate.hpp"

#include "halfway/diff/compare.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/numerics/formats.hpp"
#include "halfway/support/error.hpp"
#include "quirks.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <iterator>
#include <set>

namespace halfway::kernelgen {

namespace {

using ir::Access;
using ir::ExprId;
using ir::Op;
using ir::ScalarType;
using ir::Space;
using ir::Stmt;
using ir::StmtKind;
using ir::TypeRule;

// splitmix64: the kernel's random source, a function of (seed, index) alone on every platform.
class Rng {
public:
  Rng(uint64_t seed, uint64_t index)
      : s_(seed * 0x9e3779b97f4a7c15ull ^ (index + 0x632be59bd9b4e019ull)) {
    next();
  }
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool chance(uint32_t percent) { return below(100) < percent; }
  bool coin() { return (next() >> 63) != 0; }
  template <class T> const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }

private:
  uint64_t s_;
};

constexpr size_t kTypeCount = std::size(ir::kTypeInfo);

std::vector<ScalarType> all_types() {
  std::vector<ScalarType> t;
  for (size_t i = 0; i < kTypeCount; ++i)
    t.push_back(static_cast<ScalarType>(i));
  return t;
}

bool is_pack_format(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::BF16 || ir::is_fp8(t);
}

uint64_t type_mask(ScalarType t) {
  const uint32_t w = t == ScalarType::Bool ? 1 : ir::info(t).bits;
  return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}

// Whether an op of this rule can produce a value of type t (the verifier's rule, restated as a
// question the generator asks before building).
bool can_make(TypeRule rule, ScalarType t) {
  switch (rule) {
  case TypeRule::Leaf:
    return false; // leaves are built by Generator::leaf
  case TypeRule::Numeric:
    return ir::is_arithmetic(t);
  case TypeRule::Float:
    return ir::is_float(t) && !ir::is_fp8(t);
  case TypeRule::Int:
  case TypeRule::Shift:
    return ir::is_int(t);
  case TypeRule::Bitwise:
    return ir::is_int(t) || t == ScalarType::Bool;
  case TypeRule::Compare:
    return t == ScalarType::Bool;
  case TypeRule::Select:
    return true;
  case TypeRule::Convert:
  case TypeRule::Bitcast:
    return t != ScalarType::Bool;
  case TypeRule::Pack:
    return t == ScalarType::U32;
  case TypeRule::Unpack:
    return is_pack_format(t);
  }
  return false;
}

struct Buffer {
  uint32_t param;
  ScalarType type;
  Access access;
  bool atomic = false; // only atomics touch it
  bool tie = false;    // holds the tie sites' results, written by them alone
  bool accum = false;  // holds the accumulation's result, written by it alone
  ir::AtomicOp op = ir::AtomicOp::Add;
};

class Generator {
public:
  Generator(uint64_t seed, uint64_t index, const GenOptions& o) : r_(seed, index), o_(o) {
    g_.seed = seed;
    g_.index = index;
  }

  Generated run() {
    ir::Kernel& k = g_.kernel;
    k.name = "fz_" + std::to_string(g_.seed) + "_" + std::to_string(g_.index);
    static const std::vector<uint32_t> sizes{1, 2, 4, 8, 16, 32, 64};
    k.workgroup = {r_.pick(sizes), 1, 1};
    g_.lanes = k.workgroup[0] * static_cast<uint32_t>(1 + r_.below(4));
    // A 2-D grid for a fifth of the kernels, 3-D for a tenth: the workgroup and the grid get
    // extents along y (and z), at most 64 lanes per workgroup.
    const uint64_t dims = r_.below(10);
    if (dims < 3) {
      k.workgroup[0] = std::min<uint32_t>(k.workgroup[0], 16);
      g_.lanes = k.workgroup[0] * static_cast<uint32_t>(1 + r_.below(3));
      k.workgroup[1] = 1u << r_.below(3);
      g_.lanes_y = k.workgroup[1] * static_cast<uint32_t>(1 + r_.below(2));
      if (dims == 0) {
        k.workgroup[2] = 1u << r_.below(2);
        g_.lanes_z = k.workgroup[2] * static_cast<uint32_t>(1 + r_.below(2));
      }
    }
    g_.exact_only = r_.below(256) < o_.exact_only_256;
    g_.single_rounding = r_.below(256) < o_.single_rounding_256;
    g_.exact_models = g_.single_rounding && r_.below(256) < o_.exact_models_256;
    g_.relaxed_accumulation = r_.below(256) < o_.relaxed_accumulation_256;
    const uint64_t kind = r_.below(100);
    g_.inputs = kind < 40   ? diff::inputs::Kind::Ties
                : kind < 75 ? diff::inputs::Kind::Random
                            : diff::inputs::Kind::Edges;
    g_.input_seed = r_.next() >> 16;
    for (size_t i = 0; i < ir::kOpCount; ++i) {
      Op op = static_cast<Op>(i);
      if (ir::info(op).rule != TypeRule::Leaf && (!g_.exact_only || device_exact(op)))
        ops_.push_back(op);
    }

    declare_memory();
    gid_ = node(Op::GlobalId, ScalarType::U32, {});
    if (g_.lanes_y * g_.lanes_z > 1) // the lane's element: x + X * (y + Y * z)
      gid_ = linear(Op::GlobalId, [this](uint32_t d) {
        return node(Op::Mul, ScalarType::U32,
                    {node(Op::NumGroups, ScalarType::U32, {}, d),
                     node(Op::GroupSize, ScalarType::U32, {}, d)});
      });
    ir::Body& body = k.body;
    if (!k.shared.empty())
      shared_phase(body);
    if (ties_)
      tie_sites(body);
    if (g_.relaxed_accumulation)
      accumulation(body);
    const uint32_t n = 1 + static_cast<uint32_t>(r_.below(o_.max_statements));
    scopes_.emplace_back();
    for (uint32_t i = 0; i < n; ++i)
      statement(body, 0, 0);
    // Every output gets a value at the lane's element, so that no output is left unwritten.
    for (const Buffer& b : buffers_)
      if (b.access != Access::Read && !b.atomic && !b.tie && !b.accum)
        body.push_back(store(b, static_cast<int>(o_.max_depth)));
    scopes_.pop_back();

    try {
      ir::verify(k);
    } catch (const Error& e) {
      ErrorContext c;
      c.kernel = k.name;
      throw Error(ErrorKind::Internal,
                  "the kernel generator built a kernel the verifier refuses: " + e.message(), c);
    }
    return std::move(g_);
  }

private:
  // id(0) + extent(0) * (id(1) + extent(1) * id(2)) of a builtin (global_id or local_id), the
  // dimensions the kernel uses only.
  ExprId linear(Op builtin, const std::function<ExprId(uint32_t)>& extent) {
    const ir::Kernel& k = g_.kernel;
    const bool z = g_.lanes_z > 1 || k.workgroup[2] > 1;
    ExprId v = node(builtin, ScalarType::U32, {}, z ? 2 : 1);
    if (z)
      v = node(
          Op::Add, ScalarType::U32,
          {node(builtin, ScalarType::U32, {}, 1), node(Op::Mul, ScalarType::U32, {extent(1), v})});
    return node(
        Op::Add, ScalarType::U32,
        {node(builtin, ScalarType::U32, {}, 0), node(Op::Mul, ScalarType::U32, {extent(0), v})});
  }

  // ---- types and constants ----------------------------------------------------------------
  ScalarType value_type() {
    // The formats the library is about come up more often than the others.
    static const std::vector<ScalarType> common{ScalarType::F32, ScalarType::F16, ScalarType::BF16,
                                                ScalarType::I32, ScalarType::U32};
    if (r_.chance(50))
      return r_.pick(common);
    return static_cast<ScalarType>(r_.below(kTypeCount));
  }
  ScalarType element_type() {
    ScalarType t;
    do
      t = value_type();
    while (t == ScalarType::Bool);
    return t;
  }

  uint64_t constant_bits(ScalarType t) {
    if (t == ScalarType::Bool)
      return r_.below(2);
    if (ir::is_int(t)) {
      const uint64_t m = type_mask(t), top = (m >> 1) + 1;
      const std::vector<uint64_t> edges{0, 1, 2, 3, 7, m, top, top - 1, m - 1};
      if (r_.chance(50))
        return r_.pick(edges);
      return (r_.chance(50) ? r_.below(100) : r_.next()) & m;
    }
    const num::Format f = *diff::float_format(t);
    if (r_.chance(25))
      return r_.pick(diff::inputs::special_bits(t));
    const num::FormatInfo& fi = num::info(f);
    const int smallest = fi.emin - fi.man_bits;
    const int e = std::clamp(static_cast<int>(r_.below(13)) - 6, smallest, fi.emax);
    uint64_t v;
    if (e >= fi.emin) {
      // Few fraction bits more often: short constants make exact products and ties likelier.
      uint64_t frac = r_.next() & fi.man_mask;
      if (r_.coin())
        frac &= ~(fi.man_mask >> std::min(fi.man_bits, 3));
      v = (static_cast<uint64_t>(e + fi.bias) << fi.man_bits) | frac;
    } else {
      const int k = e - smallest;
      v = (uint64_t{1} << k) | (r_.next() & ((uint64_t{1} << k) - 1));
    }
    if (num::is_nan(f, v))
      --v;
    if (r_.coin())
      v |= fi.sign_mask;
    return v;
  }

  // ---- nodes ------------------------------------------------------------------------------
  ExprId node(Op op, ScalarType t, std::initializer_list<ExprId> args, uint64_t imm = 0) {
    return detail::add_node(g_.kernel, op, t, args, imm);
  }
  ExprId constant(ScalarType t, uint64_t bits) { return node(Op::Const, t, {}, bits); }
  ExprId load(Space space, uint32_t ref, ScalarType t, ExprId index) {
    ExprId id = node(Op::Load, t, {index});
    g_.kernel.exprs[id].space = space;
    g_.kernel.exprs[id].ref = ref;
    return id;
  }
  ExprId len(uint32_t param) {
    ExprId id = node(Op::BufferLen, ScalarType::U32, {});
    g_.kernel.exprs[id].ref = param;
    return id;
  }
  ExprId local_get(uint32_t local) {
    ExprId id = node(Op::LocalGet, g_.kernel.locals[local].type, {});
    g_.kernel.exprs[id].ref = local;
    return id;
  }
  uint32_t new_local(const std::string& prefix, ScalarType t) {
    g_.kernel.locals.push_back({prefix + std::to_string(g_.kernel.locals.size()), t});
    return static_cast<uint32_t>(g_.kernel.locals.size() - 1);
  }

  // A u32 index into memory of `length` elements (given as a node): any value, reduced modulo
  // the length, which is never 0.
  ExprId any_index(ExprId length, int depth) {
    if (r_.chance(40))
      return node(Op::Rem, ScalarType::U32, {gid_, length});
    return node(Op::Rem, ScalarType::U32, {as_u32(depth), length});
  }
  ExprId as_u32(int depth) {
    ScalarType t = ScalarType::U32;
    if (r_.chance(30)) {
      static const std::vector<ScalarType> ints{ScalarType::I8,  ScalarType::U8,  ScalarType::I16,
                                                ScalarType::U16, ScalarType::I32, ScalarType::I64,
                                                ScalarType::U64};
      t = r_.pick(ints);
    }
    ExprId v = expr(t, depth);
    if (t == ScalarType::U32)
      return v;
    ExprId c = node(Op::Convert, ScalarType::U32, {v});
    return c;
  }

  // Indices into each dimension of a shared or private array: any value reduced modulo the
  // dimension, or a constant inside it.
  std::array<ExprId, 3> array_indices(Space space, uint32_t ref) {
    const ir::SharedArray& a = g_.kernel.array(space, ref);
    std::array<ExprId, 3> ix{ir::kNone, ir::kNone, ir::kNone};
    for (uint32_t d = 0; d < a.rank(); ++d)
      ix[d] = r_.chance(25) ? constant(ScalarType::U32, r_.below(a.dim(d)))
                            : any_index(constant(ScalarType::U32, a.dim(d)), 1);
    return ix;
  }
  ExprId array_load(Space space, uint32_t ref, ScalarType t) {
    const std::array<ExprId, 3> ix = array_indices(space, ref);
    ir::Expr e;
    e.op = Op::Load;
    e.type = t;
    e.space = space;
    e.ref = ref;
    e.nargs = static_cast<uint8_t>(g_.kernel.array(space, ref).rank());
    for (int d = 0; d < e.nargs; ++d)
      e.args[d] = ix[d];
    return g_.kernel.add(e);
  }
  // A rank-1 to rank-3 array of `elements` elements (a power of two when rank > 1): each inner
  // dimension a power of two that divides what is left.
  ir::SharedArray array_shape(std::string name, ScalarType t, uint32_t elements, uint32_t rank) {
    ir::SharedArray a{std::move(name), t, elements, {0, 0, 0}};
    if (rank == 1 || elements < 2)
      return a;
    uint32_t left = elements;
    std::array<uint32_t, 3> dims{0, 0, 0};
    for (uint32_t d = rank - 1; d > 0; --d) {
      uint32_t log = 0;
      while ((2u << log) <= left && log < 4)
        ++log;
      dims[d] = 1u << r_.below(log + 1);
      left /= dims[d];
    }
    dims[0] = left;
    a.dims = dims;
    return a;
  }

  // ---- expressions ------------------------------------------------------------------------
  ExprId expr(ScalarType t, int depth) {
    if (depth <= 0 || r_.chance(20))
      return leaf(t);
    std::vector<Op> candidates;
    for (Op op : ops_)
      if (can_make(ir::info(op).rule, t) && (!exact_ops_ || device_exact(op)))
        candidates.push_back(op);
    if (candidates.empty())
      return leaf(t);
    return make(r_.pick(candidates), t, depth - 1);
  }

  ExprId make(Op op, ScalarType t, int depth) {
    const ir::OpInfo& info = ir::info(op);
    switch (info.rule) {
    case TypeRule::Leaf:
      return leaf(t);
    case TypeRule::Numeric:
    case TypeRule::Float:
    case TypeRule::Int:
    case TypeRule::Bitwise:
    case TypeRule::Shift: {
      ir::Expr e;
      e.op = op;
      e.type = t;
      e.nargs = static_cast<uint8_t>(info.arity);
      for (int i = 0; i < info.arity; ++i)
        e.args[i] = expr(t, depth);
      if (ir::is_int(t) && info.family == ir::OpFamily::Arith && info.arity == 2 &&
          (op == Op::Div || op == Op::Rem)) // a divisor or(d, 1) is never 0
        e.args[1] = node(Op::Or, t, {e.args[1], constant(t, 1)});
      if (info.rule == TypeRule::Shift) // an amount below the width
        e.args[1] = node(Op::And, t, {e.args[1], constant(t, ir::info(t).bits - 1)});
      return g_.kernel.add(e);
    }
    case TypeRule::Compare: {
      ScalarType a;
      const bool equality = op == Op::Eq || op == Op::Ne;
      do
        a = value_type();
      while (!(ir::is_arithmetic(a) || (equality && a == ScalarType::Bool)));
      return node(op, ScalarType::Bool, {expr(a, depth), expr(a, depth)});
    }
    case TypeRule::Select:
      return node(op, t, {expr(ScalarType::Bool, depth), expr(t, depth), expr(t, depth)});
    case TypeRule::Convert: {
      ScalarType from;
      do
        from = r_.chance(40) && ir::is_float(t) ? ScalarType::F32 : value_type();
      while (from == t || from == ScalarType::Bool);
      ExprId c = node(op, t, {expr(from, depth)});
      ir::Expr& e = g_.kernel.exprs[c];
      if (r_.chance(25))
        e.rounding = static_cast<ir::RoundingMode>(1 + r_.below(3));
      e.saturate = t == ScalarType::E4M3 && r_.coin();
      return c;
    }
    case TypeRule::Bitcast: {
      std::vector<ScalarType> same;
      for (ScalarType s : all_types())
        if (s != t && s != ScalarType::Bool && ir::info(s).bits == ir::info(t).bits)
          same.push_back(s);
      if (same.empty())
        return leaf(t);
      return node(op, t, {expr(r_.pick(same), depth)});
    }
    case TypeRule::Pack: {
      static const std::vector<ScalarType> formats{ScalarType::F16, ScalarType::BF16,
                                                   ScalarType::E4M3, ScalarType::E5M2};
      ScalarType aux = r_.pick(formats);
      ir::Expr e;
      e.op = op;
      e.type = t;
      e.aux = aux;
      e.nargs = ir::is_fp8(aux) ? 4 : 2;
      for (int i = 0; i < e.nargs; ++i)
        e.args[i] = expr(aux, depth);
      return g_.kernel.add(e);
    }
    case TypeRule::Unpack: {
      ExprId u = node(op, t, {expr(ScalarType::U32, depth)}, r_.below(ir::is_fp8(t) ? 4 : 2));
      g_.kernel.exprs[u].aux = t;
      return u;
    }
    }
    ir::invalid_op(op);
  }

  ExprId leaf(ScalarType t) {
    std::vector<std::function<ExprId()>> ways;
    ways.push_back([&] { return constant(t, constant_bits(t)); });
    for (const auto& scope : scopes_)
      for (uint32_t l : scope)
        if (g_.kernel.locals[l].type == t)
          ways.push_back([this, l] { return local_get(l); });
    for (const Buffer& b : buffers_) {
      if (b.type != t || b.atomic || b.tie || b.accum || b.access == Access::Write)
        continue;
      if (b.access == Access::Read) {
        // Inputs weigh more than constants: results then depend on the data.
        for (int w = 0; w < 3; ++w)
          ways.push_back([this, b] {
            return load(Space::Buffer, b.param, b.type, any_index(len(b.param), 1));
          });
      } else {
        ways.push_back([this, b] { return load(Space::Buffer, b.param, b.type, gid_); });
      }
    }
    if (shared_ready_)
      for (uint32_t s = 0; s < g_.kernel.shared.size(); ++s)
        if (g_.kernel.shared[s].type == t) {
          ways.push_back([this, s, t] { return array_load(Space::Shared, s, t); });
        }
    for (uint32_t p = 0; p < g_.kernel.privates.size(); ++p)
      if (g_.kernel.privates[p].type == t)
        ways.push_back([this, p, t] { return array_load(Space::Private, p, t); });
    if (t == ScalarType::U32) {
      for (size_t i = 0; i < ir::kOpCount; ++i) {
        Op op = static_cast<Op>(i);
        if (ir::is_builtin(op))
          ways.push_back([this, op] {
            return node(op, ScalarType::U32, {}, r_.chance(80) ? 0 : 1 + r_.below(2));
          });
      }
      for (const Buffer& b : buffers_)
        ways.push_back([this, b] { return len(b.param); });
    }
    return r_.pick(ways)();
  }

  // ---- memory -----------------------------------------------------------------------------
  uint32_t add_buffer(const std::string& name, ScalarType t, Access a) {
    g_.kernel.params.push_back({name, ir::Param::Kind::Buffer, t, a});
    const uint32_t p = static_cast<uint32_t>(g_.kernel.params.size() - 1);
    buffers_.push_back({p, t, a});
    return p;
  }

  void declare_memory() {
    ir::Kernel& k = g_.kernel;
    ties_ = g_.inputs == diff::inputs::Kind::Ties;
    if (ties_) // tie_stress fills the first three f32 inputs: a*b + c lands near a tie
      for (const char* n : {"a", "b", "c"})
        add_buffer(n, ScalarType::F32, Access::Read);
    const uint64_t inputs = 1 + r_.below(3);
    for (uint64_t i = 0; i < inputs; ++i)
      add_buffer("x" + std::to_string(i), element_type(), Access::Read);
    const uint64_t outputs = 1 + r_.below(2);
    for (uint64_t i = 0; i < outputs; ++i)
      add_buffer("y" + std::to_string(i), element_type(), Access::Write);
    if (ties_) {
      tie_out_ = add_buffer("t", r_.coin() ? ScalarType::F16 : ScalarType::BF16, Access::Write);
      buffers_.back().tie = true;
    }
    if (r_.chance(40))
      add_buffer("io", element_type(), Access::ReadWrite);
    static const std::vector<ScalarType> atomic_types{ScalarType::U32, ScalarType::I32,
                                                      ScalarType::U64, ScalarType::I64};
    static const std::vector<ir::AtomicOp> commutative{
        ir::AtomicOp::Add, ir::AtomicOp::Sub, ir::AtomicOp::Min, ir::AtomicOp::Max,
        ir::AtomicOp::And, ir::AtomicOp::Or,  ir::AtomicOp::Xor};
    if (r_.chance(30)) {
      add_buffer("acc", r_.pick(atomic_types), Access::ReadWrite);
      buffers_.back().atomic = true;
      buffers_.back().op = r_.pick(commutative);
    }
    if (g_.relaxed_accumulation) { // written by the accumulation alone (accumulation())
      add_buffer("r", r_.chance(75) ? ScalarType::F32 : ScalarType::F16, Access::Write);
      buffers_.back().accum = true;
    }
    if (r_.chance(35)) { // per-lane arrays, zero at the start of every lane
      const uint32_t rank = 1 + static_cast<uint32_t>(r_.below(3));
      const uint32_t elements =
          rank == 1 ? 2 + static_cast<uint32_t>(r_.below(7)) : 1u << (rank + r_.below(3));
      k.privates.push_back(array_shape("pa", element_type(), elements, rank));
    }
    if (r_.chance(30)) {
      k.shared.push_back(array_shape("sh", element_type(), k.workgroup_lanes(),
                                     1 + static_cast<uint32_t>(r_.below(3))));
      if (r_.coin()) {
        k.shared.push_back({"sacc", r_.pick(atomic_types), 4});
        shared_op_ = r_.pick(commutative);
      }
    }
  }

  // Each lane writes its own slot of sh and updates sacc, then the workgroup meets at a barrier
  // (top level: uniform control flow); from then on shared memory is only read.
  void shared_phase(ir::Body& body) {
    ir::Kernel& k = g_.kernel;
    scopes_.emplace_back();
    Stmt s;
    s.kind = StmtKind::Store;
    s.space = Space::Shared;
    s.mem = 0;
    // The lane's own slot: its linear local id, split row-major over the array's dimensions.
    const ir::SharedArray& sh = k.shared[0];
    const ExprId lid = k.workgroup_lanes() == k.workgroup[0]
                           ? node(Op::LocalId, ScalarType::U32, {}, 0)
                           : linear(Op::LocalId, [this](uint32_t d) {
                               return constant(ScalarType::U32, g_.kernel.workgroup[d]);
                             });
    if (sh.rank() == 1) {
      s.a = lid;
    } else {
      uint32_t inner = 1;
      std::array<ExprId, 3> ix{};
      for (uint32_t d = sh.rank(); d-- > 0;) {
        ExprId v = inner == 1
                       ? lid
                       : node(Op::Div, ScalarType::U32, {lid, constant(ScalarType::U32, inner)});
        if (d > 0)
          v = node(Op::Rem, ScalarType::U32, {v, constant(ScalarType::U32, sh.dims[d])});
        ix[d] = v;
        inner *= sh.dims[d];
      }
      s.a = ix[0];
      s.c = ix[1];
      s.d = sh.rank() == 3 ? ix[2] : ir::kNone;
    }
    s.b = expr(k.shared[0].type, static_cast<int>(o_.max_depth));
    body.push_back(s);
    if (k.shared.size() > 1) {
      Stmt a;
      a.kind = StmtKind::Atomic;
      a.space = Space::Shared;
      a.mem = 1;
      a.atomic = shared_op_;
      a.a = any_index(constant(ScalarType::U32, k.shared[1].size), 1);
      a.b = expr(k.shared[1].type, 2);
      body.push_back(a);
    }
    Stmt barrier;
    barrier.kind = StmtKind::Barrier;
    body.push_back(barrier);
    scopes_.pop_back();
    shared_ready_ = true;
  }

  // Deliberate narrowing sites over the tie-stressing inputs: t[i] = narrow(a[i]*b[i] (+ c[i])),
  // where single rounding and two roundings differ on about half the elements.
  void tie_sites(ir::Body& body) {
    const ScalarType f = ScalarType::F32;
    ExprId a = load(Space::Buffer, 0, f, gid_), b = load(Space::Buffer, 1, f, gid_),
           c = load(Space::Buffer, 2, f, gid_);
    ExprId prod = node(Op::Mul, f, {a, b});
    ExprId value = prod;
    switch (r_.below(4)) {
    case 0:
      value = node(Op::Add, f, {prod, c});
      break;
    case 1:
      value = node(Op::Add, f, {c, prod});
      break;
    case 2:
      value = node(Op::Sub, f, {prod, node(Op::Neg, f, {c})});
      break;
    default:
      break;
    }
    const ScalarType to = g_.kernel.params[tie_out_].type;
    ExprId narrow = node(Op::Convert, to, {value});
    if (r_.chance(15))
      g_.kernel.exprs[narrow].rounding = static_cast<ir::RoundingMode>(1 + r_.below(3));
    Stmt s;
    s.kind = StmtKind::Store;
    s.mem = tie_out_;
    s.a = gid_;
    s.b = narrow;
    body.push_back(s);
  }

  // A loop-carried accumulation under the relaxed-accumulation opt-in (specs
  // f16-narrowing-barrier.md §5): s = init; for j in 0..K { s = s + a*b (or b*a + s, s - a*b,
  // fma(a, b, s)) }; r[i] = s, narrowed when r is f16. Only the accumulation writes r, and the
  // store is of the local itself, so the interpreter's record bounds every element of r. The
  // local is in no scope: nothing else reads or assigns it.
  void accumulation(ir::Body& body) {
    const Buffer* out = nullptr;
    for (const Buffer& b : buffers_)
      if (b.accum)
        out = &b;
    const ScalarType t = r_.chance(80) ? ScalarType::F32 : ScalarType::F16;
    // The §5 bound takes the terms as the reference computed them: a device's own error in a
    // term is not part of it, so terms and the initial value use exact and correctly rounded
    // ops only (the same on every device).
    exact_ops_ = true;
    Stmt let;
    let.kind = StmtKind::Let;
    let.a = expr(t, 2);
    let.local = new_local("s", t);
    body.push_back(let);
    Stmt loop;
    loop.kind = StmtKind::For;
    loop.a = constant(ScalarType::U32, 0);
    loop.b = constant(ScalarType::U32, 2 + r_.below(kMaxTrip - 2));
    loop.c = constant(ScalarType::U32, 1);
    loop.local = new_local("j", ScalarType::U32);
    counters_.insert(loop.local);
    scopes_.emplace_back(std::vector<uint32_t>{loop.local});
    const ExprId a = expr(t, 2), b = expr(t, 2);
    const ExprId acc = local_get(let.local);
    Stmt step;
    step.kind = StmtKind::Assign;
    step.local = let.local;
    switch (r_.below(4)) {
    case 0:
      step.a = node(Op::Add, t, {acc, node(Op::Mul, t, {a, b})});
      break;
    case 1:
      step.a = node(Op::Add, t, {node(Op::Mul, t, {a, b}), acc});
      break;
    case 2:
      step.a = node(Op::Sub, t, {acc, node(Op::Mul, t, {a, b})});
      break;
    default:
      step.a = node(Op::Fma, t, {a, b, acc});
      break;
    }
    scopes_.pop_back();
    exact_ops_ = false;
    loop.body.push_back(step);
    body.push_back(std::move(loop));
    Stmt store;
    store.kind = StmtKind::Store;
    store.mem = out->param;
    store.a = gid_;
    store.b = out->type == t ? local_get(let.local)
                             : node(Op::Convert, out->type, {local_get(let.local)});
    body.push_back(store);
  }

  // ---- statements -------------------------------------------------------------------------
  Stmt store(const Buffer& b, int depth) {
    Stmt s;
    s.kind = StmtKind::Store;
    s.mem = b.param;
    s.a = gid_;
    if (ir::is_float(b.type) && b.type != ScalarType::F64 && r_.chance(40)) {
      // A store that narrows: the value is computed wider and rounded on the way in.
      ScalarType wide = b.type == ScalarType::F32 ? ScalarType::F64 : ScalarType::F32;
      s.b = node(Op::Convert, b.type, {expr(wide, depth)});
      if (r_.chance(20))
        g_.kernel.exprs[s.b].rounding = static_cast<ir::RoundingMode>(1 + r_.below(3));
    } else {
      s.b = expr(b.type, depth);
    }
    return s;
  }

  Stmt guarded(StmtKind kind, int depth) {
    Stmt s;
    s.kind = StmtKind::If;
    s.a = expr(ScalarType::Bool, std::min(depth, 2));
    Stmt inner;
    inner.kind = kind;
    s.body.push_back(inner);
    return s;
  }

  void statement(ir::Body& out, int nesting, int loops) {
    const int depth = 1 + static_cast<int>(r_.below(o_.max_depth));
    const uint64_t roll = r_.below(100);
    if (roll < 28) { // let
      ScalarType t = value_type();
      Stmt s;
      s.kind = StmtKind::Let;
      s.a = expr(t, depth);
      s.local = new_local("v", t);
      scopes_.back().push_back(s.local);
      out.push_back(s);
      return;
    }
    if (roll < 42) { // assign
      std::vector<uint32_t> locals;
      for (const auto& scope : scopes_)
        for (uint32_t l : scope)
          if (!counters_.count(l))
            locals.push_back(l);
      if (!locals.empty()) {
        Stmt s;
        s.kind = StmtKind::Assign;
        s.local = r_.pick(locals);
        s.a = expr(g_.kernel.locals[s.local].type, depth);
        out.push_back(s);
        return;
      }
    }
    if (roll < 56 && !g_.kernel.privates.empty() && r_.chance(30)) { // private array element
      const ir::PrivateArray& pa = g_.kernel.privates[0];
      const std::array<ExprId, 3> ix = array_indices(Space::Private, 0);
      Stmt s;
      s.kind = StmtKind::Store;
      s.space = Space::Private;
      s.mem = 0;
      s.a = ix[0];
      s.c = pa.rank() > 1 ? ix[1] : ir::kNone;
      s.d = pa.rank() > 2 ? ix[2] : ir::kNone;
      s.b = expr(pa.type, depth);
      out.push_back(s);
      return;
    }
    if (roll < 56) { // store to the lane's element of an output
      std::vector<Buffer> outs;
      for (const Buffer& b : buffers_)
        if (b.access != Access::Read && !b.atomic && !b.tie && !b.accum)
          outs.push_back(b);
      out.push_back(store(r_.pick(outs), depth));
      return;
    }
    if (roll < 64) { // commutative atomic update
      for (const Buffer& b : buffers_)
        if (b.atomic) {
          Stmt s;
          s.kind = StmtKind::Atomic;
          s.mem = b.param;
          s.atomic = b.op;
          s.a = any_index(len(b.param), 1);
          s.b = expr(b.type, depth);
          out.push_back(s);
          return;
        }
    }
    if (roll < 76 && nesting < 3) { // if / else
      Stmt s;
      s.kind = StmtKind::If;
      s.a = expr(ScalarType::Bool, depth);
      block(s.body, nesting + 1, loops);
      if (r_.coin())
        block(s.else_body, nesting + 1, loops);
      out.push_back(std::move(s));
      return;
    }
    if (roll < 84 && nesting < 3 && loops < 2) { // for: at most kMaxTrip - 1 iterations
      Stmt s;
      s.kind = StmtKind::For;
      s.a = constant(ScalarType::U32, r_.below(2));
      s.b = r_.coin()
                ? constant(ScalarType::U32, r_.below(kMaxTrip))
                : node(Op::Rem, ScalarType::U32, {as_u32(1), constant(ScalarType::U32, kMaxTrip)});
      s.c = constant(ScalarType::U32, 1);
      s.local = new_local("j", ScalarType::U32);
      counters_.insert(s.local);
      scopes_.emplace_back(std::vector<uint32_t>{s.local});
      block(s.body, nesting + 1, loops + 1);
      scopes_.pop_back();
      out.push_back(std::move(s));
      return;
    }
    if (roll < 90 && nesting < 3 && loops < 2) { // while, its counter incremented first
      Stmt let;
      let.kind = StmtKind::Let;
      let.local = new_local("w", ScalarType::U32);
      let.a = constant(ScalarType::U32, 0);
      counters_.insert(let.local);
      scopes_.back().push_back(let.local);
      out.push_back(let);
      Stmt s;
      s.kind = StmtKind::While;
      s.a = node(Op::Lt, ScalarType::Bool,
                 {local_get(let.local), constant(ScalarType::U32, 1 + r_.below(kMaxTrip))});
      Stmt inc;
      inc.kind = StmtKind::Assign;
      inc.local = let.local;
      inc.a = node(Op::Add, ScalarType::U32, {local_get(let.local), constant(ScalarType::U32, 1)});
      s.body.push_back(inc);
      block(s.body, nesting + 1, loops + 1);
      out.push_back(std::move(s));
      return;
    }
    if (roll < 96 && loops > 0) {
      out.push_back(guarded(r_.coin() ? StmtKind::Break : StmtKind::Continue, depth));
      return;
    }
    if (roll < 98) {
      out.push_back(guarded(StmtKind::Return, depth));
      return;
    }
    // Anything else: a let, which is always possible.
    ScalarType t = value_type();
    Stmt s;
    s.kind = StmtKind::Let;
    s.a = expr(t, depth);
    s.local = new_local("v", t);
    scopes_.back().push_back(s.local);
    out.push_back(s);
  }

  void block(ir::Body& out, int nesting, int loops) {
    scopes_.emplace_back();
    const uint64_t n = 1 + r_.below(3);
    for (uint64_t i = 0; i < n; ++i)
      statement(out, nesting, loops);
    scopes_.pop_back();
  }

  Rng r_;
  GenOptions o_;
  Generated g_;
  std::vector<Op> ops_;
  std::vector<Buffer> buffers_;
  std::vector<std::vector<uint32_t>> scopes_;
  std::set<uint32_t> counters_; // loop counters: read, never assigned by generated statements
  ExprId gid_ = ir::kNone;
  bool ties_ = false, shared_ready_ = false;
  bool exact_ops_ = false; // expressions use device-exact ops only (accumulation terms)
  uint32_t tie_out_ = 0;
  ir::AtomicOp shared_op_ = ir::AtomicOp::Add;
};

} // namespace

Generated generate(uint64_t seed, uint64_t index, const GenOptions& options) {
  return Generator(seed, index, options).run();
}

std::vector<ir::Op> generated_ops() {
  std::vector<ir::Op> ops;
  for (size_t i = 0; i < ir::kOpCount; ++i) {
    Op op = static_cast<Op>(i);
    const ir::OpInfo& info = ir::info(op);
    // Leaves the generator builds itself: constants, locals, loads, lengths and builtins.
    const bool leaf = op == Op::Const || op == Op::LocalGet || op == Op::Load ||
                      op == Op::BufferLen || ir::is_builtin(op);
    if (info.rule != TypeRule::Leaf || leaf)
      ops.push_back(op);
  }
  return ops;
}

bool device_exact(ir::Op op) {
  const std::string_view p = ir::info(op).device_precision;
  return p.starts_with("exact") || p.starts_with("correctly rounded");
}

size_t count_statements(const ir::Kernel& k) {
  size_t n = 0;
  ir::for_each_stmt(k.body, [&](const Stmt&) { ++n; });
  return n;
}

} // namespace halfway::kernelgen
