#pragma once
// Reading and writing buffers as NumPy .npy files (format versions 1.0-3.0, C order, one
// dimension or several flattened) and as raw little-endian files, so NumPy users can hand data in
// and take results out. Types NumPy lacks (bf16, fp8) travel as their bit patterns: a u2 or u1
// array is accepted for a bf16 or fp8 buffer.

#include "halfway/runtime/buffer.hpp"

#include <string>

namespace halfway::cli {

// The buffer in `path`, which must hold elements of `type`. Throws a Usage error naming the file
// and what is wrong with it (missing, not .npy, unsupported dtype, Fortran order, truncated).
rt::HostBuffer load_npy(const std::string& path, ir::ScalarType type);
rt::HostBuffer load_raw(const std::string& path, ir::ScalarType type);
// Loads .npy when the name ends in ".npy", raw otherwise.
rt::HostBuffer load_buffer(const std::string& path, ir::ScalarType type);

// The bytes of `path`. Throws ErrorKind::Io naming the file when it cannot be opened or read, a
// Usage error when it is a directory.
std::string read_whole_file(const std::string& path);

// Writing replaces the file atomically (cli_util.hpp: write_file_atomically).
void save_npy(const std::string& path, const rt::HostBuffer& buffer);
void save_raw(const std::string& path, const rt::HostBuffer& buffer);
void save_buffer(const std::string& path, const rt::HostBuffer& buffer);
// What save_npy and save_buffer write.
std::string npy_bytes(const rt::HostBuffer& buffer);
std::string buffer_bytes(const std::string& path, const rt::HostBuffer& buffer);

// The NumPy dtype string of a type ("<f2", "<u4", ...), and whether `descr` can hold `type`.
std::string npy_descr(ir::ScalarType type);
bool npy_accepts(const std::string& descr, ir::ScalarType type);

} // namespace halfway::cli
