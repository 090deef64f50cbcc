// Golden text of every example kernel (examples/kernels/*.hk are the goldens), literal printing,
// and the structural hash.
#include "examples.hpp"
#include "halfway/ir/hash.hpp"
#include "halfway/ir/printer.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace halfway;
using ir::ScalarType;

namespace {

std::string golden_file(const std::string& kernel_name) {
  std::string file;
  for (char c : kernel_name)
    file += (c == '<' || c == '>' || c == ',') ? '_' : c;
  while (!file.empty() && file.back() == '_')
    file.pop_back();
  return std::string(HALFWAY_SOURCE_DIR) + "/examples/kernels/" + file + ".hk";
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Printer, ExamplesMatchTheirGoldenText) {
  for (const Kernel& k : examples::all()) {
    std::string path = golden_file(k.name());
    std::string golden = read(path);
    ASSERT_FALSE(golden.empty()) << "missing golden " << path;
    // A golden file may start with comment lines; the kernel text follows them.
    auto start = golden.find("kernel ");
    EXPECT_EQ(ir::print(k.kernel()), golden.substr(start)) << "golden " << path;
  }
}

TEST(Printer, Constants) {
  EXPECT_EQ(ir::print_constant(ScalarType::F32, 0x3fc00000), "1.5:f32");
  EXPECT_EQ(ir::print_constant(ScalarType::F32, 0x80000000), "-0.0:f32");
  EXPECT_EQ(ir::print_constant(ScalarType::F32, 0x3dcccccd), "0.1:f32");
  EXPECT_EQ(ir::print_constant(ScalarType::F32, 0x7f800000), "inf:f32");
  EXPECT_EQ(ir::print_constant(ScalarType::F32, 0x7fc00001), "nan(0x7fc00001):f32");
  EXPECT_EQ(ir::print_constant(ScalarType::F64, 0x3fb999999999999aull), "0.1:f64");
  EXPECT_EQ(ir::print_constant(ScalarType::F16, 0x3c00), "1.0:f16");
  EXPECT_EQ(ir::print_constant(ScalarType::F16, 0x0001),
            "5.9604645e-08:f16"); // 2^-24, shortest float
  EXPECT_EQ(ir::print_constant(ScalarType::BF16, 0xc040), "-3.0:bf16");
  EXPECT_EQ(ir::print_constant(ScalarType::E4M3, 0x7e), "448.0:e4m3");
  EXPECT_EQ(ir::print_constant(ScalarType::E4M3, 0x7f), "nan(0x7f):e4m3");
  EXPECT_EQ(ir::print_constant(ScalarType::E5M2, 0x7c), "inf:e5m2");
  EXPECT_EQ(ir::print_constant(ScalarType::I32, 0xffffffff), "-1:i32");
  EXPECT_EQ(ir::print_constant(ScalarType::U64, 0xffffffffffffffffull), "18446744073709551615:u64");
  EXPECT_EQ(ir::print_constant(ScalarType::Bool, 1), "true");
}

TEST(Printer, QuotesNamesThatAreNotIdentifiers) {
  EXPECT_EQ(ir::print(examples::linear<f16>().kernel()).substr(0, 27),
            "kernel \"linear<f16>\" workgr");
}

TEST(Hash, EqualKernelsHashEqual) {
  for (const Kernel& k : examples::all())
    EXPECT_EQ(ir::structural_hash(k.kernel()), k.hash());
  EXPECT_EQ(examples::saxpy().hash(), examples::saxpy().hash());
  EXPECT_EQ(examples::linear<f16>().hash(), examples::linear<f16>().hash());
}

TEST(Hash, EveryExampleHashesDifferently) {
  std::set<uint64_t> hashes;
  for (const Kernel& k : examples::all())
    hashes.insert(k.hash());
  EXPECT_EQ(hashes.size(), examples::all().size());
}

template <class F> uint64_t hash_of(F&& body, std::string name = "h", Workgroup wg = {64}) {
  return kernel(std::move(name), wg, {"x", "y"}, std::forward<F>(body)).hash();
}

TEST(Hash, AnyChangeChangesTheHash) {
  auto reference = [](In<float> x, Out<f16> y) { y[global_id(0)] = x[global_id(0)] * 2.0f; };
  uint64_t h = hash_of(reference);
  EXPECT_EQ(h, hash_of(reference));
  EXPECT_NE(h, hash_of(reference, "other_name"));
  EXPECT_NE(h, hash_of(reference, "h", {128}));
  EXPECT_NE(h, hash_of([](In<float> x, Out<f16> y) { y[global_id(0)] = x[global_id(0)] * 3.0f; }));
  EXPECT_NE(h, hash_of([](In<float> x, Out<f16> y) { y[global_id(0)] = x[global_id(0)] + 2.0f; }));
  EXPECT_NE(h, hash_of([](In<float> x, Out<f16> y) {
              y[global_id(0)] = narrow<f16>(x[global_id(0)] * 2.0f, ir::RoundingMode::TowardZero);
            }));
  EXPECT_NE(h, hash_of([](In<float> x, Out<f16> y) { y[local_id(0)] = x[global_id(0)] * 2.0f; }));
  EXPECT_NE(h, hash_of([](In<float> x, Out<bf16> y) { y[global_id(0)] = x[global_id(0)] * 2.0f; }));
}

TEST(Hash, ExpressionSharingDoesNotMatter) {
  // The same tree, once with a shared node and once built twice.
  auto shared = [](In<float> x, Out<float> y) {
    auto t = x[0u] * x[1u];
    y[0u] = t + t;
  };
  auto duplicated = [](In<float> x, Out<float> y) { y[0u] = x[0u] * x[1u] + x[0u] * x[1u]; };
  EXPECT_EQ(hash_of(shared), hash_of(duplicated));
}

} // namespace

#include "halfway/ir/op_table_doc.hpp"

namespace {
TEST(OpTable, SpecMatchesTheTable) {
  EXPECT_EQ(read(std::string(HALFWAY_SOURCE_DIR) + "/specs/op-table.md"), ir::op_table_markdown())
      << "regenerate specs/op-table.md with `halfway ops > specs/op-table.md`";
}
} // namespace
