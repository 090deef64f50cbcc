#include "halfway/io/npy.hpp"

#include "halfway/io/read.hpp"
#include "halfway/support/error.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <optional>

namespace halfway::io {

// Buffers hold little-endian bit patterns and are copied to and from files as they are.
static_assert(std::endian::native == std::endian::little, "halfway's buffers are little-endian");

namespace {

[[noreturn]] void bad(const std::string& name, const std::string& why) {
  ErrorContext c;
  c.file = name;
  throw Error(ErrorKind::Usage, why, c);
}

std::optional<uint64_t> mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
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
  HeaderParser(const std::string& name, std::string_view text) : name_(name), s_(text) {}

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
        fail_at(key_at, "key '" + printable(key) + "' appears twice");
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
    bad(name_, "malformed .npy header: " + why + " at offset " + std::to_string(at) + " of " +
                   quote_excerpt());
  }
  [[noreturn]] void fail(const std::string& why) { fail_at(i_, why); }
  std::string quote_excerpt() const {
    std::string_view h = s_.substr(0, 80);
    return "\"" + printable(h) + (s_.size() > 80 ? "...\"" : "\"");
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
      auto m = mul(v, 10);
      uint64_t a = 0;
      if (!m || __builtin_add_overflow(*m, static_cast<uint64_t>(s_[i_] - '0'), &a))
        fail_at(start, "a dimension does not fit in 64 bits");
      v = a;
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
      fail("unsupported value for key '" + printable(key) +
           "' (expected a string, True, False or a tuple of integers)");
    }
    return v;
  }

  const std::string& name_;
  std::string_view s_;
  std::size_t i_ = 0;
};

// A NumPy type string: byte order, kind and size in bytes ("<f2": '<', 'f', 2).
struct Descr {
  char order, kind;
  uint64_t size;
};

std::optional<Descr> split_descr(const std::string& d) {
  if (d.size() < 3 || d.size() > 4 || std::string_view("<>|=").find(d[0]) == std::string::npos)
    return std::nullopt;
  Descr out{d[0], d[1], 0};
  for (size_t i = 2; i < d.size(); ++i) {
    if (d[i] < '0' || d[i] > '9')
      return std::nullopt;
    out.size = out.size * 10 + static_cast<uint64_t>(d[i] - '0');
  }
  return out;
}

// The kind letter NumPy uses for a type's own dtype ('f' for f16, 'u' for u32, ...).
char native_kind(ir::ScalarType t) {
  using ir::ScalarType;
  switch (t) {
  case ScalarType::I8:
  case ScalarType::I16:
  case ScalarType::I32:
  case ScalarType::I64:
    return 'i';
  case ScalarType::U8:
  case ScalarType::U16:
  case ScalarType::U32:
  case ScalarType::U64:
    return 'u';
  case ScalarType::F16:
  case ScalarType::F32:
  case ScalarType::F64:
    return 'f';
  case ScalarType::BF16:
  case ScalarType::E4M3:
  case ScalarType::E5M2:
    return 'V'; // ml_dtypes' bfloat16 and float8 arrays are saved as raw bytes
  case ScalarType::Bool:
    // Never a buffer's type (specs/ir.md); held as 4-byte 0/1 words, which NumPy calls '<u4'.
    return 'u';
  }
  return 'V';
}

bool numpy_lacks(ir::ScalarType t) {
  return native_kind(t) == 'V';
}

// The types NumPy lacks: ml_dtypes' name for each, and the dtypes a file of it may have (the
// message for a wrong one).
struct MlDtype {
  ir::ScalarType type;
  const char* name;
  const char* accepted;
};
constexpr MlDtype kMlDtypes[] = {
    {ir::ScalarType::BF16, "bfloat16", "'<V2' (ml_dtypes.bfloat16) or '<u2' (bf16 bit patterns)"},
    {ir::ScalarType::E4M3, "float8_e4m3fn",
     "'<V1' (ml_dtypes.float8_e4m3fn) or '|u1' (e4m3 bit patterns)"},
    {ir::ScalarType::E5M2, "float8_e5m2",
     "'<V1' or '<f1' (ml_dtypes.float8_e5m2) or '|u1' (e5m2 bit patterns)"},
};

const MlDtype* ml_dtype(ir::ScalarType t) {
  for (const MlDtype& m : kMlDtypes)
    if (m.type == t)
      return &m;
  return nullptr;
}

// What a wrong dtype should have been, for the message.
std::string expected_dtypes(ir::ScalarType t) {
  const MlDtype* m = ml_dtype(t);
  return m ? m->accepted : "'" + npy_descr(t) + "'";
}

