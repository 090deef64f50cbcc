#include "pipeline_cli.hpp"

#include "cli_util.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/diff/report.hpp"
#include "halfway/pipeline/run.hpp"
#include "halfway/pipeline/text.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace halfway::cli {

void PipelineChoice::add_option(CLI::App& sub) {
  option = sub.add_option("--pipeline,-p", name,
                          "Run the pipeline P of the file (specs/fusion.md) instead of one kernel; "
                          "a file with one pipeline and no --kernel means that pipeline");
}

bool PipelineChoice::wanted(const KernelChoice& choice, const text::KernelFile& file) const {
  if (option && option->count() > 0) {
    if (!choice.kernel.empty()) {
      ErrorContext c;
      c.file = file.file_name();
      throw Error(ErrorKind::Usage, "--kernel and --pipeline exclude each other: pick one", c);
    }
    return true;
  }
  return choice.kernel.empty() && file.pipelines().size() == 1;
}

pipeline::Buffers pipeline_inputs(const pipeline::Pipeline& p, const LaunchSetup& setup) {
  const uint64_t seed = parse_count(setup.seed, "--seed");
  auto kind = diff::inputs::parse_kind(setup.inputs);
  if (!kind || (*kind != diff::inputs::Kind::Random && *kind != diff::inputs::Kind::Ties &&
                *kind != diff::inputs::Kind::Zeros))
    throw Error(ErrorKind::Usage, "--inputs " + escape_for_terminal(setup.inputs) +
                                      ": a pipeline takes random, ties or zeros");
  // The inputs: buffers read before anything in the pipeline writes them.
  std::vector<std::string> inputs;
  std::set<std::string> written;
  for (const auto& l : p.launches) {
    for (size_t j = 0; j < l.args.size(); ++j) {
      const ir::Param& param = l.kernel->params[j];
      if (!param.is_buffer())
        continue;
      const std::string& b = l.args[j].buffer;
      if (param.access != ir::Access::Write && !written.contains(b) &&
          std::find(inputs.begin(), inputs.end(), b) == inputs.end())
        inputs.push_back(b);
    }
    for (size_t j = 0; j < l.args.size(); ++j) {
      if (l.kernel->params[j].is_buffer() && l.kernel->params[j].access != ir::Access::Read)
        written.insert(l.args[j].buffer);
    }
  }
  pipeline::Buffers io = pipeline::make_buffers(p);
  if (*kind == diff::inputs::Kind::Zeros)
    return io;
  std::vector<rt::HostBuffer*> f32;
  for (size_t k = 0; k < inputs.size(); ++k) {
    auto it = io.find(inputs[k]);
    if (it == io.end())
      continue; // a temporary: check() refuses reading one before it is written
    diff::inputs::fill_random(it->second, seed + k);
    if (it->second.type() == ir::ScalarType::F32)
      f32.push_back(&it->second);
  }
  if (*kind == diff::inputs::Kind::Ties && f32.size() >= 3 && f32[0]->size() == f32[1]->size() &&
      f32[1]->size() == f32[2]->size()) {
    auto ties = diff::inputs::mul_add_ties(f32[0]->size(), ir::ScalarType::F16, seed);
    *f32[0] = std::move(ties.a);
    *f32[1] = std::move(ties.b);
    *f32[2] = std::move(ties.c);
  }
  return io;
}

namespace {

// Buffers some launch writes and the caller keeps (not temporaries), in declaration order.
std::vector<std::string> outputs(const pipeline::Pipeline& p) {
  std::set<std::string> written;
  for (const auto& l : p.launches) {
    for (size_t j = 0; j < l.args.size(); ++j) {
      if (l.kernel->params[j].is_buffer() && l.kernel->params[j].access != ir::Access::Read)
        written.insert(l.args[j].buffer);
    }
  }
  std::vector<std::string> out;
  for (const auto& b : p.buffers) {
    if (!b.temporary && written.contains(b.name))
      out.push_back(b.name);
  }
  return out;
}

std::vector<rt::Arg> bind(const pipeline::Launch& l, pipeline::Buffers& io,
                          pipeline::Buffers& temps) {
  std::vector<rt::Arg> args;
  for (const auto& a : l.args) {
    if (a.buffer.empty()) {
      args.push_back(rt::Arg::bits(a.scalar));
      continue;
    }
    auto it = io.find(a.buffer);
    args.push_back(rt::Arg::of(it != io.end() ? it->second : temps.at(a.buffer)));
  }
  return args;
}

} // namespace

