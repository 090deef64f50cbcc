#pragma once
// Buffer parameters, shared and private arrays, locals and element references.

#include "halfway/dsl/value.hpp"

namespace halfway {

namespace detail {
template <class I> ir::ExprId index_id(const I& i) {
  if constexpr (Literal<I>) {
    return Value<uint32_t>(static_cast<uint32_t>(i)).id();
  } else {
    static_assert(is_int_v<value_elem_t<I>>, "halfway: buffer indices are integers");
    return i.id();
  }
}

// Stores `v` into an element of type T. A wider float value is narrowed (the explicit IR
// narrowing node a store of f32 into f16 becomes); a narrower one is widened exactly; anything
// else must already be T.
template <class T, class X> ir::ExprId stored_value(const X& v) {
  if constexpr (Literal<X>) {
    return Value<T>(v).id();
  } else {
    using S = value_elem_t<X>;
    static_assert(std::is_same_v<S, T> || (is_float_v<S> && is_float_v<T>),
                  "halfway: storing a value of another type: convert<> explicitly");
    return b().convert(v.id(), scalar_type_v<T>);
  }
}
} // namespace detail

// A reference to one element of a buffer, shared or private array: reads as a Value<T> (a
// load), assigns as a store. An element of a rank-2 or rank-3 array has one index per dimension.
template <class T> class Ref : public Value<T> {
public:
  Ref(ir::Space space, uint32_t mem, ir::ExprId index)
      : Ref(space, mem, {index, ir::kNone, ir::kNone}, 1) {}
  Ref(ir::Space space, uint32_t mem, std::array<ir::ExprId, 3> indices, uint8_t rank)
      : Value<T>(detail::Node{make_load(space, mem, indices, rank)}), space_(space), mem_(mem),
        indices_(indices) {}

  template <class X> const Ref& operator=(const X& v) const {
    ir::Stmt s;
    s.kind = ir::StmtKind::Store;
    s.space = space_;
    s.mem = mem_;
    s.a = indices_[0];
    s.c = indices_[1];
    s.d = indices_[2];
    s.b = detail::stored_value<T>(v);
    detail::b().emit(std::move(s));
    return *this;
  }
  const Ref& operator=(const Ref& v) const { return operator=<Value<T>>(v); }
  template <class X> const Ref& operator+=(const X& v) const { return *this = *this + v; }
  template <class X> const Ref& operator-=(const X& v) const { return *this = *this - v; }
  template <class X> const Ref& operator*=(const X& v) const { return *this = *this * v; }

  ir::Space space() const { return space_; }
  uint32_t mem() const { return mem_; }
  ir::ExprId index() const { return indices_[0]; }

private:
  static ir::ExprId make_load(ir::Space space, uint32_t mem, std::array<ir::ExprId, 3> indices,
                              uint8_t rank) {
    ir::Expr e;
    e.op = ir::Op::Load;
    e.type = scalar_type_v<T>;
    e.space = space;
    e.ref = mem;
    e.nargs = rank;
    for (uint8_t i = 0; i < rank; ++i)
      e.args[i] = indices[i];
    return detail::b().add(e);
  }
  ir::Space space_;
  uint32_t mem_;
  std::array<ir::ExprId, 3> indices_;
};

namespace detail {
// The first N indices of an element of a rank-R array: `[i]` adds one, and the R-th gives the
// element's Ref, so that `tile[ty][tx]` reads and assigns like a C array.
template <class T, size_t R, size_t N> class Partial {
public:
  Partial(ir::Space space, uint32_t mem, std::array<ir::ExprId, 3> indices)
      : space_(space), mem_(mem), indices_(indices) {}
  template <class I> auto operator[](const I& i) const {
    std::array<ir::ExprId, 3> next = indices_;
    next[N] = index_id(i);
    if constexpr (N + 1 == R)
      return Ref<T>(space_, mem_, next, static_cast<uint8_t>(R));
    else
      return Partial<T, R, N + 1>(space_, mem_, next);
  }

private:
  ir::Space space_;
  uint32_t mem_;
  std::array<ir::ExprId, 3> indices_;
};

// The first index of an array of compile-time rank R.
template <class T, size_t R, class I> auto first_index(ir::Space space, uint32_t mem, const I& i) {
  if constexpr (R == 1)
    return Ref<T>(space, mem, index_id(i));
  else
    return Partial<T, R, 1>(space, mem, {index_id(i), ir::kNone, ir::kNone});
}

// The IR's shape of an array with compile-time dimensions (ir::SharedArray: rank 1 keeps dims
// empty and gives the size).
template <class T, uint32_t... Dims> ir::SharedArray array_decl(std::string name) {
  static_assert(sizeof...(Dims) >= 1 && sizeof...(Dims) <= 3,
                "halfway: arrays have 1 to 3 dimensions");
  static_assert(((Dims > 0) && ...), "halfway: an array dimension is at least 1");
  constexpr uint64_t size = (uint64_t{1} * ... * uint64_t{Dims});
  static_assert(size < (uint64_t{1} << 32), "halfway: an array has fewer than 2^32 elements");
  ir::SharedArray a{std::move(name), scalar_type_v<T>, static_cast<uint32_t>(size), {0, 0, 0}};
  if constexpr (sizeof...(Dims) > 1)
    a.dims = {Dims...};
  return a;
}
} // namespace detail

namespace detail {
template <class T, ir::Access A> class BufferParam {
public:
  using element_type = T;
  explicit BufferParam(std::string name)
      : param_(b().add_param({std::move(name), ir::Param::Kind::Buffer, scalar_type_v<T>, A})) {}

  template <class I> auto operator[](const I& i) const {
    if constexpr (A ==
                  ir::Access::Read) // read-only buffers give values, so `x[i] = v` fails to compile
      return Value<T>(detail::Node{Ref<T>(ir::Space::Buffer, param_, index_id(i)).id()});
    else
      return Ref<T>(ir::Space::Buffer, param_, index_id(i));
  }
  // The buffer's length in elements, as bound at launch.
  Value<uint32_t> size() const {
    ir::Expr e;
    e.op = ir::Op::BufferLen;
    e.type = ir::ScalarType::U32;
    e.ref = param_;
    return Value<uint32_t>(detail::Node{b().add(e)});
  }
  uint32_t param() const { return param_; }

private:
  uint32_t param_;
};
} // namespace detail

// Kernel parameters. Use them as the parameter types of the kernel body lambda.
template <class T> using In = detail::BufferParam<T, ir::Access::Read>;
template <class T> using Out = detail::BufferParam<T, ir::Access::Write>;
template <class T> using InOut = detail::BufferParam<T, ir::Access::ReadWrite>;

template <class T> class Scalar : public Value<T> {
public:
  explicit Scalar(std::string name) : Value<T>(detail::Node{make(std::move(name))}) {}

private:
  static ir::ExprId make(std::string name) {
    auto& bl = detail::b();
    ir::Expr e;
    e.op = ir::Op::ParamGet;
    e.type = scalar_type_v<T>;
    e.ref = bl.add_param(
        {std::move(name), ir::Param::Kind::Scalar, scalar_type_v<T>, ir::Access::Read});
    return bl.add(e);
  }
};

// A workgroup-shared array: `Shared<float> s("s", 256)` of a size known when the kernel is
// built, or `Shared<float, 16, 17> tile("tile")` of 1 to 3 dimensions fixed at compile time,
// indexed `tile[ty][tx]` (row-major; each index is bounds-checked against its dimension).
template <class T, uint32_t... Dims> class Shared {
public:
  using element_type = T;
  static constexpr size_t rank = sizeof...(Dims) == 0 ? 1 : sizeof...(Dims);
  Shared(std::string name, uint32_t size) requires(sizeof...(Dims) == 0)
      : id_(detail::b().add_shared({std::move(name), scalar_type_v<T>, size})) {}
  explicit Shared(std::string name) requires(sizeof...(Dims) > 0)
      : id_(detail::b().add_shared(detail::array_decl<T, Dims...>(std::move(name)))) {}
  template <class I> auto operator[](const I& i) const {
    return detail::first_index<T, rank>(ir::Space::Shared, id_, i);
  }

private:
  uint32_t id_;
};

// A private (per-lane) array of 1 to 3 dimensions: `Private<float, 64> acc("acc")`,
// `Private<float, 4, 4> out("out")`, indexed like Shared (`acc[i]`, `out[r][c]`) by constants or
// values. Each lane has its own copy, zero when the lane starts, wherever in the body it is
// declared (specs/ir.md). At most ir::kMaxPrivateBytes (16 KiB) of private arrays per lane.
template <class T, uint32_t... Dims> class Private {
public:
  using element_type = T;
  static constexpr size_t rank = sizeof...(Dims);
  explicit Private(std::string name)
      : id_(detail::b().add_private(detail::array_decl<T, Dims...>(std::move(name)))) {}
  template <class I> auto operator[](const I& i) const {
    return detail::first_index<T, rank>(ir::Space::Private, id_, i);
  }

private:
  uint32_t id_;
};

// A local variable: declared with a value, assignable. Assignment never narrows: assigning an
// f32 value to a Var<f16> does not compile; write narrow<f16>(v).
template <class T> class Var : public Value<T> {
public:
  template <class X>
  requires(ValueLike<X> || Literal<X>) Var(const X& init, const std::string& name = "")
      : Var(declare(init, name)) {}
  Var(const Var& other) : Var(declare(other, "")) {}

  template <class X> const Var& operator=(const X& v) const {
    ir::Stmt s;
    s.kind = ir::StmtKind::Assign;
    s.local = local_;
    s.a = value_id(v);
    detail::b().emit(std::move(s));
    return *this;
  }
  const Var& operator=(const Var& v) const { return operator=<Value<T>>(v); }
  template <class X> const Var& operator+=(const X& v) const { return *this = *this + v; }
  template <class X> const Var& operator-=(const X& v) const { return *this = *this - v; }
  template <class X> const Var& operator*=(const X& v) const { return *this = *this * v; }

  uint32_t local() const { return local_; }

private:
  struct Declared {
    uint32_t local;
    ir::ExprId get;
  };
  explicit Var(Declared d) : Value<T>(detail::Node{d.get}), local_(d.local) {}

  template <class X> static ir::ExprId value_id(const X& v) {
    if constexpr (Literal<X>) {
      return Value<T>(v).id();
    } else {
      using S = value_elem_t<X>;
      static_assert(
          std::is_same_v<S, T> || ir::widens_exactly(scalar_type_v<S>, scalar_type_v<T>),
          "halfway: assignment would narrow or change type: use narrow<T>() or convert<T>()");
      return detail::b().convert(v.id(), scalar_type_v<T>);
    }
  }
  template <class X> static Declared declare(const X& init, const std::string& name) {
    auto& bl = detail::b();
    ir::ExprId v = value_id(init);
    uint32_t local = bl.new_local(scalar_type_v<T>, name);
    ir::Stmt s;
    s.kind = ir::StmtKind::Let;
    s.local = local;
    s.a = v;
    bl.emit(std::move(s));
    ir::Expr e;
    e.op = ir::Op::LocalGet;
    e.type = scalar_type_v<T>;
    e.ref = local;
    return {local, bl.add(e)};
  }
  uint32_t local_;
};

template <class X>
requires ValueLike<X> Var(const X&, const std::string& = "")
->Var<value_elem_t<X>>;
template <class L>
requires Literal<L> Var(const L&, const std::string& = "")
->Var<L>;

} // namespace halfway
