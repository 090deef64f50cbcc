#include "check_process.hpp"

#include "cli_util.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"

#include <cstdio>
#include <sys/wait.h>

namespace halfway::cli {

using namespace child;

namespace {

constexpr const char* kWho = "reduce";

enum Tag : char {
  kRequest = 'R', // parent -> child: a kernel's text and its setup
  kAnswer = 'C',  // child -> parent: the Check
  kError = 'E',   // child -> parent: an error that ends the command (the device cannot be made)
};

std::string encode(const Error& e) {
  const ErrorContext& c = e.context();
  std::string out;
  put(out, e.kind());
  put(out, e.message());
  put(out, c.kernel);
  put(out, c.node);
  put(out, c.node_text);
  put(out, c.buffer);
  put(out, c.index);
  put(out, c.length);
  put(out, c.workgroup);
  put(out, c.lane);
  put(out, c.file);
  put(out, c.line);
  put(out, c.column);
  put(out, c.source_line);
  return out;
}

Error decode_error(const std::string& payload) {
  Reader r{payload, kWho};
  const auto kind = r.get<ErrorKind>();
  std::string message = r.get_string();
  ErrorContext c;
  c.kernel = r.get_string();
  c.node = r.get<decltype(c.node)>();
  c.node_text = r.get_string();
  c.buffer = r.get_string();
  c.index = r.get<decltype(c.index)>();
  c.length = r.get<decltype(c.length)>();
  c.workgroup = r.get<decltype(c.workgroup)>();
  c.lane = r.get<decltype(c.lane)>();
  c.file = r.get_string();
  c.line = r.get<uint32_t>();
  c.column = r.get<uint32_t>();
  c.source_line = r.get_string();
  return Error(kind, std::move(message), std::move(c));
}

static_assert(std::is_trivially_copyable_v<kernelgen::RunSetup>);

// The child: makes the device, then answers requests until the parent closes its pipe.
[[noreturn]] void serve(const std::string& device_name, int in, int out) {
  try {
    auto device = rt::make_device(device_name);
    char tag = 0;
    std::string payload;
    while (receive(in, tag, payload, kWho)) {
      if (tag != kRequest)
        throw Error(ErrorKind::Internal, "reduce: an unknown message to the checking process");
      Reader r{payload, kWho};
      const std::string text = r.get_string();
      const auto setup = r.get<kernelgen::RunSetup>();
      // The printer's text parses back to the same kernel (tests/text/round_trip_test.cpp).
      const text::KernelFile file(text, "the kernel to check");
      std::string answer;
      put(answer, kernelgen::check(file.kernels().at(0), *device, device_name, setup,
                                   policy::global_registry()));
      send(out, kAnswer, answer);
    }
  } catch (const Error& e) {
    send(out, kError, encode(e)); // the parent reports it, once
  } catch (const std::exception& e) {
    send(out, kError, encode(Error(ErrorKind::Internal, e.what())));
  }
  std::fflush(stderr);
  std::_Exit(0);
}

} // namespace

CheckProcess::CheckProcess(std::string device) : device_(std::move(device)) {}

CheckProcess::~CheckProcess() = default;

void CheckProcess::start() {
  child_ = spawn(kWho, true, [this](int in, int out) { serve(device_, in, out); });
}

kernelgen::Check CheckProcess::check(const ir::Kernel& kernel, const kernelgen::RunSetup& setup) {
  std::string request;
  put(request, ir::print(kernel));
  put(request, setup);
  // A child that ended between two checks (nothing of this kernel's doing) is replaced once.
  for (int attempt = 0;; ++attempt) {
    if (!child_)
      start();
    if (send_to_child(child_->to, kRequest, request))
      break;
    // It may have said why (it could not make the device).
    char tag = 0;
    std::string payload;
    if (receive(child_->from, tag, payload, kWho) && tag == kError)
      throw decode_error(payload);
    const int status = child_->wait();
    child_.reset();
    if (attempt == 1)
      throw Error(ErrorKind::Internal, "reduce: the checking process ended before a check (" +
                                           how_it_died(status) + ")");
  }
  if (!wait_readable(child_->from, kWho)) {
    child_.reset(); // Ctrl-C: the check in flight is abandoned with its process
    throw_if_interrupted(kernel.name);
  }
  char tag = 0;
  std::string payload;
  if (receive(child_->from, tag, payload, kWho)) {
    if (tag == kError)
      throw decode_error(payload);
    if (tag != kAnswer)
      throw Error(ErrorKind::Internal, "reduce: an unknown message from the checking process");
    Reader r{payload, kWho};
    return r.get_check();
  }
  // The child ended in the middle of the check.
  std::unique_ptr<Child> gone = std::move(child_);
  const int status = gone->wait();
  if (WIFEXITED(status))
    throw Error(ErrorKind::Internal, "reduce: the checking process ended in a check of kernel " +
                                         kernel.name + " without an answer (status " +
                                         std::to_string(WEXITSTATUS(status)) + ")");
  ++crashes_;
  kernelgen::Check c;
  c.outcome = kernelgen::Outcome::Unexplained;
  const std::string how = how_it_died(status);
  c.cause = crash_cause(how);
  c.report = "the process checking kernel " + kernel.name + " on " + device_ + " died (" + how +
             "); the next check runs in a new one";
  return c;
}

} // namespace halfway::cli