int run_pipeline(const text::KernelFile& file, const std::string& name, const std::string& device,
                 const LaunchSetup& setup, size_t show, bool json) {
  const pipeline::Pipeline p = pipeline::from_text(file, name);
  auto options = setup.launch_options();
  auto io = pipeline_inputs(p, setup);
  auto dev = rt::make_device(device);
  for (const auto& l : p.launches)
    check_grid(l.kernel.kernel(), l.grid, dev->info());
  auto result = pipeline::run(p, *dev, io, options);
  throw_if_interrupted(p.name);
  std::ostringstream out;
  if (json)
    out << "{\"pipeline\": " << json_quote(p.name) << ", \"device\": " << json_quote(dev->name())
        << ", \"launches\": " << p.launches.size() << ", \"wall_ms\": " << result.wall_ms
        << ", \"outputs\": {";
  else
    out << p.name << " on " << dev->name() << ": " << p.launches.size()
        << (p.launches.size() == 1 ? " launch, " : " launches, ") << result.wall_ms << " ms\n";
  const char* sep = "";
  for (const auto& b : outputs(p)) {
    const rt::HostBuffer& buf = io.at(b);
    const size_t n = std::min(show, buf.size());
    if (json) {
      out << sep << json_quote(b) << ": {\"type\": \"" << ir::name(buf.type())
          << "\", \"size\": " << buf.size() << ", \"first\": [";
      for (size_t e = 0; e < n; ++e)
        out << (e ? ", " : "") << "\"" << diff::value_text(buf.type(), buf.get_bits(e)) << "\"";
      out << "]}";
      sep = ", ";
    } else {
      out << "  " << b << " (" << ir::name(buf.type()) << "[" << buf.size() << "]):";
      for (size_t e = 0; e < n; ++e)
        out << " " << diff::value_text(buf.type(), buf.get_bits(e));
      out << (n < buf.size() ? " ...\n" : "\n");
    }
  }
  if (json)
    Output::get().result(out.str() + "}}");
  else
    Output::get().text(out.str());
  return 0;
}

int diff_pipeline(const text::KernelFile& file, const std::string& name,
                  const std::vector<std::string>& devices, const LaunchSetup& setup,
                  const diff::Options& options, bool json) {
  const pipeline::Pipeline p = pipeline::from_text(file, name);
  std::vector<std::unique_ptr<rt::Device>> made;
  for (const auto& n : devices)
    made.push_back(rt::make_device(n));
  for (const auto& d : made) {
    for (const auto& l : p.launches)
      check_grid(l.kernel.kernel(), l.grid, d->info());
  }
  auto io = pipeline_inputs(p, setup);
  pipeline::Buffers temps;
  for (const auto& b : p.buffers) {
    if (b.temporary)
      temps.emplace(b.name, rt::HostBuffer(b.type, b.size));
  }
  auto reference = rt::make_device("interp");
  bool violations = false;
  std::string text;
  for (size_t i = 0; i < p.launches.size(); ++i) {
    const auto& l = p.launches[i];
    auto args = bind(l, io, temps);
    for (const auto& d : made) {
      // diff::run launches on copies: `io` and `temps` stay the reference's.
      diff::Report report = diff::run(l.kernel, *d, l.grid, args, options);
      throw_if_interrupted(l.kernel.name());
      violations = violations || !report.ok();
      if (json)
        Output::get().result(diff::to_json(report));
      else
        text +=
            (text.empty() ? "" : "\n") + pipeline::describe(p, i) + "\n" + diff::to_text(report);
    }
    reference->launch(l.kernel, l.grid, args, options.launch);
  }
  if (!json)
    Output::get().text(text);
  return violations ? 1 : 0;
}

} // namespace halfway::cli
