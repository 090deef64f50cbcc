// libFuzzer target for the kernel-text parser. Any input may be rejected, but only with a
// halfway::Error of the right kind; anything else (a crash, another exception, a sanitizer report,
// a hang, a leak) is a bug. Whatever parses must also print back to text that parses to the same
// text again, and verifier errors must come back pointing into the text.
#include "halfway/ir/printer.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"
#include "halfway/text/parse.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace {

[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "text_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

std::string print_all(const std::vector<halfway::ir::Kernel>& kernels) {
  std::string out;
  for (const auto& k : kernels)
    out += halfway::ir::print(k);
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace halfway;
  std::string input(reinterpret_cast<const char*>(data), size);
  std::optional<text::KernelFile> file;
  try {
    file.emplace(input, "fuzz.hk");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Parse || e.context().file != "fuzz.hk")
      bug("bad parse error", e.what());
    return 0;
  }
  std::string printed = print_all(file->kernels());
  try {
    std::string again = print_all(text::parse_kernels(printed, "printed.hk"));
    if (again != printed)
      bug("printed text does not read back the same", printed + "---\n" + again);
  } catch (const Error& e) {
    bug("printed text does not parse", printed + "---\n" + e.what());
  }
  for (size_t i = 0; i < file->kernels().size(); ++i) {
    try {
      file->verify(i);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Verify || e.context().file != "fuzz.hk" || e.context().line == 0)
        bug("bad verify error", e.what());
    }
  }
  return 0;
}
