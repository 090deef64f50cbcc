#pragma once
// Buffers as NumPy .npy files (format versions 1.0-3.0, C order, any number of dimensions) and as
// raw little-endian bytes, so NumPy users can hand data in and take results out.
//
// The element type always comes from the kernel parameter the data is for; the file's dtype must
// be one that can hold it:
//   - NumPy's own types: '<f2' for f16, '<f4', '<f8', '<i4', '|u1', '|b1', ...;
//   - bf16 and fp8, which NumPy lacks, as ml_dtypes writes them: '<V2' (bfloat16) and '<V1'
//     (float8_e4m3fn, and float8_e5m2's own '<f1', which np.load cannot read back), or as bit
//     patterns '<u2' / '|u1'. A void dtype does not say which type its bytes are, so the kernel's
//     parameter decides and the result carries a note saying so;
//   - '>' (big-endian) files are converted to the little-endian buffer, again with a note; a
//     big-endian void dtype ('>V2') is refused, since raw bytes have no byte order to convert.
// bf16 and fp8 are written as '<V2' and '<V1', which numpy.load reads and `.view(ml_dtypes.X)`
// turns into typed arrays.
//
// Every malformed file is a Usage error whose context names the file: no magic, an unsupported
// version, a header that is not exactly {'descr', 'fortran_order', 'shape'}, Fortran order, a
// dtype that cannot hold the type, truncated data or trailing bytes.

#include "halfway/runtime/buffer.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace halfway::io {

// A buffer read from a file, with the shape the file declared (one dimension for raw files), and
// what the caller should tell the user about how the file's dtype was read: empty when the dtype
// was the type's own, otherwise one sentence ("dtype '<V2' read as bf16, the type of the
// kernel's parameter").
struct Array {
  rt::HostBuffer buffer;
  std::vector<uint64_t> shape;
  std::string note;
};

// `bytes` holding a .npy file or raw elements of `type`; `name` names the source in errors.
Array parse_npy(std::string_view bytes, ir::ScalarType type, const std::string& name);
Array parse_raw(std::string_view bytes, ir::ScalarType type, const std::string& name);

// The file at `path` read as .npy when its name ends in ".npy", raw otherwise.
bool is_npy_path(std::string_view path);
Array load_npy(const std::string& path, ir::ScalarType type);
Array load_raw(const std::string& path, ir::ScalarType type);
Array load(const std::string& path, ir::ScalarType type);

// The .npy file of `buffer` with `shape` (empty: one dimension of the buffer's size). A Usage
// error when the shape's elements are not the buffer's size.
std::string npy_bytes(const rt::HostBuffer& buffer, std::span<const uint64_t> shape = {});
// The raw bytes of `buffer`: its elements' bit patterns in little-endian order.
std::string raw_bytes(const rt::HostBuffer& buffer);
// npy_bytes when `path` ends in ".npy", raw_bytes otherwise.
std::string file_bytes(const std::string& path, const rt::HostBuffer& buffer,
                       std::span<const uint64_t> shape = {});

// The dtype written for a type ("<f2", "<V2", "|u1", ...), and, for the types NumPy lacks, how to
// read such a file back ("numpy.load(f).view(ml_dtypes.bfloat16)"); empty for NumPy's types.
std::string npy_descr(ir::ScalarType type);
std::string npy_view_hint(ir::ScalarType type);

// "(2, 3)", "(5,)": a shape as NumPy prints it.
std::string shape_text(std::span<const uint64_t> shape);

} // namespace halfway::io
