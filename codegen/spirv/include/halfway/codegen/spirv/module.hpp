#pragma once
// A small SPIR-V module builder: ids, deduplicated types and constants, the module's sections in
// the order the specification requires, and one function body. Opcodes and enums come from
// SPIRV-Headers (spirv.hpp11); nothing here knows about the halfway IR.
//
// Capabilities are derived from what was emitted, not declared by hand:
//  - 64-bit int / float types: Int64 / Float64 as soon as the type is declared;
//  - 8- and 16-bit types: a storage buffer holding them needs StorageBuffer8/16BitAccess, and any
//    other use (arithmetic, constants, variables, comparisons) needs Int8 / Int16 / Float16. The
//    "limited uses" SPIR-V allows under the storage capabilities alone are loads, stores, access
//    chains and width-only conversions (OpUConvert, OpSConvert, OpFConvert); op() checks every
//    instruction's result and operand types against that list.
// So a kernel that only loads f16 and widens it declares StorageBuffer16BitAccess and not Float16,
// exactly as glslang does for float16_t storage.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <span>
#include <spirv/unified1/spirv.hpp11>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace halfway::codegen::spirv {

// What an emitted module asks of the device (filled by the builder as it emits).
struct CapabilityUse {
  bool float16 = false, int8 = false, int16 = false, int64 = false, float64 = false;
  bool storage_buffer_16bit = false, storage_buffer_8bit = false;
  bool int64_atomics = false;
};

class ModuleBuilder {
public:
  ModuleBuilder();

  uint32_t fresh_id() { return next_id_++; }

  // ---- types (deduplicated) -------------------------------------------------------------------
  uint32_t type_void();
  uint32_t type_bool();
  uint32_t type_int(uint32_t width, bool is_signed);
  uint32_t type_float(uint32_t width);
  uint32_t type_vector(uint32_t component, uint32_t count);
  uint32_t type_pointer(spv::StorageClass storage, uint32_t pointee);
  uint32_t type_array(uint32_t element, uint32_t length);
  // A runtime array with its ArrayStride decoration.
  uint32_t type_runtime_array(uint32_t element, uint32_t stride);
  // A fresh struct each call (Block structs carry per-struct decorations).
  uint32_t type_struct(std::span<const uint32_t> members);
  uint32_t type_function(uint32_t result, std::span<const uint32_t> params = {});

  // Facts about a type id made here.
  uint32_t scalar_width(uint32_t type) const; // 0 for non-numeric types
  // The type of a result id made by op(), constant() or a variable; 0 if unknown.
  uint32_t type_of(uint32_t id) const;
  // Whether a float type / an integer type (either signedness) of this width was declared.
  bool declared_float(uint32_t width) const;
  bool declared_int(uint32_t width) const;

  // ---- constants (deduplicated by type and bits) --------------------------------------------
  uint32_t constant(uint32_t type, uint64_t bits);
  uint32_t constant_bool(bool value);
  uint32_t constant_u32(uint32_t v) { return constant(type_int(32, false), v); }
  uint32_t constant_i32(int32_t v) {
    return constant(type_int(32, true), static_cast<uint32_t>(v));
  }
  uint32_t constant_f32(float v);
  uint32_t constant_f64(double v);
  uint32_t constant_null(uint32_t type);

  // ---- module-level sections ---------------------------------------------------------------
  void capability(spv::Capability c) { capabilities_.insert(c); }
  void extension(std::string_view name) { extensions_.insert(std::string(name)); }
  uint32_t import_glsl();
  void entry_point(uint32_t function, std::string_view name, std::span<const uint32_t> interface);
  void execution_mode(uint32_t function, spv::ExecutionMode mode,
                      std::initializer_list<uint32_t> literals = {});
  void name(uint32_t id, std::string_view text);
  void decorate(uint32_t id, spv::Decoration d, std::initializer_list<uint32_t> literals = {});
  void member_decorate(uint32_t type, uint32_t member, spv::Decoration d,
                       std::initializer_list<uint32_t> literals = {});
  uint32_t global_variable(uint32_t pointer_type, spv::StorageClass storage);
  // The same with an id reserved earlier by fresh_id() (for variables used before declared).
  void global_variable_with_id(uint32_t id, uint32_t pointer_type, spv::StorageClass storage);
  // Marks a storage-buffer block's element width, for the 8/16-bit storage capabilities.
  void note_storage_buffer_element(uint32_t element_type);
  void note_int64_atomic() { use_.int64_atomics = true; }

