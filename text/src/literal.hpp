#pragma once
// Constants and type names of the text form. A float constant must name exactly one value of its
// type: the printer writes the shortest text that reads back through float (f32 and narrower) or
// double (f64), so the parser reads it back the same way and refuses text that would need a
// rounding the writer did not see, e.g. 0.1:f16.

#include "ast.hpp"
#include "halfway/ir/types.hpp"
#include "source.hpp"

#include <cstdint>
#include <optional>

namespace halfway::text {

// The scalar type a word names; a Parse error listing the types otherwise.
ir::ScalarType scalar_type(const Source& source, const ast::Word& word);

// The bit pattern of a constant of the given type (its suffix already resolved).
uint64_t literal_bits(const Source& source, const ast::Literal& literal, ir::ScalarType type);

// The pattern of `v` in a float type when v is exactly one of its values (zeros keep their sign,
// infinities map to the type's infinity where it has one); nullopt otherwise and for NaN.
std::optional<uint64_t> exact_float_bits(ir::ScalarType type, double v);

} // namespace halfway::text
