#include "halfway/ir/kernel.hpp"

#include <new>
#include <stdexcept>

namespace halfway::ir {

std::string_view name(Access a) {
  switch (a) {
  case Access::Read:
    return "read";
  case Access::Write:
    return "write";
  case Access::ReadWrite:
    return "read_write";
  }
  return "read";
}

ScalarType Kernel::element_type(Space space, uint32_t ref) const {
  return space == Space::Buffer ? params[ref].type : array(space, ref).type;
}

const std::string& Kernel::memory_name(Space space, uint32_t ref) const {
  return space == Space::Buffer ? params[ref].name : array(space, ref).name;
}

uint32_t Kernel::find_param(std::string_view n) const {
  for (uint32_t i = 0; i < params.size(); ++i)
    if (params[i].name == n)
      return i;
  return kNone;
}

std::vector<ExprId> stmt_exprs(const Stmt& s) {
  std::vector<ExprId> out;
  if (s.kind == StmtKind::Store) {
    for (ExprId e : {s.a, s.c, s.d, s.b})
      if (e != kNone)
        out.push_back(e);
    return out;
  }
  for (ExprId e : {s.a, s.b, s.c})
    if (e != kNone)
      out.push_back(e);
  return out;
}

// ---- Body ------------------------------------------------------------------------------------

// The allocation of a block: its size and capacity, then `capacity` slots for statements, the
// first `size` of them constructed. 32-bit counts keep the header at 8 bytes (a kernel's text is
// at most 16 MiB, and no builder comes near 2^32 statements in one block).
struct Body::Block {
  uint32_t size = 0;
  uint32_t capacity = 0;
  Stmt* items() { return reinterpret_cast<Stmt*>(this + 1); }
};

Body::Block* Body::reallocate(Block* old, size_t capacity) {
  static_assert(sizeof(Block) % alignof(Stmt) == 0, "the statements follow the header aligned");
  if (capacity > 0xffffffffu)
    throw std::length_error("a block of more than 2^32 - 1 statements");
  Block* b = new (::operator new(sizeof(Block) + capacity * sizeof(Stmt)))
      Block{0, static_cast<uint32_t>(capacity)};
  if (old) {
    // Stmt's move is noexcept: nothing below throws.
    for (uint32_t i = 0; i < old->size; ++i) {
      new (b->items() + i) Stmt(std::move(old->items()[i]));
      old->items()[i].~Stmt();
    }
    b->size = old->size;
    ::operator delete(static_cast<void*>(old));
  }
  return b;
}

size_t Body::size() const {
  return b_ ? b_->size : 0;
}
size_t Body::capacity() const {
  return b_ ? b_->capacity : 0;
}
Stmt* Body::begin() {
  return b_ ? b_->items() : nullptr;
}
Stmt* Body::end() {
  return b_ ? b_->items() + b_->size : nullptr;
}
const Stmt* Body::begin() const {
  return b_ ? b_->items() : nullptr;
}
const Stmt* Body::end() const {
  return b_ ? b_->items() + b_->size : nullptr;
}

Body::Body(std::initializer_list<Stmt> stmts) {
  reserve(stmts.size());
  for (const Stmt& s : stmts)
    push_back(s);
}

Body::Body(const Body& other) {
  reserve(other.size());
  for (const Stmt& s : other)
    push_back(s);
}

Body& Body::operator=(const Body& other) {
  if (this != &other)
    *this = Body(other);
  return *this;
}

Body& Body::operator=(Body&& other) noexcept {
  if (this != &other) {
    clear();
    b_ = other.b_;
    other.b_ = nullptr;
  }
  return *this;
}

Body::~Body() {
  clear();
}

void Body::clear() {
  if (!b_)
    return;
  for (uint32_t i = 0; i < b_->size; ++i)
    b_->items()[i].~Stmt();
  ::operator delete(static_cast<void*>(b_));
  b_ = nullptr;
}

void Body::reserve(size_t n) {
  if (n > capacity())
    b_ = reallocate(b_, n);
}

void Body::push_back(const Stmt& s) {
  push_back(Stmt(s)); // a copy first: `s` may be a statement of this block, which growth moves
}

void Body::push_back(Stmt&& s) {
  if (size() == capacity()) {
    Stmt keep(std::move(s)); // as above
    b_ = reallocate(b_, capacity() ? 2 * capacity() : 1);
    new (b_->items() + b_->size) Stmt(std::move(keep));
  } else {
    new (b_->items() + b_->size) Stmt(std::move(s));
  }
  ++b_->size;
}

void Body::pop_back() {
  b_->items()[--b_->size].~Stmt();
  if (b_->size == 0)
    clear();
}

Stmt* Body::insert(const Stmt* pos, Stmt s) {
  const size_t at = static_cast<size_t>(pos - begin());
  const size_t n = size();
  if (at == n) {
    push_back(std::move(s));
    return begin() + at;
  }
  push_back(std::move(back())); // a new last slot; then shift the rest right by one
  Stmt* items = b_->items();
  for (size_t i = n - 1; i > at; --i)
    items[i] = std::move(items[i - 1]);
  items[at] = std::move(s);
  return items + at;
}

Stmt* Body::erase(const Stmt* first, const Stmt* last) {
  const size_t from = static_cast<size_t>(first - begin());
  const size_t count = static_cast<size_t>(last - first);
  if (count == 0)
    return begin() + from;
  Stmt* items = b_->items();
  const size_t n = b_->size;
  for (size_t i = from + count; i < n; ++i)
    items[i - count] = std::move(items[i]);
  for (size_t i = n - count; i < n; ++i)
    items[i].~Stmt();
  b_->size = static_cast<uint32_t>(n - count);
  if (b_->size == 0) {
    clear();
    return nullptr;
  }
  return items + from;
}

} // namespace halfway::ir