  // ---- function body -------------------------------------------------------------------------
  // Where op() and friends append: the function's variables, a prologue that runs first in the
  // entry block, or the body (the rest of the entry block and every later block).
  enum class Stream { Variables, Prologue, Body };
  void set_stream(Stream s) { stream_ = s; }
  Stream stream() const { return stream_; }

  // An instruction whose operands (after result type and id) are all ids. Returns the result id,
  // or 0 for an instruction without result (pass result_type 0 and has_result false).
  uint32_t op(spv::Op opcode, uint32_t result_type, std::initializer_list<uint32_t> ids);
  // The same with trailing literal words (OpCompositeExtract indices, memory operands...).
  uint32_t op_lit(spv::Op opcode, uint32_t result_type, std::initializer_list<uint32_t> ids,
                  std::initializer_list<uint32_t> literals);
  // An instruction without result type or id: raw operand words.
  void op_void(spv::Op opcode, std::initializer_list<uint32_t> words);
  uint32_t ext_glsl(uint32_t result_type, uint32_t instruction,
                    std::initializer_list<uint32_t> ids);
  uint32_t local_variable(uint32_t pointer_type); // Function storage, in the Variables stream
  void label(uint32_t id);

  // Wraps the collected streams into `function` (returning void, no parameters) and closes it.
  void finish_function(uint32_t function_id, uint32_t entry_label);

  // The module's words. `version` e.g. 0x00010300 for SPIR-V 1.3.
  std::vector<uint32_t> assemble(uint32_t version);

  const CapabilityUse& use() const { return use_; }

private:
  enum class Small : uint8_t { None, F16, I8, I16 };
  Small small_kind(uint32_t type) const;
  void check_small_use(spv::Op opcode, uint32_t result_type, std::initializer_list<uint32_t> ids);
  void flag_small(Small s);
  std::vector<uint32_t>& out();
  static void emit(std::vector<uint32_t>& section, spv::Op opcode,
                   std::initializer_list<uint32_t> words);
  uint32_t declare_type(std::vector<uint32_t> key, spv::Op opcode);

  uint32_t next_id_ = 1;
  std::set<spv::Capability> capabilities_;
  std::set<std::string> extensions_;
  uint32_t glsl_ = 0;
  std::vector<uint32_t> entry_points_, execution_modes_, debug_names_, annotations_, globals_;
  std::vector<uint32_t> functions_;
  std::vector<uint32_t> variables_, prologue_, body_;
  Stream stream_ = Stream::Body;

  std::map<std::vector<uint32_t>, uint32_t> types_; // opcode + operands -> id
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> constants_;
  std::map<uint32_t, uint32_t> nulls_;
  uint32_t true_ = 0, false_ = 0;
  std::unordered_map<uint32_t, uint32_t> type_of_; // result id -> type id
  std::unordered_map<uint32_t, uint32_t> width_;   // numeric scalar/vector type -> width
  std::unordered_map<uint32_t, Small> small_;      // type -> small kind (incl. vectors)
  std::set<uint32_t> signed_int_;                  // signed integer scalar types
  CapabilityUse use_;
};

// Appends a SPIR-V literal string (nul-terminated, padded to words).
void append_string(std::vector<uint32_t>& words, std::string_view text);

} // namespace halfway::codegen::spirv
