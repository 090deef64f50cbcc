// Cross-check against ml_dtypes (E4M3FN, E5M2, bfloat16) and numpy (float16), through a table that
// tests/numerics/ml_dtypes_golden.py generated: FP8 overflow, NaN and tie behaviour are meant to
// match ml_dtypes, and this pins it without making the tests need Python. NaN payloads are not
// compared (halfway canonicalises them), NaN signs are.
#include "halfway/numerics/convert.hpp"
#include "mpfr_ref.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

namespace halfway::num {
namespace {

bool same_value(Format f, uint64_t want, uint64_t got) {
  if (is_nan(f, want))
    return is_nan(f, got) && sign_bit(f, want) == sign_bit(f, got);
  return want == got;
}

TEST(MlDtypes, F32NarrowingsMatchTheGoldenTable) {
  std::ifstream in(HALFWAY_SOURCE_DIR "/tests/numerics/data/ml_dtypes_f32.txt");
  ASSERT_TRUE(in) << "missing tests/numerics/data/ml_dtypes_f32.txt";
  std::string line;
  int rows = 0, failures = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    uint32_t x = 0;
    unsigned e4 = 0, e5 = 0, bf = 0, hf = 0;
    fields >> std::hex >> x >> e4 >> e5 >> bf >> hf;
    ASSERT_FALSE(fields.fail()) << line;
    ++rows;
    const bool ok = same_value(Format::E4M3, e4, f32_to_e4m3(x)) &&
                    same_value(Format::E5M2, e5, f32_to_e5m2(x)) &&
                    same_value(Format::BF16, bf, f32_to_bf16(x)) &&
                    same_value(Format::F16, hf, f32_to_f16(x));
    if (!ok && ++failures <= 10) {
      ADD_FAILURE() << "f32 " << test::hex(x) << ": ml_dtypes " << line << ", halfway "
                    << test::hex(f32_to_e4m3(x)) << " " << test::hex(f32_to_e5m2(x)) << " "
                    << test::hex(f32_to_bf16(x)) << " " << test::hex(f32_to_f16(x));
    }
  }
  EXPECT_GT(rows, 5000);
  EXPECT_EQ(failures, 0);
}

} // namespace
} // namespace halfway::num
