#include "halfway/io/read.hpp"

#include "halfway/support/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace halfway::io {

namespace {

[[noreturn]] void io_failure(const std::string& path, const std::string& what, int err) {
  ErrorContext c;
  c.file = path;
  throw Error(ErrorKind::Io, what + " (" + std::strerror(err) + ")", c);
}

} // namespace

std::string read_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    io_failure(path, "cannot open the file", errno);
  if (S_ISDIR(st.st_mode)) {
    ErrorContext c;
    c.file = path;
    throw Error(ErrorKind::Usage, "is a directory, not a file", c);
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    io_failure(path, "cannot open the file", errno ? errno : EIO);
  std::string bytes;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0)
    bytes.append(buf, static_cast<size_t>(in.gcount()));
  if (in.bad())
    io_failure(path, "cannot read the file", errno ? errno : EIO);
  return bytes;
}

std::string read_stream(int fd, const std::string& name, const std::string& what, uint64_t limit,
                        const std::string& limit_text, const std::function<void()>& on_interrupt) {
  ErrorContext c;
  c.file = name;
  std::string bytes;
  constexpr size_t kChunk = size_t{1} << 20;
  while (true) {
    const size_t have = bytes.size();
    bytes.resize(have + kChunk);
    const ssize_t n = ::read(fd, bytes.data() + have, kChunk);
    const int read_errno = errno;
    bytes.resize(have + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0 && read_errno == EINTR) {
      if (on_interrupt)
        on_interrupt();
      continue;
    }
    if (n < 0)
      throw Error(ErrorKind::Io, "cannot read " + what + ": " + std::strerror(read_errno), c);
    if (n == 0)
      break;
    if (bytes.size() > limit)
      throw Error(ErrorKind::Usage,
                  "cannot read " + what + ": it is over " + std::to_string(limit) +
                      " bytes, the limit" + (limit_text.empty() ? "" : " (" + limit_text + ")") +
                      " on " + what,
                  c);
  }
  return bytes;
}

} // namespace halfway::io
