#include "halfway/codegen/spirv/module.hpp"

#include <bit>
#include <cstring>

namespace halfway::codegen::spirv {

void append_string(std::vector<uint32_t>& words, std::string_view text) {
  const size_t n = text.size() / 4 + 1; // always room for the terminating nul
  size_t start = words.size();
  words.resize(start + n, 0);
  std::memcpy(words.data() + start, text.data(), text.size());
}

ModuleBuilder::ModuleBuilder() = default;

void ModuleBuilder::emit(std::vector<uint32_t>& section, spv::Op opcode,
                         std::initializer_list<uint32_t> words) {
  section.push_back(static_cast<uint32_t>((words.size() + 1) << 16) |
                    static_cast<uint32_t>(opcode));
  section.insert(section.end(), words.begin(), words.end());
}

std::vector<uint32_t>& ModuleBuilder::out() {
  switch (stream_) {
  case Stream::Variables:
    return variables_;
  case Stream::Prologue:
    return prologue_;
  case Stream::Body:
    break;
  }
  return body_;
}

// ---- types --------------------------------------------------------------------------------------

uint32_t ModuleBuilder::declare_type(std::vector<uint32_t> key, spv::Op opcode) {
  key.insert(key.begin(), static_cast<uint32_t>(opcode));
  auto it = types_.find(key);
  if (it != types_.end())
    return it->second;
  uint32_t id = fresh_id();
  globals_.push_back(static_cast<uint32_t>((key.size() + 1) << 16) | static_cast<uint32_t>(opcode));
  globals_.push_back(id);
  globals_.insert(globals_.end(), key.begin() + 1, key.end());
  types_.emplace(std::move(key), id);
  return id;
}

uint32_t ModuleBuilder::type_void() {
  return declare_type({}, spv::Op::OpTypeVoid);
}
uint32_t ModuleBuilder::type_bool() {
  return declare_type({}, spv::Op::OpTypeBool);
}

uint32_t ModuleBuilder::type_int(uint32_t width, bool is_signed) {
  uint32_t id = declare_type({width, is_signed ? 1u : 0u}, spv::Op::OpTypeInt);
  width_[id] = width;
  if (is_signed)
    signed_int_.insert(id);
  if (width == 64) {
    use_.int64 = true;
  } else if (width == 16) {
    small_[id] = Small::I16;
  } else if (width == 8) {
    small_[id] = Small::I8;
  }
  return id;
}

uint32_t ModuleBuilder::type_float(uint32_t width) {
  uint32_t id = declare_type({width}, spv::Op::OpTypeFloat);
  width_[id] = width;
  if (width == 64)
    use_.float64 = true;
  if (width == 16)
    small_[id] = Small::F16;
  return id;
}

uint32_t ModuleBuilder::type_vector(uint32_t component, uint32_t count) {
  uint32_t id = declare_type({component, count}, spv::Op::OpTypeVector);
  if (auto w = width_.find(component); w != width_.end())
    width_[id] = w->second;
  if (auto s = small_.find(component); s != small_.end())
    small_[id] = s->second;
  return id;
}

uint32_t ModuleBuilder::type_pointer(spv::StorageClass storage, uint32_t pointee) {
  return declare_type({static_cast<uint32_t>(storage), pointee}, spv::Op::OpTypePointer);
}

uint32_t ModuleBuilder::type_array(uint32_t element, uint32_t length) {
  return declare_type({element, constant_u32(length)}, spv::Op::OpTypeArray);
}

uint32_t ModuleBuilder::type_runtime_array(uint32_t element, uint32_t stride) {
  auto key = std::vector<uint32_t>{static_cast<uint32_t>(spv::Op::OpTypeRuntimeArray), element};
  bool fresh = types_.find(key) == types_.end();
  uint32_t id = declare_type({element}, spv::Op::OpTypeRuntimeArray);
  if (fresh)
    decorate(id, spv::Decoration::ArrayStride, {stride});
  return id;
}

uint32_t ModuleBuilder::type_struct(std::span<const uint32_t> members) {
  uint32_t id = fresh_id();
  globals_.push_back(static_cast<uint32_t>((members.size() + 2) << 16) |
                     static_cast<uint32_t>(spv::Op::OpTypeStruct));
  globals_.push_back(id);
  globals_.insert(globals_.end(), members.begin(), members.end());
  return id;
}

uint32_t ModuleBuilder::type_function(uint32_t result, std::span<const uint32_t> params) {
  std::vector<uint32_t> key{result};
  key.insert(key.end(), params.begin(), params.end());
  return declare_type(std::move(key), spv::Op::OpTypeFunction);
}

uint32_t ModuleBuilder::scalar_width(uint32_t type) const {
  auto it = width_.find(type);
  return it == width_.end() ? 0 : it->second;
}

uint32_t ModuleBuilder::type_of(uint32_t id) const {
  auto it = type_of_.find(id);
  return it == type_of_.end() ? 0 : it->second;
}

bool ModuleBuilder::declared_float(uint32_t width) const {
  return types_.count({static_cast<uint32_t>(spv::Op::OpTypeFloat), width}) > 0;
}

bool ModuleBuilder::declared_int(uint32_t width) const {
  return types_.count({static_cast<uint32_t>(spv::Op::OpTypeInt), width, 0u}) > 0 ||
         types_.count({static_cast<uint32_t>(spv::Op::OpTypeInt), width, 1u}) > 0;
}

// ---- constants ----------------------------------------------------------------------------------

uint32_t ModuleBuilder::constant(uint32_t type, uint64_t bits) {
  if (uint32_t w = scalar_width(type); w > 0 && w < 64)
    bits &= (uint64_t{1} << w) - 1;
  auto key = std::make_pair(type, bits);
  if (auto it = constants_.find(key); it != constants_.end())
    return it->second;
  uint32_t id = fresh_id();
  uint32_t width = scalar_width(type);
  if (width == 64) {
    emit(globals_, spv::Op::OpConstant,
         {type, id, static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)});
  } else {
    uint32_t word = static_cast<uint32_t>(bits);
    if (width < 32) {
      word &= (1u << width) - 1;
      // Signed integer literals narrower than a word are sign-extended.
      if (signed_int_.count(type) && (word >> (width - 1)) != 0)
        word |= ~((1u << width) - 1);
    }
    emit(globals_, spv::Op::OpConstant, {type, id, word});
  }
  flag_small(small_kind(type));
  type_of_[id] = type;
  constants_.emplace(key, id);
  return id;
}