// Checks that `descr` can hold elements of `type`; returns the note to give (empty: none) and
// whether the elements must be byte-swapped.
std::pair<std::string, bool> match_descr(const std::string& name, const std::string& descr,
                                         ir::ScalarType type) {
  const uint64_t width = ir::bytes(type);
  const std::string tname(ir::name(type));
  const std::string shown = "'" + printable(descr) + "'";
  auto parts = split_descr(descr);
  auto mismatch = [&](const std::string& why) -> std::pair<std::string, bool> {
    bad(name, "dtype " + shown + why + " does not match the buffer's element type " + tname +
                  " (expected " + expected_dtypes(type) + ")");
  };
  if (!parts)
    return mismatch("");
  const Descr d = *parts;
  const bool native = d.kind == native_kind(type) && d.size == width;
  const bool bit_patterns = numpy_lacks(type) && d.kind == 'u' && d.size == width;
  const bool e5m2_own = type == ir::ScalarType::E5M2 && d.kind == 'f' && d.size == 1;
  if (!native && !bit_patterns && !e5m2_own) {
    if (d.kind == 'V')
      return mismatch(" (" + std::to_string(d.size) + " raw byte" + (d.size == 1 ? "" : "s") +
                      " per element, as ml_dtypes saves " +
                      (d.size == 2   ? "bfloat16"
                       : d.size == 1 ? "its float8 types"
                                     : "void data") +
                      ")");
    return mismatch("");
  }
  std::string note;
  if (d.kind == 'V' || e5m2_own)
    note = "dtype " + shown + " does not say which " + std::to_string(width) +
           "-byte type it holds" + (e5m2_own ? " ('<f1' is ml_dtypes' float8_e5m2)" : "") +
           "; read as " + tname + ", the type of the kernel's parameter";
  bool swap = false;
  switch (d.order) {
  case '<':
  case '=': // native order, which static_assert above makes little-endian
    break;
  case '|': // "not applicable": single bytes, and NumPy's void dtype
    if (width > 1 && d.kind != 'V')
      bad(name, "dtype " + shown + " has no byte order, but " + tname + " elements have " +
                    std::to_string(width) + " bytes (expected '<' or '>')");
    break;
  case '>':
    if (width == 1)
      break;
    if (d.kind == 'V')
      bad(name, "dtype " + shown +
                    " is big-endian raw bytes: NumPy never swaps void data, so there is no byte "
                    "order to convert from; save the array little-endian (a.astype(a.dtype."
                    "newbyteorder('<')))");
    swap = true;
    note += std::string(note.empty() ? "" : "; ") + "big-endian " + shown +
            " converted to little-endian " + tname;
    break;
  }
  return {note, swap};
}

void byte_swap(std::byte* data, uint64_t count, uint64_t width) {
  for (uint64_t i = 0; i < count; ++i)
    std::reverse(data + i * width, data + (i + 1) * width);
}

} // namespace

std::string npy_descr(ir::ScalarType t) {
  const uint64_t width = ir::bytes(t);
  if (numpy_lacks(t)) // as ml_dtypes saves them; numpy.load reads them as void
    return "<V" + std::to_string(width);
  return std::string(width == 1 ? "|" : "<") + native_kind(t) + std::to_string(width);
}

std::string npy_view_hint(ir::ScalarType t) {
  const MlDtype* m = ml_dtype(t);
  return m ? std::string("numpy.load(f).view(ml_dtypes.") + m->name + ")" : "";
}

