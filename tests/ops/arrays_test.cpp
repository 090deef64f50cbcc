// Private (per-lane) arrays and rank-2 shared arrays on every device (interp, cpu and vulkan where
// the build and machine have one), built with the DSL and parsed from text: results against values
// computed here, zero initialisation per lane, and out-of-bounds accesses named per dimension with
// and without the optional checks.
#include "halfway/dsl.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/parse.hpp"

#include <gtest/gtest.h>

namespace halfway {
namespace {

class Arrays : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    try {
      device = rt::make_device(GetParam());
    } catch (const Error& e) {
      GTEST_SKIP() << "no " << GetParam() << " device in this build or machine: " << e.what();
    }
  }
  std::unique_ptr<rt::Device> device;
};

ir::VerifiedKernel parse_one(std::string_view text) {
  std::vector<ir::Kernel> ks = text::parse_kernels(text, "arrays_test.hk");
  EXPECT_EQ(ks.size(), 1u);
  return ir::verify(std::move(ks.at(0)));
}

// acc[j] accumulates over a loop indexed by the loop variable (values), m[1][2] is written and
// read at constant indices, m[0][0] is never written: it reads the zero every lane starts with.
// 200 lanes in four workgroups of 64: on devices that reuse memory between workgroups, a lane
// that did not start from zero would add the previous workgroup's sums.
Kernel private_sums() {
  return kernel("private_sums", {64}, {"x", "y"}, [](In<float> x, Out<float> y) {
    Private<float, 8> acc("acc");
    Private<uint32_t, 2, 3> m("m");
    Var i(global_id(0), "i");
    If(i < y.size(), [&] {
      For(Value<uint32_t>(0u), 8u, [&](Value<uint32_t> j) {
        acc[j] += x[i] * convert<float>(j);
        acc[j] += 1.5f;
      });
      m[1u][2u] = 7u;
      acc[3u] += convert<float>(m[1u][2u]);
      Var s(0.0f, "s");
      For(Value<uint32_t>(0u), 8u, [&](Value<uint32_t> j) { s += acc[j]; });
      y[i] = s + convert<float>(m[0u][0u]);
    });
  });
}

TEST(ArraysDsl, PrintsPrivateAndMultiDimensionalArraysCanonically) {
  const std::string text = ir::print(private_sums().kernel());
  EXPECT_NE(text.find("  let acc: f32[8];\n  let m: u32[2][3];\n"), std::string::npos) << text;
  EXPECT_NE(text.find("acc[t0] = add(acc[t0], mul(x[i], convert<f32>(t0)));"), std::string::npos)
      << text;
  EXPECT_NE(text.find("m[1:u32][2:u32] = 7:u32;"), std::string::npos) << text;
  EXPECT_NE(text.find("convert<f32>(m[0:u32][0:u32])"), std::string::npos) << text;
  // The printed text reads back as the same kernel, and prints the same again.
  std::vector<ir::Kernel> back = text::parse_kernels(text, "printed.hk");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(ir::print(back[0]), text);
  EXPECT_EQ(back[0].privates.size(), 2u);
  EXPECT_EQ(back[0].privates[1].rank(), 2u);
  EXPECT_EQ(back[0].privates[1].size, 6u);
}

