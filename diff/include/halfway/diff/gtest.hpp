#pragma once
// GoogleTest helpers: a differential run as one assertion, printing the whole text report when it
// fails. Header-only, so that halfway::diff itself does not link GoogleTest; include it from test
// files only.
//
//     auto in = diff::inputs::make_inputs(kernel.kernel(), 4096, diff::inputs::Kind::Ties, 1);
//     EXPECT_MATCHES_INTERPRETER(kernel, device, in);
//     ASSERT_MATCHES_INTERPRETER_WITH(kernel, device, in, options); // own registry, ...
//
// `inputs` is anything with `grid` (rt::Grid) and `args` (a range of rt::Arg) members, such as
// diff::inputs::KernelInputs or diff::Launch below.

#include "halfway/diff/diff.hpp"

#include <gtest/gtest.h>
#include <span>
#include <vector>

namespace halfway::diff {

// A grid and its arguments, for calls that do not come from make_inputs.
struct Launch {
  rt::Grid grid;
  std::vector<rt::Arg> args;
};

namespace testing {

// The predicate formatters behind the macros (GoogleTest passes each argument's text first).
template <class Inputs>
::testing::AssertionResult matches_interpreter(const char* kernel_text, const char* device_text,
                                               const char* inputs_text, const char* options_text,
                                               const ir::VerifiedKernel& kernel, rt::Device& device,
                                               const Inputs& inputs, const Options& options) {
  const Report report =
      run(kernel, device, inputs.grid, std::span<const rt::Arg>(inputs.args), options);
  if (report.ok())
    return ::testing::AssertionSuccess();
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  failure << kernel_text << " on " << device_text << " with " << inputs_text;
  if (options_text)
    failure << " and " << options_text;
  return failure << " does not match the interpreter:\n" << to_text(report);
}

template <class Inputs>
::testing::AssertionResult
matches_interpreter(const char* kernel_text, const char* device_text, const char* inputs_text,
                    const ir::VerifiedKernel& kernel, rt::Device& device, const Inputs& inputs) {
  return matches_interpreter(kernel_text, device_text, inputs_text, nullptr, kernel, device, inputs,
                             Options{});
}

} // namespace testing
} // namespace halfway::diff

#define EXPECT_MATCHES_INTERPRETER(kernel, device, inputs)                                         \
  EXPECT_PRED_FORMAT3(::halfway::diff::testing::matches_interpreter, kernel, device, inputs)
#define ASSERT_MATCHES_INTERPRETER(kernel, device, inputs)                                         \
  ASSERT_PRED_FORMAT3(::halfway::diff::testing::matches_interpreter, kernel, device, inputs)
#define EXPECT_MATCHES_INTERPRETER_WITH(kernel, device, inputs, options)                           \
  EXPECT_PRED_FORMAT4(::halfway::diff::testing::matches_interpreter, kernel, device, inputs,       \
                      options)
#define ASSERT_MATCHES_INTERPRETER_WITH(kernel, device, inputs, options)                           \
  ASSERT_PRED_FORMAT4(::halfway::diff::testing::matches_interpreter, kernel, device, inputs,       \
                      options)
