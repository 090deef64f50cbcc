// `halfway fuse FILE.hk [--pipeline P]`: runs the fusion pass on a pipeline of the file and prints
// the fused pipeline as .hk text (its kernels, then the pipeline block), preceded by comments
// saying what was fused and what was refused and why; the whole output parses back.
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/pipeline/fuse.hpp"
#include "halfway/pipeline/text.hpp"
#include "halfway/support/error.hpp"
#include "launch_setup.hpp"
#include "pipeline_cli.hpp"

#include <sstream>

namespace halfway::cli {

namespace {
struct FuseOptions {
  std::string file;
  std::string pipeline;
  bool json = false;
};
} // namespace

Runner add_fuse(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "fuse", "Fuse the launches of a pipeline of a .hk file where the fusion pass can prove the "
              "result unchanged; print the fused pipeline as text, and what was fused or refused "
              "and why");
  auto o = std::make_shared<FuseOptions>();
  sub->add_option("file", o->file, "A .hk file with a pipeline (- reads standard input)")
      ->required();
  sub->add_option("--pipeline,-p", o->pipeline,
                  "The pipeline to fuse (default: the file's only pipeline)");
  sub->add_flag("--json", o->json,
                "Print one JSON document: {\"command\", \"results\": [{\"pipeline\", \"fused\", "
                "\"refused\", \"text\"}], \"error\"}");
  return [o] {
    KernelChoice choice;
    choice.file = o->file;
    const text::KernelFile file = choice.load_file();
    const pipeline::Pipeline p = pipeline::from_text(file, o->pipeline);
    const pipeline::FuseResult result = pipeline::fuse(p);
    std::ostringstream notes, fused, refused;
    const char* sep = "";
    for (const auto& f : result.fused) {
      notes << "// fused: " << f.producer << " + " << f.consumer << " -> " << f.name << " ("
            << pipeline::name(f.kind) << "); temporary " << f.temporary
            << " removed; proven: " << f.proof << "\n";
      fused << sep << "{\"producer\": " << json_quote(f.producer)
            << ", \"consumer\": " << json_quote(f.consumer) << ", \"name\": " << json_quote(f.name)
            << ", \"kind\": \"" << pipeline::name(f.kind)
            << "\", \"temporary\": " << json_quote(f.temporary)
            << ", \"proof\": " << json_quote(f.proof) << "}";
      sep = ", ";
    }
    sep = "";
    for (const auto& r : result.refused) {
      notes << "// refused: " << r.producer << " + " << r.consumer << ": " << r.reason << "\n";
      refused << sep << "{\"producer\": " << json_quote(r.producer)
              << ", \"consumer\": " << json_quote(r.consumer) << ", \"launch\": " << r.launch + 1
              << ", \"reason\": " << json_quote(r.reason) << "}";
      sep = ", ";
    }
    const std::string text = pipeline::print(result.pipeline);
    if (o->json) {
      Output::get().result("{\"pipeline\": " + json_quote(p.name) + ", \"fused\": [" + fused.str() +
                           "], \"refused\": [" + refused.str() +
                           "], \"text\": " + json_quote(text) + "}");
    } else {
      const size_t before = p.launches.size(), after = result.pipeline.launches.size();
      Output::get().text("// halfway fuse: pipeline " + p.name + ", " + std::to_string(before) +
                         (before == 1 ? " launch" : " launches") + " -> " + std::to_string(after) +
                         "\n" + notes.str() + text);
    }
    return 0;
  };
}

} // namespace halfway::cli
