#include "halfway/pipeline/run.hpp"

#include "halfway/support/error.hpp"

#include <chrono>

namespace halfway::pipeline {

Buffers make_buffers(const Pipeline& p) {
  Buffers out;
  for (const BufferDecl& b : p.buffers) {
    if (!b.temporary)
      out.emplace(b.name, rt::HostBuffer(b.type, b.size));
  }
  return out;
}

RunResult run(const Pipeline& p, rt::Device& device, Buffers& io,
              const rt::LaunchOptions& options) {
  check(p);
  const auto start = std::chrono::steady_clock::now();
  // Temporaries live for this run only; they start zeroed like every HostBuffer.
  Buffers temps;
  for (const BufferDecl& b : p.buffers) {
    if (b.temporary) {
      temps.emplace(b.name, rt::HostBuffer(b.type, b.size));
      continue;
    }
    auto it = io.find(b.name);
    if (it == io.end())
      throw Error(ErrorKind::Usage,
                  "pipeline '" + p.name + "': no data for buffer '" + b.name + "'",
                  {.buffer = b.name});
    if (it->second.type() != b.type || it->second.size() != b.size)
      throw Error(ErrorKind::Usage,
                  "pipeline '" + p.name + "': buffer '" + b.name + "' is declared " +
                      std::string(ir::name(b.type)) + "[" + std::to_string(b.size) + "], given " +
                      std::string(ir::name(it->second.type())) + "[" +
                      std::to_string(it->second.size()) + "]",
                  {.buffer = b.name});
  }
  RunResult result;
  std::vector<rt::Arg> args;
  for (size_t i = 0; i < p.launches.size(); ++i) {
    const Launch& l = p.launches[i];
    args.clear();
    for (const LaunchArg& a : l.args) {
      if (a.buffer.empty()) {
        args.push_back(rt::Arg::bits(a.scalar));
        continue;
      }
      auto t = temps.find(a.buffer);
      args.push_back(rt::Arg::of(t != temps.end() ? t->second : io.find(a.buffer)->second));
    }
    try {
      result.launches.push_back(device.launch(l.kernel, l.grid, args, options));
    } catch (const Error& e) {
      throw Error(e.kind(), describe(p, i) + ": " + e.message(), e.context());
    }
  }
  result.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace halfway::pipeline