std::string shape_text(std::span<const uint64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

Array parse_npy(std::string_view bytes, ir::ScalarType type, const std::string& name) {
  if (bytes.size() < 8 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    bad(name, "not a .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  unsigned minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    bad(name, ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                  " is not supported (1.0, 2.0 and 3.0 are)");
  size_t header_len = 0, header_start = major == 1 ? 10 : 12;
  if (bytes.size() < header_start)
    bad(name, "truncated .npy file: " + std::to_string(bytes.size()) +
                  " bytes, shorter than the header length field");
  for (size_t i = header_start; i-- > 8;)
    header_len = (header_len << 8) | static_cast<unsigned char>(bytes[i]);
  if (header_len > bytes.size() - header_start)
    bad(name, "truncated .npy header: it claims " + std::to_string(header_len) +
                  " bytes, the file has " + std::to_string(bytes.size() - header_start) +
                  " after the length field");
  std::string_view header(bytes.data() + header_start, header_len);
  if (major < 3)
    for (unsigned char c : header)
      if (c >= 0x80)
        bad(name, "the .npy header of a version 1 or 2 file must be ASCII");
  auto dict = HeaderParser(name, header).parse();
  for (const auto& [key, v] : dict)
    if (key != "descr" && key != "fortran_order" && key != "shape")
      bad(name, ".npy header has the unknown key '" + printable(key) +
                    "' (expected exactly descr, fortran_order and shape)");
  for (const char* key : {"descr", "fortran_order", "shape"})
    if (!dict.count(key))
      bad(name, std::string(".npy header has no '") + key + "'");
  const HeaderValue& descr = dict.at("descr");
  const HeaderValue& order = dict.at("fortran_order");
  const HeaderValue& shape = dict.at("shape");
  if (descr.kind != HeaderValue::Kind::String)
    bad(name, ".npy header: 'descr' is not a string (structured dtypes are not supported)");
  if (order.kind != HeaderValue::Kind::Bool)
    bad(name, ".npy header: 'fortran_order' is not True or False");
  if (order.boolean)
    bad(name, "Fortran-ordered arrays are not supported; save np.ascontiguousarray(a) instead");
  if (shape.kind != HeaderValue::Kind::Tuple)
    bad(name, ".npy header: 'shape' is not a tuple of integers");
  uint64_t count = 1;
  for (uint64_t d : shape.dims) {
    auto c = mul(count, d);
    if (!c)
      bad(name, ".npy shape's element count does not fit in 64 bits");
    count = *c;
  }
  auto [note, swap] = match_descr(name, descr.text, type);
  size_t data_start = header_start + header_len;
  size_t have = bytes.size() - data_start;
  auto need = mul(count, ir::bytes(type));
  if (!need)
    bad(name, ".npy shape's size in bytes does not fit in 64 bits");
  if (have < *need)
    bad(name, "truncated .npy data: " + std::to_string(have) + " bytes for " +
                  std::to_string(count) + " elements of " + std::to_string(ir::bytes(type)) +
                  " bytes");
  if (have > *need)
    bad(name, ".npy file has " + std::to_string(have - *need) + " bytes after the " +
                  std::to_string(count) + " elements its shape declares");
  Array out{rt::HostBuffer(type, count), shape.dims, note};
  if (*need)
    std::memcpy(out.buffer.data(), bytes.data() + data_start, *need);
  if (swap)
    byte_swap(out.buffer.data(), count, ir::bytes(type));
  return out;
}

Array parse_raw(std::string_view bytes, ir::ScalarType type, const std::string& name) {
  size_t width = ir::bytes(type);
  if (bytes.size() % width)
    bad(name, "raw file of " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                  std::string(ir::name(type)) + " elements");
  Array out{rt::HostBuffer(type, bytes.size() / width), {bytes.size() / width}, ""};
  if (!bytes.empty())
    std::memcpy(out.buffer.data(), bytes.data(), bytes.size());
  return out;
}

bool is_npy_path(std::string_view path) {
  return path.size() >= 4 && path.substr(path.size() - 4) == ".npy";
}

Array load_npy(const std::string& path, ir::ScalarType type) {
  return parse_npy(read_file(path), type, path);
}

Array load_raw(const std::string& path, ir::ScalarType type) {
  return parse_raw(read_file(path), type, path);
}

Array load(const std::string& path, ir::ScalarType type) {
  return is_npy_path(path) ? load_npy(path, type) : load_raw(path, type);
}

std::string npy_bytes(const rt::HostBuffer& b, std::span<const uint64_t> shape) {
  const uint64_t size = b.size();
  std::span<const uint64_t> dims = shape.empty() ? std::span<const uint64_t>(&size, 1) : shape;
  uint64_t count = 1;
  for (uint64_t d : dims)
    count = mul(count, d).value_or(0);
  if (count != b.size())
    throw Error(ErrorKind::Usage, "shape " + shape_text(dims) + " does not hold the buffer's " +
                                      std::to_string(b.size()) + " elements");
  std::string header = "{'descr': '" + npy_descr(b.type()) +
                       "', 'fortran_order': False, 'shape': " + shape_text(dims) + ", }";
  // Pad so that the data starts on a 64-byte boundary, ending the header with a newline. A
  // header past 65535 bytes (thousands of dimensions) needs format version 2.0's 4-byte length.
  const bool v2 = 10 + header.size() + 1 > 0xffff;
  const size_t prefix = v2 ? 12 : 10;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += v2 ? '\x02' : '\x01';
  out += '\x00';
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(b.data()), b.size_bytes());
  return out;
}

std::string raw_bytes(const rt::HostBuffer& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size_bytes());
}

std::string file_bytes(const std::string& path, const rt::HostBuffer& b,
                       std::span<const uint64_t> shape) {
  return is_npy_path(path) ? npy_bytes(b, shape) : raw_bytes(b);
}

} // namespace halfway::io
