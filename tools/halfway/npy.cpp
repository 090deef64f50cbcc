#include "npy.hpp"

#include "halfway/ir/error.hpp"

#include <cstring>
#include <fstream>
#include <cctype>
#include <sstream>

namespace halfway::cli {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  ErrorContext c;
  c.file = path;
  throw Error(ErrorKind::Usage, why, c);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    bad(path, "cannot open the file (" + std::string(std::strerror(errno)) + ")");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    bad(path, "cannot write the file (" + std::string(std::strerror(errno)) + ")");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    bad(path, "write failed");
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

std::string npy_descr(ir::ScalarType t) {
  using ir::ScalarType;
  switch (t) {
  case ScalarType::I8:
    return "|i1";
  case ScalarType::U8:
    return "|u1";
  case ScalarType::I16:
    return "<i2";
  case ScalarType::U16:
    return "<u2";
  case ScalarType::I32:
    return "<i4";
  case ScalarType::U32:
    return "<u4";
  case ScalarType::I64:
    return "<i8";
  case ScalarType::U64:
    return "<u8";
  case ScalarType::F16:
    return "<f2";
  case ScalarType::BF16:
    return "<u2";
  case ScalarType::F32:
    return "<f4";
  case ScalarType::F64:
    return "<f8";
  case ScalarType::E4M3:
  case ScalarType::E5M2:
    return "|u1";
  case ScalarType::Bool:
    return "|b1";
  }
  return "|u1";
}

bool npy_accepts(const std::string& descr, ir::ScalarType t) {
  std::string d = descr;
  if (d.size() == 3 && d[0] == '=')
    d[0] = '<';
  if (d.size() == 3 && d[0] == '<' && d[2] == '1')
    d[0] = '|';
  return d == npy_descr(t);
}

rt::HostBuffer load_npy(const std::string& path, ir::ScalarType type) {
  std::string bytes = read_all(path);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    bad(path, "not a .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      bad(path, "truncated .npy header");
    header_len = 0;
    for (int i = 3; i >= 0; --i)
      header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  } else {
    bad(path, ".npy format version " + std::to_string(major) + " is not supported");
  }
  if (header_start + header_len > bytes.size())
    bad(path, "truncated .npy header");
  std::string header = bytes.substr(header_start, header_len);
  // The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (n,), }
  auto value_of = [&](const std::string& key) -> std::string {
    auto k = header.find("'" + key + "'");
    if (k == std::string::npos) bad(path, ".npy header has no " + key);
    auto colon = header.find(':', k);
    if (colon == std::string::npos) bad(path, ".npy header is malformed near " + key);
    auto v = header.find_first_not_of(" ", colon + 1);
    return v == std::string::npos ? std::string() : header.substr(v);
  };
  std::string descr_field = value_of("descr");
  if (descr_field.empty() || descr_field[0] != '\'' || descr_field.find('\'', 1) == std::string::npos)
    bad(path, ".npy header has a malformed descr");
  std::string descr = descr_field.substr(1, descr_field.find('\'', 1) - 1);
  if (value_of("fortran_order").rfind("True", 0) == 0)
    bad(path, "Fortran-ordered arrays are not supported; save with np.ascontiguousarray");
  std::string shape = value_of("shape");
  if (shape.empty() || shape[0] != '(' || shape.find(')') == std::string::npos)
    bad(path, ".npy header has a malformed shape");
  shape = shape.substr(1, shape.find(')') - 1);
  size_t count = 1;
  for (size_t i = 0; i < shape.size();) {
    if (!std::isdigit(static_cast<unsigned char>(shape[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < shape.size() && std::isdigit(static_cast<unsigned char>(shape[j]))) ++j;
    count *= std::stoull(shape.substr(i, j - i));
    i = j;
  }
  if (!npy_accepts(descr, type))
    bad(path, "dtype " + descr + " does not match the buffer's element type " +
                  std::string(ir::name(type)) + " (expected " + npy_descr(type) + ")");
  size_t data_start = header_start + header_len;
  size_t need = count * ir::bytes(type);
  if (bytes.size() - data_start < need)
    bad(path, "truncated .npy data: " + std::to_string(bytes.size() - data_start) + " bytes for " +
                  std::to_string(count) + " elements of " + std::to_string(ir::bytes(type)) +
                  " bytes");
  rt::HostBuffer b(type, count);
  if (need)
    std::memcpy(b.data(), bytes.data() + data_start, need);
  return b;
}

rt::HostBuffer load_raw(const std::string& path, ir::ScalarType type) {
  std::string bytes = read_all(path);
  size_t width = ir::bytes(type);
  if (bytes.size() % width)
    bad(path, "raw file of " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                  std::string(ir::name(type)) + " elements");
  rt::HostBuffer b(type, bytes.size() / width);
  if (!bytes.empty())
    std::memcpy(b.data(), bytes.data(), bytes.size());
  return b;
}

rt::HostBuffer load_buffer(const std::string& path, ir::ScalarType type) {
  return ends_with(path, ".npy") ? load_npy(path, type) : load_raw(path, type);
}

void save_npy(const std::string& path, const rt::HostBuffer& b) {
  std::string header = "{'descr': '" + npy_descr(b.type()) +
                       "', 'fortran_order': False, 'shape': (" + std::to_string(b.size()) + ",), }";
  // Pad so that the data starts on a 64-byte boundary, ending the header with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(b.data()), b.size_bytes());
  write_all(path, out);
}

void save_raw(const std::string& path, const rt::HostBuffer& b) {
  write_all(path, std::string(reinterpret_cast<const char*>(b.data()), b.size_bytes()));
}

void save_buffer(const std::string& path, const rt::HostBuffer& b) {
  ends_with(path, ".npy") ? save_npy(path, b) : save_raw(path, b);
}

} // namespace halfway::cli
