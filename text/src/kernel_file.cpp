#include "halfway/text/kernel_file.hpp"

#include "halfway/support/error.hpp"
#include "halfway/text/parse.hpp"
#include "lower.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace halfway::text {

struct KernelFile::Impl {
  // The text never moves once the Source points into it (Impl lives behind a shared_ptr).
  Impl(std::string t, std::string file) : text(std::move(t)), source(text, std::move(file)) {
    for (Lowered& l : parse_source(source, &pipelines)) {
      kernels.push_back(std::move(l.kernel));
      headers.push_back(l.map.header);
    }
  }

  // Where a verifier error about kernel i is in the text: the expression node when it names one,
  // else the first statement on its line, else the kernel's header. The offsets of nodes and
  // statements are not kept (lower.hpp): the text is parsed again with them, as it parsed before.
  uint32_t offset_of(size_t i, const ErrorContext& c) const {
    if (!c.node && !c.line)
      return headers[i];
    const SourceMap m = std::move(parse_source(source, nullptr, true)[i].map);
    if (c.node && *c.node < m.exprs.size())
      return m.exprs[*c.node];
    if (c.line) {
      const uint32_t at = m.statement_at(c.line);
      return at != ir::kNone ? at : source.first_nonblank(c.line);
    }
    return m.header;
  }

  // `self` owns this Impl: the verified kernel shares it instead of copying the kernel.
  ir::VerifiedKernel verify(const std::shared_ptr<const Impl>& self, size_t i) const {
    try {
      return ir::verify(std::shared_ptr<const ir::Kernel>(self, &kernels[i]));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Verify)
        throw;
      ErrorContext c = e.context();
      ErrorContext where = source.context(offset_of(i, c));
      c.file = where.file;
      c.line = where.line;
      c.column = where.column;
      c.source_line = where.source_line;
      throw Error(ErrorKind::Verify, e.message(), c);
    }
  }

  std::string text;
  Source source;
  std::vector<ir::Kernel> kernels;
  std::vector<uint32_t> headers; // where each kernel's `kernel` keyword is
  std::vector<PipelineText> pipelines;
};

KernelFile::KernelFile(std::string text, std::string file_name)
    : impl_(std::make_shared<const Impl>(std::move(text), std::move(file_name))) {}

const std::string& KernelFile::file_name() const {
  return impl_->source.file();
}
const std::string& KernelFile::text() const {
  return impl_->text;
}
const std::vector<ir::Kernel>& KernelFile::kernels() const {
  return impl_->kernels;
}

const std::vector<PipelineText>& KernelFile::pipelines() const {
  return impl_->pipelines;
}

const PipelineText& KernelFile::pipeline(std::string_view name) const {
  const auto& ps = impl_->pipelines;
  if (name.empty() && ps.size() == 1)
    return ps.front();
  std::string have;
  for (const PipelineText& p : ps) {
    if (p.name == name)
      return p;
    have += (have.empty() ? "" : ", ") + p.name;
  }
  ErrorContext c;
  c.file = file_name();
  if (name.empty())
    throw Error(ErrorKind::Usage,
                "the file has " + std::to_string(ps.size()) + " pipelines" +
                    (ps.empty() ? "" : " (" + have + "); name one with --pipeline"),
                c);
  throw Error(ErrorKind::Usage,
              "unknown pipeline " + std::string(name) + " in " + file_name() +
                  (ps.empty() ? "; it has no pipelines" : "; it has " + have),
              c);
}

std::vector<std::string> KernelFile::kernel_names() const {
  std::vector<std::string> names;
  for (const ir::Kernel& k : impl_->kernels)
    names.push_back(k.name);
  return names;
}

namespace {
size_t index_of(const KernelFile& f, std::string_view name) {
  const auto& ks = f.kernels();
  for (size_t i = 0; i < ks.size(); ++i)
    if (ks[i].name == name)
      return i;
  std::string have;
  for (const ir::Kernel& k : ks)
    have += (have.empty() ? "" : ", ") + k.name;
  ErrorContext c;
  c.file = f.file_name();
  throw Error(ErrorKind::Usage,
              "unknown kernel " + std::string(name) + " in " + f.file_name() +
                  (ks.empty() ? "; it has no kernels" : "; it has " + have),
              c);
}
} // namespace

const ir::Kernel& KernelFile::kernel(std::string_view name) const {
  return impl_->kernels[index_of(*this, name)];
}

ir::VerifiedKernel KernelFile::verify(std::string_view name) const {
  return impl_->verify(impl_, index_of(*this, name));
}

ir::VerifiedKernel KernelFile::verify(size_t index) const {
  if (index >= impl_->kernels.size())
    throw Error(ErrorKind::Usage, "kernel index " + std::to_string(index) + " is past the " +
                                      std::to_string(impl_->kernels.size()) + " kernels of " +
                                      file_name());
  return impl_->verify(impl_, index);
}

std::vector<ir::VerifiedKernel> KernelFile::verify_all() const {
  std::vector<ir::VerifiedKernel> out;
  for (size_t i = 0; i < impl_->kernels.size(); ++i)
    out.push_back(impl_->verify(impl_, i));
  return out;
}

KernelFile parse_file(const std::string& path) {
  ErrorContext c;
  c.file = path;
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorKind::Usage, "cannot read kernel file " + path + ": " + why, c);
  };
  auto too_large = [&](const std::string& size) {
    refuse("it is " + size + " bytes, larger than the limit of " + std::to_string(kMaxTextBytes) +
           " bytes (16 MiB) on kernel text");
  };
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    refuse("no such file");
  if (std::filesystem::is_directory(status))
    refuse("it is a directory");
  if (std::filesystem::is_regular_file(status)) {
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxTextBytes)
      too_large(std::to_string(size));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    refuse(std::strerror(errno));
  // Read in chunks up to one byte past the limit: a pipe or a file that grew is refused too.
  std::string text;
  constexpr size_t kChunk = size_t{1} << 20;
  while (in) {
    const size_t have = text.size();
    text.resize(have + kChunk);
    in.read(text.data() + have, static_cast<std::streamsize>(kChunk));
    text.resize(have + static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxTextBytes)
      too_large("over " + std::to_string(kMaxTextBytes));
  }
  if (in.bad())
    refuse("read failed");
  text.shrink_to_fit();
  return KernelFile(std::move(text), path);
}

std::vector<ir::Kernel> parse_kernels(std::string_view text, const std::string& file_name) {
  Source source(text, file_name);
  std::vector<ir::Kernel> out;
  for (Lowered& l : parse_source(source))
    out.push_back(std::move(l.kernel));
  return out;
}

std::vector<ir::VerifiedKernel> parse_verified(std::string_view text,
                                               const std::string& file_name) {
  return KernelFile(std::string(text), file_name).verify_all();
}

} // namespace halfway::text
