#include "launch_args.hpp"

#include <algorithm>
#include <cstring>

namespace halfway::rt::cpu_detail {

LaunchArgs::LaunchArgs(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args,
                       bool copy_written) {
  size_t n = k.params.size();
  buffers_.assign(n, nullptr);
  lengths_.assign(n, 0);
  scalars_.assign(n, 0);
  if (copy_written)
    for (size_t i = 0; i < n; ++i)
      if (k.params[i].is_buffer() && k.params[i].access != ir::Access::Read)
        copies_.try_emplace(args[i].buffer, args[i].buffer->clone());
  for (size_t i = 0; i < n; ++i) {
    if (!k.params[i].is_buffer()) {
      scalars_[i] = args[i].scalar;
      continue;
    }
    HostBuffer* b = args[i].buffer;
    auto copy = copies_.find(b);
    buffers_[i] = copy != copies_.end() ? copy->second.data() : b->data();
    lengths_[i] = b->size();
    for (size_t j = 0; j < i; ++j)
      if (k.params[j].is_buffer() && args[j].buffer == b)
        distinct_ = false;
  }
  args_.buffers = buffers_.data();
  args_.lengths = lengths_.data();
  args_.scalars = scalars_.data();
  std::copy(grid.groups.begin(), grid.groups.end(), args_.num_groups);
  args_.error = &error_;
}

void LaunchArgs::reset() {
  for (auto& [original, copy] : copies_)
    if (original->size())
      std::memcpy(copy.data(), original->data(), original->size_bytes());
  error_ = {};
}

void LaunchArgs::commit() {
  for (auto& [original, copy] : copies_)
    if (original->size())
      std::memcpy(original->data(), copy.data(), original->size_bytes());
}

} // namespace halfway::rt::cpu_detail
