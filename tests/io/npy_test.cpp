// halfway::io: .npy files against the exact bytes NumPy 2.4 and ml_dtypes 0.7 write (bf16 as
// '<V2', float8_e4m3fn as '<V1', float8_e5m2 as '<f1', big-endian '>f4' and '>f2'), N-d shapes,
// byte-order conversion and refusals, raw files and reading from a pipe.
#include "halfway/io/npy.hpp"
#include "halfway/io/read.hpp"
#include "halfway/support/error.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using halfway::Error;
using halfway::ErrorKind;
using halfway::ir::ScalarType;
namespace io = halfway::io;

// A version 1.0 file as numpy.save lays it out: the header padded with spaces and a newline so
// that the data starts at a multiple of 64 bytes.
std::string npy_file(const std::string& header, const std::string& data) {
  std::string h = header;
  const size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

std::string hex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i < h.size(); i += 2)
    out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

// The Usage error that parsing `bytes` as `type` throws.
std::string refusal(const std::string& bytes, ScalarType type) {
  try {
    io::parse_npy(bytes, type, "f.npy");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.message();
    EXPECT_EQ(e.context().file, "f.npy");
    return e.message();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

// bfloat16 [[1, 2, 3], [-4, 0.5, 448]] as ml_dtypes writes it.
const std::string kBf16Header = "{'descr': '<V2', 'fortran_order': False, 'shape': (2, 3), }";
const std::string kBf16Data = hex("803f0040404080c0003fe043");

TEST(Npy, ReadsMlDtypesBfloat16WithItsShapeAndSaysHowItWasRead) {
  const std::string file = npy_file(kBf16Header, kBf16Data);
  ASSERT_EQ(file.size(), 140u); // as numpy.save wrote it
  io::Array a = io::parse_npy(file, ScalarType::BF16, "x.npy");
  EXPECT_EQ(a.shape, (std::vector<uint64_t>{2, 3}));
  ASSERT_EQ(a.buffer.size(), 6u);
  EXPECT_EQ(a.buffer.get_bits(0), 0x3f80u); // 1
  EXPECT_EQ(a.buffer.get_bits(3), 0xc080u); // -4
  EXPECT_EQ(a.buffer.get_bits(5), 0x43e0u); // 448
  EXPECT_NE(a.note.find("'<V2'"), std::string::npos) << a.note;
  EXPECT_NE(a.note.find("read as bf16"), std::string::npos) << a.note;
}

TEST(Npy, WritesBfloat16ByteForByteAsMlDtypes) {
  io::Array a = io::parse_npy(npy_file(kBf16Header, kBf16Data), ScalarType::BF16, "x.npy");
  EXPECT_EQ(io::npy_bytes(a.buffer, a.shape), npy_file(kBf16Header, kBf16Data));
  // Without a shape, one dimension.
  EXPECT_EQ(io::npy_bytes(a.buffer),
            npy_file("{'descr': '<V2', 'fortran_order': False, 'shape': (6,), }", kBf16Data));
}

TEST(Npy, ReadsAndWritesFloat8) {
  // float8_e4m3fn [1, -2, 0.5, 448] and float8_e5m2 [1, -2, 0.5, 57344], as ml_dtypes writes them.
  const std::string e4 =
      npy_file("{'descr': '<V1', 'fortran_order': False, 'shape': (4,), }", hex("38c0307e"));
  const std::string e5 =
      npy_file("{'descr': '<f1', 'fortran_order': False, 'shape': (4,), }", hex("3cc0387b"));
  io::Array a = io::parse_npy(e4, ScalarType::E4M3, "e4.npy");
  EXPECT_EQ(a.buffer.get_bits(3), 0x7eu);
  EXPECT_NE(a.note.find("read as e4m3"), std::string::npos) << a.note;
  EXPECT_EQ(io::npy_bytes(a.buffer), e4);
  io::Array b = io::parse_npy(e5, ScalarType::E5M2, "e5.npy");
  EXPECT_EQ(b.buffer.get_bits(1), 0xc0u);
  EXPECT_NE(b.note.find("float8_e5m2"), std::string::npos) << b.note;
  // Written as '<V1', which numpy.load can read back ('<f1' it cannot).
  EXPECT_EQ(io::npy_bytes(b.buffer),
            npy_file("{'descr': '<V1', 'fortran_order': False, 'shape': (4,), }", hex("3cc0387b")));
  // The same bytes as '<V1' for e5m2, and as u1 bit patterns for either, without a note.
  EXPECT_EQ(io::parse_npy(e4, ScalarType::E5M2, "e4.npy").buffer.get_bits(0), 0x38u);
  io::Array u = io::parse_npy(
      npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }", hex("38c0307e")),
      ScalarType::E4M3, "u.npy");
  EXPECT_EQ(u.buffer.get_bits(2), 0x30u);
  EXPECT_EQ(u.note, "");
}

TEST(Npy, RefusesVoidDataForTypesThatAreNotItsOwn) {
  const std::string v2 = npy_file(kBf16Header, kBf16Data);
  std::string m = refusal(v2, ScalarType::F16);
  EXPECT_NE(m.find("dtype '<V2' (2 raw bytes per element, as ml_dtypes saves bfloat16) does not "
                   "match the buffer's element type f16 (expected '<f2')"),
            std::string::npos)
      << m;
  EXPECT_NE(refusal(v2, ScalarType::U16).find("expected '<u2'"), std::string::npos);
  const std::string v1 =
      npy_file("{'descr': '<V1', 'fortran_order': False, 'shape': (4,), }", hex("38c0307e"));
  m = refusal(v1, ScalarType::U8);
  EXPECT_NE(m.find("as ml_dtypes saves its float8 types"), std::string::npos) << m;
  EXPECT_NE(refusal(v1, ScalarType::BF16).find("expected '<V2' (ml_dtypes.bfloat16)"),
            std::string::npos);
  // '<f1' is ml_dtypes' float8_e5m2, never e4m3.
  m = refusal(npy_file("{'descr': '<f1', 'fortran_order': False, 'shape': (4,), }", "1234"),
              ScalarType::E4M3);
  EXPECT_NE(m.find("expected '<V1' (ml_dtypes.float8_e4m3fn) or '|u1'"), std::string::npos) << m;
  // Bit patterns of the wrong width.
  EXPECT_NE(refusal(npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", "1234"),
                    ScalarType::E5M2)
                .find("'<u2' does not match the buffer's element type e5m2"),
            std::string::npos);
}

TEST(Npy, ConvertsBigEndianFiles) {
  io::Array f = io::parse_npy(npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                                       hex("3f800000c0200000")),
                              ScalarType::F32, "be.npy");
  EXPECT_EQ(f.buffer.as<float>()[0], 1.0f);
  EXPECT_EQ(f.buffer.as<float>()[1], -2.5f);
  EXPECT_NE(f.note.find("big-endian '>f4' converted to little-endian f32"), std::string::npos)
      << f.note;
  io::Array h = io::parse_npy(
      npy_file("{'descr': '>f2', 'fortran_order': False, 'shape': (2,), }", hex("3c00c100")),
      ScalarType::F16, "be.npy");
  EXPECT_EQ(h.buffer.get_bits(0), 0x3c00u);
  EXPECT_EQ(h.buffer.get_bits(1), 0xc100u);
  io::Array w = io::parse_npy(npy_file("{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }",
                                       hex("0102030405060708")),
                              ScalarType::I64, "be.npy");
  EXPECT_EQ(w.buffer.get_bits(0), 0x0102030405060708u);
  // A single byte has no order: '>u1' reads as it is, without a note.
  io::Array b = io::parse_npy(
      npy_file("{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }", hex("0102")),
      ScalarType::U8, "b.npy");
  EXPECT_EQ(b.buffer.get_bits(1), 2u);
  EXPECT_EQ(b.note, "");
}

