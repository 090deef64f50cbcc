#pragma once
// The kernel IR: parameters, shared arrays, locals, an arena of expression nodes and a tree of
// structured statements. Expressions are pure (loads read memory but never write it) and are
// evaluated as trees: a node shared by two parents means the same computation twice, so sharing
// is only a way to save memory and never changes meaning, the printed text or the hash.

#include "halfway/ir/ops.hpp"
#include "halfway/ir/types.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace halfway::ir {

using ExprId = uint32_t;
inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

enum class Access : uint8_t { Read, Write, ReadWrite };
std::string_view name(Access a);

// Where a load, store or atomic goes: a buffer parameter, a workgroup-shared array or a private
// (per-lane) array.
enum class Space : uint8_t { Buffer, Shared, Private };

struct Param {
  enum class Kind : uint8_t { Buffer, Scalar };
  std::string name;
  Kind kind = Kind::Scalar;
  ScalarType type = ScalarType::F32; // element type of a buffer, or the scalar's type
  Access access = Access::Read;      // buffers only
  bool is_buffer() const { return kind == Kind::Buffer; }
};

// A shared or private array of rank 1 to 3. `size` is the element count (the product of the
// dimensions) so that code indifferent to the shape reads one number. A rank-1 array has `dims`
// all 0 (its one dimension is `size`); a rank-2 or rank-3 array lists its dimensions, outermost
// first, and 0 past its rank. One spelling per shape keeps the IR canonical: the verifier
// refuses any other, so that equal text means equal kernels. Elements are stored row-major:
// a[i][j][k] is element (i * d1 + j) * d2 + k.
struct SharedArray {
  std::string name;
  ScalarType type = ScalarType::F32;
  uint32_t size = 0;
  std::array<uint32_t, 3> dims{0, 0, 0};

  uint32_t rank() const { return dims[0] == 0 ? 1 : dims[2] != 0 ? 3 : dims[1] != 0 ? 2 : 1; }
  uint32_t dim(uint32_t d) const { return dims[0] == 0 ? size : dims[d]; }
};
// Private arrays have the same shape description; each lane has its own copy.
using PrivateArray = SharedArray;

struct Local {
  std::string name;
  ScalarType type = ScalarType::F32;
};

// The fields are ordered so that the small ones share words (40 bytes: parsed text of the densest
// kind holds an Expr per 2 to 3 bytes, specs/ir-text.md), keeping op, type, nargs, args first for
// code that builds an Expr as {op, type, nargs, args}.
struct Expr {
  Op op = Op::Const;
  ScalarType type = ScalarType::F32; // result type
  uint8_t nargs = 0;
  std::array<ExprId, 4> args{kNone, kNone, kNone, kNone};
  Space space = Space::Buffer;                       // Load (nargs = the array's rank), BufferLen
  RoundingMode rounding = RoundingMode::NearestEven; // Convert
  bool saturate = false;            // Convert to fp8/ints: clamp instead of NaN/wrap
  ScalarType aux = ScalarType::F16; // Pack / Unpack element format
  // LocalGet: local id. ParamGet: param id. Load / BufferLen: param, shared- or private-array id.
  uint32_t ref = kNone;
  uint32_t line = 0; // source line, for kernels parsed from text
  // Const: the value's bit pattern (bool: 0/1). Builtins: the dimension. Unpack: the lane.
  uint64_t imm = 0;
};
static_assert(sizeof(Expr) <= 40);

enum class StmtKind : uint8_t {
  Let,    // local = a (declares the local)
  Assign, // local = a
  Store,  // mem[a] = b; on a rank-2 or rank-3 array mem[a][c] = b, mem[a][c][d] = b
  Atomic, // [local =] atomic(mem[a], b [, c]) : c is the comparand of compare-exchange; rank-1
          // buffers and shared arrays only
  If,     // if a { body } else { else_body }
  For,    // for local = a; local < b; local += c { body } (declares the local)
  While,  // while a { body }
  Break,
  Continue,
  Barrier, // workgroup execution and shared-memory barrier
  Return,  // ends the lane
};

struct Stmt;

// A block of statements: the body of a kernel, an if, a loop or an else. It has the interface of
// a std::vector<Stmt> that the code uses, but is one pointer, null while the block is empty, to one
// allocation holding the size, the capacity and the statements: most statements have no block,
// and parsed text of the densest kind holds a statement per 4 bytes (specs/ir-text.md), so two
// inline vectors (48 bytes) would be most of a statement's size. Iterators are pointers into the
// block; like a vector's, they are invalidated by growth. The members are out of line, so that
// the layout of a block can change without rebuilding what uses it.
class Body {
public:
  using value_type = Stmt;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = Stmt&;
  using const_reference = const Stmt&;
  using iterator = Stmt*;
  using const_iterator = const Stmt*;

