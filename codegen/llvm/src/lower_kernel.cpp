// The kernel's frame: lower_kernel() itself, the entry function, the loop over workgroups (or
// over rows of workgroups in flat mode) and the allocas of locals.
#include "halfway/support/error.hpp"
#include "lowering.hpp"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <spdlog/spdlog.h>

namespace halfway::codegen::llvm {

LoweredKernel::LoweredKernel() = default;
LoweredKernel::LoweredKernel(LoweredKernel&&) noexcept = default;
LoweredKernel& LoweredKernel::operator=(LoweredKernel&&) noexcept = default;
LoweredKernel::~LoweredKernel() {
  module.reset(); // before the context that owns its types
  context.reset();
}

// LLVM's remarks and warnings (e.g. a lane loop the width hint could not vectorise) go to the
// debug log instead of stderr.
static void log_diagnostic(const ::llvm::DiagnosticInfo* diagnostic, void*) {
  const ::llvm::DiagnosticInfo& info = *diagnostic;
  std::string text;
  ::llvm::raw_string_ostream os(text);
  ::llvm::DiagnosticPrinterRawOStream printer(os);
  info.print(printer);
  if (info.getSeverity() == ::llvm::DS_Error)
    spdlog::warn("llvm: {}", text);
  else
    spdlog::debug("llvm: {}", text);
}

LoweredKernel lower_kernel(const ir::VerifiedKernel& kernel, const policy::Budget& budget,
                           const LlvmOptions& options, const HostTarget& target,
                           const std::string& entry) {
  LoweredKernel out;
  out.context = std::make_unique<::llvm::LLVMContext>();
  out.context->setDiagnosticHandlerCallBack(log_diagnostic);
  out.module = std::make_unique<::llvm::Module>("halfway." + kernel.name(), *out.context);
  out.module->setTargetTriple(target.triple);
  detail::Lowering lowering(kernel.kernel(), budget, options, target, *out.context, *out.module);
  lowering.emit(entry);
  std::string problems;
  ::llvm::raw_string_ostream os(problems);
  if (::llvm::verifyModule(*out.module, &os))
    throw Error(ErrorKind::Internal, "the LLVM backend generated invalid IR: " + problems,
                {.kernel = kernel.name()});
  out.entry = entry;
  out.sites = lowering.take_sites();
  out.shared_bytes = lowering.shared_bytes();
  out.budget = budget;
  return out;
}

namespace detail {

Lowering::Lowering(const ir::Kernel& k, const policy::Budget& budget, const LlvmOptions& options,
                   const HostTarget& target, ::llvm::LLVMContext& ctx, ::llvm::Module& m)
    : k_(k), budget_(budget), options_(options), target_(target), ctx_(ctx), m_(m), b_(ctx),
      plan_(k, budget, options) {}

::llvm::BasicBlock* Lowering::block(const char* name) {
  return ::llvm::BasicBlock::Create(ctx_, name, fn_);
}

::llvm::AllocaInst* Lowering::entry_alloca(::llvm::Type* t, const char* name) {
  ::llvm::IRBuilder<> a(alloca_block_, alloca_block_->begin());
  return a.CreateAlloca(t, nullptr, name);
}

static void set_target_attributes(::llvm::Function* f, const HostTarget& target) {
  f->addFnAttr("target-cpu", target.cpu);
  f->addFnAttr("target-features", target.features);
  // LLVM's Intel tunings prefer 256-bit vectors; g++ -march=native uses zmm, and so does the
  // measured 16-wide f32 -> f16 loop (docs/measured.md).
  if (target.avx512)
    f->addFnAttr("prefer-vector-width", "512");
  f->addFnAttr(::llvm::Attribute::NoUnwind);
}

void Lowering::emit(const std::string& entry_name) {
  ::llvm::Function* groups = emit_groups_function();
  emit_entry(entry_name, groups);
}

// int32_t entry(const KernelArgs*, uint64_t begin, uint64_t end, void* shared): unpacks the
// arguments and calls the groups function, which is always inlined. The detour is what makes
// the buffer pointers `noalias` parameters: inlining turns that into alias scopes, so the
// vectoriser needs no runtime overlap checks.
void Lowering::emit_entry(const std::string& name, ::llvm::Function* groups) {
  ::llvm::Type* ptr = b_.getPtrTy();
  auto* type = ::llvm::FunctionType::get(b_.getInt32Ty(),
                                         {ptr, b_.getInt64Ty(), b_.getInt64Ty(), ptr}, false);
  auto* f = ::llvm::Function::Create(type, ::llvm::Function::ExternalLinkage, name, m_);
  set_target_attributes(f, target_);
  b_.SetInsertPoint(::llvm::BasicBlock::Create(ctx_, "entry", f));
  ::llvm::Value* args = f->getArg(0);
  auto field = [&](AbiSlot slot) {
    return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), args, kernel_args_offset(slot));
  };
  // The three per-parameter arrays, loaded once.
  ::llvm::Value* buffers = b_.CreateLoad(ptr, field(AbiSlot::BufferData), "buffers");
  ::llvm::Value* lengths = b_.CreateLoad(ptr, field(AbiSlot::BufferLength), "lengths");
  ::llvm::Value* scalars = b_.CreateLoad(ptr, field(AbiSlot::Scalar), "scalars");
  std::vector<::llvm::Value*> call_args;
  for (const AbiParam& p : plan_.abi) {
    ::llvm::Type* t = groups->getArg(static_cast<unsigned>(call_args.size()))->getType();
    switch (p.slot) {
    case AbiSlot::BufferData:
      call_args.push_back(b_.CreateLoad(t, b_.CreateConstInBoundsGEP1_64(t, buffers, p.index)));
      break;
    case AbiSlot::BufferLength:
      call_args.push_back(b_.CreateLoad(t, b_.CreateConstInBoundsGEP1_64(t, lengths, p.index)));
      break;
    case AbiSlot::Scalar:
      call_args.push_back(b_.CreateLoad(t, b_.CreateConstInBoundsGEP1_64(t, scalars, p.index)));
      break;
    case AbiSlot::NumGroups:
      call_args.push_back(
          b_.CreateLoad(t, b_.CreateConstInBoundsGEP1_64(
                               b_.getInt8Ty(), args, kernel_args_offset(p.slot) + 4 * p.index)));
      break;
    case AbiSlot::Error:
    case AbiSlot::Cancel:
      call_args.push_back(b_.CreateLoad(t, field(p.slot)));
      break;
    case AbiSlot::Shared:
      call_args.push_back(f->getArg(3));
      break;
    case AbiSlot::GroupBegin:
      call_args.push_back(f->getArg(1));
      break;
    case AbiSlot::GroupEnd:
      call_args.push_back(f->getArg(2));
      break;
    }
  }
  b_.CreateRet(b_.CreateCall(groups, call_args));
}