TEST(Npy, RefusesByteOrdersThatCannotBeConverted) {
  std::string m =
      refusal(npy_file("{'descr': '>V2', 'fortran_order': False, 'shape': (6,), }", kBf16Data),
              ScalarType::BF16);
  EXPECT_NE(m.find("big-endian raw bytes"), std::string::npos) << m;
  m = refusal(npy_file("{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }", "1234"),
              ScalarType::F32);
  EXPECT_NE(m.find("has no byte order, but f32 elements have 4 bytes"), std::string::npos) << m;
  // NumPy's own name for void data has no order, and is accepted.
  EXPECT_EQ(io::parse_npy(
                npy_file("{'descr': '|V2', 'fortran_order': False, 'shape': (6,), }", kBf16Data),
                ScalarType::BF16, "v.npy")
                .buffer.get_bits(0),
            0x3f80u);
}

TEST(Npy, KeepsShapesOfAnyRank) {
  halfway::rt::HostBuffer b(ScalarType::I32, 24);
  for (size_t i = 0; i < 24; ++i)
    b.set_bits(i, i * 3);
  const std::vector<uint64_t> shape{2, 3, 4};
  const std::string bytes = io::npy_bytes(b, shape);
  EXPECT_NE(bytes.find("'shape': (2, 3, 4), }"), std::string::npos);
  io::Array a = io::parse_npy(bytes, ScalarType::I32, "s.npy");
  EXPECT_EQ(a.shape, shape);
  EXPECT_EQ(a.buffer, b);
  // A shape that does not hold the buffer's elements is refused.
  const std::vector<uint64_t> wrong{5, 5};
  try {
    io::npy_bytes(b, wrong);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "shape (5, 5) does not hold the buffer's 24 elements");
  }
  EXPECT_EQ(io::shape_text(std::vector<uint64_t>{7}), "(7,)");
  EXPECT_EQ(io::shape_text({}), "()");
}