uint32_t ModuleBuilder::constant_bool(bool value) {
  uint32_t& slot = value ? true_ : false_;
  if (slot == 0) {
    slot = fresh_id();
    emit(globals_, value ? spv::Op::OpConstantTrue : spv::Op::OpConstantFalse, {type_bool(), slot});
    type_of_[slot] = type_bool();
  }
  return slot;
}

uint32_t ModuleBuilder::constant_f32(float v) {
  return constant(type_float(32), std::bit_cast<uint32_t>(v));
}
uint32_t ModuleBuilder::constant_f64(double v) {
  return constant(type_float(64), std::bit_cast<uint64_t>(v));
}

uint32_t ModuleBuilder::constant_null(uint32_t type) {
  if (auto it = nulls_.find(type); it != nulls_.end())
    return it->second;
  uint32_t id = fresh_id();
  emit(globals_, spv::Op::OpConstantNull, {type, id});
  flag_small(small_kind(type));
  type_of_[id] = type;
  nulls_.emplace(type, id);
  return id;
}

// ---- module-level sections ----------------------------------------------------------------------

uint32_t ModuleBuilder::import_glsl() {
  if (glsl_ == 0)
    glsl_ = fresh_id();
  return glsl_;
}

void ModuleBuilder::entry_point(uint32_t function, std::string_view name,
                                std::span<const uint32_t> interface) {
  std::vector<uint32_t> words{static_cast<uint32_t>(spv::ExecutionModel::GLCompute), function};
  append_string(words, name);
  words.insert(words.end(), interface.begin(), interface.end());
  entry_points_.push_back(static_cast<uint32_t>((words.size() + 1) << 16) |
                          static_cast<uint32_t>(spv::Op::OpEntryPoint));
  entry_points_.insert(entry_points_.end(), words.begin(), words.end());
}