::llvm::Function* Lowering::emit_groups_function() {
  ::llvm::Type* ptr = b_.getPtrTy();
  std::vector<::llvm::Type*> types;
  for (const AbiParam& p : plan_.abi) {
    switch (p.slot) {
    case AbiSlot::BufferData:
    case AbiSlot::Error:
    case AbiSlot::Cancel:
    case AbiSlot::Shared:
      types.push_back(ptr);
      break;
    case AbiSlot::BufferLength:
    case AbiSlot::Scalar:
    case AbiSlot::GroupBegin:
    case AbiSlot::GroupEnd:
      types.push_back(b_.getInt64Ty());
      break;
    case AbiSlot::NumGroups:
      types.push_back(b_.getInt32Ty());
      break;
    }
  }
  auto* type = ::llvm::FunctionType::get(b_.getInt32Ty(), types, false);
  fn_ = ::llvm::Function::Create(type, ::llvm::Function::InternalLinkage, "halfway.groups", m_);
  set_target_attributes(fn_, target_);
  fn_->addFnAttr(::llvm::Attribute::AlwaysInline);

  alloca_block_ = block("allocas");
  ::llvm::BasicBlock* setup = block("setup");
  b_.SetInsertPoint(setup);

  // Parameters as values.
  buffer_ptr_.assign(k_.params.size(), nullptr);
  buffer_len_.assign(k_.params.size(), nullptr);
  scalar_.assign(k_.params.size(), nullptr);
  ::llvm::Value* begin = nullptr;
  ::llvm::Value* end = nullptr;
  for (unsigned a = 0; a < plan_.abi.size(); ++a) {
    const AbiParam& p = plan_.abi[a];
    ::llvm::Argument* arg = fn_->getArg(a);
    const std::string& param = p.index < k_.params.size() ? k_.params[p.index].name : "";
    switch (p.slot) {
    case AbiSlot::BufferData:
      if (options_.noalias_buffers)
        fn_->addParamAttr(a, ::llvm::Attribute::NoAlias);
      buffer_ptr_[p.index] = arg;
      arg->setName(param);
      break;
    case AbiSlot::BufferLength:
      buffer_len_[p.index] = arg;
      arg->setName(param + ".len");
      break;
    case AbiSlot::Scalar:
      arg->setName(param + ".bits");
      scalar_[p.index] = from_bits64(arg, k_.params[p.index].type);
      scalar_[p.index]->setName(param);
      break;
    case AbiSlot::NumGroups:
      num_groups_[p.index] = arg;
      arg->setName(std::string("groups.") + "xyz"[p.index]);
      break;
    case AbiSlot::Error:
      error_record_ = arg;
      arg->setName("error.record");
      break;
    case AbiSlot::Cancel:
      cancel_word_ = arg;
      arg->setName("cancel.word");
      break;
    case AbiSlot::Shared:
      fn_->addParamAttr(a, ::llvm::Attribute::NoAlias); // this thread's own
      shared_base_ = arg;
      arg->setName("shared");
      break;
    case AbiSlot::GroupBegin:
      begin = arg;
      arg->setName("group.begin");
      break;
    case AbiSlot::GroupEnd:
      end = arg;
      arg->setName("group.end");
      break;
    }
  }

  // Locals.
  local_slot_.assign(k_.locals.size(), nullptr);
  for (uint32_t i = 0; i < k_.locals.size(); ++i) {
    if (plan_.storage.storage[i] == LocalStorage::Remat ||
        plan_.storage.storage[i] == LocalStorage::Unused)
      continue;
    ::llvm::Type* t = value_type(k_.locals[i].type);
    if (plan_.storage.storage[i] == LocalStorage::PerLane)
      t = ::llvm::ArrayType::get(t, plan_.lanes);
    local_slot_[i] = entry_alloca(t, k_.locals[i].name.c_str());
  }
  escape_slot_ = entry_alloca(b_.getInt32Ty(), "escape");
  failed_slot_ = entry_alloca(b_.getInt32Ty(), "failed");

  error_exit_ = block("error");
  {
    ::llvm::IRBuilder<> e(error_exit_);
    e.CreateRet(e.getInt32(1));
  }
  cancel_exit_ = block("cancelled");
  {
    ::llvm::IRBuilder<> e(cancel_exit_);
    e.CreateRet(e.getInt32(2));
  }
  ::llvm::BasicBlock* done = block("done");
  {
    ::llvm::IRBuilder<> e(done);
    e.CreateRet(e.getInt32(0));
  }

  // Linear group id -> (x, y, z), once per call; then counted with carries.
  ::llvm::BasicBlock* header = block("group");
  ::llvm::Value* ngx = b_.CreateZExt(num_groups_[0], b_.getInt64Ty());
  ::llvm::Value* ngy = b_.CreateZExt(num_groups_[1], b_.getInt64Ty());
  ::llvm::Value* gx0 = b_.CreateTrunc(b_.CreateURem(begin, ngx), b_.getInt32Ty());
  ::llvm::Value* rest = b_.CreateUDiv(begin, ngx);
  ::llvm::Value* gy0 = b_.CreateTrunc(b_.CreateURem(rest, ngy), b_.getInt32Ty());
  ::llvm::Value* gz0 = b_.CreateTrunc(b_.CreateUDiv(rest, ngy), b_.getInt32Ty());
  if (plan_.flat) {
    emit_flat_groups(begin, end, gx0, gy0, gz0, setup, done);
    ::llvm::IRBuilder<>(alloca_block_).CreateBr(setup);
    header->eraseFromParent();
    return fn_;
  }
  b_.CreateCondBr(b_.CreateICmpULT(begin, end), header, done);

  b_.SetInsertPoint(header);
  auto [g, gx, gy, gz] = group_phis(begin, gx0, gy0, gz0, setup);
  group_linear_ = g;
  group_id_ = {gx, gy, gz};
  for (int d = 0; d < 3; ++d)
    group_base_[d] = b_.CreateMul(group_id_[d], i32(k_.workgroup[d]));
  group_done_ = block("group.done");
  emit_group_prologue();
  emit_parts(plan_.storage.parts, true);
  b_.CreateBr(group_done_);

  b_.SetInsertPoint(group_done_);
  poll_cancel();
  ::llvm::BasicBlock* latch = b_.GetInsertBlock();
  ::llvm::Value* g1 = b_.CreateAdd(g, i64(1));
  ::llvm::Value* gx1 = b_.CreateAdd(gx, i32(1));
  ::llvm::Value* wrap_x = b_.CreateICmpEQ(gx1, num_groups_[0]);
  ::llvm::Value* gy1 = b_.CreateSelect(wrap_x, b_.CreateAdd(gy, i32(1)), gy);
  ::llvm::Value* wrap_y = b_.CreateICmpEQ(gy1, num_groups_[1]);
  gx->addIncoming(b_.CreateSelect(wrap_x, i32(0), gx1), latch);
  gy->addIncoming(b_.CreateSelect(wrap_y, i32(0), gy1), latch);
  gz->addIncoming(b_.CreateSelect(wrap_y, b_.CreateAdd(gz, i32(1)), gz), latch);
  g->addIncoming(g1, latch);
  b_.CreateCondBr(b_.CreateICmpULT(g1, end), header, done)
      ->setMetadata(::llvm::LLVMContext::MD_loop, loop_hint("llvm.loop.unroll.disable"));

  ::llvm::IRBuilder<>(alloca_block_).CreateBr(setup);
  return fn_;
}