TEST(Npy, LongHeadersUseFormatVersion2) {
  // 30000 dimensions of 1: a header past 65535 bytes, which needs version 2.0's 4-byte length.
  halfway::rt::HostBuffer b(ScalarType::U8, 1);
  b.set_bits(0, 42);
  const std::vector<uint64_t> shape(30000, 1);
  const std::string bytes = io::npy_bytes(b, shape);
  EXPECT_EQ(bytes[6], '\x02');
  EXPECT_EQ((bytes.size() - 1) % 64, 0u);
  io::Array a = io::parse_npy(bytes, ScalarType::U8, "v2.npy");
  EXPECT_EQ(a.shape.size(), 30000u);
  EXPECT_EQ(a.buffer.get_bits(0), 42u);
}

TEST(Npy, DescrsForEveryType) {
  EXPECT_EQ(io::npy_descr(ScalarType::F16), "<f2");
  EXPECT_EQ(io::npy_descr(ScalarType::BF16), "<V2");
  EXPECT_EQ(io::npy_descr(ScalarType::E4M3), "<V1");
  EXPECT_EQ(io::npy_descr(ScalarType::E5M2), "<V1");
  EXPECT_EQ(io::npy_descr(ScalarType::I8), "|i1");
  EXPECT_EQ(io::npy_descr(ScalarType::U64), "<u8");
  EXPECT_EQ(io::npy_descr(ScalarType::Bool), "<u4"); // 4-byte words; NumPy's bool is 1 byte
  EXPECT_EQ(io::npy_descr(ScalarType::F64), "<f8");
  EXPECT_EQ(io::npy_view_hint(ScalarType::BF16), "numpy.load(f).view(ml_dtypes.bfloat16)");
  EXPECT_EQ(io::npy_view_hint(ScalarType::F32), "");
}

TEST(Raw, RoundTripsAndRefusesPartialElements) {
  io::Array a = io::parse_raw(hex("0100000002000000"), ScalarType::U32, "r.bin");
  EXPECT_EQ(a.shape, (std::vector<uint64_t>{2}));
  EXPECT_EQ(a.buffer.get_bits(1), 2u);
  EXPECT_EQ(io::raw_bytes(a.buffer), hex("0100000002000000"));
  EXPECT_EQ(io::file_bytes("out.bin", a.buffer), hex("0100000002000000"));
  EXPECT_EQ(io::file_bytes("out.npy", a.buffer).substr(0, 6), "\x93NUMPY");
  try {
    io::parse_raw("12345", ScalarType::U32, "r.bin");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "raw file of 5 bytes is not a whole number of u32 elements");
  }
}

TEST(ReadStream, ReadsAPipeToItsEndAndRefusesMoreThanTheLimit) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string file = npy_file(kBf16Header, kBf16Data);
  ASSERT_EQ(::write(fds[1], file.data(), file.size()), static_cast<ssize_t>(file.size()));
  ::close(fds[1]);
  const std::string got = io::read_stream(fds[0], "<stdin>", ".npy data", 1 << 20);
  ::close(fds[0]);
  EXPECT_EQ(got, file);

  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], file.data(), file.size()), static_cast<ssize_t>(file.size()));
  ::close(fds[1]);
  try {
    io::read_stream(fds[0], "<stdin>", ".npy data", 100, "a test's limit");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_EQ(e.context().file, "<stdin>");
    EXPECT_EQ(e.message(), "cannot read .npy data: it is over 100 bytes, the limit (a test's "
                           "limit) on .npy data");
  }
  ::close(fds[0]);
}

TEST(ReadFile, NamesAMissingFileAndRefusesAFolder) {
  try {
    io::read_file("/nonexistent/x.npy");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_EQ(e.context().file, "/nonexistent/x.npy");
  }
  try {
    io::load_npy("/", ScalarType::F32);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_EQ(e.message(), "is a directory, not a file");
  }
}

} // namespace