void ModuleBuilder::execution_mode(uint32_t function, spv::ExecutionMode mode,
                                   std::initializer_list<uint32_t> literals) {
  execution_modes_.push_back(static_cast<uint32_t>((literals.size() + 3) << 16) |
                             static_cast<uint32_t>(spv::Op::OpExecutionMode));
  execution_modes_.push_back(function);
  execution_modes_.push_back(static_cast<uint32_t>(mode));
  execution_modes_.insert(execution_modes_.end(), literals.begin(), literals.end());
}

void ModuleBuilder::name(uint32_t id, std::string_view text) {
  std::vector<uint32_t> words{id};
  append_string(words, text);
  debug_names_.push_back(static_cast<uint32_t>((words.size() + 1) << 16) |
                         static_cast<uint32_t>(spv::Op::OpName));
  debug_names_.insert(debug_names_.end(), words.begin(), words.end());
}

void ModuleBuilder::decorate(uint32_t id, spv::Decoration d,
                             std::initializer_list<uint32_t> literals) {
  annotations_.push_back(static_cast<uint32_t>((literals.size() + 3) << 16) |
                         static_cast<uint32_t>(spv::Op::OpDecorate));
  annotations_.push_back(id);
  annotations_.push_back(static_cast<uint32_t>(d));
  annotations_.insert(annotations_.end(), literals.begin(), literals.end());
}

void ModuleBuilder::member_decorate(uint32_t type, uint32_t member, spv::Decoration d,
                                    std::initializer_list<uint32_t> literals) {
  annotations_.push_back(static_cast<uint32_t>((literals.size() + 4) << 16) |
                         static_cast<uint32_t>(spv::Op::OpMemberDecorate));
  annotations_.push_back(type);
  annotations_.push_back(member);
  annotations_.push_back(static_cast<uint32_t>(d));
  annotations_.insert(annotations_.end(), literals.begin(), literals.end());
}

uint32_t ModuleBuilder::global_variable(uint32_t pointer_type, spv::StorageClass storage) {
  uint32_t id = fresh_id();
  global_variable_with_id(id, pointer_type, storage);
  return id;
}

void ModuleBuilder::global_variable_with_id(uint32_t id, uint32_t pointer_type,
                                            spv::StorageClass storage) {
  emit(globals_, spv::Op::OpVariable, {pointer_type, id, static_cast<uint32_t>(storage)});
  type_of_[id] = pointer_type;
}

void ModuleBuilder::note_storage_buffer_element(uint32_t element_type) {
  uint32_t w = scalar_width(element_type);
  if (w == 16)
    use_.storage_buffer_16bit = true;
  if (w == 8)
    use_.storage_buffer_8bit = true;
}

// ---- small types --------------------------------------------------------------------------------

ModuleBuilder::Small ModuleBuilder::small_kind(uint32_t type) const {
  auto it = small_.find(type);
  return it == small_.end() ? Small::None : it->second;
}

void ModuleBuilder::flag_small(Small s) {
  switch (s) {
  case Small::F16:
    use_.float16 = true;
    break;
  case Small::I8:
    use_.int8 = true;
    break;
  case Small::I16:
    use_.int16 = true;
    break;
  case Small::None:
    break;
  }
}

void ModuleBuilder::check_small_use(spv::Op opcode, uint32_t result_type,
                                    std::initializer_list<uint32_t> ids) {
  switch (opcode) {
  case spv::Op::OpLoad:
  case spv::Op::OpStore:
  case spv::Op::OpAccessChain:
  case spv::Op::OpCopyObject:
  case spv::Op::OpUConvert:
  case spv::Op::OpSConvert:
  case spv::Op::OpFConvert:
    return; // the uses 8/16-bit storage allows
  default:
    break;
  }
  flag_small(small_kind(result_type));
  for (uint32_t id : ids)
    flag_small(small_kind(type_of(id)));
}

// ---- function body ------------------------------------------------------------------------------

uint32_t ModuleBuilder::op(spv::Op opcode, uint32_t result_type,
                           std::initializer_list<uint32_t> ids) {
  return op_lit(opcode, result_type, ids, {});
}