// The loop-carried linear group id and (x, y, z) group coordinates of a loop over workgroups.
std::array<::llvm::PHINode*, 4> Lowering::group_phis(::llvm::Value* begin, ::llvm::Value* gx0,
                                                     ::llvm::Value* gy0, ::llvm::Value* gz0,
                                                     ::llvm::BasicBlock* setup) {
  std::array<::llvm::PHINode*, 4> p{
      b_.CreatePHI(b_.getInt64Ty(), 2, "g"), b_.CreatePHI(b_.getInt32Ty(), 2, "gx"),
      b_.CreatePHI(b_.getInt32Ty(), 2, "gy"), b_.CreatePHI(b_.getInt32Ty(), 2, "gz")};
  p[0]->addIncoming(begin, setup);
  p[1]->addIncoming(gx0, setup);
  p[2]->addIncoming(gy0, setup);
  p[3]->addIncoming(gz0, setup);
  return p;
}

// Cancellable code: leaves with 2 when the cancel word is nonzero. The load is volatile, so LLVM
// neither hoists it out of the loop nor deletes a loop that does nothing else (`while true {}`:
// the function has no `mustprogress`, and the volatile access is a side effect besides).
void Lowering::poll_cancel() {
  if (!options_.cancellable)
    return;
  auto* load = b_.CreateLoad(b_.getInt32Ty(), cancel_word_, /*isVolatile=*/true, "cancel");
  ::llvm::BasicBlock* go_on = block("not.cancelled");
  ::llvm::MDBuilder md(ctx_);
  b_.CreateCondBr(b_.CreateICmpNE(load, i32(0)), cancel_exit_, go_on,
                  md.createBranchWeights(1, 1 << 20));
  b_.SetInsertPoint(go_on);
}

