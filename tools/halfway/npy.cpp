#include "npy.hpp"

#include "cli_util.hpp"
#include "halfway/ir/error.hpp"

#include <cstring>
#include <fstream>
#include <map>
#include <sys/stat.h>
#include <vector>

namespace halfway::cli {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  ErrorContext c;
  c.file = path;
  throw Error(ErrorKind::Usage, why, c);
}

[[noreturn]] void io_failure(const std::string& path, const std::string& what, int err) {
  ErrorContext c;
  c.file = path;
  throw Error(ErrorKind::Io, what + " (" + std::strerror(err) + ")", c);
}

std::string read_all(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    io_failure(path, "cannot open the file", errno);
  if (S_ISDIR(st.st_mode))
    bad(path, "is a directory, not a file");
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

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The header of a .npy file is a Python dict literal such as
//     {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// This parses exactly that language: a dict whose keys are strings and whose values are strings,
// True/False or tuples of non-negative integers. Anything else (expressions, lists, nested dicts,
// escapes inside strings) is an error naming the offset in the header.
struct HeaderValue {
  enum class Kind { String, Bool, Tuple } kind;
  std::string text;
  bool boolean = false;
  std::vector<uint64_t> dims;
};

class HeaderParser {
public:
  HeaderParser(const std::string& path, std::string_view text) : path_(path), s_(text) {}

  std::map<std::string, HeaderValue> parse() {
    std::map<std::string, HeaderValue> out;
    skip();
    expect('{');
    skip();
    while (peek() != '}') {
      std::size_t key_at = i_;
      if (peek() != '\'' && peek() != '"')
        fail("expected a quoted key");
      std::string key = string();
      skip();
      expect(':');
      skip();
      HeaderValue v = value(key);
      if (!out.emplace(key, std::move(v)).second)
        fail_at(key_at, "key '" + escape_for_terminal(key) + "' appears twice");
      skip();
      if (peek() == ',') {
        ++i_;
        skip();
      } else if (peek() != '}') {
        fail("expected ',' or '}'");
      }
    }
    ++i_;
    skip();
    if (i_ != s_.size())
      fail("unexpected text after the header's closing '}'");
    return out;
  }

private:
  [[noreturn]] void fail_at(std::size_t at, const std::string& why) {
    bad(path_, "malformed .npy header: " + why + " at offset " + std::to_string(at) + " of " +
                   quote_excerpt());
  }
  [[noreturn]] void fail(const std::string& why) { fail_at(i_, why); }
  std::string quote_excerpt() const {
    std::string_view h = s_.substr(0, 80);
    return "\"" + escape_for_terminal(h) + (s_.size() > 80 ? "...\"" : "\"");
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  void expect(char c) {
    if (peek() != c)
      fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string() {
    char q = s_[i_++];
    std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\')
        fail("escapes in strings are not supported");
      if (static_cast<unsigned char>(s_[i_]) < 0x20)
        fail("control character in a string");
      ++i_;
    }
    if (i_ >= s_.size())
      fail_at(start - 1, "unterminated string");
    return std::string(s_.substr(start, i_++ - start));
  }
  uint64_t integer() {
    std::size_t start = i_;
    if (peek() == '-' || peek() == '+')
      fail("a dimension must be a non-negative integer");
    uint64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      auto m = checked_mul(v, 10);
      auto a = m ? checked_add(*m, static_cast<uint64_t>(s_[i_] - '0')) : std::nullopt;
      if (!a)
        fail_at(start, "a dimension does not fit in 64 bits");
      v = *a;
      ++i_;
    }
    if (i_ == start)
      fail("expected a dimension (a non-negative integer)");
    if (peek() == '.' || peek() == 'e' || peek() == 'E' || peek() == 'j' || peek() == 'L' ||
        peek() == 'x' || peek() == '_')
      fail_at(start, "a dimension must be a plain non-negative integer");
    return v;
  }
  HeaderValue value(const std::string& key) {
    HeaderValue v{};
    if (peek() == '\'' || peek() == '"') {
      v.kind = HeaderValue::Kind::String;
      v.text = string();
    } else if (s_.substr(i_, 4) == "True") {
      v.kind = HeaderValue::Kind::Bool;
      v.boolean = true;
      i_ += 4;
    } else if (s_.substr(i_, 5) == "False") {
      v.kind = HeaderValue::Kind::Bool;
      i_ += 5;
    } else if (peek() == '(') {
      v.kind = HeaderValue::Kind::Tuple;
      ++i_;
      skip();
      bool comma = false;
      while (peek() != ')') {
        v.dims.push_back(integer());
        comma = false;
        skip();
        if (peek() == ',') {
          ++i_;
          comma = true;
          skip();
        } else if (peek() != ')') {
          fail("expected ',' or ')' in a tuple");
        }
      }
      // (n) without a comma is an int in Python, not a tuple.
      if (v.dims.size() == 1 && !comma)
        fail("a one-dimensional shape is written (n,)");
      ++i_;
    } else {
      fail("unsupported value for key '" + escape_for_terminal(key) +
           "' (expected a string, True, False or a tuple of integers)");
    }
    return v;
  }

  const std::string& path_;
  std::string_view s_;
  std::size_t i_ = 0;
};

} // namespace

