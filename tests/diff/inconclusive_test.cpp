// Comparisons that prove nothing are never OK: an all-NaN reference, an output the reference never
// changed, an empty output and unchecked elements each make the report inconclusive, visible in
// the text and the JSON, unless the caller accepts that explicitly.
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/dsl.hpp"
#include "model_device.hpp"

#include <gtest/gtest.h>

using namespace halfway;
using namespace halfway::diff;
using ir::ScalarType;

namespace {

// y[i] = x[i] * s, only for i < limit.
Kernel scale_below() {
  return kernel("scale_below", {64}, {"x", "y", "s", "limit"},
                [](In<float> x, Out<float> y, Scalar<float> s, Scalar<uint32_t> limit) {
                  Var i(global_id(0), "i");
                  If(i < limit, [&] { y[i] = x[i] * s; });
                });
}

struct Fixture {
  policy::Registry registry;
  test::InterpDevice device = test::strict_device(registry);
  ir::VerifiedKernel k = scale_below();
  rt::HostBuffer x{ScalarType::F32, 256}, y{ScalarType::F32, 256};

  Report run_with(float s, uint32_t limit, Options o = {}) {
    o.registry = &registry;
    std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(y), rt::Arg::f32(s), rt::Arg::u32(limit)};
    return run(k, device, rt::Grid::for_lanes(k.kernel(), 256), args, o);
  }
};

} // namespace

TEST(Inconclusive, AConclusiveComparisonIsOk) {
  Fixture f;
  inputs::fill_random(f.x, 1);
  Report r = f.run_with(3.0f, 256);
  EXPECT_TRUE(r.ok()) << to_text(r);
  EXPECT_TRUE(r.inconclusive.empty());
  EXPECT_EQ(r.buffers.at(0).exact, 256u);
  EXPECT_NE(to_text(r).find("result: OK\n"), std::string::npos);
}

TEST(Inconclusive, AnOutputTheReferenceNeverWroteIsNotOk) {
  Fixture f;
  inputs::fill_random(f.x, 1);
  Report r = f.run_with(3.0f, 0); // the guard is never true
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.violations(), 0u);
  ASSERT_EQ(r.inconclusive.size(), 1u);
  EXPECT_EQ(r.inconclusive[0].buffer, "y");
  EXPECT_NE(r.inconclusive[0].reason.find("as it was before the launch"), std::string::npos);
  EXPECT_EQ(r.buffers.at(0).unchanged, 256u);
  std::string text = to_text(r);
  EXPECT_NE(text.find("inconclusive: y:"), std::string::npos) << text;
  EXPECT_NE(text.find("result: INCONCLUSIVE (1 inconclusive buffer)"), std::string::npos) << text;
  std::string json = to_json(r);
  EXPECT_NE(json.find("\"ok\": false"), std::string::npos) << json;
  EXPECT_NE(json.find("\"inconclusive\": [{\"buffer\": \"y\""), std::string::npos) << json;
}

TEST(Inconclusive, APartlyWrittenOutputIsConclusive) {
  Fixture f;
  inputs::fill_random(f.x, 1);
  Report r = f.run_with(3.0f, 1); // one element of 256 changes: that one proves something
  EXPECT_TRUE(r.ok()) << to_text(r);
  EXPECT_EQ(r.buffers.at(0).unchanged, 255u);
}

TEST(Inconclusive, AnAllNanReferenceIsNotOk) {
  Fixture f;
  inputs::fill_random(f.x, 1);
  Report r = f.run_with(std::numeric_limits<float>::quiet_NaN(), 256);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.buffers.at(0).reference_nan, 256u);
  ASSERT_EQ(r.inconclusive.size(), 1u);
  EXPECT_NE(r.inconclusive[0].reason.find("NaN"), std::string::npos);
}

TEST(Inconclusive, AnEmptyOutputIsNotOk) {
  Fixture f;
  f.y = rt::HostBuffer(ScalarType::F32, 0);
  Report r = f.run_with(3.0f, 0);
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.inconclusive.size(), 1u);
  EXPECT_NE(r.inconclusive[0].reason.find("no elements"), std::string::npos);
}

TEST(Inconclusive, AcceptingMakesItOkButStillVisible) {
  Fixture f;
  Options o;
  o.accept_inconclusive = true;
  Report r = f.run_with(3.0f, 0, o);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.inconclusive.size(), 1u);
  EXPECT_NE(to_text(r).find("result: OK, inconclusive accepted"), std::string::npos);
  EXPECT_NE(to_json(r).find("\"inconclusive_accepted\": true"), std::string::npos);
}

TEST(Inconclusive, AViolationStillFailsWhenAccepted) {
  policy::Registry registry;
  test::InterpDevice wrong("wrong", interp::NarrowingModel::TwoStep, registry, {},
                           [](const ir::Kernel&, std::span<const rt::Arg> args) {
                             args[1].buffer->set_bits(7, args[1].buffer->get_bits(7) ^ 1);
                           });
  ir::VerifiedKernel k = scale_below();
  rt::HostBuffer x(ScalarType::F32, 256), y(ScalarType::F32, 256);
  inputs::fill_random(x, 1);
  Options o;
  o.registry = &registry;
  o.accept_inconclusive = true;
  std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(y), rt::Arg::f32(2.0f), rt::Arg::u32(256)};
  Report r = run(k, wrong, rt::Grid::for_lanes(k.kernel(), 256), args, o);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.violations(), 1u);
}

TEST(Inconclusive, GeneratedFloatScalarsAreNotZero) {
  // A zero scale would make y = a*x + y compare nothing: make_inputs draws float scalars.
  ir::VerifiedKernel k = scale_below();
  auto in = inputs::make_inputs(k.kernel(), 256, inputs::Kind::Random, 5, {{"limit", 256}});
  EXPECT_NE(in.args[2].scalar, 0u);
  EXPECT_EQ(in.args[3].scalar, 256u);
}