TEST(ArraysDsl, SharedArraysOfCompileTimeShape) {
  Kernel k = kernel("tile", {16, 16}, {"y"}, [](Out<float> y) {
    Shared<float, 16, 17> tile("tile");
    Shared<float> flat("flat", 5);
    tile[local_id(1)][local_id(0)] = 1.0f;
    Barrier();
    y[0u] = tile[0u][16u] + flat[4u];
  });
  const ir::Kernel& ir = k.kernel();
  ASSERT_EQ(ir.shared.size(), 2u);
  EXPECT_EQ(ir.shared[0].rank(), 2u);
  EXPECT_EQ(ir.shared[0].dim(1), 17u);
  EXPECT_EQ(ir.shared[0].size, 272u);
  EXPECT_EQ(ir.shared[1].rank(), 1u);
  const std::string text = ir::print(ir);
  EXPECT_NE(text.find("  shared tile: f32[16][17];\n  shared flat: f32[5];\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("tile[local_id(1)][local_id(0)] = 1.0:f32;"), std::string::npos) << text;
}

TEST_P(Arrays, PrivateArraysIndexedByValuesAndConstantsStartAtZero) {
  const Kernel k = private_sums();
  const size_t n = 200;
  rt::HostBuffer x(ir::ScalarType::F32, n), y(ir::ScalarType::F32, n);
  for (size_t i = 0; i < n; ++i)
    x.as<float>()[i] = static_cast<float>(i % 13); // small integers: every sum below is exact
  std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(y)};
  for (int launch = 0; launch < 2; ++launch) { // the second launch starts from zero again
    device->launch(k, rt::Grid{{4, 1, 1}}, args);
    for (size_t i = 0; i < n; ++i) {
      // sum over j of (x * j + 1.5), plus 7 in acc[3]: 28 x + 12 + 7.
      const float want = 28.0f * static_cast<float>(i % 13) + 19.0f;
      ASSERT_EQ(y.as<float>()[i], want) << GetParam() << " lane " << i << " launch " << launch;
    }
  }
}

// A private array read before any store, at an index from a buffer: zero on every lane.
TEST_P(Arrays, PrivateArraysAreZeroWhenTheLaneStarts) {
  const ir::VerifiedKernel k = parse_one(R"(
kernel zero workgroup(32, 1, 1) {
  param k: buffer<u32, read>;
  param y: buffer<u32, write>;
  let a: u32[4][5];
  let i: u32 = global_id(0);
  y[i] = a[k[i]][sub(4:u32, k[i])];
  a[k[i]][0:u32] = add(i, 1:u32);
}
)");
  const size_t n = 96;
  rt::HostBuffer kb(ir::ScalarType::U32, n), y(ir::ScalarType::U32, n);
  for (size_t i = 0; i < n; ++i) {
    kb.as<uint32_t>()[i] = static_cast<uint32_t>(i % 4);
    y.as<uint32_t>()[i] = 99;
  }
  std::vector<rt::Arg> args{rt::Arg::of(kb), rt::Arg::of(y)};
  device->launch(k, rt::Grid{{3, 1, 1}}, args);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(y.as<uint32_t>()[i], 0u) << GetParam() << " lane " << i;
}

// A 32 x 32 transpose through a padded 16 x 17 shared tile per 16 x 16 workgroup, with a barrier
// between the tile's stores and the loads that read other lanes' elements.
TEST_P(Arrays, PaddedSharedTileTransposes) {
  const ir::VerifiedKernel k = parse_one(R"(
kernel transpose workgroup(16, 16, 1) {
  param a: buffer<f32, read>;
  param b: buffer<f32, write>;
  param n: u32;
  shared tile: f32[16][17];
  let tx: u32 = local_id(0);
  let ty: u32 = local_id(1);
  let gx: u32 = global_id(0);
  let gy: u32 = global_id(1);
  if and(lt(gx, n), lt(gy, n)) {
    tile[ty][tx] = a[add(mul(gy, n), gx)];
  }
  barrier;
  let ox: u32 = add(mul(group_id(1), 16:u32), tx);
  let oy: u32 = add(mul(group_id(0), 16:u32), ty);
  if and(lt(ox, n), lt(oy, n)) {
    b[add(mul(oy, n), ox)] = tile[tx][ty];
  }
}
)");
  const uint32_t n = 32;
  rt::HostBuffer a(ir::ScalarType::F32, n * n), b(ir::ScalarType::F32, n * n);
  for (uint32_t i = 0; i < n * n; ++i)
    a.as<float>()[i] = static_cast<float>(i) + 0.25f;
  std::vector<rt::Arg> args{rt::Arg::of(a), rt::Arg::of(b), rt::Arg::bits(n)};
  device->launch(k, rt::Grid{{2, 2, 1}}, args);
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t c = 0; c < n; ++c)
      ASSERT_EQ(b.as<float>()[r * n + c], a.as<float>()[c * n + r])
          << GetParam() << " b[" << r << "][" << c << "]";
}

