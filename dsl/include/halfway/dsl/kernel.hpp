#pragma once
// halfway::kernel(name, workgroup, [param names,] body): runs `body` once to record the kernel's
// IR, verifies it, and returns the VerifiedKernel. The body's parameter types (In<T>, Out<T>,
// InOut<T>, Scalar<T>) become the kernel's parameters, in order.

#include "halfway/dsl/memory.hpp"
#include "halfway/ir/names.hpp"
#include "halfway/ir/verifier.hpp"

#include <functional>
#include <initializer_list>
#include <string>
#include <tuple>
#include <vector>

namespace halfway {

using Kernel = ir::VerifiedKernel;

// Workgroup size; {64} means 64 x 1 x 1.
struct Workgroup {
  uint32_t x = 1, y = 1, z = 1;
};

namespace detail {
template <class F>
struct body_traits : body_traits<decltype(&std::remove_cvref_t<F>::operator())> {};
template <class C, class R, class... A> struct body_traits<R (C::*)(A...) const> {
  using params = std::tuple<std::remove_cvref_t<A>...>;
};
template <class C, class R, class... A> struct body_traits<R (C::*)(A...)> {
  using params = std::tuple<std::remove_cvref_t<A>...>;
};
template <class R, class... A> struct body_traits<R (*)(A...)> {
  using params = std::tuple<std::remove_cvref_t<A>...>;
};

std::string param_name(const std::vector<std::string>& names, size_t i);

template <class F, size_t... I>
void run_body(F&& body, const std::vector<std::string>& names, std::index_sequence<I...>) {
  using Params = typename body_traits<F>::params;
  // Braced initialisation evaluates left to right, so parameters are declared in order.
  Params params{std::tuple_element_t<I, Params>(param_name(names, I))...};
  std::apply(body, params);
}
} // namespace detail

// Builds the IR without verifying it (tests of the verifier use this).
template <class F>
ir::Kernel build_kernel(std::string name, Workgroup wg, std::vector<std::string> names, F&& body) {
  dsl::Builder builder(std::move(name));
  builder.kernel().workgroup = {wg.x, wg.y, wg.z};
  using Params = typename detail::body_traits<F>::params;
  detail::run_body(std::forward<F>(body), names,
                   std::make_index_sequence<std::tuple_size_v<Params>>{});
  return builder.take();
}

template <class F>
Kernel kernel(std::string name, Workgroup wg, std::vector<std::string> param_names, F&& body) {
  return ir::verify(
      build_kernel(std::move(name), wg, std::move(param_names), std::forward<F>(body)));
}
// Parameters named p0, p1, ...
template <class F> Kernel kernel(std::string name, Workgroup wg, F&& body) {
  return kernel(std::move(name), wg, {}, std::forward<F>(body));
}
// An unnamed kernel gets kDefaultKernelName, which the precision policy refuses as a scope.
template <class F> Kernel kernel(Workgroup wg, F&& body) {
  return kernel(std::string(kDefaultKernelName), wg, {}, std::forward<F>(body));
}

} // namespace halfway