  Body() = default;
  Body(std::initializer_list<Stmt> stmts);
  Body(const Body& other);
  Body(Body&& other) noexcept : b_(other.b_) { other.b_ = nullptr; }
  Body& operator=(const Body& other);
  Body& operator=(Body&& other) noexcept;
  ~Body();

  size_t size() const;
  bool empty() const { return size() == 0; }
  Stmt* begin();
  Stmt* end();
  const Stmt* begin() const;
  const Stmt* end() const;
  Stmt& operator[](size_t i);
  const Stmt& operator[](size_t i) const;
  Stmt& front() { return *begin(); }
  const Stmt& front() const { return *begin(); }
  Stmt& back();
  const Stmt& back() const;

  void push_back(const Stmt& s);
  void push_back(Stmt&& s);
  void pop_back();
  Stmt* insert(const Stmt* pos, Stmt s);
  template <class It> Stmt* insert(const Stmt* pos, It first, It last);
  Stmt* erase(const Stmt* pos);
  Stmt* erase(const Stmt* first, const Stmt* last);
  // Room for n statements, exactly: a parsed block knows its size.
  void reserve(size_t n);
  void clear();

private:
  struct Block;
  static Block* reallocate(Block* old, size_t capacity);
  size_t capacity() const;
  Block* b_ = nullptr; // null while the block has no statement and no reserved room
};

// Ordered like Expr, so that no field pads: 48 bytes.
struct Stmt {
  StmtKind kind = StmtKind::Barrier;
  Space space = Space::Buffer;
  AtomicOp atomic = AtomicOp::Add;
  uint32_t local = kNone; // Let, Assign, For, Atomic (kNone: result unused)
  uint32_t mem = kNone;   // Store, Atomic: param, shared- or private-array id
  ExprId a = kNone, b = kNone, c = kNone;
  uint32_t line = 0;
  ExprId d = kNone; // Store to a rank-3 array: the third index
  Body body, else_body;
};
static_assert(sizeof(Stmt) <= 48);

inline Stmt& Body::operator[](size_t i) {
  return begin()[i];
}
inline const Stmt& Body::operator[](size_t i) const {
  return begin()[i];
}
inline Stmt& Body::back() {
  return end()[-1];
}
inline const Stmt& Body::back() const {
  return end()[-1];
}
inline Stmt* Body::erase(const Stmt* pos) {
  return erase(pos, pos + 1);
}
template <class It> Stmt* Body::insert(const Stmt* pos, It first, It last) {
  const auto at = pos - begin();
  auto i = at;
  for (; first != last; ++first, ++i)
    insert(begin() + i, *first);
  return begin() + at;
}

struct Kernel {
  std::string name;
  std::array<uint32_t, 3> workgroup{1, 1, 1};
  std::vector<Param> params;
  std::vector<SharedArray> shared;
  // Per-lane arrays, zero at the start of every lane (specs/ir.md).
  std::vector<PrivateArray> privates;
  std::vector<Local> locals;
  std::vector<Expr> exprs;
  Body body;

  const Expr& expr(ExprId id) const { return exprs[id]; }
  // The lanes of one workgroup; saturates at 2^32 - 1 instead of wrapping (a verified kernel
  // has at most kMaxWorkgroupLanes, verifier.hpp).
  uint32_t workgroup_lanes() const {
    const uint64_t xy = uint64_t{workgroup[0]} * workgroup[1];
    uint64_t xyz = 0;
    if (__builtin_mul_overflow(xy, uint64_t{workgroup[2]}, &xyz) || xyz > 0xffffffffull)
      return 0xffffffffu;
    return static_cast<uint32_t>(xyz);
  }
  ExprId add(Expr e) {
    exprs.push_back(e);
    return static_cast<ExprId>(exprs.size() - 1);
  }
  // The element type and name of a memory reference.
  ScalarType element_type(Space space, uint32_t ref) const;
  const std::string& memory_name(Space space, uint32_t ref) const;
  // The shared or private array a memory reference names (not for buffers).
  const SharedArray& array(Space space, uint32_t ref) const {
    return space == Space::Private ? privates[ref] : shared[ref];
  }
  // Index of the named parameter, or kNone.
  uint32_t find_param(std::string_view name) const;
};

// Calls f(stmt) for every statement, depth first, in program order.
template <class F> void for_each_stmt(const Body& block, F&& f) {
  for (const Stmt& s : block) {
    f(s);
    for_each_stmt(s.body, f);
    for_each_stmt(s.else_body, f);
  }
}

// The expression roots of a statement, in evaluation order (a store: its indices, then the value).
std::vector<ExprId> stmt_exprs(const Stmt& s);
// The index expressions of a store (1 to 3: a, then c and d on rank-2 and rank-3 arrays).
inline std::array<ExprId, 3> store_indices(const Stmt& s) {
  return {s.a, s.kind == StmtKind::Store ? s.c : kNone, s.d};
}

} // namespace halfway::ir