void expect_out_of_bounds(rt::Device& device, const ir::VerifiedKernel& k, const rt::Grid& grid,
                          std::vector<rt::Arg> args, bool check, const std::string& message,
                          uint32_t lane) {
  try {
    device.launch(k, grid, args, {.check_bounds = check});
    ADD_FAILURE() << device.name() << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfBounds) << e.what();
    EXPECT_EQ(e.message(), message) << device.name() << (check ? " --check" : "");
    EXPECT_EQ(e.context().kernel, k.kernel().name);
    EXPECT_EQ(e.context().lane, lane) << e.what();
    EXPECT_EQ(e.context().workgroup, 0u) << e.what();
  }
}

TEST_P(Arrays, OutOfBoundsSharedIndexNamesTheDimension) {
  const ir::VerifiedKernel k = parse_one(R"(
kernel shared_oob workgroup(16, 16, 1) {
  param b: buffer<f32, write>;
  shared tile: f32[16][17];
  let tx: u32 = local_id(0);
  let ty: u32 = local_id(1);
  tile[ty][tx] = 1.0:f32;
  barrier;
  b[add(mul(ty, 16:u32), tx)] = tile[add(ty, 1:u32)][tx];
}
)");
  rt::HostBuffer b(ir::ScalarType::F32, 256);
  for (bool check : {false, true})
    expect_out_of_bounds(*device, k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(b)}, check,
                         "load from shared tile out of bounds in dimension 0: index 16, length 16",
                         240);
  // The inner dimension is checked on its own: [0][17] is inside the array's 272 elements.
  const ir::VerifiedKernel inner = parse_one(R"(
kernel inner_oob workgroup(4, 1, 1) {
  param b: buffer<f32, write>;
  shared tile: f32[16][17];
  let tx: u32 = local_id(0);
  tile[0:u32][add(tx, 14:u32)] = 2.0:f32;
  barrier;
  b[tx] = tile[0:u32][tx];
}
)");
  for (bool check : {false, true})
    expect_out_of_bounds(*device, inner, rt::Grid{{1, 1, 1}}, {rt::Arg::of(b)}, check,
                         "store to shared tile out of bounds in dimension 1: index 17, length 17",
                         3);
}

TEST_P(Arrays, OutOfBoundsPrivateIndexNamesTheDimension) {
  const ir::VerifiedKernel k = parse_one(R"(
kernel private_oob workgroup(8, 1, 1) {
  param x: buffer<i32, read>;
  param y: buffer<f32, write>;
  let acc: f32[4][2];
  let i: u32 = global_id(0);
  acc[x[i]][1:i32] = 2.0:f32;
  y[i] = acc[0:u32][1:u32];
}
)");
  rt::HostBuffer x(ir::ScalarType::I32, 8), y(ir::ScalarType::F32, 8);
  const int32_t xs[] = {0, 1, 2, 3, -1, 4, 0, 0};
  for (size_t i = 0; i < 8; ++i)
    x.as<int32_t>()[i] = xs[i];
  for (bool check : {false, true})
    expect_out_of_bounds(*device, k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(x), rt::Arg::of(y)}, check,
                         "store to private acc at negative index -1 in dimension 0 (length 4)", 4);
  // Rank 1: the same message as buffers and shared arrays, without a dimension.
  const ir::VerifiedKernel flat = parse_one(R"(
kernel private_flat workgroup(8, 1, 1) {
  param x: buffer<i32, read>;
  param y: buffer<f32, write>;
  let acc: f32[4];
  let i: u32 = global_id(0);
  y[i] = acc[x[i]];
}
)");
  const int32_t ys[] = {0, 1, 2, 3, 3, 2, 9, 0};
  for (size_t i = 0; i < 8; ++i)
    x.as<int32_t>()[i] = ys[i];
  for (bool check : {false, true})
    expect_out_of_bounds(*device, flat, rt::Grid{{1, 1, 1}}, {rt::Arg::of(x), rt::Arg::of(y)},
                         check, "load from private acc out of bounds: index 9, length 4", 6);
}

INSTANTIATE_TEST_SUITE_P(Devices, Arrays, ::testing::Values("interp", "cpu", "vulkan"));

} // namespace
} // namespace halfway
