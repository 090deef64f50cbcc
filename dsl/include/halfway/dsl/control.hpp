#pragma once
// Structured control flow as calls that take lambdas: If(c, then).Else(otherwise),
// For(start, end, [step,] body(i)), While(cond, body), Break(), Continue(), Return(), Barrier().

#include "halfway/dsl/memory.hpp"

#include <utility>

namespace halfway {

namespace detail {
inline void emit_simple(ir::StmtKind kind) {
  ir::Stmt s;
  s.kind = kind;
  b().emit(std::move(s));
}
} // namespace detail

class IfChain {
public:
  IfChain(ir::Body* block, size_t index) : block_(block), index_(index) {}
  template <class F> void Else(F&& body) const {
    auto& bl = detail::b();
    bl.in_block((*block_)[index_].else_body, std::forward<F>(body));
  }
  template <class C, class F> IfChain ElseIf(const C& cond, F&& body) const;

private:
  ir::Body* block_;
  size_t index_;
};

template <class C, class F> IfChain If(const C& cond, F&& body) {
  auto& bl = detail::b();
  ir::Stmt s;
  s.kind = ir::StmtKind::If;
  s.a = detail::condition_id(cond);
  bl.emit(std::move(s));
  auto& block = bl.current_block();
  size_t index = block.size() - 1;
  bl.in_block(block[index].body, std::forward<F>(body));
  return IfChain(&block, index);
}

template <class C, class F> IfChain IfChain::ElseIf(const C& cond, F&& body) const {
  auto& bl = detail::b();
  auto& else_block = (*block_)[index_].else_body;
  IfChain inner(nullptr, 0);
  bl.in_block(else_block, [&] { inner = If(cond, std::forward<F>(body)); });
  return inner;
}

namespace detail {
// The loop variable's type when both bounds are C++ literals: theirs, as C++ would combine them
// (For(0u, 16u, ...) counts in u32, For(0, 16, ...) in i32).
template <class S, class E> struct literal_loop {
  using type = std::common_type_t<std::remove_cvref_t<S>, std::remove_cvref_t<E>>;
};
} // namespace detail

// for (i = start; i < end; i += step) body(i). The loop variable's type is the integer type of
// whichever bound is a Value, else the C++ type of the two literals (u32 for 0u and 16u).
template <class S, class E, class P, class F>
void For(const S& start, const E& end, const P& step, F&& body) {
  using I = typename std::conditional_t<
      ValueLike<S>, std::type_identity<value_elem_t<S>>,
      std::conditional_t<ValueLike<E>, std::type_identity<value_elem_t<E>>,
                         detail::literal_loop<S, E>>>::type;
  static_assert(is_int_v<I>, "halfway: For bounds are integers");
  auto& bl = detail::b();
  ir::Stmt s;
  s.kind = ir::StmtKind::For;
  s.a = detail::as<I>(start).id();
  s.b = detail::as<I>(end).id();
  s.c = detail::as<I>(step).id();
  s.local = bl.new_local(scalar_type_v<I>);
  ir::Expr get;
  get.op = ir::Op::LocalGet;
  get.type = scalar_type_v<I>;
  get.ref = s.local;
  Value<I> i(detail::Node{bl.add(get)});
  bl.emit(std::move(s));
  auto& block = bl.current_block();
  bl.in_block(block.back().body, [&] { body(i); });
}
template <class S, class E, class F> void For(const S& start, const E& end, F&& body) {
  For(start, end, 1, std::forward<F>(body));
}

// while (cond()) body(). The condition is a lambda because it is evaluated before every iteration.
template <class C, class F> void While(C&& cond, F&& body) {
  auto& bl = detail::b();
  ir::Stmt s;
  s.kind = ir::StmtKind::While;
  s.a = detail::condition_id(cond());
  bl.emit(std::move(s));
  auto& block = bl.current_block();
  bl.in_block(block.back().body, std::forward<F>(body));
}

inline void Break() {
  detail::emit_simple(ir::StmtKind::Break);
}
inline void Continue() {
  detail::emit_simple(ir::StmtKind::Continue);
}
inline void Return() {
  detail::emit_simple(ir::StmtKind::Return);
}
// Workgroup barrier: every lane waits, and shared-memory writes before it are visible after it.
inline void Barrier() {
  detail::emit_simple(ir::StmtKind::Barrier);
}

namespace detail {
template <class T, class X, class Y = int>
Value<T> atomic(ir::AtomicOp op, const Ref<T>& target, const X& v, const Y* cmp = nullptr) {
  static_assert(is_int_v<T>, "halfway: atomics take integer elements");
  auto& bl = b();
  ir::Stmt s;
  s.kind = ir::StmtKind::Atomic;
  s.atomic = op;
  s.space = target.space();
  s.mem = target.mem();
  s.a = target.index();
  s.b = as<T>(v).id();
  if (cmp)
    s.c = as<T>(*cmp).id();
  s.local = bl.new_local(scalar_type_v<T>);
  ir::Expr get;
  get.op = ir::Op::LocalGet;
  get.type = scalar_type_v<T>;
  get.ref = s.local;
  bl.emit(std::move(s));
  return Value<T>(detail::Node{bl.add(get)});
}
} // namespace detail

// Atomic read-modify-write on a buffer or shared element; each returns the element's old value.
#define HALFWAY_ATOMIC(fn, op)                                                                     \
  template <class T, class X> Value<T> fn(const Ref<T>& target, const X& v) {                      \
    return detail::atomic<T>(ir::AtomicOp::op, target, v);                                         \
  }
HALFWAY_ATOMIC(atomic_add, Add)
HALFWAY_ATOMIC(atomic_sub, Sub)
HALFWAY_ATOMIC(atomic_min, Min)
HALFWAY_ATOMIC(atomic_max, Max)
HALFWAY_ATOMIC(atomic_and, And)
HALFWAY_ATOMIC(atomic_or, Or)
HALFWAY_ATOMIC(atomic_xor, Xor)
HALFWAY_ATOMIC(atomic_exchange, Exchange)
#undef HALFWAY_ATOMIC
// Stores `v` if the element equals `expected`; returns the old value either way.
template <class T, class X, class Y>
Value<T> atomic_compare_exchange(const Ref<T>& target, const Y& expected, const X& v) {
  return detail::atomic<T>(ir::AtomicOp::CompareExchange, target, v, &expected);
}

} // namespace halfway
