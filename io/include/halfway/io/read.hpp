#pragma once
// Reading whole files and streams, with the errors every reader of user files needs: a missing
// or unreadable file is ErrorKind::Io naming it and strerror(errno), a directory is a Usage
// error, and a stream is read in chunks up to a cap so that an endless pipe is refused rather
// than held in memory.

#include <cstdint>
#include <functional>
#include <string>

namespace halfway::io {

// The bytes of the file at `path`.
std::string read_file(const std::string& path);

// Everything `fd` yields until its end. `name` is the error context's file ("<stdin>"), `what`
// says in the message what is read ("kernel text", ".npy data"). More than `limit` bytes is a Usage
// error that states the limit (`limit_text`, e.g. "16 MiB", when given). When read() is interrupted
// by a signal, `on_interrupt` (when given) is called and may throw to stop; reading goes on
// otherwise.
std::string read_stream(int fd, const std::string& name, const std::string& what, uint64_t limit,
                        const std::string& limit_text = "",
                        const std::function<void()>& on_interrupt = {});

} // namespace halfway::io
