#include "harness.hpp"

#include "halfway/ir/printer.hpp"

#include <sstream>

namespace halfway::cpu_test {

Launch::Launch(const ir::Kernel& k, rt::Grid g) : grid(g) {
  buffers.resize(k.params.size());
  scalars.assign(k.params.size(), 0);
  for (const ir::Param& p : k.params)
    is_buffer.push_back(p.is_buffer());
}

Launch Launch::clone() const {
  Launch c;
  c.grid = grid;
  c.scalars = scalars;
  c.is_buffer = is_buffer;
  for (const rt::HostBuffer& b : buffers)
    c.buffers.push_back(b.clone());
  return c;
}

std::vector<rt::Arg> Launch::args() {
  std::vector<rt::Arg> out;
  for (size_t i = 0; i < buffers.size(); ++i)
    out.push_back(is_buffer[i] ? rt::Arg::of(buffers[i]) : rt::Arg::bits(scalars[i]));
  return out;
}

rt::HostBuffer& Launch::buffer(const ir::Kernel& k, std::string_view param) {
  return buffers.at(k.find_param(param));
}

void Launch::set_scalar(const ir::Kernel& k, std::string_view param, uint64_t bits) {
  scalars.at(k.find_param(param)) = bits;
}

std::string compare_bits(const ir::Kernel& k, const Launch& want, const Launch& got,
                         size_t max_reports) {
  std::ostringstream out;
  for (size_t p = 0; p < k.params.size(); ++p) {
    if (!k.params[p].is_buffer())
      continue;
    const rt::HostBuffer& w = want.buffers[p];
    const rt::HostBuffer& g = got.buffers[p];
    size_t wrong = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      if (w.get_bits(i) == g.get_bits(i))
        continue;
      if (wrong++ < max_reports)
        out << k.params[p].name << "[" << i << "]: want "
            << ir::print_constant(w.type(), w.get_bits(i)) << ", got "
            << ir::print_constant(g.type(), g.get_bits(i)) << "\n";
    }
    if (wrong)
      out << k.params[p].name << ": " << wrong << " of " << w.size() << " differ\n";
  }
  return out.str();
}

Launch run_interp(const ir::VerifiedKernel& k, const Launch& in, interp::NarrowingModel model) {
  Launch out = in.clone();
  interp::Options o;
  o.narrowing = model;
  auto args = out.args();
  interp::run(k, out.grid, args, o);
  return out;
}

Launch run_device(rt::Device& device, const ir::VerifiedKernel& k, const Launch& in,
                  const rt::LaunchOptions& options) {
  Launch out = in.clone();
  auto args = out.args();
  device.launch(k, out.grid, args, options);
  return out;
}

std::optional<Error> interp_error(const ir::VerifiedKernel& k, const Launch& in) {
  // One thread: the error is the same as in parallel (the lowest workgroup's), and the failure
  // kernels of the tests may store to one element from several workgroups, which is a data race
  // when workgroups run in parallel (ThreadSanitizer reports it).
  try {
    Launch out = in.clone();
    interp::Options o;
    o.deterministic = true;
    auto args = out.args();
    interp::run(k, out.grid, args, o);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

std::optional<Error> device_error(rt::Device& device, const ir::VerifiedKernel& k, const Launch& in,
                                  const rt::LaunchOptions& options) {
  try {
    run_device(device, k, in, options);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

} // namespace halfway::cpu_test
