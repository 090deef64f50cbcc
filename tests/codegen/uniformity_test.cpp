// Lane uniformity as its two readers see it (ir/analysis/uniformity.hpp): the verifier, which
// refuses a barrier only part of a workgroup may reach, and the CPU code generator, which lifts
// the lets and assignments of uniform locals out of the lane loops (storage.hpp). Each kernel of
// the table states the verifier's verdict, the level of its locals and the locals the CPU
// backend keeps as one workgroup value; the test checks all three and that the two readers agree:
// the backend lifts only locals the verifier's analysis calls uniform and not read from memory.

#include "halfway/ir/analysis/uniformity.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/parse.hpp"
#include "storage.hpp"

#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>

namespace halfway {
namespace {

struct Case {
  const char* name;
  const char* body;      // statements of a kernel with the parameters and arrays of kernel_text
  bool accepted;         // whether the verifier accepts it
  const char* levels;    // "a:grid b:workgroup+memory c:lane": every local, by name
  const char* workgroup; // the locals the CPU backend keeps as one workgroup value
};

std::string kernel_text(const Case& c) {
  return std::string("kernel ") + c.name +
         " workgroup(64, 1, 1) {\n"
         "  param r: buffer<u32, read>;\n"
         "  param x: buffer<u32, read_write>;\n"
         "  param n: u32;\n"
         "  shared tile: u32[64];\n"
         "  let p: u32[4];\n" +
         c.body + "}\n";
}

// Barriers guard the statements that depend on a verdict, so that every case has one to judge.
const Case kCases[] = {
    {"tree_reduction",
     "  let s: u32 = 32:u32;\n"
     "  while gt(s, 0:u32) {\n"
     "    if lt(local_id(0), s) {\n"
     "      tile[local_id(0)] = add(tile[local_id(0)], tile[add(local_id(0), s)]);\n"
     "    }\n"
     "    barrier;\n"
     "    s = shr(s, 1:u32);\n"
     "  }\n",
     true, "s:grid", "s"},
    {"lane_if", "  if lt(local_id(0), 4:u32) {\n    barrier;\n  }\n", false, "", ""},
    {"group_if",
     "  let g: u32 = group_id(0);\n"
     "  if eq(g, 0:u32) {\n    barrier;\n  }\n",
     true, "g:workgroup", ""},
    {"lane_bound_through_local",
     "  let m: u32 = add(local_id(0), 1:u32);\n"
     "  for j: u32 = 0:u32 to m step 1:u32 {\n    barrier;\n  }\n",
     false, "m:lane j:lane", ""},
    {"divergent_return",
     "  if ge(global_id(0), n) {\n    return;\n  }\n"
     "  barrier;\n",
     false, "", ""},
    {"uniform_return",
     "  if eq(n, 0:u32) {\n    return;\n  }\n"
     "  barrier;\n",
     true, "", ""},
    // The rule the CPU backend's own copy lacked: the loop variable assigned a lane-variant
    // value makes the iteration count lane-dependent.
    {"for_variable_made_variant",
     "  for j: u32 = 0:u32 to 8:u32 step 1:u32 {\n"
     "    barrier;\n"
     "    j = add(j, local_id(0));\n"
     "  }\n",
     false, "j:lane", ""},
    {"counter_in_variant_for",
     "  let c: u32 = 0:u32;\n"
     "  for j: u32 = 0:u32 to 8:u32 step 1:u32 {\n"
     "    c = add(c, 1:u32);\n"
     "    j = add(j, local_id(0));\n"
     "  }\n"
     "  x[global_id(0)] = c;\n"
     "  barrier;\n",
     true, "c:lane j:lane", ""},
    {"read_buffer_uniform_index",
     "  let m: u32 = r[0:u32];\n"
     "  if gt(m, 0:u32) {\n    barrier;\n  }\n",
     true, "m:grid+memory", ""},
    // Where the copies disagreed: a buffer the kernel writes may change under the lanes' feet
    // (a barrier orders shared memory only), so its elements are lane-variant.
    {"written_buffer_uniform_index",
     "  let m: u32 = x[0:u32];\n"
     "  if gt(m, 0:u32) {\n    barrier;\n  }\n",
     false, "m:lane+memory", ""},
    {"shared_uniform_index",
     "  tile[local_id(0)] = local_id(0);\n"
     "  barrier;\n"
     "  let m: u32 = tile[0:u32];\n"
     "  if gt(m, 0:u32) {\n    barrier;\n  }\n",
     true, "m:workgroup+memory", ""},
    {"private_uniform_index",
     "  let m: u32 = p[0:u32];\n"
     "  if gt(m, 0:u32) {\n    barrier;\n  }\n",
     false, "m:lane+memory", ""},
    {"read_buffer_lane_index",
     "  let m: u32 = r[local_id(0)];\n"
     "  if gt(m, 0:u32) {\n    barrier;\n  }\n",
     false, "m:lane+memory", ""},
    {"atomic_result",
     "  let old: u32 = atomic_add(x[0:u32], 1:u32);\n"
     "  if eq(old, 0:u32) {\n    barrier;\n  }\n",
     false, "old:lane+memory", ""},
    {"atomic_without_result",
     "  atomic_add(x[0:u32], 1:u32);\n"
     "  barrier;\n",
     true, "", ""},
    {"lane_break",
     "  for j: u32 = 0:u32 to n step 1:u32 {\n"
     "    if lt(local_id(0), j) {\n      break;\n    }\n"
     "    barrier;\n"
     "  }\n",
     false, "j:lane", ""},
    {"uniform_break",
     "  for j: u32 = 0:u32 to 8:u32 step 1:u32 {\n"
     "    if gt(j, n) {\n      break;\n    }\n"
     "    barrier;\n"
     "  }\n",
     true, "j:grid", "j"},
    {"lane_continue",
     "  let i: u32 = 0:u32;\n"
     "  while lt(i, 8:u32) {\n"
     "    i = add(i, 1:u32);\n"
     "    if lt(local_id(0), i) {\n      continue;\n    }\n"
     "    barrier;\n"
     "  }\n",
     false, "i:lane", ""},
    {"assigned_under_lane_control",
     "  let f: u32 = 0:u32;\n"
     "  if lt(local_id(0), 4:u32) {\n    f = 1:u32;\n  }\n"
     "  if eq(f, 1:u32) {\n    barrier;\n  }\n",
     false, "f:lane", ""},
    {"assigned_under_group_control",
     "  let f: u32 = 0:u32;\n"
     "  if eq(group_id(0), 0:u32) {\n    f = 1:u32;\n  } else {\n    f = 2:u32;\n  }\n"
     "  if eq(f, 1:u32) {\n    barrier;\n  }\n",
     true, "f:workgroup", ""},
    {"lane_return_in_loop",
     "  for j: u32 = 0:u32 to 8:u32 step 1:u32 {\n"
     "    barrier;\n"
     "    if eq(local_id(0), j) {\n      return;\n    }\n"
     "  }\n",
     false, "j:lane", ""},
    {"lane_if_inside_uniform_loop",
     "  let s: u32 = 4:u32;\n"
     "  while gt(s, 0:u32) {\n"
     "    let t: u32 = local_id(0);\n"
     "    if lt(t, s) {\n      x[t] = s;\n    }\n"
     "    barrier;\n"
     "    s = sub(s, 1:u32);\n"
     "  }\n",
     true, "s:grid t:lane", "s"},
    {"select_of_lane_id",
     "  if eq(select(gt(n, 0:u32), local_id(0), 0:u32), 0:u32) {\n    barrier;\n  }\n", false, "",
     ""},
    {"group_bound_for", "  for j: u32 = 0:u32 to group_id(0) step 1:u32 {\n    barrier;\n  }\n",
     true, "j:workgroup", "j"},
    // Flow-insensitive, hence conservative: the later lane-variant assignment taints the local
    // at the barrier's loop too.
    {"assigned_variant_after_loop",
     "  let v: u32 = 0:u32;\n"
     "  while lt(v, 4:u32) {\n    barrier;\n    v = add(v, 1:u32);\n  }\n"
     "  v = local_id(0);\n"
     "  x[v] = v;\n",
     false, "v:lane", ""},
    {"uniform_value_no_barrier_needed",
     "  let a: u32 = mul(n, 2:u32);\n"
     "  a = add(a, num_groups(0));\n"
     "  x[global_id(0)] = a;\n"
     "  barrier;\n",
     true, "a:grid", "a"},
};

std::map<std::string, std::string> parse_levels(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string item; in >> item;) {
    auto colon = item.find(':');
    out[item.substr(0, colon)] = item.substr(colon + 1);
  }
  return out;
}

std::string level_text(ir::UniformValue v) {
  return std::string(ir::name(v.level)) + (v.memory ? "+memory" : "");
}

TEST(Uniformity, TableOfKernels) {
  ASSERT_GE(std::size(kCases), 20u);
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    std::vector<ir::Kernel> parsed = text::parse_kernels(kernel_text(c), std::string(c.name));
    ASSERT_EQ(parsed.size(), 1u);
    const ir::Kernel& k = parsed[0];
    const ir::UniformityAnalysis analysis(k);

    std::map<std::string, std::string> levels;
    for (uint32_t l = 0; l < k.locals.size(); ++l)
      levels[k.locals[l].name] = level_text(analysis.local(l));
    EXPECT_EQ(levels, parse_levels(c.levels));

    std::optional<ir::VerifiedKernel> verified;
    try {
      verified = ir::verify(k);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Verify);
      EXPECT_NE(std::string(e.what()).find("barrier in non-uniform control flow"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(verified.has_value(), c.accepted);
    EXPECT_EQ(analysis.divergent_barrier() == nullptr, c.accepted);
    if (!verified)
      continue;

    const codegen::llvm::detail::StoragePlan plan =
        codegen::llvm::detail::plan_storage(verified->kernel());
    std::set<std::string> workgroup, expected;
    for (uint32_t l = 0; l < k.locals.size(); ++l) {
      if (plan.storage[l] != codegen::llvm::detail::LocalStorage::Workgroup)
        continue;
      workgroup.insert(k.locals[l].name);
      // The backend's verdict agrees with the verifier's analysis: a workgroup value is uniform.
      EXPECT_NE(analysis.local(l).level, ir::Uniformity::Lane) << k.locals[l].name;
    }
    std::istringstream in(c.workgroup);
    for (std::string name; in >> name;)
      expected.insert(name);
    EXPECT_EQ(workgroup, expected);
    // Every statement lifted out of the lane loops assigns a uniform local not read from memory.
    for (const ir::Stmt* s : plan.hoisted) {
      EXPECT_NE(analysis.local(s->local).level, ir::Uniformity::Lane);
      EXPECT_FALSE(analysis.local(s->local).memory);
    }
  }
}

// LoadLevel::Address: what an optimiser may take as one value for every lane. Loads are as
// uniform as their address whatever the memory (but a private array is per lane), and an id of
// a dimension with one lane is as uniform as the group id. The CPU code generator asks it where
// LLVM 19 miscompiles a uniform division under control flow (lower_lanes.cpp).
TEST(Uniformity, AddressLevel) {
  const Case c{"address",
               "  let w: u32 = x[0:u32];\n"
               "  let v: u32 = x[local_id(0)];\n"
               "  let q: u32 = p[0:u32];\n"
               "  let y1: u32 = local_id(1);\n"
               "  let g1: u32 = global_id(1);\n"
               "  let s: u32 = tile[3:u32];\n"
               "  let d: u32 = div(n, max(w, 1:u32));\n",
               true, "", ""};
  std::vector<ir::Kernel> parsed = text::parse_kernels(kernel_text(c), "address");
  ASSERT_EQ(parsed.size(), 1u);
  const ir::Kernel& k = parsed[0];
  const ir::UniformityAnalysis visible(k);
  const ir::UniformityAnalysis address(k, ir::LoadLevel::Address);
  std::map<std::string, std::string> levels_visible, levels_address;
  for (uint32_t l = 0; l < k.locals.size(); ++l) {
    if (k.locals[l].name == "p")
      continue;
    levels_visible[k.locals[l].name] = level_text(visible.local(l));
    levels_address[k.locals[l].name] = level_text(address.local(l));
  }
  EXPECT_EQ(levels_visible, parse_levels("w:lane+memory v:lane+memory q:lane+memory y1:lane "
                                         "g1:lane s:workgroup+memory d:lane+memory"));
  EXPECT_EQ(levels_address,
            parse_levels("w:grid+memory v:lane+memory q:lane+memory y1:grid g1:workgroup "
                         "s:workgroup+memory d:grid+memory"));
}

} // namespace
} // namespace halfway