std::string read_whole_file(const std::string& path) {
  return read_all(path);
}

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
  if (bytes.size() < 8 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    bad(path, "not a .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  unsigned minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    bad(path, ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                  " is not supported (1.0, 2.0 and 3.0 are)");
  size_t header_len = 0, header_start = major == 1 ? 10 : 12;
  if (bytes.size() < header_start)
    bad(path, "truncated .npy file: " + std::to_string(bytes.size()) +
                  " bytes, shorter than the header length field");
  for (size_t i = header_start; i-- > 8;)
    header_len = (header_len << 8) | static_cast<unsigned char>(bytes[i]);
  if (header_len > bytes.size() - header_start)
    bad(path, "truncated .npy header: it claims " + std::to_string(header_len) +
                  " bytes, the file has " + std::to_string(bytes.size() - header_start) +
                  " after the length field");
  std::string_view header(bytes.data() + header_start, header_len);
  if (major < 3)
    for (unsigned char c : header)
      if (c >= 0x80)
        bad(path, "the .npy header of a version 1 or 2 file must be ASCII");
  auto dict = HeaderParser(path, header).parse();
  for (const auto& [key, v] : dict)
    if (key != "descr" && key != "fortran_order" && key != "shape")
      bad(path, ".npy header has the unknown key '" + escape_for_terminal(key) +
                    "' (expected exactly descr, fortran_order and shape)");
  for (const char* key : {"descr", "fortran_order", "shape"})
    if (!dict.count(key))
      bad(path, std::string(".npy header has no '") + key + "'");
  const HeaderValue& descr = dict.at("descr");
  const HeaderValue& order = dict.at("fortran_order");
  const HeaderValue& shape = dict.at("shape");
  if (descr.kind != HeaderValue::Kind::String)
    bad(path, ".npy header: 'descr' is not a string (structured dtypes are not supported)");
  if (order.kind != HeaderValue::Kind::Bool)
    bad(path, ".npy header: 'fortran_order' is not True or False");
  if (order.boolean)
    bad(path, "Fortran-ordered arrays are not supported; save np.ascontiguousarray(a) instead");
  if (shape.kind != HeaderValue::Kind::Tuple)
    bad(path, ".npy header: 'shape' is not a tuple of integers");
  uint64_t count = 1;
  for (uint64_t d : shape.dims) {
    auto c = checked_mul(count, d);
    if (!c)
      bad(path, ".npy shape's element count does not fit in 64 bits");
    count = *c;
  }
  if (!npy_accepts(descr.text, type))
    bad(path, "dtype " + escape_for_terminal(descr.text) +
                  " does not match the buffer's element type " + std::string(ir::name(type)) +
                  " (expected " + npy_descr(type) + ")");
  size_t data_start = header_start + header_len;
  size_t have = bytes.size() - data_start;
  auto need = checked_mul(count, ir::bytes(type));
  if (!need)
    bad(path, ".npy shape's size in bytes does not fit in 64 bits");
  if (have < *need)
    bad(path, "truncated .npy data: " + std::to_string(have) + " bytes for " +
                  std::to_string(count) + " elements of " + std::to_string(ir::bytes(type)) +
                  " bytes");
  if (have > *need)
    bad(path, ".npy file has " + std::to_string(have - *need) + " bytes after the " +
                  std::to_string(count) + " elements its shape declares");
  rt::HostBuffer b(type, count);
  if (*need)
    std::memcpy(b.data(), bytes.data() + data_start, *need);
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

std::string npy_bytes(const rt::HostBuffer& b) {
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
  return out;
}

std::string buffer_bytes(const std::string& path, const rt::HostBuffer& b) {
  return ends_with(path, ".npy")
             ? npy_bytes(b)
             : std::string(reinterpret_cast<const char*>(b.data()), b.size_bytes());
}

void save_npy(const std::string& path, const rt::HostBuffer& b) {
  write_file_atomically(path, npy_bytes(b));
}

void save_raw(const std::string& path, const rt::HostBuffer& b) {
  write_file_atomically(path,
                        std::string_view(reinterpret_cast<const char*>(b.data()), b.size_bytes()));
}

void save_buffer(const std::string& path, const rt::HostBuffer& b) {
  write_file_atomically(path, buffer_bytes(path, b));
}

} // namespace halfway::cli