uint32_t ModuleBuilder::op_lit(spv::Op opcode, uint32_t result_type,
                               std::initializer_list<uint32_t> ids,
                               std::initializer_list<uint32_t> literals) {
  check_small_use(opcode, result_type, ids);
  auto& o = out();
  uint32_t id = 0;
  size_t count = 1 + ids.size() + literals.size() + (result_type ? 2 : 0);
  o.push_back(static_cast<uint32_t>(count << 16) | static_cast<uint32_t>(opcode));
  if (result_type) {
    id = fresh_id();
    o.push_back(result_type);
    o.push_back(id);
    type_of_[id] = result_type;
  }
  o.insert(o.end(), ids.begin(), ids.end());
  o.insert(o.end(), literals.begin(), literals.end());
  return id;
}

void ModuleBuilder::op_void(spv::Op opcode, std::initializer_list<uint32_t> words) {
  emit(out(), opcode, words);
}

uint32_t ModuleBuilder::ext_glsl(uint32_t result_type, uint32_t instruction,
                                 std::initializer_list<uint32_t> ids) {
  check_small_use(spv::Op::OpExtInst, result_type, ids);
  auto& o = out();
  uint32_t id = fresh_id();
  o.push_back(static_cast<uint32_t>((5 + ids.size()) << 16) |
              static_cast<uint32_t>(spv::Op::OpExtInst));
  o.push_back(result_type);
  o.push_back(id);
  o.push_back(import_glsl());
  o.push_back(instruction);
  o.insert(o.end(), ids.begin(), ids.end());
  type_of_[id] = result_type;
  return id;
}

uint32_t ModuleBuilder::local_variable(uint32_t pointer_type) {
  uint32_t id = fresh_id();
  emit(variables_, spv::Op::OpVariable,
       {pointer_type, id, static_cast<uint32_t>(spv::StorageClass::Function)});
  type_of_[id] = pointer_type;
  return id;
}

void ModuleBuilder::label(uint32_t id) {
  emit(body_, spv::Op::OpLabel, {id});
}

void ModuleBuilder::finish_function(uint32_t function_id, uint32_t entry_label) {
  uint32_t fn_type = type_function(type_void());
  emit(functions_, spv::Op::OpFunction,
       {type_void(), function_id, static_cast<uint32_t>(spv::FunctionControlMask::MaskNone),
        fn_type});
  emit(functions_, spv::Op::OpLabel, {entry_label});
  functions_.insert(functions_.end(), variables_.begin(), variables_.end());
  functions_.insert(functions_.end(), prologue_.begin(), prologue_.end());
  functions_.insert(functions_.end(), body_.begin(), body_.end());
  emit(functions_, spv::Op::OpFunctionEnd, {});
  variables_.clear();
  prologue_.clear();
  body_.clear();
}

std::vector<uint32_t> ModuleBuilder::assemble(uint32_t version) {
  std::vector<uint32_t> words{spv::MagicNumber, version, 0u /* generator */, next_id_, 0u};
  for (spv::Capability c : capabilities_)
    emit(words, spv::Op::OpCapability, {static_cast<uint32_t>(c)});
  for (const std::string& e : extensions_) {
    std::vector<uint32_t> s;
    append_string(s, e);
    words.push_back(static_cast<uint32_t>((s.size() + 1) << 16) |
                    static_cast<uint32_t>(spv::Op::OpExtension));
    words.insert(words.end(), s.begin(), s.end());
  }
  if (glsl_ != 0) {
    std::vector<uint32_t> s{glsl_};
    append_string(s, "GLSL.std.450");
    words.push_back(static_cast<uint32_t>((s.size() + 1) << 16) |
                    static_cast<uint32_t>(spv::Op::OpExtInstImport));
    words.insert(words.end(), s.begin(), s.end());
  }
  emit(words, spv::Op::OpMemoryModel,
       {static_cast<uint32_t>(spv::AddressingModel::Logical),
        static_cast<uint32_t>(spv::MemoryModel::GLSL450)});
  for (const auto* section :
       {&entry_points_, &execution_modes_, &debug_names_, &annotations_, &globals_, &functions_})
    words.insert(words.end(), section->begin(), section->end());
  words[3] = next_id_; // the bound: ids made while assembling included
  return words;
}

} // namespace halfway::codegen::spirv