void Lowering::emit_group_prologue() {
  if (plan_.scratch_bytes > 0)
    b_.CreateMemSet(shared_base_, b_.getInt8(0), plan_.scratch_bytes, ::llvm::MaybeAlign(64));
  b_.CreateStore(i32(kEscapeNone), escape_slot_);
  if (options_.records_errors())
    b_.CreateStore(i32(0), failed_slot_);
}

// Rows of workgroups (constant group y and z) in flat mode: one lane loop per row.
void Lowering::emit_flat_groups(::llvm::Value* begin, ::llvm::Value* end, ::llvm::Value* gx0,
                                ::llvm::Value* gy0, ::llvm::Value* gz0, ::llvm::BasicBlock* setup,
                                ::llvm::BasicBlock* done) {
  ::llvm::BasicBlock* row = block("row");
  b_.CreateCondBr(b_.CreateICmpULT(begin, end), row, done);
  b_.SetInsertPoint(row);
  auto [g, gx, gy, gz] = group_phis(begin, gx0, gy0, gz0, setup);
  ::llvm::Value* gx64 = b_.CreateZExt(gx, b_.getInt64Ty());
  ::llvm::Value* row_left = b_.CreateSub(b_.CreateZExt(num_groups_[0], b_.getInt64Ty()), gx64);
  ::llvm::Value* count =
      b_.CreateBinaryIntrinsic(::llvm::Intrinsic::umin, b_.CreateSub(end, g), row_left);
  ::llvm::Value* x = i64(k_.workgroup[0]);
  flat_begin_ = b_.CreateMul(gx64, x);
  flat_end_ = b_.CreateMul(b_.CreateAdd(gx64, count), x);
  flat_row_group_ = g;
  flat_row_gx_ = gx64;
  group_id_ = {nullptr, gy, gz};
  group_base_ = {nullptr, gy, gz}; // workgroups are 1 high and 1 deep
  group_done_ = block("row.done");
  b_.CreateStore(i32(kEscapeNone), escape_slot_);
  if (options_.records_errors())
    b_.CreateStore(i32(0), failed_slot_);
  emit_parts(plan_.storage.parts, true);
  b_.CreateBr(group_done_);

  b_.SetInsertPoint(group_done_);
  poll_cancel();
  ::llvm::BasicBlock* latch = b_.GetInsertBlock();
  ::llvm::Value* g1 = b_.CreateAdd(g, count);
  ::llvm::Value* gy1 = b_.CreateAdd(gy, i32(1));
  ::llvm::Value* wrap = b_.CreateICmpEQ(gy1, num_groups_[1]);
  gx->addIncoming(i32(0), latch);
  gy->addIncoming(b_.CreateSelect(wrap, i32(0), gy1), latch);
  gz->addIncoming(b_.CreateSelect(wrap, b_.CreateAdd(gz, i32(1)), gz), latch);
  g->addIncoming(g1, latch);
  b_.CreateCondBr(b_.CreateICmpULT(g1, end), row, done)
      ->setMetadata(::llvm::LLVMContext::MD_loop, loop_hint("llvm.loop.unroll.disable"));
}

} // namespace detail
} // namespace halfway::codegen::llvm
